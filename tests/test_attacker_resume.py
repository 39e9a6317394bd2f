"""``train-attacker`` saves a checkpoint after every epoch and ``--resume`` continues from it.

A tiny real training on the CPU (Pang & Lee's 199 sentences, batch 64: 3 steps an epoch, 2
epochs, 16 tokens a sentence): the run interrupted in its second epoch and resumed from the first
epoch's checkpoint ends with the weights of the uninterrupted run (to float32 rounding: it resumes
on another number of threads, as a user may), and its record says where it resumed.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

#: 16 tokens a sentence (its median is 27): each step costs half of the default 48's, and
#: ``--max-len`` must then be the interrupted run's too.
OPTIONS = "--sources pang_lee --epochs 2 --batch-size 64 --max-len 16 --eval-words 10".split()


def _weights(folder: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return load_file(str(folder / "model.safetensors"))


def test_an_interrupted_run_resumes_to_the_uninterrupted_weights(tmp_path, capsys) -> None:
    from dpcore.attack.checkpoint import checkpoint_file
    from dpcore.attack.corpus import build_corpus
    from dpcore.attack.training import TrainConfig, train_attacker
    from dpcore.cli import main
    from dpcore.validation import DPCoreError

    cfg = TrainConfig(
        seed=0, epochs=2, batch_size=64, max_len=16, eval_words=10, sources=("pang_lee",), minutes=24 * 60
    )
    corpus = build_corpus(0, heldout_fraction=cfg.heldout_fraction, sources=cfg.sources)
    assert len(corpus.train) // 64 == 3  # three steps an epoch: step 5 is in the second epoch

    whole = tmp_path / "whole"
    ref = train_attacker(str(whole), cfg, corpus=corpus)
    assert ref.steps == 6 and ref.interrupted_at_step is None and ref.resumed_at_steps == []
    assert not Path(checkpoint_file(str(whole))).exists()  # a completed run leaves none behind

    fired: list[int] = []

    def ctrl_c_at_step_5(frac: float, step: int, loss: float) -> None:
        if step == 5 and not fired:
            fired.append(step)
            raise KeyboardInterrupt

    cut = tmp_path / "cut"
    part = train_attacker(str(cut), cfg, corpus=corpus, progress=ctrl_c_at_step_5)
    assert part.interrupted_at_step == 5 and part.steps == 5
    assert Path(checkpoint_file(str(cut))).is_file()  # the first epoch's (step 3)
    assert any(
        not np.array_equal(a, b)
        for a, b in zip(_weights(whole).values(), _weights(cut).values(), strict=True)
    )

    # other training sentences are refused (before any model is loaded)
    with pytest.raises(DPCoreError, match="training sentences differ"):
        train_attacker(str(cut), cfg, corpus=replace(corpus, train=corpus.train[:-1]), resume=True)
    # other settings are refused, each named, and the checkpoint is kept
    assert main(["train-attacker", *OPTIONS, "--lr", "5e-5", "--output", str(cut), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "lr (checkpoint 0.0001, now 5e-05)" in err and "--device and --threads may change" in err
    assert main(["train-attacker", *OPTIONS, "--max-len", "48", "--output", str(cut), "--resume"]) == 2
    assert "max_len (checkpoint 16, now 48)" in capsys.readouterr().err
    assert Path(checkpoint_file(str(cut))).is_file()

    # --threads may change on resume: a copy of the checkpoint resumed on 2 threads, where the
    # uninterrupted run had 1, sums in another order. Its weights agree with the uninterrupted
    # ones to float32 rounding, which Adam can carry a little further (seen: 1 element of 590k off
    # by 7.6e-6 on an Intel Xeon, 1 ulp on 3 of 101 tensors on an AMD EPYC); a run that resumed
    # from the wrong state moves most weights by about the learning rate (1e-4) a step.
    two = tmp_path / "two-threads"
    shutil.copytree(cut, two)
    assert main(["train-attacker", *OPTIONS, "--threads", "2", "--output", str(two), "--resume"]) == 0
    assert "resumed at step(s) 3" in capsys.readouterr().out
    a, c = _weights(whole), _weights(two)
    assert a.keys() == c.keys()
    off = sum(int((~np.isclose(c[k], a[k], rtol=1e-5, atol=1e-6)).sum()) for k in a)
    assert off <= 1e-5 * sum(v.size for v in a.values())  # a few roundings, not a new model
    assert sum(not np.array_equal(a[k], c[k]) for k in a) <= 10  # in a few tensors
    assert max(float(np.abs(a[k] - c[k]).max()) for k in a) < 1e-4

    # the command a user types: the same options and --resume, the same threads: bit for bit
    assert main(["train-attacker", *OPTIONS, "--output", str(cut), "--resume"]) == 0
    assert "resumed at step(s) 3" in capsys.readouterr().out
    b = _weights(cut)
    assert a.keys() == b.keys()
    assert all(np.array_equal(a[k], b[k]) for k in a)
    rec = json.loads((cut / "training_record.json").read_text(encoding="utf-8"))
    assert rec["steps"] == 6 and rec["resumed_at_steps"] == [3] and rec["interrupted_at_step"] is None
    assert rec["train_seconds"] > 0 and rec["heldout_top1"] == ref.heldout_top1
    assert [s["stage"] for s in rec["lineage"]] == [1] and rec["lineage"][0]["resumed_at_steps"] == [3]
    assert not Path(checkpoint_file(str(cut))).exists()


def test_resume_without_a_checkpoint_is_one_clear_line(tmp_path, capsys) -> None:
    from dpcore.cli import main

    assert main(["train-attacker", *OPTIONS, "--output", str(tmp_path / "none"), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "holds no checkpoint" in err and len(err.strip().splitlines()) == 1
