"""Helpers shared by the dashboard pages (Streamlit-side only; dpcore never imports this).

- :data:`PAGES` — the page list read by ``app.py`` and the landing page.
- Query-parameter binding so a URL reproduces a page's configuration, and a per-page store in
  the session so that settings survive sidebar navigation (:func:`apply_query_params`,
  :func:`sync_query_params`).
- :func:`show_errors` — bad input becomes one clear message, never a traceback.
- :func:`download_buttons` — CSV and JSON downloads that carry parameters and seed.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from dpcore.jsonutil import dumps
from dpcore.pairtest.verdicts import VERDICTS
from dpcore.validation import DPCoreError


@dataclass(frozen=True)
class PageInfo:
    path: str
    title: str
    icon: str
    url_path: str
    blurb: str
    default: bool = False


#: Every page of the dashboard, in navigation order. Add a page by adding one entry here.
PAGES: list[PageInfo] = [
    PageInfo("pages/home.py", "Home", ":material/home:", "home", "The lab in a few sentences.", True),
    PageInfo(
        "pages/audit.py",
        "Privacy-loss audit",
        ":material/query_stats:",
        "audit",
        "Habernal's reconstruction sanity check: empirical ε against the claimed ε for any "
        "registered mechanism, exact where coordinates are i.i.d., Monte-Carlo with "
        "Clopper–Pearson bounds otherwise.",
    ),
    PageInfo(
        "pages/audit_text.py",
        "Audit a text sanitizer",
        ":material/manage_search:",
        "audit_text",
        "Any word-level sanitizer as a black box (dpcore's, pyPANTERA's as shipped, or your own "
        "code from the CLI): empirical privacy loss per pair of words with Clopper–Pearson lower "
        "bounds, against the claimed ε or ε·d(x, x′) + ε₀.",
    ),
    PageInfo(
        "pages/audit_rewriter.py",
        "Audit a text rewriter",
        ":material/find_replace:",
        "audit_rewriter",
        "Any sentence rewriter as a black box (DP-MLM, its flawed stopword-keeping default, or your "
        "own code from the CLI): two sentences rewritten hundreds of times each, a Clopper–Pearson lower "
        "bound on the privacy loss of the event that tells them apart, against ε per token times the "
        "sentence's tokens.",
    ),
    PageInfo(
        "pages/rewriter_calibration.py",
        "Rewriter calibration",
        ":material/tune:",
        "rewriter_calibration",
        "The same nominal ε, a different distinguishability: SanText on every word, DP-MLM and "
        "DP-Prompt audited at ε = 1 … 100 on one pair of sentences, how often one rewrite gives the "
        "sentence away (TPR at 1% FPR) beside how much meaning it keeps; each one's ε is per another unit.",
    ),
    PageInfo(
        "pages/verdicts.py",
        "Do public sanitizers keep their claims?",
        ":material/balance:",
        "verdicts",
        "The verdict table: dpcore's, pyPANTERA's and mldp-text's text sanitizers audited as they "
        "ship, each either with a certified privacy loss above its claim or with the smallest flaw "
        "its run would have caught; every row opens its evidence and the command that reproduces it.",
    ),
    PageInfo(
        "pages/sensitivity.py",
        "Sensitivity",
        ":material/open_in_full:",
        "sensitivity",
        "Why ADePT broke: L2 clipping has L1 sensitivity 2C√n, not 2C (Habernal 2021, Thm 5.1), "
        "and how many random pairs exceed the claimed bound as n grows (§6, Fig. 1).",
    ),
    PageInfo(
        "pages/accounting.py",
        "Accounting & samplers",
        ":material/calculate:",
        "accounting",
        "DPNR's true kε and its dropout bound, the per-bit cost of binary-encoding randomized "
        "response, and DPText's never-negative 'Laplace' sampler with its infinite loss.",
    ),
    PageInfo(
        "pages/sanitize.py",
        "Sanitize text",
        ":material/edit_note:",
        "sanitize",
        "SanText, SanText+ and baselines over GloVe or BERT embeddings: sanitized text side by "
        "side with the original, per-token privacy metrics (N_x, S_x, S_y*) and their curves in ε.",
    ),
    PageInfo(
        "pages/attack.py",
        "Attack & utility",
        ":material/psychology:",
        "attack",
        "How much sanitized text leaks and how useful it stays: defense rate of the masked-LM "
        "attack and of a mechanism-aware Bayesian attacker against downstream accuracy (Fig. 4).",
    ),
]


def ensure_navigation() -> None:
    """Keep Streamlit in ``st.navigation`` mode although a ``pages/`` folder sits beside app.py.

    Streamlit 1.67 starts a server whose script folder holds ``pages/`` in legacy (v1)
    multipage mode and leaves it only when ``st.navigation`` runs; a first visit through a deep
    link (``/audit``) would otherwise keep the whole server in v1 mode, with file names as page
    titles and no ``app.py``. Call this first in ``app.py`` and in every page.
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # a future Streamlit without the legacy mode
        return
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


# --------------------------------------------------------------------------------------------
# Query parameters
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    """How one widget value travels through the URL."""

    default: Any
    parse: Callable[[str], Any]
    fmt: Callable[[Any], str] = str


def _to_float(text: str) -> float | None:
    """``float(text)``, or None. Never echo the raw text in a message: it would be rendered
    as Markdown (a crafted URL could put a link or a long string on the page)."""
    try:
        return float(text)
    except (ValueError, OverflowError):
        return None


def float_param(default: float, lo: float, hi: float) -> Param:
    def parse(text: str) -> float:
        x = _to_float(text)
        if x is None or not math.isfinite(x) or not lo <= x <= hi:
            raise ValueError(f"must be a number in [{lo:g}, {hi:g}]")
        return x

    return Param(default, parse, lambda v: f"{v:g}")


def int_param(default: int, lo: int, hi: int) -> Param:
    def parse(text: str) -> int:
        x = _to_float(text)
        if x is None or not math.isfinite(x) or x != int(x) or not lo <= int(x) <= hi:
            raise ValueError(f"must be a whole number in [{lo:,}, {hi:,}]")
        return int(x)

    return Param(default, parse, str)


def choice_param(default: Any, options: Sequence[Any]) -> Param:
    lookup = {str(o): o for o in options}

    def parse(text: str) -> Any:
        if text not in lookup:
            raise ValueError(f"must be one of {', '.join(lookup)}")
        return lookup[text]

    return Param(default, parse, str)


def multi_param(
    default: Sequence[str], options: Sequence[str], max_items: int = 16, *, allow_empty: bool = False
) -> Param:
    def parse(text: str) -> list[str]:
        items = [t for t in text.split(",") if t]
        bad = [t for t in items if t not in options]
        if bad or (not items and not allow_empty) or len(items) > max_items:
            raise ValueError(f"must be a comma-separated list from {', '.join(options)}")
        return list(dict.fromkeys(items))

    return Param(list(default), parse, lambda v: ",".join(v))


def bool_param(default: bool) -> Param:
    def parse(text: str) -> bool:
        if text.lower() in {"1", "true", "yes"}:
            return True
        if text.lower() in {"0", "false", "no"}:
            return False
        raise ValueError("must be true or false")

    return Param(default, parse, lambda v: "true" if v else "false")


_QUERY_PAGE = "_dpcore_query_page"  # the page whose widgets the URL-backed keys now belong to


def init_query_state(specs: dict[str, Param], *, page: str) -> list[str]:
    """Seed ``st.session_state`` from the URL; return warnings for bad params.

    On reruns of the same page, keys already in the session (the user changed a widget) win over
    the URL. When the visitor arrives from another page, every key is seeded again from the URL
    (or its default): Streamlit shares ``st.session_state`` across pages, and another page's
    widget of the same name must not leak in. ``eps`` is a list of ε values on the Attack page and
    one number on the audit page; ``mechs`` names text mechanisms there and vector mechanisms here.
    """
    arriving = st.session_state.get(_QUERY_PAGE) != page
    st.session_state[_QUERY_PAGE] = page
    stored: dict[str, Any] = st.session_state.get(_store_key(page), {})
    warnings: list[str] = []
    if not arriving:
        resend_to_unmounted_widgets(specs)
    for key, spec in specs.items():
        if key in st.session_state and not arriving:
            continue
        raw = st.query_params.get(key)
        # The URL first (a shared link, a reload), then this page's settings from earlier in the
        # session (the visitor went to another page and came back), then the default.
        value = copy.deepcopy(stored[key]) if key in stored else spec.default
        if raw is not None:
            try:
                value = spec.parse(str(raw)[:2000])
            except (ValueError, TypeError, OverflowError) as exc:
                warnings.append(f"URL parameter `{key}` ignored: {exc}.")
        st.session_state[key] = value
    return warnings


def resend_to_unmounted_widgets(keys: Iterable[str]) -> None:
    """Send again, with this run's widgets, the session value of each of ``keys`` whose widget
    the browser did not report with this run's request, so that it shows that value once drawn.

    Streamlit sends a widget's value to the browser only in a run that set it through
    ``st.session_state`` (the arriving run does, from the URL); other runs send the widget
    without it. The browser loads each kind of widget's code on first use, and a widget that
    mounts only after such a later run (a slow link, a busy machine, a visitor who changes a
    setting at once) starts from the widget's own default: the multiselect empty, the slider at
    its first step, the text box blank. The page then shows values the server does not use, and
    the visitor's next change sends those defaults back, so a shared link's settings are lost. A
    widget the browser reported is mounted and holds its value, and is left alone.

    :func:`init_query_state` calls it for every URL-backed key; call it before drawing another
    widget whose value the page sets through ``st.session_state`` (the pasted text).

    Reads Streamlit's session state internals. Where they are missing (another Streamlit
    version), every key counts as unreported: each run then sends every value again, which can
    reset a number the visitor is typing into another box as the run starts.
    """
    present = [key for key in keys if key in st.session_state]
    try:
        from streamlit.runtime.state import get_session_state

        state = get_session_state()._state
        widget_id = state._key_id_mapper.get_id_from_key
        reported = state._new_widget_state.states
    except (ImportError, AttributeError):
        unmounted = present
    else:
        unmounted = [key for key in present if widget_id(key, None) not in reported]
    for key in unmounted:
        st.session_state[key] = st.session_state[key]


def _store_key(page: str) -> str:
    return f"_dpcore_settings_{page}"


def apply_query_params(specs: dict[str, Param], *, page: str) -> None:
    """:func:`init_query_state`, showing one warning per ignored URL parameter."""
    for warning in init_query_state(specs, page=page):
        st.warning(warning, icon=":material/link_off:")


def sync_query_params(specs: dict[str, Param]) -> None:
    """Write the current widget values into the URL, so it reproduces this configuration, and
    into this page's store in the session, so that they survive a visit to another page.

    Streamlit drops a widget's value when its page is left (and when the widget is not drawn in
    a run); the store is a plain session value, which it keeps. :func:`init_query_state` reads
    it back when the visitor returns through the sidebar, where the URL carries no parameters.
    """
    values = {k: st.session_state[k] for k in specs}
    page = st.session_state.get(_QUERY_PAGE)
    if page is not None:
        st.session_state[_store_key(str(page))] = copy.deepcopy(values)
    query = {k: spec.fmt(values[k]) for k, spec in specs.items()}
    if talk_mode():
        query[TALK_PARAM] = "1"  # the speaker's bookmark keeps its switch
    st.query_params.from_dict(query)


# --------------------------------------------------------------------------------------------
# Progress from inside cached functions
# --------------------------------------------------------------------------------------------
def replay_safe(callback: Callable[..., Any]) -> Callable[..., Any]:
    """A progress callback for an ``st.cache_data`` function that updates an element made outside it.

    ``st.cache_data`` records every ``st`` call made while the cached function runs and replays
    it on a cache hit; a ``bar.progress(...)`` on a bar created outside the function cannot be
    replayed (the bar of the earlier run no longer exists) and the page crashes with a
    ``KeyError`` for every later visitor with the same settings. The callback runs in the context
    captured here, outside the cached call, so its updates show live and are not recorded.
    """
    ctx = contextvars.copy_context()

    def run(*args: Any, **kwargs: Any) -> Any:
        return ctx.copy().run(callback, *args, **kwargs)

    return run


def bar_updater(bar: Any, text: Callable[[int, int], str], *, start: float = 0.0, span: float = 1.0):
    """A replay-safe ``progress(done, total)`` callback that moves ``bar`` over [start, start+span].

    It updates the bar only when the shown percentage changes (a computation may report
    thousands of times). Each update is a message to the browser, and the point where a running
    script notices a rerun request: a widget change stops the computation at the next update.
    """
    last = [-1]

    def update(done: int, total: int) -> None:
        frac = min(max(done / max(total, 1), 0.0), 1.0)
        pct = int(100 * (start + span * frac))
        if pct != last[0]:
            last[0] = pct
            bar.progress(pct / 100, text=text(done, total))

    return replay_safe(update)


# --------------------------------------------------------------------------------------------
# Errors and downloads
# --------------------------------------------------------------------------------------------
#: Markdown (and Streamlit's LaTeX, icon and colour) syntax in a sentence that quotes words of a
#: vocabulary or a file: escaped so that a token such as "$" or "*" is shown, not interpreted.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~$:])")


def escape_markdown(text: str) -> str:
    """``text`` with Markdown's special characters escaped, to be shown as written."""
    return _MD_SPECIAL.sub(r"\\\1", text)


@contextlib.contextmanager
def show_errors() -> Iterator[None]:
    """Turn dpcore's input errors into ``st.error`` and stop the page; never show a traceback."""
    try:
        yield
    except DPCoreError as exc:
        st.error(str(exc), icon=":material/error:")
        st.stop()
    except MemoryError:
        st.error("This request needs more memory than the server allows; reduce its size.")
        st.stop()


def download_buttons(df: pd.DataFrame, parameters: dict[str, Any], basename: str, *, key: str) -> None:
    """CSV (parameters as leading ``#`` lines) and JSON (``{"parameters", "results"}``)."""
    header = "".join(f"# {k}: {json.dumps(v, default=str)}\n" for k, v in parameters.items())
    csv = header + df.to_csv(index=False)
    payload = dumps({"parameters": parameters, "results": df.to_dict(orient="records")}, indent=2)
    c1, c2 = st.columns(2)
    # on_click="ignore": a download does not rerun the page, so several downloads in a row do
    # not cancel each other (a rerun would replace the buttons while the browser fetches).
    c1.download_button(
        "Download CSV", csv, file_name=f"{basename}.csv", mime="text/csv", key=f"{key}-csv", on_click="ignore"
    )
    c2.download_button(
        "Download JSON",
        payload,
        file_name=f"{basename}.json",
        mime="application/json",
        key=f"{key}-json",
        on_click="ignore",
    )


# --------------------------------------------------------------------------------------------
# Mechanism parameters: widgets and URL keys generated from the registry's schema
# --------------------------------------------------------------------------------------------
def mechanism_param_url_specs() -> dict[str, Param]:
    """One URL parameter per mechanism parameter name (``p``, ``w``, ``k``, ``beta``, …), read
    from :func:`dpcore.text.parameters.mechanism_parameter_specs`: a new mechanism's parameters
    reach every page's URL with no page edit. Names shared by several mechanisms (``t``, ``lam``,
    ``k``) have one meaning and one default in the schema, and share one key."""
    from dpcore.text import TEXT_MECHANISMS
    from dpcore.text.parameters import mechanism_parameter_specs

    out: dict[str, Param] = {}
    for name in TEXT_MECHANISMS.names():
        for sp in mechanism_parameter_specs(name):
            if sp.name in out:
                continue
            out[sp.name] = spec_param(sp)
    return out


def mechanism_param_widgets(mechs: Sequence[str]) -> dict[str, dict[str, float | int]]:
    """Widgets, in the current container, for the parameters of the selected mechanisms.

    One widget per parameter name (its key is the name, as in the URL), labelled with the
    mechanisms it applies to, its range and its help line from the schema. Returns, for each
    mechanism, the keyword arguments to build it with.
    """
    from dpcore.text.parameters import mechanism_parameter_specs

    owners: dict[str, list[str]] = {}
    specs: dict[str, Any] = {}
    for m in mechs:
        for sp in mechanism_parameter_specs(m):
            owners.setdefault(sp.name, []).append(m)
            specs.setdefault(sp.name, sp)
    for pname, sp in specs.items():
        spec_widget(sp, label=f"{pname} ({', '.join(owners[pname])})", key=pname)
    return {m: {sp.name: spec_value(sp, sp.name) for sp in mechanism_parameter_specs(m)} for m in mechs}


def spec_param(sp: Any) -> Param:
    """The URL parameter of one :class:`~dpcore.parameters.ParameterSpec` (its widget range)."""
    lo, hi = sp.widget_range
    if sp.kind == "bool":
        return bool_param(bool(sp.default))
    if sp.kind == "int":
        return int_param(int(sp.default), int(lo), int(hi))
    return float_param(float(sp.default), float(lo), float(hi))


def spec_widget(sp: Any, *, label: str, key: str) -> None:
    """The widget of one :class:`~dpcore.parameters.ParameterSpec`, in the current container: a
    switch, a slider, or a number box where a slider would have too many steps; its help line
    is the schema's."""
    lo, hi = sp.widget_range
    tip = sp.describe()
    if sp.kind == "bool":
        st.toggle(label, key=key, help=tip)
    elif sp.kind == "int":
        st.slider(label, int(lo), int(hi), step=int(sp.step or 1), key=key, help=tip)
    elif sp.step and (hi - lo) / sp.step <= 200:
        st.slider(label, float(lo), float(hi), step=float(sp.step), key=key, help=tip)
    else:
        st.number_input(
            label, float(lo), float(hi), step=float(sp.step or (hi - lo) / 100), key=key,
            format="%.4g", help=tip,
        )  # fmt: skip


def spec_value(sp: Any, key: str) -> float | int | bool:
    """The value of :func:`spec_widget`'s widget ``key``, in the spec's kind."""
    v = st.session_state[key]
    return bool(v) if sp.kind == "bool" else int(v) if sp.kind == "int" else float(v)


def params_key(params: dict[str, float | int]) -> tuple[tuple[str, float | int], ...]:
    """A hashable, order-free form of one mechanism's parameters (for cache keys)."""
    return tuple(sorted(params.items()))


def show_table(
    df: pd.DataFrame, columns: dict[str, str], *, key: str | None = None, height: int | str = "auto"
) -> None:
    """Show the listed columns of ``df`` under human names with units, in the given order.

    Only columns present are shown (a missing one is skipped). The set is chosen to fit a
    1400-px window without horizontal scrolling; the downloads keep every column under its
    machine name. ``height="content"`` shows every row without a scroll bar (a short table).
    """
    keep = [c for c in columns if c in df.columns]
    st.dataframe(df[keep].rename(columns=columns), hide_index=True, width="stretch", height=height, key=key)


# --------------------------------------------------------------------------------------------
# Plain words first: one sentence an audience follows, notation in an expander
# --------------------------------------------------------------------------------------------
def vocab_size_widget(sizes: Sequence[int], help_text: str) -> None:
    """The "Vocabulary size (GloVe)" slider (key ``vsize``), disabled unless ``emb`` is GloVe."""
    st.select_slider(
        "Vocabulary size (GloVe)",
        list(sizes),
        key="vsize",
        format_func=lambda v: f"{v:,}",
        disabled=st.session_state["emb"] != "glove",
        help=help_text,
    )


# --------------------------------------------------------------------------------------------
# Talk mode and the first screen (issue 50)
# --------------------------------------------------------------------------------------------
#: The URL switch of talk mode: ``?talk=1`` (``?talk=0`` leaves it).
TALK_PARAM = "talk"
_TALK_KEY = "_dpcore_talk"

#: Every page: less empty space above the title, so the headline and the main figure share the
#: first screen of a 1280×720 projector.
_BASE_CSS = """
<style>
.stMainBlockContainer, .block-container { padding-top: 3.6rem; padding-bottom: 3rem; }
h1 { padding-top: 0.25rem !important; padding-bottom: 0.4rem !important; }
</style>
"""

#: Talk mode: larger text, figures wider (the sidebar starts collapsed: :func:`page_style`), and
#: less room above the story (a lower top bar, a smaller title, tighter gaps) so that the headline
#: and the whole main figure, axes and legend included, share the first screen of a 1280×720
#: projector (``tests/e2e/test_first_screen.py`` measures it).
_TALK_CSS = """
<style>
html { font-size: 19px; }
header[data-testid="stHeader"] { height: 2.4rem; min-height: 2.4rem; }
.stMainBlockContainer, .block-container { padding-top: 2.6rem; max-width: 100%; padding-left: 2.5rem;
  padding-right: 2.5rem; }
h1 { font-size: 2.15rem !important; padding-top: 0 !important; padding-bottom: 0.15rem !important; }
[data-testid="stVerticalBlock"] { gap: 0.7rem; }
[data-testid="stExpander"] summary { padding-top: 0.3rem; padding-bottom: 0.3rem; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li { font-size: 1.15rem; }
</style>
"""

#: Talk mode, once per browser load: close the sidebar, whatever the visitor left it as. Streamlit
#: keeps a sidebar the visitor opened open on later loads (``stSidebarCollapsed-…`` in the
#: browser's localStorage overrides ``initial_sidebar_state``), so a speaker who opened it once
#: would start every talk with it open. The script clicks the sidebar's own close button if the
#: sidebar is open (waiting a few frames for it to be drawn, and no longer once it is), then
#: forgets the remembered state, so plain loads start as Streamlit decides. It runs once per load
#: (a flag on ``window``), so a sidebar opened during the talk stays open through reruns and page
#: changes. A constant of this module; no visitor input in it.
_TALK_SIDEBAR_JS = """
<script>
(() => {
  if (window.__dpcoreTalkSidebar) return;
  window.__dpcoreTalkSidebar = true;
  const forget = () => Object.keys(localStorage)
      .filter((k) => k.startsWith("stSidebarCollapsed-")).forEach((k) => localStorage.removeItem(k));
  let tries = 0;
  const close = () => {
    const side = document.querySelector('[data-testid="stSidebar"]');
    const open = side && side.getBoundingClientRect().width > 0;
    const button = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
    if (side && !open) { forget(); return; }
    if (open && button) { button.click(); forget(); return; }
    if (++tries < 120) { requestAnimationFrame(close); } else { forget(); }
  };
  close();
})();
</script>
"""


def talk_mode() -> bool:
    """Whether this session is in talk mode (``?talk=1`` in any page's URL switches it on).

    The switch is kept in the session, so it survives the sidebar's links, which carry no query.
    """
    raw = st.query_params.get(TALK_PARAM)
    if raw is not None:
        st.session_state[_TALK_KEY] = str(raw).strip().lower() in ("1", "true", "on", "yes")
    return bool(st.session_state.get(_TALK_KEY, False))


def page_style() -> None:
    """The dashboard's page style (and talk mode's, when on): call once per run, in ``app.py``."""
    st.set_page_config(
        page_title="dpcore: a DP-for-NLP lab",
        page_icon="🔐",
        layout="wide",
        initial_sidebar_state="collapsed" if talk_mode() else "auto",
    )
    if talk_mode():
        st.html(_BASE_CSS + _TALK_CSS + _TALK_SIDEBAR_JS, unsafe_allow_javascript=True)
    else:
        st.html(_BASE_CSS)


def more(label: str, *, icon: str | None = None) -> Any:
    """Where a page puts what comes after its story: checks, tables, notation, training details.

    Shown in place normally; in talk mode collapsed under ``label`` so that only the story
    (headline, main figure, one plain caption) is on screen. Use as ``with more("…"):``.
    """
    if talk_mode():
        return st.expander(label, icon=icon, expanded=False)
    return st.container()


def plot(fig: Any, *, key: str, slot: Any = None, talk_height: int | None = None) -> None:
    """Draw a Plotly figure in dpcore's visual language (:func:`dpcore.viz.palette.style_figure`).

    Streamlit's own chart theme is off (``theme=None``): it would set 12-px grey ticks over the
    figure's projector-sized ones. ``slot`` draws into an ``st.empty()`` made earlier.
    ``talk_height`` (px) is the figure's height in talk mode, where the larger text above it
    leaves less of a 720-px screen to it (a page's main figure is whole on the first screen).
    """
    from dpcore.viz.palette import style_figure

    if talk_height is not None and talk_mode():
        fig.update_layout(height=talk_height)
    style_figure(fig, talk=talk_mode())
    (slot or st).plotly_chart(fig, width="stretch", key=key, theme=None)


def page_intro(title: str, plain: str, how_to_read: str) -> None:
    """Open a page: its title, one plain sentence, then notation and method in an expander.

    In talk mode the notation is in a popover beside the title instead, so that the headline and
    the main figure keep the first screen of a projector.

    Parameters
    ----------
    title
        The page title.
    plain
        One sentence an audience follows without notation.
    how_to_read
        Markdown with the notation, the method and the caveats (shown under "How to read this").
    """
    if talk_mode():  # beside the title, one click away: the story keeps the first screen
        title_col, help_col = st.columns([4, 1], vertical_alignment="center")
        title_col.title(title)
        with help_col.popover("How to read this", icon=":material/menu_book:"):
            st.markdown(how_to_read)
        st.markdown(plain)
        return
    st.title(title)
    st.markdown(plain)
    with st.expander("How to read this", icon=":material/menu_book:"):
        st.markdown(how_to_read)


#: Machine codes that tables show in words (downloads keep the codes).
CELL_WORDS: dict[str, str] = {
    **{v.code: v.label for v in VERDICTS.values()},
    "violation": VERDICTS["violates"].label,
    "bayes-unigram": "Bayesian attacker (word frequencies)",
    "bayes-mlm": "Bayesian attacker (masked LM prior)",
    "mlm": "masked-LM attacker",
}


def _number_in_words(v: float) -> str:
    """One number as a table shows it: ∞ / −∞ for infinities, blank for NaN, else 4 significant digits."""
    if v == math.inf:
        return "∞"
    if v == -math.inf:
        return "−∞"
    return "" if pd.isna(v) else f"{v:.4g}"


def cells_in_words(df: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A copy of ``df`` whose string cells are shown in words (:data:`CELL_WORDS`), and whose
    infinite numbers read ∞ (−∞). Only ``columns`` (default: every column) are changed."""
    out = df.copy()
    for c in columns if columns is not None else list(out.columns):
        if c not in out.columns:
            continue
        col = out[c]
        if col.dtype == object or pd.api.types.is_string_dtype(col):
            out[c] = col.map(lambda v: CELL_WORDS.get(v, v) if isinstance(v, str) else v)
        elif pd.api.types.is_float_dtype(col) and bool(((col == math.inf) | (col == -math.inf)).any()):
            out[c] = col.map(_number_in_words)
    return out
