"""Run audit cells and grids: :func:`audit` and :func:`audit_grid`."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from dpcore.audit.exact import binomial_logpmf, exact_lr_loss, exact_majority_loss
from dpcore.audit.montecarlo import (
    STREAM_SCHEME,
    STREAMS,
    check_declared_probabilities,
    declared_model_check,
    lr_from_counts,
    majority_from_counts,
    sample_counts,
)
from dpcore.audit.result import AuditResult, verdict_for
from dpcore.audit.tradeoffs import exact_pair, mc_pair
from dpcore.limits import AUDIT_MAX_TRIALS, AUDIT_METHODS
from dpcore.mechanisms import VECTOR_MECHANISMS, IIDAuditable, VectorMechanism
from dpcore.mechanisms.base import MAX_DIM
from dpcore.parallel import resolve_workers
from dpcore.rng import cell_seed_sequence, resolve_seed
from dpcore.validation import DPCoreError, check_epsilon, check_finite_float, check_int

__all__ = [
    "MAX_BLACKBOX_DRAWS",
    "MAX_TRIALS",
    "METHODS",
    "MonteCarloPlan",
    "audit",
    "audit_grid",
    "blackbox_draws",
    "build_mechanism",
    "plan_monte_carlo",
]

METHODS = AUDIT_METHODS
#: Largest number of trials per input accepted by the API and the CLI.
MAX_TRIALS = AUDIT_MAX_TRIALS
MIN_TRIALS = 10
#: Largest number of noise values a real-sampler (black-box) run may draw (trials × dim × 2).
MAX_BLACKBOX_DRAWS = 2 * 10**10

ProgressFn = Callable[[int, int], None]


def build_mechanism(
    name: str, *, epsilon: float, dim: int, options: Mapping[str, object] | None = None
) -> VectorMechanism:
    """Create the registered mechanism ``name``; unknown options give a clear error."""
    entry = VECTOR_MECHANISMS.get(name)
    kwargs = dict(options or {})
    try:
        return entry.factory(epsilon=epsilon, dim=dim, **kwargs)
    except TypeError as exc:
        if kwargs and "unexpected keyword" in str(exc):
            opts = ", ".join(sorted(kwargs))
            raise DPCoreError(f"mechanism {name!r} does not take the option(s): {opts}") from None
        raise


def audit(
    mechanism: str | VectorMechanism,
    *,
    dim: int | None = None,
    epsilon: float | None = None,
    method: str = "exact",
    trials: int = 1_000_000,
    seed: int | None = None,
    confidence: float = 0.95,
    blackbox: bool | None = None,
    model_based: bool = False,
    options: Mapping[str, object] | None = None,
    progress: ProgressFn | None = None,
    workers: int | None = None,
) -> AuditResult:
    """Run Habernal's (2022) reconstruction sanity check on one (mechanism, n, ε) cell.

    Parameters
    ----------
    mechanism:
        A registered name (see ``python -m dpcore list``) or a mechanism object.
    dim, epsilon:
        Dimension n (1..4096) and privacy parameter ε (0 < ε ≤ 1000). Required with a name.
    method:
        ``"exact"`` (closed form; needs i.i.d. coordinates) or ``"mc"`` (Monte-Carlo).
    trials:
        Trials on *each* neighbour for ``"mc"`` (10..1e9).
    seed:
        Seed for ``"mc"``; a fresh one is drawn and recorded when None.
    confidence:
        Confidence of the Clopper–Pearson bounds, in (0.5, 1).
    blackbox:
        Kept for compatibility: ``"mc"`` always runs the mechanism's real sampler unless
        ``model_based`` is set, so ``True`` changes nothing and ``False`` does not select the
        shortcut. ``blackbox=True`` with ``model_based=True`` is an error.
    model_based:
        For ``"mc"``: draw the count K from the mechanism's *declared* per-coordinate
        probabilities (Binomial shortcut, fast at any n) instead of running its sampler. Allowed
        only for mechanisms declaring i.i.d. coordinates, and only after a cross-check:
        :data:`~dpcore.audit.montecarlo.CROSSCHECK_DRAWS` real single coordinates per input are
        tested against the declared probabilities, and the audit refuses when they disagree.
        Its result agrees with the exact value by construction and cannot show a sampler bug.
    options:
        Extra keyword arguments for the mechanism (e.g. ``{"delta": 1e-6}`` for ``gaussian``).
    progress:
        Optional callback ``progress(done, total)`` for long Monte-Carlo runs; always called from
        the calling thread.
    workers:
        Threads for ``"mc"`` (1..64; None = the machine's cores). The trials come from
        :data:`~dpcore.audit.montecarlo.STREAMS` independent streams of the seed whatever this
        is, so the result does not depend on it; at most that many run at once.
    """
    t0 = time.perf_counter()
    n_workers = resolve_workers(workers)
    if method not in METHODS:
        raise DPCoreError(f"unknown method {method!r}; choose one of: {', '.join(METHODS)}")
    if isinstance(mechanism, str):
        VECTOR_MECHANISMS.get(mechanism)  # unknown names fail first, with the valid list
        if dim is None or epsilon is None:
            raise DPCoreError("dim and epsilon are required when the mechanism is given by name")
        dim = check_int(dim, name="dim", min_value=1, max_value=MAX_DIM)
        epsilon = check_epsilon(epsilon)
        mech = build_mechanism(mechanism, epsilon=epsilon, dim=dim, options=options)
        name = mechanism
    elif isinstance(mechanism, VectorMechanism):
        mech = mechanism
        name = getattr(mech, "name", type(mech).__name__)
    else:
        raise DPCoreError(
            f"mechanism must be a registered name or a mechanism object, got {type(mechanism).__name__}"
        )
    flawed = name in VECTOR_MECHANISMS and VECTOR_MECHANISMS.get(name).flawed
    conf = check_finite_float(confidence, name="confidence", min_value=0.5, max_value=0.999999)
    if conf <= 0.5:
        raise DPCoreError("confidence must be > 0.5")
    delta = float(mech.delta)
    claimed = float(mech.claimed_epsilon)
    true_eps = None if mech.true_epsilon is None else float(mech.true_epsilon)
    n = int(mech.dim)
    common = {
        "mechanism": name,
        "flawed": bool(flawed),
        "dim": n,
        "epsilon": float(mech.epsilon),
        "delta": delta,
        "claimed_epsilon": claimed,
        "true_epsilon": true_eps,
    }

    if method == "exact":
        if not isinstance(mech, IIDAuditable):
            raise DPCoreError(
                f"exact audit needs i.i.d. coordinates, which {name!r} does not declare; use method 'mc'"
            )
        lp = mech.threshold_logprobs(0.5)
        pmf_d = binomial_logpmf(n, lp[0, 1], lp[0, 0])
        pmf_p = binomial_logpmf(n, lp[1, 1], lp[1, 0])
        emp = exact_majority_loss(pmf_d, pmf_p, delta)
        lr, cut = exact_lr_loss(pmf_d, pmf_p, delta)
        pair = exact_pair(pmf_d, pmf_p, epsilon=claimed, delta=delta, lr_cut=cut)
        return AuditResult(
            **common,
            method="exact",
            trials=None,
            seed=None,
            blackbox=False,
            confidence=None,
            empirical_epsilon=emp,
            lower_bound=None,
            upper_bound=None,
            lr_epsilon=lr,
            lr_lower_bound=None,
            lr_cut=cut,
            verdict_lower_bound=None,
            verdict=verdict_for(max(emp, lr), claimed, exact=True),
            guess1_d=None,
            guess1_dprime=None,
            elapsed_s=time.perf_counter() - t0,
            tradeoff_pair=pair,
        )

    trials = check_int(trials, name="trials", min_value=MIN_TRIALS, max_value=MAX_TRIALS)
    if model_based and blackbox:
        raise DPCoreError("choose either the real sampler (blackbox) or model-based, not both")
    if model_based and not isinstance(mech, IIDAuditable):
        raise DPCoreError(
            f"model-based Monte-Carlo needs declared i.i.d. per-coordinate probabilities, which "
            f"{name!r} does not declare; run Monte-Carlo without model-based to use its sampler"
        )
    if not model_based and 2 * trials * n > MAX_BLACKBOX_DRAWS:
        raise DPCoreError(
            f"black-box Monte-Carlo would draw {2 * trials * n:.3g} values "
            f"(limit {MAX_BLACKBOX_DRAWS:.0e}); lower trials or dim, or use model-based Monte-Carlo"
        )
    seed = resolve_seed(seed)
    stream = cell_seed_sequence(seed, name, n, float(mech.epsilon))
    if model_based:
        check = check_declared_probabilities(
            mech, cell_seed_sequence(seed, name, n, float(mech.epsilon), "cross-check"), workers=n_workers
        )
        if not check["agrees"]:
            raise DPCoreError(_refusal(name, check))
    counts = sample_counts(
        mech, trials, stream, model_based=model_based, progress=progress, workers=n_workers
    )
    if not model_based:
        check = declared_model_check(mech, counts)
    mv = majority_from_counts(counts.total, trials, confidence=conf, delta=delta)
    lr = lr_from_counts(counts, confidence=conf, delta=delta)
    # The verdict uses both attacks; Bonferroni keeps the pair at the stated confidence.
    conf2 = 1.0 - (1.0 - conf) / 2.0
    verdict_lb = max(
        majority_from_counts(counts.total, trials, confidence=conf2, delta=delta)["lower"],
        lr_from_counts(counts, confidence=conf2, delta=delta)["lower"],
    )
    reach = _max_detectable(trials, 1.0 - conf2)  # the largest loss these trials can show
    declared = None
    if isinstance(mech, IIDAuditable):
        lp = mech.threshold_logprobs(0.5)
        declared = (binomial_logpmf(n, lp[0, 1], lp[0, 0]), binomial_logpmf(n, lp[1, 1], lp[1, 0]))
    pair = mc_pair(
        counts.hist, trials, epsilon=claimed, delta=delta, confidence=conf, lr_cut=lr["cut"], exact=declared
    )
    return AuditResult(
        **common,
        method="mc",
        trials=trials,
        seed=seed,
        blackbox=not model_based,
        confidence=conf,
        empirical_epsilon=mv["point"],
        lower_bound=mv["lower"],
        upper_bound=mv["upper"],
        lr_epsilon=lr["point"],
        lr_lower_bound=lr["lower"],
        lr_cut=lr["cut"],
        verdict_lower_bound=verdict_lb,
        verdict=verdict_for(verdict_lb, claimed, exact=False, reach=reach),
        guess1_d=mv["guess1_d"],
        guess1_dprime=mv["guess1_dprime"],
        elapsed_s=time.perf_counter() - t0,
        max_detectable_loss=reach,
        sampler="model-based" if model_based else "real",
        sampler_check=check,
        streams=STREAMS,
        stream_scheme=STREAM_SCHEME,
        workers=counts.workers,
        tradeoff_pair=pair,
    )


def _refusal(name: str, check: Mapping[str, object]) -> str:
    """The one-line message when a sampler disagrees with its declared probabilities."""
    parts = []
    for b in (0, 1):
        lo, hi = check["interval"][b]  # type: ignore[index]
        parts.append(
            f"under {b}ⁿ P(z_i ≥ 0.5) is declared {check['declared'][b]:.6g}, observed "  # type: ignore[index]
            f"{check['observed'][b]:.6g} (interval [{lo:.6g}, {hi:.6g}])"  # type: ignore[index]
        )
    return (
        f"model-based Monte-Carlo refused: {name!r}'s real sampler disagrees with its declared "
        f"per-coordinate probabilities in {check['draws_per_input']:,} draws per input "
        f"(exact test, family-wise error {check['alpha']:g}): "
        + "; ".join(parts)
        + ". Run Monte-Carlo without model-based to audit the real sampler."
    )


def _max_detectable(trials: int, alpha: float) -> float:
    """ln CP⁻(T of T) − ln CP⁺(0 of T): the largest lower bound T trials per side can give.

    ``alpha`` is each side's level, so the ratio bound's is 2α.
    """
    from dpcore.stats import cp_max_log_ratio

    return cp_max_log_ratio(trials, 2.0 * alpha)


def audit_grid(
    mechanisms: Sequence[str],
    *,
    dims: Sequence[int],
    epsilons: Sequence[float],
    method: str = "exact",
    trials: int = 1_000_000,
    seed: int | None = None,
    confidence: float = 0.95,
    blackbox: bool | None = None,
    model_based: bool = False,
    options: Mapping[str, Mapping[str, object]] | None = None,
    progress: ProgressFn | None = None,
    workers: int | None = None,
) -> list[AuditResult]:
    """Audit every (mechanism, ε, n) cell with the same ``seed``.

    Each cell's random stream depends only on (seed, mechanism, n, ε) — see
    :func:`dpcore.rng.cell_seed_sequence` — so any cell is reproduced by :func:`audit` alone.

    ``options`` maps a mechanism name to its extra keyword arguments. ``progress(done, total)``
    counts cells (and, within a Monte-Carlo cell, its trials). ``workers`` is passed to
    :func:`audit` (threads per Monte-Carlo cell; None = the machine's cores).

    Examples
    --------
    >>> from dpcore.audit import audit_grid
    >>> [r.verdict for r in audit_grid(["laplace", "adept"], dims=[1, 64], epsilons=[1.0])]
    ['within-claim', 'within-claim', 'within-claim', 'violates']
    """
    seed = resolve_seed(seed)
    n_workers = resolve_workers(workers)
    cells = [(m, e, d) for m in mechanisms for e in epsilons for d in dims]
    if method == "mc":
        t = check_int(trials, name="trials", min_value=MIN_TRIALS, max_value=MAX_TRIALS)
        draws = sum(
            blackbox_draws([m], [d], t, epsilon=e, model_based=model_based, options=options)
            for m, e, d in cells
        )
        if draws > MAX_BLACKBOX_DRAWS:
            raise DPCoreError(
                f"this grid would draw {draws:.3g} noise values in black-box Monte-Carlo (limit "
                f"{MAX_BLACKBOX_DRAWS:.0e} per run): lower --trials or the dimensions, or add --model-based"
            )
    out: list[AuditResult] = []
    for i, (m, e, d) in enumerate(cells):

        def inner(done: int, total: int, i: int = i) -> None:
            if progress is not None:
                progress(i * total + done, len(cells) * total)

        res = audit(
            m,
            dim=d,
            epsilon=e,
            method=method,
            trials=trials,
            seed=seed,
            confidence=confidence,
            blackbox=blackbox,
            model_based=model_based,
            options=(options or {}).get(m),
            progress=inner if method == "mc" else None,
            workers=n_workers,
        )
        out.append(res)
        if progress is not None and method != "mc":
            progress(i + 1, len(cells))
    return out


def _runs_real_sampler(
    name: str, *, epsilon: float, model_based: bool, options: Mapping[str, Mapping[str, object]] | None
) -> bool:
    """Whether Monte-Carlo on ``name`` draws through its real sampler (not the model shortcut)."""
    if not model_based:
        return True
    mech = VECTOR_MECHANISMS.create(name, epsilon=epsilon, dim=1, **dict((options or {}).get(name) or {}))
    return not isinstance(mech, IIDAuditable)


def blackbox_draws(
    mechanisms: Sequence[str],
    dims: Sequence[int],
    trials: int,
    *,
    epsilon: float = 1.0,
    model_based: bool = False,
    options: Mapping[str, Mapping[str, object]] | None = None,
) -> int:
    """Noise values Monte-Carlo draws through real samplers for these cells: 2 · trials · n each.

    Mechanisms that model-based Monte-Carlo serves from their declared probabilities draw none
    (their cross-check is a fixed 2·10⁶ single coordinates).

    Examples
    --------
    >>> blackbox_draws(["laplace", "gaussian"], [1, 2, 4], 1000)
    28000
    """
    real = [
        m
        for m in mechanisms
        if _runs_real_sampler(m, epsilon=epsilon, model_based=model_based, options=options)
    ]
    return 2 * int(trials) * len(real) * sum(int(d) for d in dims)


@dataclass(frozen=True)
class MonteCarloPlan:
    """Which dimensions of a grid get Monte-Carlo under a cap on real-sampler draws.

    Exact values cost nothing and are always computed; Monte-Carlo runs for the smallest
    dimensions whose draws fit ``max_draws`` together (``mc_dims``) and is left out for the rest
    (``left_out``). ``largest_trials`` is the largest of the offered trial counts at which every
    dimension fits (None when none does).
    """

    trials: int
    max_draws: int
    mc_dims: tuple[int, ...]
    left_out: tuple[int, ...]
    draws: int
    requested_draws: int
    largest_trials: int | None

    @property
    def complete(self) -> bool:
        """True when Monte-Carlo runs for every dimension."""
        return not self.left_out

    def note(self) -> str | None:
        """One sentence on what was left out and why (None when nothing was)."""
        if self.complete:
            return None
        left = ", ".join(f"{d:,}" for d in self.left_out)
        shown = (
            "no dimension fits"
            if not self.mc_dims
            else f"it ran for n = {_span(self.mc_dims)} ({self.draws:.3g} draws)"
        )
        return (
            f"Monte-Carlo left out for n = {left}: {self.trials:,} trials per neighbour at every n "
            f"would draw {self.requested_draws:.3g} noise values through the real samplers, and "
            f"this server allows {self.max_draws:.3g} per request; {shown}. Exact values are shown "
            "for every n."
        )


def _span(dims: Sequence[int]) -> str:
    return f"{dims[0]:,}" if len(dims) == 1 else f"{dims[0]:,}…{dims[-1]:,}"


def plan_monte_carlo(
    mechanisms: Sequence[str],
    dims: Sequence[int],
    *,
    trials: int,
    max_draws: int,
    epsilon: float = 1.0,
    model_based: bool = False,
    trial_options: Sequence[int] | None = None,
    options: Mapping[str, Mapping[str, object]] | None = None,
) -> MonteCarloPlan:
    """Fit a Monte-Carlo grid into ``max_draws`` real-sampler draws instead of refusing it.

    Dimensions are taken from the smallest up while all selected mechanisms' draws at them fit
    together; the others are left out (their exact values need no draws). ``largest_trials`` is
    the largest value of ``trial_options`` (default: any whole number ≥ 10) at which every
    dimension would fit.

    Examples
    --------
    >>> p = plan_monte_carlo(["laplace", "gaussian"], [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
    ...                      trials=1_000_000, max_draws=300_000_000, trial_options=[10_000, 20_000, 50_000])
    >>> p.mc_dims[-1], p.left_out[0], p.largest_trials
    (32, 64, 20000)
    """
    t = check_int(trials, name="trials", min_value=MIN_TRIALS, max_value=MAX_TRIALS)
    cap = check_int(max_draws, name="max_draws", min_value=0, max_value=10**18)
    ordered = sorted({int(d) for d in dims})
    per_trial_dim = blackbox_draws(
        mechanisms, [1], 1, epsilon=epsilon, model_based=model_based, options=options
    )
    used, fit = 0, []
    for d in ordered:
        cost = per_trial_dim * t * d
        if used + cost > cap:
            break
        used += cost
        fit.append(d)
    left = tuple(d for d in ordered if d not in fit)
    per_trial = per_trial_dim * sum(ordered)
    if per_trial == 0:
        largest: int | None = max(trial_options) if trial_options else MAX_TRIALS
    elif trial_options is not None:
        ok = [int(o) for o in trial_options if per_trial * int(o) <= cap]
        largest = max(ok) if ok else None
    else:
        top = min(cap // per_trial, MAX_TRIALS)
        largest = top if top >= MIN_TRIALS else None
    return MonteCarloPlan(
        trials=t,
        max_draws=cap,
        mc_dims=tuple(fit),
        left_out=left,
        draws=used,
        requested_draws=per_trial * t,
        largest_trials=largest,
    )
