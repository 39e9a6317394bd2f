"""The Sanitize page's figure draws words whose lines differ (issue 50: "Sanitize's four N_x lines
overlap at 0.7"), each in its own colour, dash and marker, with S_x on its own logarithmic panel."""

from __future__ import annotations

import pandas as pd

from dpcore.viz.palette import MIN_CONTRAST, contrast_ratio
from dpcore.viz.sanitize_figure import WORD_STYLES, plot_words, sanitize_figure


def _rows(pairs: list[tuple[str, float]]) -> list[dict]:
    return [{"word": w, "N_x": nx} for w, nx in pairs]


def test_words_with_the_same_chance_are_drawn_once() -> None:
    # SanText+ keeps every non-sensitive word with chance 1 − p = 0.7: one of them stands for all
    rows = _rows([("and", 0.7), ("driving", 0.7), ("australia", 0.7), ("keeps", 0.081), ("satire", 0.263)])
    assert plot_words(rows, 4) == ["keeps", "satire", "australia"]  # the longest of the 0.7 words


def test_the_lowest_and_highest_chances_are_kept_and_the_rest_spread() -> None:
    rows = _rows([(f"w{chr(97 + i)}", i / 10) for i in range(10)])  # ten words, chances 0 … 0.9
    picked = plot_words(rows, 4)
    chances = {r["word"]: r["N_x"] for r in rows}
    assert len(picked) == 4
    assert chances[picked[0]] == 0.0 and chances[picked[-1]] == 0.9
    assert [chances[w] for w in picked] == sorted(chances[w] for w in picked)


def test_letters_come_before_numbers_and_punctuation_unless_they_are_too_few() -> None:
    rows = _rows([("#", 0.55), ("2015", 0.41), ("keeps", 0.08), ("and", 0.7)])
    assert set(plot_words(rows, 2)) == {"keeps", "and"}
    # with fewer distinct letter words than asked, numbers and punctuation fill up
    assert set(plot_words(rows, 4)) == {"#", "2015", "keeps", "and"}


def test_figure_panels_styles_and_current_epsilon() -> None:
    eps = [0.5, 1.0, 3.0, 8.0]
    df = pd.DataFrame(
        [
            {"epsilon": e, "word": w, "N_x": nx, "S_x": sx}
            for w, base in (("keeps", 0.0), ("australia", 0.7))
            for e, nx, sx in zip(eps, (base, base, base + 0.1, 1.0), (9000, 5000, 40, 1), strict=True)
        ]
    )
    fig = sanitize_figure(df, epsilon=3.0)
    kept = [t for t in fig.data if t.yaxis == "y"]
    becomes = [t for t in fig.data if t.yaxis == "y2"]
    assert [t.name for t in kept] == ["keeps", "australia"]
    assert [t.showlegend for t in becomes] == [False, False]  # one legend entry per word
    assert kept[0].line.dash != kept[1].line.dash and kept[0].marker.symbol != kept[1].marker.symbol
    assert fig.layout.yaxis2.type == "log" and fig.layout.xaxis2.type == "log"
    assert any("your ε = 3" in a.text for a in fig.layout.annotations)
    assert all(contrast_ratio(c) >= MIN_CONTRAST for c, _, _ in WORD_STYLES)
    assert len({(c, d, m) for c, d, m in WORD_STYLES}) == len(WORD_STYLES)
