"""Output files: never the input, mode kept, nothing half-written, clear errors on long names."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dpcore.cli import main
from dpcore.files import check_output_path, same_file, write_atomic
from dpcore.validation import DPCoreError

ROOT = Path(__file__).resolve().parents[1]
RAW = "my secret diagnosis is cancer\nsecond line\n"
SAN = ["sanitize", "--mechanism", "random", "--epsilon", "1", "--vocab-size", "300", "--seed", "1"]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "d"
    d.mkdir()
    (d / "in.txt").write_text(RAW)
    os.chmod(d / "in.txt", 0o640)
    (d / "link.txt").symlink_to("in.txt")
    os.link(d / "in.txt", d / "hard.txt")
    return d


@pytest.mark.parametrize("out", ["in.txt", "./in.txt", "../d/in.txt", "link.txt", "hard.txt", "{abs}"])
def test_sanitize_refuses_to_overwrite_its_input(folder: Path, out: str, capsys, monkeypatch) -> None:
    monkeypatch.chdir(folder)
    out = out.replace("{abs}", str(folder / "in.txt"))
    assert main([*SAN, "--input", "in.txt", "--output", out]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is the input file" in err[0]
    assert (folder / "in.txt").read_text() == RAW
    assert stat.S_IMODE(os.stat(folder / "in.txt").st_mode) == 0o640
    assert sorted(p.name for p in folder.iterdir()) == ["hard.txt", "in.txt", "link.txt"]


def test_input_through_a_symlink_is_refused_as_output_too(folder: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(folder)
    assert main([*SAN, "--input", "link.txt", "--output", "hard.txt"]) == 2
    assert (folder / "in.txt").read_text() == RAW


def test_vocab_file_is_an_input_too(folder: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(folder)
    (folder / "vocab.txt").write_text("the\nof\nand\n")
    args = ["sanitize", "--mechanism", "random", "--epsilon", "1", "--vocab", "vocab.txt", "--seed", "1"]
    assert main([*args, "--input", "in.txt", "--output", "vocab.txt"]) == 2
    assert (folder / "vocab.txt").read_text() == "the\nof\nand\n"


def test_existing_output_keeps_its_mode_and_new_output_follows_the_umask(folder: Path, monkeypatch) -> None:
    monkeypatch.chdir(folder)
    (folder / "out.txt").write_text("old")
    os.chmod(folder / "out.txt", 0o604)
    assert main([*SAN, "--input", "in.txt", "--output", "out.txt"]) == 0
    assert stat.S_IMODE(os.stat(folder / "out.txt").st_mode) == 0o604
    assert (folder / "out.txt").read_text() != "old"
    old = os.umask(0o022)
    try:
        assert main([*SAN, "--input", "in.txt", "--output", "new.txt"]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(folder / "new.txt").st_mode) == 0o644


@pytest.mark.parametrize("name", ["a" * 300, "x/" * 2100 + "f"])
def test_long_names_are_one_clear_line(folder: Path, name: str, capsys, monkeypatch) -> None:
    monkeypatch.chdir(folder)
    assert main([*SAN, "--input", "in.txt", "--output", name]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dpcore: error:") and "bytes long" in err[0]


def test_same_file_sees_links(folder: Path) -> None:
    assert same_file(folder / "in.txt", folder / "hard.txt")
    assert same_file(folder / "link.txt", folder / "in.txt")
    assert not same_file(folder / "in.txt", folder / "missing.txt")
    with pytest.raises(DPCoreError, match="is the input file"):
        check_output_path(folder / "hard.txt", inputs=[folder / "link.txt"])


def test_sigterm_during_a_write_leaves_no_temp_file(tmp_path: Path) -> None:
    """A child process writes through write_atomic with a slow fsync; SIGTERM arrives meanwhile."""
    target = tmp_path / "out.txt"
    target.write_text("previous")
    script = textwrap.dedent(
        f"""
        import os, sys, time
        sys.path.insert(0, {str(ROOT)!r})
        import dpcore.files as f
        real = os.fsync
        def slow(fd):
            print("writing", flush=True)
            time.sleep(30)
            real(fd)
        os.fsync = slow
        from dpcore.cli import main
        f.write_atomic({str(target)!r}, "new text " * 1000)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "writing"
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=20)
    assert proc.returncode != 0
    assert target.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]  # no .tmp left


def test_write_errors_are_clear(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o500)
    try:
        if os.access(ro, os.W_OK):  # root ignores the mode; use a missing folder instead
            target = tmp_path / "missing" / "x.txt"
        else:
            target = ro / "x.txt"
        with pytest.raises(DPCoreError):
            write_atomic(target, "x")
    finally:
        os.chmod(ro, 0o700)


def test_train_attacker_refuses_an_existing_file_before_training(tmp_path: Path, capsys, monkeypatch) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import dpcore.attack.training as training

    def must_not_train(*args: object, **kwargs: object) -> None:
        raise AssertionError("training started before the --output check")

    monkeypatch.setattr(training, "train_attacker", must_not_train)
    f = tmp_path / "model.txt"
    f.write_text("keep me")
    assert main(["train-attacker", "--output", str(f), "--max-steps", "1"]) == 2  # refused first
    assert f.read_text() == "keep me"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a folder" in err[0]
