"""Device names and devices for the models dpcore runs (:mod:`dpcore.models`): ``cpu``, ``cuda``,
``cuda:N`` or ``auto``, checked without importing torch, resolved with it."""

from __future__ import annotations

from dpcore.validation import DPCoreError

__all__ = ["check_device_name", "resolve_device"]


def check_device_name(device: str) -> str:
    """``device`` lower-cased if it names a device ``train-attacker`` knows, without importing torch.

    Raises
    ------
    DPCoreError
        Anything but ``cpu``, ``cuda``, ``cuda:N`` or ``auto``.
    """
    name = str(device).strip().lower()
    if name in ("cpu", "cuda", "auto") or (name.startswith("cuda:") and name[5:].isdigit()):
        return name
    raise DPCoreError(f"unknown --device {device!r}; choose cpu, cuda, cuda:N or auto")


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when torch sees a GPU, else ``cpu``; ``cuda[:N]`` checked to exist.

    Raises
    ------
    DPCoreError
        An unknown device name, or CUDA asked for where torch sees no GPU.
    """
    name = check_device_name(device)
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cpu":
        return "cpu"
    if not torch.cuda.is_available():
        raise DPCoreError(f"--device {device}: torch sees no CUDA GPU here (use --device cpu or auto)")
    if ":" in name and int(name[5:]) >= torch.cuda.device_count():
        raise DPCoreError(f"--device {device}: torch sees {torch.cuda.device_count()} GPU(s)")
    return name
