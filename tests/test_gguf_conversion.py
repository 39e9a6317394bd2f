"""The GGUF conversion block of :mod:`dpcore.models.causal_lm` (issue 59).

transformers parses a GGUF file three times on a first load (config, tokenizer, weights) and
builds gguf's tensor-name map once per submodule. Inside ``_gguf_conversion`` each is made once:
one reader per path, one map per architecture, transformers' tqdm silenced, and everything is put
back afterwards (also after an error). A tiny GGUF file written here stands in for the model's.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import need


def _modules():  # type: ignore[no-untyped-def]
    try:
        import gguf
        from transformers import modeling_gguf_pytorch_utils as gguf_utils
    except ImportError as exc:
        need(f"{exc.name} is not installed (pip install -r requirements-dev.txt)")
    return gguf, gguf_utils


def _tiny(path: Path, gguf) -> Path:  # type: ignore[no-untyped-def]
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(2)
    w.add_tensor("token_embd.weight", np.arange(12, dtype=np.float32).reshape(3, 4))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_the_file_is_parsed_once_per_path_and_everything_is_put_back(tmp_path: Path) -> None:
    from dpcore.models.causal_lm import _GGUF_LOCK, _gguf_conversion

    gguf, gguf_utils = _modules()
    a, b = _tiny(tmp_path / "a.gguf", gguf), _tiny(tmp_path / "b.gguf", gguf)
    before = (gguf.GGUFReader, gguf.get_tensor_name_map, gguf_utils.tqdm)
    with _gguf_conversion():
        assert _GGUF_LOCK.locked()  # one conversion at a time: the patches are module-wide
        first = gguf.GGUFReader(str(a))
        assert gguf.GGUFReader(a) is first  # str or Path: one parse
        other = gguf.GGUFReader(str(b))
        assert other is not first
        assert [t.name for t in first.tensors] == ["token_embd.weight"]
        np.testing.assert_array_equal(
            np.asarray(first.tensors[0].data).reshape(3, 4), np.arange(12, dtype=np.float32).reshape(3, 4)
        )
        arch = gguf.MODEL_ARCH.LLAMA
        names = gguf.get_tensor_name_map(arch, 2)
        assert gguf.get_tensor_name_map(arch, 2) is names
        assert gguf.get_tensor_name_map(arch, 3) is not names
        assert names.get_name("model.embed_tokens") == "token_embd"
        assert gguf_utils.tqdm([1, 2]).disable  # the per-tensor bar is off
    assert (gguf.GGUFReader, gguf.get_tensor_name_map, gguf_utils.tqdm) == before
    assert not _GGUF_LOCK.locked()
    assert gguf.GGUFReader(str(a)) is not gguf.GGUFReader(str(a))  # outside: transformers' own


def test_an_error_inside_puts_everything_back(tmp_path: Path) -> None:
    from dpcore.models.causal_lm import _GGUF_LOCK, _gguf_conversion

    gguf, gguf_utils = _modules()
    before = (gguf.GGUFReader, gguf.get_tensor_name_map, gguf_utils.tqdm)
    with pytest.raises(RuntimeError, match="interrupted"), _gguf_conversion():
        raise RuntimeError("interrupted")
    assert (gguf.GGUFReader, gguf.get_tensor_name_map, gguf_utils.tqdm) == before
    assert not _GGUF_LOCK.locked()


def test_a_second_conversion_waits_for_the_first() -> None:
    from dpcore.models.causal_lm import _gguf_conversion

    gguf, _ = _modules()
    original = gguf.GGUFReader
    entered, seen = threading.Event(), []

    def second() -> None:
        entered.set()
        with _gguf_conversion():
            seen.append(gguf.GGUFReader)

    with _gguf_conversion():
        patched = gguf.GGUFReader
        t = threading.Thread(target=second)
        t.start()
        entered.wait(timeout=60)
        t.join(timeout=0.2)
        assert t.is_alive() and seen == []  # blocked on the lock, not patching over the first
    t.join(timeout=60)
    assert not t.is_alive() and len(seen) == 1 and seen[0] is not patched
    assert gguf.GGUFReader is original  # each restored what it found
