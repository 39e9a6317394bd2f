"""Checkpoints of ``train-attacker``: one after every epoch, so that a long training can be resumed.

A checkpoint is the whole state of a run at the top of a training step: the model's and the
optimizer's tensors, the step and epoch counters, the loss and validation curves, the best
weights so far, the remaining batches of the epoch, and the NumPy and torch random states. A run
resumed from it (``train-attacker --resume``) continues exactly where the uninterrupted run would
have been: with a step or epoch count (no wall clock in the schedule) and on the CPU, it ends
with the same weights (``tests/test_attacker_resume.py``).

The file is ``<output>/checkpoint/state.pt``, written atomically (a temporary file, then a
rename), read with ``torch.load(weights_only=True)`` (tensors, numbers, strings and containers
only: nothing in it is executed), and removed when the run completes. Its settings must equal
the resumed run's, apart from the device and the thread count, and so must its training sentences
(a digest of them is checked).

torch is imported inside functions only.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

from dpcore.validation import DPCoreError

__all__ = [
    "CHECKPOINT_DIR",
    "FORMAT",
    "SETTINGS_FREE_TO_CHANGE",
    "checkpoint_file",
    "config_differences",
    "load_checkpoint",
    "remove_checkpoint",
    "require_checkpoint",
    "save_checkpoint",
]

#: The checkpoint's folder inside the output folder.
CHECKPOINT_DIR = "checkpoint"
#: Layout version of the checkpoint (bumped when it changes).
FORMAT = 1
#: Settings a resumed run may change (where it runs, not what it computes).
SETTINGS_FREE_TO_CHANGE = ("device", "threads")


def checkpoint_file(output: str) -> str:
    """Path of the checkpoint of a run writing to ``output``."""
    return os.path.join(output, CHECKPOINT_DIR, "state.pt")


def require_checkpoint(output: str) -> str:
    """The checkpoint file of ``output``, checked to exist (before any model is loaded).

    Raises
    ------
    DPCoreError
        When ``output`` holds no checkpoint.
    """
    path = checkpoint_file(output)
    if not os.path.isfile(path):
        raise DPCoreError(
            f"--resume: {output!r} holds no checkpoint ({path} is missing); a run saves one after "
            "every epoch and removes it when it completes"
        )
    return path


#: Settings added after checkpoints were first written, with the value an older one ran with.
SETTINGS_ADDED = {"validation_words": 1000}  # VALIDATION_WORDS of dpcore.attack.training


def _normalise(config: dict[str, Any]) -> dict[str, Any]:
    """The config as JSON reads it back (tuples → lists), without the free settings; a setting an
    older checkpoint lacks takes the value that run used (:data:`SETTINGS_ADDED`)."""
    plain: dict[str, Any] = SETTINGS_ADDED | json.loads(json.dumps(config))
    return {k: v for k, v in plain.items() if k not in SETTINGS_FREE_TO_CHANGE}


def config_differences(saved: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """``name: checkpoint value, now value`` for each setting that differs (device and threads aside)."""
    a, b = _normalise(saved), _normalise(current)
    return [
        f"{k} (checkpoint {a.get(k)!r}, now {b.get(k)!r})"
        for k in sorted(set(a) | set(b))
        if a.get(k) != b.get(k)
    ]


def save_checkpoint(output: str, state: dict[str, Any]) -> str:
    """Write ``state`` atomically to :func:`checkpoint_file` and return the path."""
    import torch

    path = checkpoint_file(output)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    torch.save({"format": FORMAT, **state}, tmp)
    os.replace(tmp, path)
    return path


def load_checkpoint(output: str, config: dict[str, Any]) -> dict[str, Any]:
    """The checkpoint of ``output``, checked against the resumed run's ``config``.

    Raises
    ------
    DPCoreError
        No checkpoint, an unreadable or other-format one, or settings that differ (each named).
    """
    import torch

    path = require_checkpoint(output)
    try:
        state: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise DPCoreError(f"--resume: cannot read the checkpoint {path}: {exc}") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise DPCoreError(f"--resume: {path} is not a train-attacker checkpoint of format {FORMAT}")
    diffs = config_differences(state["config"], config)
    if diffs:
        raise DPCoreError(
            "--resume: the checkpoint was made with other settings; give the same options as the "
            "interrupted run (only --device and --threads may change): " + "; ".join(diffs)
        )
    return state


def remove_checkpoint(output: str) -> None:
    """Remove the checkpoint folder of ``output`` (a completed run leaves none behind)."""
    shutil.rmtree(os.path.join(output, CHECKPOINT_DIR), ignore_errors=True)
