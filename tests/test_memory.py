"""dpcore.memory.release_free_memory gives freed heap pages back to the OS (glibc)."""

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
