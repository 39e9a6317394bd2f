"""dpcore.memory: release_free_memory gives freed heap pages back to the OS, and
limit_malloc_arenas keeps new threads on shared heaps (glibc)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dpcore.memory import release_free_memory

ROOT = Path(__file__).resolve().parents[1]

# In a fresh interpreter: fill the heap with 64 KiB blocks (below glibc's mmap threshold), free
# nine in ten (the survivors pin the heap, so free() alone cannot shrink it), then trim.
CODE = """
import gc
from dpcore.memory import release_free_memory

def rss_mib():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024

blocks = [bytearray(64 * 1024) for _ in range(3000)]
for i in range(len(blocks)):
    if i % 10:
        blocks[i] = None
gc.collect()
before = rss_mib()
ok = release_free_memory()
after = rss_mib()
print(ok, round(before - after))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc_trim is Linux-only")
def test_trim_returns_freed_heap_pages() -> None:
    out = subprocess.run([sys.executable, "-c", CODE], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    ok, released = out.stdout.split()
    if ok == "False":
        pytest.skip("not glibc")
    # 2,700 freed blocks of 64 KiB ≈ 169 MiB; most of it must leave the process
    assert int(released) > 100, f"only {released} MiB released"


def test_returns_a_bool_and_is_idempotent() -> None:
    first = release_free_memory()
    assert isinstance(first, bool) and release_free_memory() is first


def test_trim_after_defers_the_passes_trims_to_one_at_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """A loop of passes trims once, at the end of its outermost block; outside a block, and in
    another thread while a block is open, a pass trims at once; an exception still trims."""
    import threading

    import dpcore.memory as memory

    trims: list[str] = []
    monkeypatch.setattr(memory, "release_free_memory", lambda: trims.append(threading.current_thread().name))
    memory.release_after_pass()
    assert len(trims) == 1  # no block: at once
    with memory.trim_after():
        for _ in range(3):
            memory.release_after_pass()
        with memory.trim_after():  # nested: the outer block trims
            memory.release_after_pass()
        assert len(trims) == 1
        other = threading.Thread(target=memory.release_after_pass, name="other-session")
        other.start()
        other.join()
        assert trims[1:] == ["other-session"]  # another thread's pass is not held back
    assert len(trims) == 3 and trims[2] == threading.current_thread().name
    with memory.trim_after():  # no pass in the block: nothing to trim
        pass
    assert len(trims) == 3
    with pytest.raises(ValueError), memory.trim_after():
        memory.release_after_pass()
        raise ValueError
    assert len(trims) == 4
    memory.release_after_pass()  # the block's depth was restored: at once again
    assert len(trims) == 5


def test_masked_lm_passes_trim_once_per_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """``masked_position_logits`` trims after a lone pass, and once for a loop inside ``trim_after``."""
    import numpy as np

    import dpcore.memory as memory
    from dpcore.models.masked_lm import masked_position_logits

    class _Tok:
        pad_token_id = 0

    class _LM:
        tokenizer = _Tok()

        def masked_logits(self, inp: np.ndarray, att: np.ndarray, cols: np.ndarray) -> np.ndarray:
            return np.zeros((len(cols), 5), dtype=np.float32)

    trims: list[int] = []
    monkeypatch.setattr(memory, "release_free_memory", lambda: trims.append(1))
    variants = [([1, 2, 3], 1), ([4, 5], 0)]
    assert masked_position_logits(_LM(), variants).shape == (2, 5)
    assert len(trims) == 1
    with memory.trim_after():
        for _ in range(4):
            masked_position_logits(_LM(), variants)
    assert len(trims) == 2


# In a fresh interpreter: 8 threads allocate at once; count glibc's thread heaps (64 MiB-aligned
# anonymous mappings) they add, with the arenas limited to one, or not.
ARENAS = """
import sys, threading
from dpcore.memory import limit_malloc_arenas

if sys.argv[1] == "limit":
    print(limit_malloc_arenas(1))
else:
    print(True)

def heaps():
    n = 0
    for line in open("/proc/self/maps"):
        parts = line.split()
        if len(parts) == 5 and parts[1] in ("rw-p", "---p"):
            if int(parts[0].split("-")[0], 16) % (64 << 20) == 0:
                n += 1
    return n

before = heaps()
barrier = threading.Barrier(8)
kept = []

def work():
    barrier.wait()
    kept.append([bytearray(200) for _ in range(20000)])

threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(heaps() - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc mallopt is Linux-only")
def test_limiting_arenas_keeps_threads_on_the_shared_heaps() -> None:
    runs = {}
    for mode in ("limit", "control"):
        out = subprocess.run(
            [sys.executable, "-c", ARENAS, mode], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        ok, added = out.stdout.split()
        if ok == "False":
            pytest.skip("not glibc")
        runs[mode] = int(added)
    assert runs["control"] >= 4, runs  # without the limit each new thread gets a heap of its own
    assert runs["limit"] == 0, runs
