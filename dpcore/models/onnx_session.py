"""The onnxruntime session options every shipped ONNX graph runs with (the masked-LM attacker,
the MiniLM sentence encoder): one home, so both behave alike.

- No memory arena: activations go back to the allocator after each run, so a long-running
  server does not keep the largest batch's buffers (:mod:`dpcore.memory` trims them back to the
  OS).
- Idle intra-op threads block instead of spinning: on 2 shared cores a spinning thread burns the
  core the other process needs (fill-mask over 60 sentences under load: 35% less CPU, 12% less
  wall time; the same threads and the same results).
- Intra-op threads: onnxruntime's default (one per physical core), or the whole number in the
  environment variable ``DPCORE_ORT_THREADS`` (the test suite sets 1 per pytest worker, so two
  workers do not run four threads on two cores). The thread count splits the work, not the
  sums: results are the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dpcore.validation import env_whole_number

__all__ = ["THREADS_ENV", "intra_op_threads", "onnx_session_bytes", "session_options"]

#: The environment variable that sets onnxruntime's intra-op threads (unset: its default).
THREADS_ENV = "DPCORE_ORT_THREADS"


def intra_op_threads() -> int:
    """``DPCORE_ORT_THREADS`` as a whole number ≥ 1, or 0 (onnxruntime's default) when unset.

    Raises
    ------
    DPCoreError
        When the variable is set to anything but a whole number from 1 to 256.
    """
    n = env_whole_number(THREADS_ENV, min_value=1, max_value=256)
    return 0 if n is None else n


def session_options() -> Any:
    """An ``onnxruntime.SessionOptions`` with dpcore's settings (see the module's docstring)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.enable_cpu_mem_arena = False
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.intra_op_num_threads = intra_op_threads()
    return opts


def onnx_session_bytes(path: Path) -> int:
    """About the memory a session of the graph at ``path`` holds once loaded: twice the file (the
    shipped graphs store their weights in float16 and onnxruntime holds them in float32) plus
    16 MiB for the session itself (the shipped masked LM: 87 MiB measured, 103 estimated; the
    MiniLM encoder: 71 measured, 58 estimated). 0 when the file is missing.
    """
    return 2 * path.stat().st_size + 16 * 2**20 if path.is_file() else 0
