"""FENCED: reproductions of published mechanisms that are **not** differentially private.

Nothing in this package is private. It exists so that the audit and the explanation pages can
show *why* these mechanisms fail, next to correct ones. Every mechanism registered from here
carries ``flawed=True`` in :data:`dpcore.mechanisms.VECTOR_MECHANISMS`; listings, the CLI and the
dashboard label it "flawed reproduction" and never offer it for sanitising data.

This package registers itself: importing it (or any module in it) adds its mechanisms to the
registry, after the correct ones. :mod:`dpcore.mechanisms` never imports it; what lists or builds
mechanisms by name imports it (:mod:`dpcore.audit`, ``python -m dpcore list``,
:func:`dpcore.create_mechanism`).

- :mod:`dpcore.flawed.samplers` — DPText's broken inverse-CDF "Laplace" sampler
  (Habernal 2022, eqs. 8–9).
- :mod:`dpcore.flawed.mechanisms` — ADePT as re-implemented in Habernal (2022) Fig. 2, DPText,
  and DPNR (Lyu et al. 2020a).
- :mod:`dpcore.flawed.rewriters` — DP-MLM (Meisenbacher et al. 2024) keeping stopwords verbatim
  as its authors' code does by default, and DP-MLM reporting its per-token ε as the line's
  (``audit-rewriter``; not imported here, :mod:`dpcore.rewriter.registry` imports it).
"""

from dpcore.flawed.mechanisms import DPNR, ADePTFig2, DPText, DPTextResample
from dpcore.flawed.samplers import dptext_noise, dptext_noise_resample

__all__ = ["DPNR", "ADePTFig2", "DPText", "DPTextResample", "dptext_noise", "dptext_noise_resample"]
