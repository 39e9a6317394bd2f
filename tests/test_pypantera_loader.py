"""pyPANTERA's embedding loader runs in this process: no fork beside threads, no spawn that
imports a user's script again."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dpcore.text.vocab import build_vocabulary
from dpcore.textaudit.loaders import load_sanitizer
from dpcore.textaudit.pypantera import pypantera_available

pytestmark = pytest.mark.skipif(not pypantera_available(), reason="pyPANTERA is not installed")

ROOT = Path(__file__).resolve().parents[1]


def test_loader_reads_every_word_and_puts_multiprocessing_back() -> None:
    import multiprocessing

    import src.utils.vocab as pypantera_vocab

    vocab = build_vocabulary("glove", size=300)
    s = load_sanitizer("pypantera:CMP", epsilon=1.0, vocab=vocab)
    assert s.lost_words == []
    assert sorted(s._mech.vocab.embeddings) == sorted(map(str, vocab.words))
    assert pypantera_vocab.mp is multiprocessing


def test_a_script_without_a_main_guard_loads_a_pypantera_mechanism(tmp_path: Path) -> None:
    # With a spawn pool this script hung: each child imported it again, died starting the pool,
    # and was replaced, forever. The timeout is only a backstop for that hang.
    script = tmp_path / "user_script.py"
    script.write_text(
        textwrap.dedent(
            """
            from dpcore.text.vocab import build_vocabulary
            from dpcore.textaudit.loaders import load_sanitizer

            vocab = build_vocabulary("glove", size=50)
            s = load_sanitizer("pypantera:CMP", epsilon=1.0, vocab=vocab)
            print("loaded", s._n_loaded, "lost", len(s.lost_words))
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["loaded", "50", "lost", "0"]
    assert "RuntimeError" not in proc.stderr
