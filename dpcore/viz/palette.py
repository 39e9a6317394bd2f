"""One visual language for every chart (issue 50): colours by role, projector-sized text.

**A colour means one mechanism everywhere** (issue 58). Every figure asks :func:`colour` for a
mechanism's colour by its registered name instead of taking the next colour of a cycle, and no two
registered names share a colour: the vector mechanisms (:data:`dpcore.mechanisms.VECTOR_MECHANISMS`,
flawed reproductions included), the text mechanisms (:data:`dpcore.text.TEXT_MECHANISMS`), the text
audit's reference and flawed controls (``krr``, ``flawed:…``), the rewriters
(:func:`dpcore.rewriter.registry.available_rewriters`, flawed and planted ones included) and the
third-party adapters (``pypantera:…``, ``mldp:…``; :data:`ADAPTERS` says which dpcore mechanism each
one runs). Any two of their colours differ by at least :data:`MIN_DIFFERENCE` (CIEDE2000,
:func:`colour_difference`), and none is a colour that means something else: :data:`BAD` and
:data:`OK` (verdicts), :data:`CLAIM` (a claim's line), :data:`INK` and :data:`SOFT_INK` (text,
notes, attackers) or :data:`UNKNOWN` (a name dpcore does not register).

**Attackers have no colour**: on a chart of attacks the colour is the mechanism and the attacker is
told apart by its marker and its dash (:func:`attacker_style`); what belongs to an attacker alone
(its ε = ∞ point, its legend entry) is drawn in :data:`ATTACKER_INK`, a neutral grey.

**Other roles** have colours of their own, on charts of their own: the verdicts
(:data:`VERDICTS`: red for a violation, green for within the claim; the verdict table and figure,
the text audit) and the sensitivity page's input distributions (:data:`DISTRIBUTIONS`, which
reuse SanText's blue and SanText+'s orange). Neither kind of chart colours a mechanism, so the
blue of "uniform" never stands beside SanText's.

Text is at least :data:`MIN_FONT_PX` pixels and at least :data:`MIN_CONTRAST` : 1 against the
white plot (WCAG 2.1's contrast ratio, :func:`contrast_ratio`), and a chart shows at most
:data:`MAX_LEGEND_ENTRIES` legend entries; :func:`style_figure` enforces all three on a finished
figure (the rest of the legend sits behind a "more in legend" toggle on the chart).

Every colour here has at least 4.5 : 1 contrast on white, so a label drawn in a trace's colour
stays legible too.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from typing import Any, NamedTuple

import plotly.graph_objects as go

__all__ = [
    "ADAPTERS",
    "ATTACKERS",
    "ATTACKER_INK",
    "BAD",
    "CLAIM",
    "DISTRIBUTIONS",
    "INK",
    "MAX_LEGEND_ENTRIES",
    "MECHANISMS",
    "MIN_CONTRAST",
    "MIN_DIFFERENCE",
    "MIN_FONT_PX",
    "NAMED",
    "OK",
    "PAPER",
    "SERIES",
    "SOFT_INK",
    "UNKNOWN",
    "VERDICTS",
    "AttackerStyle",
    "attacker_style",
    "colour",
    "colour_difference",
    "contrast_ratio",
    "legend_entries",
    "style_figure",
    "unsanitized_marker",
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


#: A name dpcore does not register (your own sanitizer or rewriter, a mistyped name): one grey,
#: 5.1 : 1 on white, that is no registered mechanism's colour; such names are told apart by label.
UNKNOWN = "#6e6e6e"
#: What belongs to an attacker alone (its ε = ∞ point, its legend entry): attackers are told
#: apart by marker and dash (:func:`attacker_style`), never by colour.
ATTACKER_INK = SOFT_INK
#: Any two registered mechanisms' colours differ by at least this CIEDE2000 ΔE
#: (:func:`colour_difference`), and each differs at least as much from :data:`BAD`, :data:`OK`,
#: :data:`CLAIM`, :data:`INK`, :data:`SOFT_INK` and :data:`UNKNOWN`. About 2 is the smallest
#: difference one sees between two large patches; thin lines need several times that.
MIN_DIFFERENCE = 9.0

#: Registered name → colour, one colour per mechanism (module docstring). The colours of the
#: paper figures and of the first palette stay where no other name had them (SanText blue,
#: SanText+ orange, DPText magenta, Gaussian teal, Copy brown, DPNR purple, Truncated Gumbel olive,
#: Vickrey-Mahalanobis indigo); the names that shared one moved (Laplace had SanText's blue, ADePT
#: the violation red, DP-MLM Copy's brown, TEM DPText's magenta, Random the notes' grey). The
#: others were chosen to be as far apart as the 4.5 : 1 contrast allows.
MECHANISMS: dict[str, str] = {
    # vector mechanisms (audit, home), flawed reproductions included
    "laplace": "#666ca2",
    "gaussian": "#00777a",
    "copy": "#8c510a",
    "random": "#847200",  # also the text baseline of the same name (random replacement)
    "adept-corrected": "#a24eba",
    "adept": "#604800",
    "dptext": "#a6266e",
    "dptext-resample": "#7860d2",
    "dpnr": "#7b3294",
    # text mechanisms (sanitize, attack, text audit, verdicts)
    "santext": "#1f5fa0",
    "santext+": "#b35806",
    "feyisetan": "#544272",
    "custext": "#784266",
    "custext+": "#0078a2",
    "dp-mlm": "#6c3c1e",  # the text mechanism and the rewriter of the same name
    "mahalanobis": "#7e6636",
    "tem": "#9c5a72",
    "truncated-gumbel": "#4d6b00",
    "vickrey-cmp": "#484e18",
    "vickrey-mahalanobis": "#3f51b5",
    # the text audit's reference and flawed controls
    "krr": "#c6369c",
    "flawed:krr-overclaimed": "#426cde",
    "flawed:tem-bottom-returns-input": "#9c6648",
    "flawed:vickrey-drops-input": "#72723c",
    "flawed:truncated-gumbel-one-word": "#d23072",
    # rewriters (rewriter audit, calibration), flawed and planted ones included
    "dp-prompt": "#4e369c",
    "santext-words": "#846090",
    "flawed:dp-mlm-stopwords": "#364878",
    "flawed:dp-mlm-line-epsilon": "#842448",
    "flawed:dp-prompt-keeps-last-word": "#840c6c",
    "planted:copy": "#966600",
    "planted:leak-word": "#00543c",
    # third-party mechanisms dpcore does not implement
    "mldp:syntf": "#9c3c00",
    "diffractor:geometric": "#47361f",  # 1-Diffractor (dp-diffractor); these four found as SERIES
    "preempt:money": "#0000e6",  # Prεεmpt (preempt), its money path
    "preempt:age": "#0c3000",  # its age path (the farthest from every other colour, found likewise)
    "dp-fusion:generate": "#1f3447",  # DP-Fusion (dp-fusion-lib), its Rényi-claim row
    "invink:generate": "#002680",  # InvisibleInk (invink), a row that cannot run here
}

#: Third-party adapter name → the dpcore mechanism it runs, whose colour it takes. An adapter runs
#: the same published mechanism as dpcore's (same paper, same algorithm, its own code), so it is the
#: same mechanism and keeps that mechanism's colour; a chart that shows both implementations tells
#: them apart by label (the verdicts page, where they meet, colours by verdict). An adapter with
#: no dpcore counterpart (``mldp:SynTF``) has its own colour in :data:`MECHANISMS`. Keys are
#: lower case (:func:`colour` ignores case).
ADAPTERS: dict[str, str] = {
    "pypantera:cmp": "feyisetan",  # Feyisetan et al. 2020's multivariate calibrated mechanism
    "pypantera:mahalanobis": "mahalanobis",
    "pypantera:vickreycmp": "vickrey-cmp",
    "pypantera:vickreymhl": "vickrey-mahalanobis",
    "pypantera:santext": "santext",
    "pypantera:custext": "custext",
    "pypantera:tem": "tem",
    "mldp:cmp": "feyisetan",
    "mldp:mahalanobis": "mahalanobis",
    "mldp:vickrey": "vickrey-cmp",  # Vickrey over CMP's noisy vector
    "mldp:tem": "tem",
    "mldp:truncatedgumbel": "truncated-gumbel",
    "dpmlm:rewrite": "dp-mlm",  # the authors' DP-MLM package: the paper dpcore's dp-mlm implements
}

#: Colours of series that are not registered names: a sentence's words (the Sanitize chart), word
#: pairs (the audit charts), input distributions. None is a mechanism's colour or a reserved one:
#: each is at least :data:`MIN_DIFFERENCE` from every colour of :data:`MECHANISMS`, from
#: :data:`BAD`, :data:`OK`, :data:`INK`, :data:`SOFT_INK` and :data:`UNKNOWN`, and from each other,
#: and at least 25 from :data:`BAD` and :data:`OK` (a word is not a verdict), so a colour still
#: means one mechanism on every chart. Found by a greedy farthest-first search over HLS colours
#: with at least 4.6 : 1 contrast on white; ``tests/test_palette_roles.py`` checks the property.
#: Series are also told apart by dash and marker, since several of them are dark.
SERIES: tuple[str, ...] = ("#164c5a", "#000070", "#8400f0", "#46165a", "#1f2451", "#511f3d")

#: The sensitivity page's input distributions: a role of their own, in :data:`SERIES` colours.
DISTRIBUTIONS: dict[str, str] = {"uniform": SERIES[0], "normal": SERIES[2]}

#: Verdicts: a role of their own, on charts that colour no mechanism (the verdict table and figure,
#: the text audit). Red is a violation, green a result within its claim, greys say "nothing shown".
VERDICTS: dict[str, str] = {
    "violates": BAD,
    "premise-broken": "#db3700",  # amber-red: no mechanism's (SanText+'s orange was here)
    "not-detected": SOFT_INK,
    "out-of-reach": SOFT_INK,
    "within-claim": OK,
    "no-claim": "#5a5a5a",
}

#: Every name with a colour: the mechanisms, the distributions and the verdicts (no name is in two).
NAMED: dict[str, str] = {**VERDICTS, **DISTRIBUTIONS, **MECHANISMS}


class AttackerStyle(NamedTuple):
    """How an attacker is drawn: a Plotly marker symbol and a line dash (never a colour).

    Attributes
    ----------
    symbol:
        The marker of its points (``"circle"``, ``"diamond"``, …).
    dash:
        The dash of its lines (``"solid"``, ``"dash"``, …).
    """

    symbol: str
    dash: str


#: Attacker name → its marker and dash, the same on every chart. The attacker on unsanitized text
#: (the ε = ∞ reference) is a hollow circle and a dotted line, as the attack charts draw it.
ATTACKERS: dict[str, AttackerStyle] = {
    "bayes-unigram": AttackerStyle("circle", "solid"),
    "mlm": AttackerStyle("diamond", "dash"),
    "bayes-mlm": AttackerStyle("square", "dashdot"),
    "llm": AttackerStyle("triangle-up", "longdashdot"),
    "unsanitized": AttackerStyle("circle-open", "dot"),
}
#: Styles of attackers not in :data:`ATTACKERS`, chosen by a stable hash of the name; none is a
#: named attacker's marker or dash.
_OTHER_ATTACKERS = (
    AttackerStyle("triangle-down", "longdash"),
    AttackerStyle("star", "longdash"),
    AttackerStyle("pentagon", "longdash"),
)


def _key(name: str) -> str:
    """``name`` as the tables spell it: lower case, without a trailing "(…)" or words after it."""
    key = str(name).strip().lower()
    if key in NAMED or key in ADAPTERS or key in ATTACKERS:
        return key
    key = key.split(" (")[0].strip()
    if key in NAMED or key in ADAPTERS or key in ATTACKERS:
        return key
    hyphened = "-".join(key.split())  # "truncated gumbel" → "truncated-gumbel"
    if hyphened in NAMED or hyphened in ADAPTERS:
        return hyphened
    return key.split(" ")[0]


def colour(name: str) -> str:
    """The colour of ``name`` on every chart.

    Parameters
    ----------
    name
        A registered mechanism, rewriter or adapter name (``"santext+"``, ``"flawed:dp-mlm-stopwords"``,
        ``"pypantera:CMP"``), a verdict (``"violates"``) or an input distribution (``"uniform"``).
        Matching ignores case and a trailing parenthesis or words after the name, so
        ``"adept (exact)"`` and ``"ADePT"`` get ADePT's colour.

    Returns
    -------
    str
        A hex colour, the same for the same name in every run: the name's colour in :data:`NAMED`;
        for an adapter, the colour of the dpcore mechanism it runs (:data:`ADAPTERS`); for an
        attacker, :data:`ATTACKER_INK` (attackers are told apart by :func:`attacker_style`); for
        any other name, :data:`UNKNOWN`, a grey that is no registered name's colour.

    Examples
    --------
    >>> colour("pypantera:CMP") == colour("feyisetan")
    True
    >>> colour("my-own-sanitizer") == UNKNOWN
    True
    """
    key = _key(name)
    if key in ATTACKERS:
        return ATTACKER_INK
    return NAMED.get(ADAPTERS.get(key, key), UNKNOWN)


def attacker_style(name: str) -> AttackerStyle:
    """The marker and dash of an attacker on every chart (its colour is the mechanism's).

    Parameters
    ----------
    name
        An attacker (``"mlm"``, ``"bayes-unigram"``, ``"bayes-mlm"``, ``"unsanitized"``); case and a
        trailing "(…)" are ignored.

    Returns
    -------
    AttackerStyle
        Its entry in :data:`ATTACKERS`; for any other name, a style chosen by a stable hash of the
        name among styles no named attacker has.
    """
    key = _key(name)
    if key in ATTACKERS:
        return ATTACKERS[key]
    h = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=4).digest(), "big")
    return _OTHER_ATTACKERS[h % len(_OTHER_ATTACKERS)]


def unsanitized_marker(attacker: str, *, size: int = 16) -> dict[str, Any]:
    """The marker of an attacker on unsanitized text (its ε = ∞ point), for a two-point trace.

    The attack charts draw it as two markers at one place: a hollow circle in :data:`ATTACKER_INK`
    (the "hollow circle" the captions name) with the attacker's own marker small inside it, so the
    attackers' ε = ∞ points differ by marker as their curves do, and take no colour.

    Parameters
    ----------
    attacker
        The attacker's name (:func:`attacker_style`).
    size
        The circle's size (px); the attacker's marker inside is 7 px.

    Returns
    -------
    dict
        A Plotly ``marker`` for a trace whose two points are both the ε = ∞ point.
    """
    return {
        "color": ATTACKER_INK,
        "symbol": ["circle-open", attacker_style(attacker).symbol],
        "size": [size, 7],
        "line": {"width": [3, 0], "color": ATTACKER_INK},
    }


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


def _lab(colour_: str) -> tuple[float, float, float]:
    """CIELAB (D65) of a colour, a translucent one first blended onto white."""
    r, g, b, a = _rgb(colour_)
    r, g, b = (_channel(a * c + (1 - a) * 255.0) for c in (r, g, b))
    x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047
    y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b
    z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116

    fx, fy, fz = f(x), f(y), f(z)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def _ciede2000(lab1: tuple[float, float, float], lab2: tuple[float, float, float]) -> float:
    """CIEDE2000 colour difference of two CIELAB colours (Sharma, Wu & Dalal 2005, eqs. 1–21)."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_bar = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_bar**7 / (c_bar**7 + 25.0**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0.0
    dh = 0.0
    if c1p * c2p:
        dh = h2p - h1p
        dh = dh - 360 if dh > 180 else dh + 360 if dh < -180 else dh
    d_l, d_c = l2 - l1, c2p - c1p
    d_h = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))
    l_bar, cp_bar = (l1 + l2) / 2, (c1p + c2p) / 2
    if not c1p * c2p:
        h_bar = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_bar = (h1p + h2p) / 2
    else:
        h_bar = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (
        1
        - 0.17 * math.cos(math.radians(h_bar - 30))
        + 0.24 * math.cos(math.radians(2 * h_bar))
        + 0.32 * math.cos(math.radians(3 * h_bar + 6))
        - 0.20 * math.cos(math.radians(4 * h_bar - 63))
    )
    r_t = (
        -math.sin(math.radians(60 * math.exp(-(((h_bar - 275) / 25) ** 2))))
        * 2
        * math.sqrt(cp_bar**7 / (cp_bar**7 + 25.0**7))
    )
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / math.sqrt(20 + (l_bar - 50) ** 2)
    s_c, s_h = 1 + 0.045 * cp_bar, 1 + 0.015 * cp_bar * t
    return math.sqrt((d_l / s_l) ** 2 + (d_c / s_c) ** 2 + (d_h / s_h) ** 2 + r_t * (d_c / s_c) * (d_h / s_h))


def colour_difference(first: str, second: str) -> float:
    """How different two colours look: the CIEDE2000 ΔE of their CIELAB values (0 for the same
    colour; about 2 is just noticeable between two large patches; black to white is 100).

    Parameters
    ----------
    first, second
        Colours as :func:`contrast_ratio` reads them (``#rrggbb``, ``rgb(…)``, …); a translucent one
        is first blended onto white.

    Returns
    -------
    float
        ΔE₀₀ (Sharma, Wu & Dalal 2005), symmetric in its arguments.
    """
    return _ciede2000(_lab(first), _lab(second))


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
