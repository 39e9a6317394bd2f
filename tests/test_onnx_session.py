"""``dpcore.models.onnx_session``: the one home of the onnxruntime settings, ``DPCORE_ORT_THREADS``, and
the same results whatever the thread count (the test suite runs one thread per pytest worker)."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.models import minilm
from dpcore.models.onnx_session import THREADS_ENV, intra_op_threads, session_options
from dpcore.validation import DPCoreError


def test_unset_means_onnxruntimes_default_and_a_number_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert intra_op_threads() == 0
    monkeypatch.setenv(THREADS_ENV, " 3 ")
    assert intra_op_threads() == 3
    opts = session_options()
    assert opts.intra_op_num_threads == 3 and opts.enable_cpu_mem_arena is False
    assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "0"


@pytest.mark.parametrize("bad", ["0", "-2", "two", "1.5", "257"])
def test_a_bad_thread_count_is_one_clear_error(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv(THREADS_ENV, bad)
    with pytest.raises(DPCoreError, match=f"{THREADS_ENV} must be a whole number from 1 to 256, not '{bad}'"):
        intra_op_threads()


def test_the_sentence_encoder_gives_the_same_numbers_on_one_or_two_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = ["my neighbour anna was diagnosed with diabetes", "a great film", "the post office closes early"]
    got = {}
    try:
        for threads in ("1", "2"):
            monkeypatch.setenv(THREADS_ENV, threads)
            minilm._encoder.cache_clear()
            assert minilm._encoder()[0].get_session_options().intra_op_num_threads == int(threads)
            got[threads] = minilm.encode_sentences(texts)
    finally:
        minilm._encoder.cache_clear()
    np.testing.assert_array_equal(got["1"], got["2"])
