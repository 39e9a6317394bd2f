"""A text rewriter run in another Python environment, behind the rewriter interface.

A published rewriter package pins what dpcore cannot share, or needs torch and data dpcore does
not import. :class:`SubprocessRewriter` builds it in its own environment (a managed one,
:mod:`dpcore.textaudit.envs`, or any interpreter) through dpcore's worker
(:mod:`dpcore.textaudit._subprocess_worker`: ``build_rewriter``, ``rewrite``, ``count``) and
rewrites over a pipe, exactly as :class:`~dpcore.textaudit.subprocess_adapter.SubprocessSanitizer`
does for word-level sanitizers (one worker per process, restarted after a death, forgotten by a
forked child, closed at exit).

Randomness: each ``rewrite`` call draws three 32-bit seeds from the audit's ``rng``; the worker
seeds ``random`` and NumPy's global state with the first two (a package that draws from a global
state is seeded from the rng it is handed) and hands ``random.Random(third)`` to the object's
``rewrite``. The same rng gives the same rewrites, which the audit's contract check verifies.

The claim is dpcore's statement of the paper's (:class:`~dpcore.rewriter.interface.RewriterClaim`),
never what the remote object says of itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpcore.rewriter.interface import RewriterClaim
from dpcore.textaudit.subprocess_adapter import BUILD_SEED, WorkerClient
from dpcore.textaudit.worker_protocol import WorkerDied
from dpcore.validation import DPCoreError, check_epsilon

__all__ = ["SubprocessRewriter", "package_rewriter"]


class SubprocessRewriter(WorkerClient):
    """A rewriter built and run in another Python environment (module docstring).

    Parameters
    ----------
    python:
        The other environment's interpreter.
    target:
        ``module:factory`` or ``path/to/file.py:factory``; called there as
        ``factory(epsilon=E, **params)``.
    epsilon:
        ε passed to the factory.
    claim:
        What the paper claims (dpcore's statement, with its citation).
    name:
        The rewriter's name in reports.
    params:
        Extra keyword arguments of the factory (JSON values).
    extra_env:
        Environment variables of the worker (the managed environment's substitutes).
    premise, claimed_bound:
        For a claim whose premise or per-pair bound depends on the texts (a metric claim): dpcore's
        functions of ``(x, x_prime)`` giving why a pair is outside the claim (None: inside) and the
        claimed bound (module-level functions or partials of them, so the rewriter pickles).
    independent_copies:
        False: the audit draws one rewrite per call, each with its own random stream, and skips the
        contract's checks of copies within a call (:mod:`dpcore.rewriter.contract`, items 2–3), so
        that its bounds rest on item 1 alone. For a package whose rewrite costs far more than a
        call (a language model's generation), that is the safer way to draw and the cheaper check.
    isolated, stderr:
        As :class:`~dpcore.textaudit.subprocess_adapter.SubprocessSanitizer`.

    Raises
    ------
    DPCoreError
        One line: the interpreter does not start, the import or the factory fails, or the object
        lacks ``rewrite``; a per-token claim whose object cannot count its tokens.
    """

    _WHAT = "rewriter"
    _IDENTITY = ("name", "method", "has_count_tokens")

    def __init__(
        self,
        *,
        python: str,
        target: str,
        epsilon: float,
        claim: RewriterClaim,
        name: str,
        params: dict[str, Any] | None = None,
        extra_env: dict[str, str] | None = None,
        premise: Callable[[str, str], str | None] | None = None,
        claimed_bound: Callable[[str, str], float] | None = None,
        independent_copies: bool = True,
        isolated: bool = True,
        stderr: str | None = None,
    ) -> None:
        if claim.metric and claimed_bound is None:
            raise DPCoreError(f"{name}: a metric claim needs dpcore's claimed_bound(x, x_prime)")
        self._premise = premise
        self._claimed_bound = claimed_bound
        self.independent_copies = bool(independent_copies)
        self._setup(
            python=python, target=target, label=name, isolated=isolated, stderr=stderr, extra_env=extra_env
        )
        self.name = name
        self.epsilon = check_epsilon(epsilon)
        self.claim = claim
        self.params = dict(params or {})
        self._start()
        if claim.unit == "token" and not self.remote.get("has_count_tokens"):
            self.close()
            raise DPCoreError(f"{name}: a per-token claim needs the package's count_tokens, which it lacks")

    def _build_message(self) -> dict[str, Any]:
        return {
            "op": "build_rewriter",
            "target": self.target,
            "epsilon": self.epsilon,
            "params": self.params,
            "build_seed": BUILD_SEED,
        }

    def rewrite(self, texts: Sequence[str], rng: np.random.Generator) -> list[str]:
        """One rewrite per text, drawn in the worker from three seeds drawn from ``rng``."""
        seeds = [int(v) for v in rng.integers(0, 2**32, size=3)]
        texts = [str(t) for t in texts]
        reply = self._call({"op": "rewrite", "texts": texts, "seeds": seeds}, "rewriting")
        out = reply.get("outputs")
        if not isinstance(out, list) or len(out) != len(texts):
            raise WorkerDied(f"{self.label}: the worker returned a malformed answer to rewrite()")
        return [str(o) for o in out]

    def count_tokens(self, text: str) -> int:
        """The package's own token count of ``text`` (what its per-token claim composes over)."""
        reply = self._call({"op": "count", "texts": [str(text)]}, "counting tokens")
        return int(reply["counts"][0])

    def premise(self, x: str, x_prime: str) -> str | None:
        """Why the pair is outside the claim (None: inside it, or no premise beyond the claim's)."""
        return None if self._premise is None else self._premise(str(x), str(x_prime))

    def claimed_bound(self, x: str, x_prime: str) -> float:
        """A metric claim's bound for the pair (dpcore's function, never the package's)."""
        if self._claimed_bound is None:
            raise DPCoreError(f"{self.name}: its claim does not depend on the texts; use claim.bound")
        return float(self._claimed_bound(str(x), str(x_prime)))

    def describe(self) -> dict[str, Any]:
        return {**self._where(), "adapter": "dpcore.rewriter.remote (run as shipped in its own environment)"}


def package_rewriter(
    env: str, *, name: str, epsilon: float, claim: RewriterClaim, **options: Any
) -> SubprocessRewriter:
    """A published package's rewriter, run as shipped in its managed environment ``env``
    (:data:`dpcore.textaudit.envs.MANAGED_ENVS`): its interpreter, its factory file and its offline
    substitutes; ``options`` are :class:`SubprocessRewriter`'s (``params``, ``premise``, …).

    Raises
    ------
    DPCoreError
        The environment is not installed (one line naming ``adapters install ENV``), or the package
        fails to build.
    """
    from dpcore.textaudit.envs import env_python, factory_target, require_env, worker_env

    require_env(env)
    return SubprocessRewriter(
        python=str(env_python(env)),
        target=factory_target(env),
        epsilon=epsilon,
        claim=claim,
        name=name,
        extra_env=worker_env(env),
        **options,
    )
