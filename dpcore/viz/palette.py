"""One visual language for every chart (issue 50): colours by name, projector-sized text.

A mechanism, an attacker or a verdict has the same colour on every chart of every page, because
every figure asks :func:`colour` for it by name instead of taking the next colour of a cycle. Text
is at least :data:`MIN_FONT_PX` pixels and at least :data:`MIN_CONTRAST` : 1 against the white
plot (WCAG 2.1's contrast ratio, :func:`contrast_ratio`), and a chart shows at most
:data:`MAX_LEGEND_ENTRIES` legend entries; :func:`style_figure` enforces all three on a finished
figure (the rest of the legend sits behind a "more in legend" toggle on the chart).

Every colour here has at least 4.5 : 1 contrast on white, so a label drawn in a trace's colour
stays legible too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import plotly.graph_objects as go

__all__ = [
    "BAD",
    "CLAIM",
    "INK",
    "MAX_LEGEND_ENTRIES",
    "MIN_CONTRAST",
    "MIN_FONT_PX",
    "NAMED",
    "OK",
    "PAPER",
    "SOFT_INK",
    "colour",
    "contrast_ratio",
    "legend_entries",
    "style_figure",
]

#: Background of every chart.
PAPER = "#ffffff"
#: Main text (ticks, legends, titles): 16.1 : 1 on white.
INK = "#1f1f1f"
#: Secondary text (notes, grey labels): 8.6 : 1 on white.
SOFT_INK = "#4d4d4d"
#: A claim's line (the claimed ε, the claim's floor or ceiling).
CLAIM = "#1f1f1f"
#: A violation, a broken claim (red), and a bound kept or a result within its claim (green).
BAD = "#b2182b"
OK = "#1b7837"
#: Grid lines (not text: no contrast requirement).
GRID = "#dedede"

#: Smallest text on a chart (px), and the size of ticks and legends.
MIN_FONT_PX = 14
BASE_FONT_PX = 15
#: Text size in talk mode (a projector at the back of a room).
TALK_FONT_PX = 19
#: WCAG 2.1 AA contrast for normal text.
MIN_CONTRAST = 4.5
#: The most legend entries a chart shows at once.
MAX_LEGEND_ENTRIES = 6

#: Colours of names that recur across pages. Mechanisms keep the colour the paper figures gave
#: them where one did; attackers and verdicts have one colour each.
NAMED: dict[str, str] = {
    # vector mechanisms (audit, sensitivity, home)
    "laplace": "#1f5fa0",
    "adept": "#b2182b",
    "dptext": "#a6266e",
    "gaussian": "#00777a",
    "copy": "#8c510a",
    "adept-corrected": "#2e7d32",
    "dpnr": "#7b3294",
    "dptext-resample": "#b35806",
    # input distributions (sensitivity)
    "uniform": "#1f5fa0",
    "normal": "#b35806",
    # text mechanisms (sanitize, attack, verdicts)
    "santext": "#1f5fa0",
    "santext+": "#b35806",
    "random": "#5a5a5a",
    "feyisetan": "#7b3294",
    "custext": "#2e7d32",
    "custext+": "#00777a",
    "dp-mlm": "#8c510a",
    "mahalanobis": "#6a3d9a",
    "tem": "#a6266e",
    "truncated-gumbel": "#4d6b00",
    "vickrey-cmp": "#994c00",
    "vickrey-mahalanobis": "#3f51b5",
    # attackers
    "mlm": "#b35806",
    "bayes-unigram": "#1f5fa0",
    "bayes-mlm": "#7b3294",
    "unsanitized": "#4d4d4d",
    # verdicts
    "violates": BAD,
    "premise-broken": "#b35806",
    "not-detected": "#4d4d4d",
    "within-claim": OK,
    "no-claim": "#5a5a5a",
}

#: Colours for names not in :data:`NAMED`, chosen by a stable hash of the name.
_CYCLE = ("#1f5fa0", "#b35806", "#2e7d32", "#7b3294", "#00777a", "#a6266e", "#8c510a", "#3f51b5")


def colour(name: str) -> str:
    """The colour of ``name`` on every chart.

    Parameters
    ----------
    name
        A mechanism, attacker or verdict name (``"santext+"``, ``"bayes-mlm"``, ``"violates"``).
        Matching ignores case and anything after the first space or parenthesis, so
        ``"adept (exact)"`` and ``"ADePT"`` get ADePT's colour.

    Returns
    -------
    str
        A hex colour, the same for the same name in every run (names outside :data:`NAMED` are
        placed by a hash of the name, never by their order on a chart).
    """
    key = str(name).strip().lower()
    if key not in NAMED:
        key = key.split(" (")[0].split(" ")[0].removeprefix("pypantera:").removeprefix("mldp:")
    if key in NAMED:
        return NAMED[key]
    h = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=4).digest(), "big")
    return _CYCLE[h % len(_CYCLE)]


def _channel(c: float) -> float:
    c /= 255.0
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _rgb(colour_: str) -> tuple[float, float, float, float]:
    """(r, g, b, alpha) of a ``#rgb``, ``#rrggbb``, ``rgb(…)`` or ``rgba(…)`` colour."""
    s = colour_.strip().lower()
    if s.startswith("#"):
        h = s[1:]
        if len(h) == 3:
            h = "".join(ch * 2 for ch in h)
        return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16), 1.0
    if s.startswith("rgb"):
        parts = [float(p) for p in s[s.index("(") + 1 : s.index(")")].split(",")]
        return parts[0], parts[1], parts[2], parts[3] if len(parts) > 3 else 1.0
    named = {"black": (0, 0, 0), "white": (255, 255, 255), "grey": (128, 128, 128), "gray": (128, 128, 128)}
    if s in named:
        return (*named[s], 1.0)
    raise ValueError(f"unknown colour {colour_!r}")


def contrast_ratio(foreground: str, background: str = PAPER) -> float:
    """WCAG 2.1 contrast ratio of ``foreground`` text on ``background`` (1 to 21).

    A translucent foreground is first blended onto the background.
    """
    r, g, b, a = _rgb(foreground)
    br, bg, bb, _ = _rgb(background)
    r, g, b = (a * r + (1 - a) * br, a * g + (1 - a) * bg, a * b + (1 - a) * bb)

    def lum(x: float, y: float, z: float) -> float:
        return 0.2126 * _channel(x) + 0.7152 * _channel(y) + 0.0722 * _channel(z)

    l1, l2 = sorted((lum(r, g, b), lum(br, bg, bb)), reverse=True)
    return (l1 + 0.05) / (l2 + 0.05)


def legend_entries(fig: go.Figure) -> list[str]:
    """The names the figure's legend shows when it is first drawn."""
    if fig.layout.showlegend is False:
        return []
    shown = [
        t for t in fig.data
        if t.showlegend is not False and t.name and t.visible is not False
    ]  # fmt: skip
    if fig.layout.showlegend is None and len(fig.data) == 1:
        return []  # Plotly hides the legend of a one-trace figure
    return [str(t.name) for t in shown]


def _legible(font: Any, size: int) -> dict[str, Any]:
    """A font dict at least ``size`` px whose colour has enough contrast (else :data:`INK`)."""
    out = (
        dict(font.to_plotly_json())
        if font is not None and hasattr(font, "to_plotly_json")
        else dict(font or {})
    )
    out["size"] = max(int(out.get("size") or size), size)
    col = out.get("color")
    if not isinstance(col, str) or contrast_ratio(col) < MIN_CONTRAST:
        out["color"] = INK if col is None else SOFT_INK
        if contrast_ratio(out["color"]) < MIN_CONTRAST:  # pragma: no cover - SOFT_INK passes
            out["color"] = INK
    return out


def _axes(fig: go.Figure) -> Iterable[str]:
    layout = fig.layout.to_plotly_json()
    names = [k for k in layout if k.startswith(("xaxis", "yaxis"))]
    return names or ["xaxis", "yaxis"]


def style_figure(fig: go.Figure, *, talk: bool = False, max_legend: int = MAX_LEGEND_ENTRIES) -> go.Figure:
    """Give a finished figure dpcore's visual language, in place, and return it.

    - Every text (ticks, axis titles, legend, annotations, hover, trace labels) is at least
      :data:`MIN_FONT_PX` px (:data:`TALK_FONT_PX` in talk mode) and has at least
      :data:`MIN_CONTRAST` : 1 contrast on white; a colour below that becomes :data:`SOFT_INK`.
    - At most ``max_legend`` legend entries are shown; the others are hidden from the legend
      (their traces stay drawn) and a "more in legend" button on the chart shows them all.
    - White background, light grid.

    Parameters
    ----------
    fig
        The figure.
    talk
        Talk mode: larger text for a projector.
    max_legend
        The most legend entries shown at first.
    """
    size = TALK_FONT_PX if talk else BASE_FONT_PX
    small = max(MIN_FONT_PX, size - 1)
    fig.update_layout(
        template="plotly_white",
        paper_bgcolor=PAPER,
        plot_bgcolor=PAPER,
        font=_legible(fig.layout.font, size) | {"color": INK},
        legend={"font": _legible(fig.layout.legend.font, size)},
        hoverlabel={"font": {"size": max(MIN_FONT_PX, size - 1)}},
    )
    if fig.layout.title is not None and fig.layout.title.text:
        fig.layout.title.font = _legible(fig.layout.title.font, size + 2)
        if fig.layout.title.subtitle is not None and fig.layout.title.subtitle.text:
            fig.layout.title.subtitle.font = _legible(fig.layout.title.subtitle.font, small)
    for name in _axes(fig):
        axis = fig.layout[name]
        axis.tickfont = _legible(axis.tickfont, small)
        axis.title.font = _legible(axis.title.font, size)
        if axis.gridcolor is None:
            axis.gridcolor = GRID
    for ann in fig.layout.annotations:
        ann.font = _legible(ann.font, small)
    for trace in fig.data:
        if "textfont" in trace and (
            getattr(trace, "text", None) is not None or trace.textfont.size is not None
        ):
            trace.textfont = _legible(trace.textfont, small)
    _cap_legend(fig, max_legend)
    return fig


def _cap_legend(fig: go.Figure, max_legend: int) -> None:
    entries = [
        i for i, t in enumerate(fig.data) if t.showlegend is not False and t.name and t.visible is not False
    ]
    if fig.layout.showlegend is False or len(entries) <= max_legend:
        return
    extra, listed = set(entries[max_legend:]), set(entries)
    was = [t.showlegend for t in fig.data]
    shown_first = [(i not in extra) if i in listed else was[i] for i in range(len(was))]
    shown_all = [True if i in listed else was[i] for i in range(len(was))]
    for i in extra:
        fig.data[i].showlegend = False
    fig.update_layout(
        updatemenus=[
            {
                "type": "buttons",
                "direction": "left",
                "showactive": False,
                "x": 1.0,
                "xanchor": "right",
                "y": 1.0,
                "yanchor": "bottom",
                "pad": {"t": 2, "b": 2},
                "font": {"size": MIN_FONT_PX, "color": INK},
                "buttons": [
                    {
                        "label": f"+{len(extra)} more in legend",
                        "method": "restyle",
                        "args": [{"showlegend": shown_all}],
                        "args2": [{"showlegend": shown_first}],
                    }
                ],
            }
        ]
    )
