"""dpcore: an open laboratory for differential privacy (DP) in NLP.

The library never imports Streamlit; the dashboard (``app.py``, ``pages/``) is a thin layer on top.

Main entry points
-----------------
- :mod:`dpcore.mechanisms` — correct mechanisms on real vectors and the mechanism registry.
- :mod:`dpcore.flawed` — *fenced* reproductions of published, non-private mechanisms.
- :mod:`dpcore.audit` — Habernal's (2022) reconstruction sanity check, exact and Monte-Carlo.
- ``python -m dpcore`` — the command-line interface.
"""

from dpcore.validation import DPCoreError

__version__ = "0.1.0"

__all__ = ["DPCoreError", "__version__"]
