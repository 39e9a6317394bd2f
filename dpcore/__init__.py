"""dpcore: an open laboratory for differential privacy (DP) in NLP.

The library never imports Streamlit; the dashboard (``app.py``, ``pages/``) is a thin layer on top.

Main entry points
-----------------
- :mod:`dpcore.mechanisms` — correct mechanisms on real vectors and the mechanism registry.
- :mod:`dpcore.flawed` — *fenced* reproductions of published, non-private mechanisms.
- :mod:`dpcore.audit` — Habernal's (2022) reconstruction sanity check, exact and Monte-Carlo.
- ``python -m dpcore`` — the command-line interface.
"""

import sys as _sys

if _sys.argv[:1] == ["-m"]:  # `python -m dpcore` is locating its __main__: see dpcore.__main__
    import signal as _signal

    def _interrupted_at_start_up(signum: int, frame: object) -> None:
        _sys.stderr.write("dpcore: interrupted\n")
        _sys.stderr.flush()
        import os

        os._exit(130)

    _signal.signal(_signal.SIGINT, _interrupted_at_start_up)

from dpcore.validation import DPCoreError

__version__ = "0.1.0"

__all__ = ["DPCoreError", "__version__"]
