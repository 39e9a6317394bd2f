"""``dpmlm:rewrite``: the authors' DP-MLM package (dpmlm 1.3.0) as shipped, in its own environment.

``python -m dpcore adapters install dpmlm`` builds the environment (:mod:`dpcore.textaudit.envs`);
the rewriter then calls the package's ``DPMLM.dpmlm_rewrite(sentence, epsilon)`` with its defaults
(:mod:`dpcore.textaudit._dpmlm_factory`), through :class:`dpcore.rewriter.remote.SubprocessRewriter`.

The claim is the paper's (Meisenbacher et al., Findings of ACL 2024, §3): each token is replaced
by a draw of the exponential mechanism over the masked LM's clipped logits, ε-DP per token, so a
text of n tokens is (n·ε)-DP by sequential composition. The premise: both texts have the same
number of tokens (the package's own tokens, ``nltk.word_tokenize``), since the output keeps the
input's length.

Substitutes (offline, :mod:`dpcore.textaudit.substitutes`): dpcore's MiniLM masked LM for
``FacebookAI/roberta-base``, and NLTK's data. Neither changes what is tested: the clipping bounds
the package applies make every token's draw ε-DP for any model, and the verdict's pair differs in
a word that is a stopword in NLTK's own list as well as in the substitute's.
"""

from __future__ import annotations

from dpcore.rewriter.catalog import REWRITERS
from dpcore.rewriter.interface import RewriterClaim
from dpcore.validation import check_epsilon

__all__ = ["CITATION", "SUBSTITUTES", "dpmlm_package"]

CITATION = (
    "Meisenbacher et al. 2024 (Findings of ACL), DP-MLM §3: each token ε-DP (exponential mechanism over "
    "clipped logits), a text of n tokens n·ε by composition"
)
#: What the package downloads and dpcore hands it instead (keys of ``SUBSTITUTES``).
SUBSTITUTES = ("masked-lm", "nltk-data")


@REWRITERS.register(
    "dpmlm:rewrite",
    summary="dpmlm 1.3.0's dpmlm_rewrite as shipped, in its own environment (adapters install dpmlm)",
    citation=CITATION,
    tags=("kind:package", "needs-env"),
    display="the dpmlm 1.3.0 package",
)
def dpmlm_package(*, epsilon: float) -> object:
    """The package's DP-MLM at ``epsilon`` per token (module docstring).

    Raises
    ------
    DPCoreError
        The environment is not installed, or the package fails to build (one line).
    """
    from dpcore.rewriter.remote import package_rewriter
    from dpcore.textaudit.substitutes import masked_lm_folder

    epsilon = check_epsilon(epsilon)
    claim = RewriterClaim(epsilon, unit="token", same_length=True, citation=CITATION)
    return package_rewriter(
        "dpmlm",
        name="dpmlm:rewrite",
        epsilon=epsilon,
        claim=claim,
        params={"model": str(masked_lm_folder())},
    )
