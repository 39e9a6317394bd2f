"""``dp-fusion:generate``: DP-Fusion's package (dp-fusion-lib 0.1.0) as shipped, in its own environment.

``python -m dpcore adapters install dpfusion`` builds the environment (:mod:`dpcore.textaudit.envs`);
each rewrite is one call of the package's ``DPFusion.generate`` on a user message marked private
(:mod:`dpcore.textaudit._dpfusion_factory`), through :class:`dpcore.rewriter.remote.SubprocessRewriter`.

The claim (Thareja et al., DP-Fusion, arXiv 2507.04531, abstract; the package's
``dp_fusion_lib/__init__.py``, ``core.py`` and ``epsilon.py``):

- each generated token is drawn from a mixture of the model's distributions with and without the
  private span, its weight chosen so that the mixture stays within a Rényi divergence of order α
  of the distribution without it (``core.py:344``, "D_alpha <= alpha * beta");
- the package charges that token 4β of Rényi DP at order α (``epsilon.py:55``, ``:66``), sums the
  charges over the generated tokens and converts the sum to (ε, δ)-DP with
  ε = Σ + ln(1/δ)/(α − 1) (``epsilon.py:51``–``:67``), "formal (ε, δ)-differential privacy" for the
  private spans (``__init__.py:4``). The abstract: "ε = 0 hides sensitive tokens entirely".

dpcore tests the Rényi claim the (ε, δ) one is derived from, which is the stronger and the
checkable one: for a message x and any other x′ with the same public context (the whole message
is private here, so every pair of messages qualifies), D_α(M(x) ‖ M(x′)) ≤ T·ε, with ε = 4β the
charge per token and T = :data:`MAX_NEW_TOKENS` the most tokens a rewrite generates. Charging all
T tokens is generous to the package, which charges one fewer (its first token's divergence is
never recorded: ``utils.py:269`` against ``:320``–``:324``). ``--epsilon`` is that charge per token,
so the package's β is ε/4; α is the package's default, 2.

Drawing: one generation per call, each with its own random stream (``independent_copies=False``):
a generation costs about half a second, so a call's overhead is nothing beside it, and the audit's
bounds then rest on the contract's reproducibility check alone.

Substitute: the model is dpcore's SmolLM2-135M-Instruct (the package's examples use Qwen2.5
chat models); the private span is marked by hand (the whole message), in place of the package's
remote tagger. The claim is made for any model and any marked span, so it depends on neither.
"""

from __future__ import annotations

from dpcore.rewriter.catalog import REWRITERS
from dpcore.rewriter.interface import RewriterClaim
from dpcore.validation import check_epsilon

__all__ = ["CITATION", "MAX_NEW_TOKENS", "ORDER", "SUBSTITUTES", "dpfusion_package"]

#: Tokens each rewrite generates at most (the package's ``max_new_tokens``; its default is 100,
#: which costs about 2 s a rewrite on 2 cores).
MAX_NEW_TOKENS = 3
#: The Rényi order (the package's default ``alpha``).
ORDER = 2.0
CITATION = (
    "Thareja et al. 2025 (arXiv 2507.04531), DP-Fusion abstract and dp_fusion_lib epsilon.py:55–67: Rényi DP "
    f"of order {ORDER:g}, 4β per generated token (ε = 4β), summed over the {MAX_NEW_TOKENS} tokens generated "
    "at most; (ε, δ) by conversion"
)
#: What the package would download and dpcore hands it instead (keys of ``SUBSTITUTES``).
SUBSTITUTES = ("causal-lm",)


@REWRITERS.register(
    "dp-fusion:generate",
    summary=(
        "dp-fusion-lib 0.1.0's DPFusion.generate as shipped, the message marked private by hand "
        "(adapters install dpfusion); ε = 4β per generated token, Rényi order 2"
    ),
    citation=CITATION,
    tags=("kind:package", "needs-env"),
    display="the dp-fusion-lib 0.1.0 package",
)
def dpfusion_package(*, epsilon: float) -> object:
    """The package's DP-Fusion at ``epsilon`` = 4β of Rényi DP per generated token (module docstring).

    Raises
    ------
    DPCoreError
        The environment is not installed, or the package fails to build (one line).
    """
    from dpcore.rewriter.remote import package_rewriter
    from dpcore.textaudit.envs import require_env
    from dpcore.textaudit.substitutes import causal_lm_folder

    epsilon = check_epsilon(epsilon)
    require_env("dpfusion")  # before the model's folder, which a first call would write
    claim = RewriterClaim(MAX_NEW_TOKENS * epsilon, unit="document", citation=CITATION, order=ORDER)
    return package_rewriter(
        "dpfusion",
        name="dp-fusion:generate",
        epsilon=epsilon,
        claim=claim,
        params={"model": str(causal_lm_folder()), "alpha": ORDER, "max_new_tokens": MAX_NEW_TOKENS},
        independent_copies=False,  # one generation per call (module docstring)
    )
