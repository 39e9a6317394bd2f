"""sanitize-corpus engines give the same output: local, local with 2 workers, Ray at two batch sizes.

They run on the worker's one local Ray (the ``ray_runtime`` fixture of ``tests/conftest.py``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpcore.corpus import MechanismSpec, sanitize_files
from tests.conftest import RAY_GROUP

ray = pytest.importorskip("ray")

pytestmark = RAY_GROUP

TEXTS = [
    "It's a charming and often affecting journey.",
    "The patient was diagnosed with cancer in Boston.",
    "",
    "zzqx unknownword the of",
]


@pytest.mark.parametrize("mechanism", ["santext+"])
def test_same_output_under_every_engine_worker_count_and_batch_size(
    mechanism: str, tmp_path: Path, ray_runtime: None
) -> None:
    n = 120
    df = pd.DataFrame(
        {
            "id": range(n),
            "text": [TEXTS[i % 4] + f" word {i}" for i in range(n)],
            "label": [i % 2 for i in range(n)],
        }
    )
    pq.write_table(
        pa.Table.from_pandas(df.iloc[:70], preserve_index=False), tmp_path / "a.parquet", row_group_size=16
    )
    pq.write_table(pa.Table.from_pandas(df.iloc[70:], preserve_index=False), tmp_path / "b.parquet")
    spec = MechanismSpec(mechanism, 2.0, vocab_size=2000, p=0.3, w=0.9)
    runs = {
        "local": dict(engine="local", workers=1, batch_size=50),
        "local-2": dict(engine="local", workers=2, batch_size=13),
        "ray-bs7": dict(engine="ray", workers=2, batch_size=7),
        "ray-bs64": dict(engine="ray", workers=2, batch_size=64),
    }
    outs = {}
    for name, kw in runs.items():
        m = sanitize_files(
            tmp_path / "*.parquet", tmp_path / name, text_column="text", mechanism=spec, seed=12, **kw
        )
        assert m["counts"]["rows"] == n
        outs[name] = pd.read_parquet(tmp_path / name)
    ref = outs["local"]
    pd.testing.assert_frame_equal(ref.drop(columns="text"), df.drop(columns="text"), check_dtype=False)
    assert (ref["text"] != df["text"]).any()
    for name, got in outs.items():
        pd.testing.assert_frame_equal(got, ref, obj=name)


def test_ray_dataset_api(ray_runtime: None) -> None:
    from dpcore.corpus import sanitize_dataframe, sanitize_ray_dataset

    df = pd.DataFrame({"rid": range(30), "text": [TEXTS[i % 4] for i in range(30)]})
    ds = ray.data.from_pandas(df)
    out = sanitize_ray_dataset(
        ds,
        text_column="text",
        row_index_column="rid",
        mechanism="santext",
        epsilon=2.0,
        vocab_size=2000,
        seed=5,
        batch_size=8,
    ).to_pandas()
    ref = sanitize_dataframe(
        df, text_column="text", mechanism="santext", epsilon=2.0, vocab_size=2000, seed=5
    ).data
    got = out.sort_values("rid").reset_index(drop=True)
    assert got["text"].tolist() == ref["text"].tolist() and list(got.columns) == ["rid", "text"]
