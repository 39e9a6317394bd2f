"""dpcore: an open laboratory for differential privacy (DP) in NLP.

The library never imports Streamlit; the dashboard (``app.py``, ``pages/``) is a thin layer on top.

Main entry points (``dpcore.NAME``; each loads its module on first use, so ``import dpcore``
stays instant)
-----------------------------------------------------------------------------------------------
- :func:`audit`, :func:`audit_grid` — Habernal's (2022) reconstruction sanity check of a vector
  mechanism, exact and Monte-Carlo (:mod:`dpcore.audit`).
- :func:`audit_text` — black-box audit of any text sanitizer's ε claim (:mod:`dpcore.textaudit`).
- :func:`create_mechanism`, :func:`create_text_mechanism`, :func:`text_mechanism` — the
  mechanism factories (registered names: ``python -m dpcore list``).
- :func:`sanitize` — sanitize text; :func:`attack` — defense rates; :func:`utility` —
  downstream accuracy (:mod:`dpcore.api`); :func:`load_mlm`, :func:`mask_token_inference` —
  the masked-LM attacker (onnxruntime).
- :mod:`dpcore.flawed` — *fenced* reproductions of published, non-private mechanisms.
- ``dpcore`` / ``python -m dpcore`` — the command-line interface.

Examples
--------
>>> import dpcore
>>> dpcore.audit("adept", dim=128, epsilon=1.0).verdict
'violates'
>>> dpcore.sanitize("the patient has hiv", mechanism="santext", epsilon=3.0, seed=0).lines  # doctest: +SKIP
['occasional deprived enjoyed hiv']
"""

import sys as _sys

if _sys.argv[:1] == ["-m"]:  # `python -m dpcore` is locating its __main__: see dpcore.__main__
    # `_signal`, the C module under `signal`, is loaded with the interpreter: importing `signal`
    # itself builds its enums (milliseconds on a loaded machine), a window in which Ctrl+C would
    # still end in a traceback through this file.
    import _signal

    def _interrupted_at_start_up(signum: int, frame: object) -> None:
        _sys.stderr.write("dpcore: interrupted\n")
        _sys.stderr.flush()
        import os

        os._exit(130)

    _signal.signal(_signal.SIGINT, _interrupted_at_start_up)

from dpcore.validation import DPCoreError

__version__ = "0.1.0"

#: Public name → (module, attribute or None for the module itself), imported on first access
#: (PEP 562).
_LAZY = {
    "attack": ("dpcore.attack", None),  # a callable package: dpcore.attack(...) = dpcore.api.attack
    "audit": ("dpcore.audit", None),  # a callable package: dpcore.audit(...) = dpcore.audit.audit
    "audit_grid": ("dpcore.audit", "audit_grid"),
    "audit_text": ("dpcore.textaudit", "audit_text"),
    "create_mechanism": ("dpcore.api", "create_mechanism"),
    "create_text_mechanism": ("dpcore.text", "create_text_mechanism"),
    "load_mlm": ("dpcore.models.masked_lm", "load_mlm"),
    "mask_token_inference": ("dpcore.attack.mask_inference", "mask_token_inference"),
    "sanitize": ("dpcore.api", "sanitize"),
    "text_mechanism": ("dpcore.api", "text_mechanism"),
    "utility": ("dpcore.api", "utility"),
}

__all__ = ["DPCoreError", "__version__", *sorted(_LAZY)]


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        mod = importlib.import_module(module)
        value = mod if attr is None else getattr(mod, attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dpcore' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
