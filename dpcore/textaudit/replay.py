"""Reproducibility at the audit's own call sizes: some of its real calls drawn again, bit for bit.

The rng contract (:mod:`dpcore.textaudit.contract`) probes small calls. A sanitizer may draw
from the rng it is handed on small calls and from fresh entropy (or a clock, or state kept
between calls) on large ones; its probe passes, and rerunning the audit with the recorded seed
gives another result. So the audit keeps one word's draws of every stage it runs (a seeded
choice among the words the stage drew: :class:`Recorder`), and after the last stage draws that
word again in this process from its recorded stream, with the same calls
(:func:`~dpcore.textaudit.engine.draw_one_word`), and compares the counts bit for bit
(:func:`replay`). A difference makes the rng record's status ``"not-reproducible"``; the
verdict's statistics still hold for the draws that were made, but the result cannot be
reproduced from its seed, and it says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcore.rng import cell_seed_sequence
from dpcore.textaudit.engine import DrawPlan, WordDraws, draw_one_word

__all__ = ["Recorder", "replay"]


@dataclass(frozen=True)
class _Kept:
    wid: int
    what: DrawPlan
    draws: WordDraws


class Recorder:
    """The audit's ``draw(word ids, what)``, keeping one word's draws per stage.

    Parameters
    ----------
    draw:
        The audit's draw function (:func:`~dpcore.textaudit.runner._drawer`).
    seed:
        The audit's seed; which word is kept is a seeded choice per stage.
    """

    def __init__(self, draw: Callable[[np.ndarray, DrawPlan], list[WordDraws]], seed: int) -> None:
        self._draw = draw
        self._seed = seed
        self.kept: dict[str, _Kept] = {}

    def __call__(self, wids: np.ndarray, what: DrawPlan) -> list[WordDraws]:
        out = self._draw(wids, what)
        if what.stage not in self.kept:
            ok = [k for k, d in enumerate(out) if d.error is None]
            if ok:
                rng = np.random.default_rng(
                    cell_seed_sequence(self._seed, "text-audit", "replay", what.stage)
                )
                k = ok[int(rng.integers(len(ok)))]
                self.kept[what.stage] = _Kept(int(out[k].wid), what, out[k])
        return out


def _same(a: WordDraws, b: WordDraws) -> bool:
    """The same draws: counts and other outputs per half, or the same screen summary (its
    co-located pair score aside: that needs the partner's draws too)."""
    if b.error is not None:
        return False
    if a.summary is not None or b.summary is not None:
        if a.summary is None or b.summary is None:
            return False
        x, y = a.summary, b.summary
        return bool(
            np.array_equal(x.codes, y.codes)
            and np.array_equal(x.counts, y.counts)
            and (x.self_count, x.residual, x.distinct, x.labels, x.partner_counts, x.outside_counts)
            == (y.self_count, y.residual, y.distinct, y.labels, y.partner_counts, y.outside_counts)
        )
    if a.sparse is not None or b.sparse is not None:
        if a.sparse is None or b.sparse is None:
            return False
        return bool(
            np.array_equal(a.sparse.ids, b.sparse.ids) and np.array_equal(a.sparse.counts, b.sparse.counts)
        )
    return (
        len(a.counts) == len(b.counts)
        and all(np.array_equal(c, d) for c, d in zip(a.counts, b.counts, strict=True))
        and a.extras == b.extras
    )


def replay(recorder: Recorder, sanitizer: Any, words: np.ndarray, seed: int) -> dict[str, Any]:
    """Draw every kept word again from its recorded stream and compare.

    Returns
    -------
    dict
        ``stages``: per stage, the word, its draws and ``same``; ``same``: all of them (None when
        nothing was kept); ``draws``: the draws made again; ``text``: one sentence.
    """
    stages: dict[str, dict[str, Any]] = {}
    for stage, kept in recorder.kept.items():
        again = draw_one_word(sanitizer, words, kept.wid, seed, kept.what)
        stages[stage] = {
            "word": str(words[kept.wid]),
            "draws": kept.what.draws_per_word,
            "same": _same(kept.draws, again),
        }
    same = None if not stages else all(s["same"] for s in stages.values())
    drawn = ", ".join(f"{s['draws']:,} {name} draws of {s['word']!r}" for name, s in stages.items())
    if same is None:
        text = "no draw of the audit could be made again (every word failed)"
    elif same:
        text = f"the audit's own calls, drawn again from their recorded seeds, gave the same draws ({drawn})"
    else:
        bad = [name for name, s in stages.items() if not s["same"]]
        text = (
            f"the audit's own calls, drawn again from their recorded seeds, gave other draws (stage "
            f"{', '.join(bad)}; {drawn}): at these call sizes the sanitizer draws from something besides the "
            "rng it is handed (fresh entropy, a clock, state kept between calls), so this result cannot be "
            "reproduced from its seed; its statistics still hold for the draws that were made"
        )
    return {
        "stages": stages,
        "same": same,
        "draws": int(sum(s["draws"] for s in stages.values())),
        "text": text,
    }
