"""The verdict table as Markdown, for the docs (generated from the same file as the page).

Its cells are the page's (:mod:`dpcore.verdicts.wording`): the claim with its formula (ε-LDP, or
ε·d + ε₀ metric LDP with its ε₀) and its paper, and the verdict with every amount in nats of
privacy loss, a violation as how far above its claim the loss is certified to be (the number the
figure shows).
"""

from __future__ import annotations

from typing import Any

from dpcore.formatting import percent
from dpcore.verdicts.wording import headline, short_claim, vocabulary_note

#: The line under the header that says how to read the claim and verdict cells.
LEGEND = (
    "Claims: ε-LDP, or ε·d + ε₀ metric LDP (a pair's privacy loss at most ε·d(x, x′) + ε₀, with "
    "the row's ε₀), then the paper. Verdicts: every amount in nats of privacy loss; a violation is "
    "how far above its claim the loss is certified to be, and a row without one names the flaw "
    "its run would have caught."
)


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown_table(doc: dict[str, Any]) -> str:
    """The verdict table of a verdict file's object, as Markdown.

    Parameters
    ----------
    doc
        A verdict file's object (``header`` and ``rows``).

    Returns
    -------
    str
        A header line, the :data:`LEGEND` line, then one table row per verdict row: library,
        mechanism, claim (:func:`~dpcore.verdicts.wording.short_claim`), verdict
        (:func:`~dpcore.verdicts.wording.headline`), |V|, draws, seconds.
    """
    h = doc["header"]
    lines = [
        f"Generated from `{h['command']}`, {h['started']} to {h['finished']}, on {h['machine']} "
        f"(dpcore {h['dpcore_version']}, seed {h['seed']}, confidence {percent(h['confidence'], exact=True)} "
        "family-wise per row)." + (f" {note}" if (note := vocabulary_note(doc["rows"])) else ""),
        "",
        LEGEND,
        "",
        "| library | mechanism | claim | verdict | \\|V\\| | draws | s |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in doc["rows"]:
        lib = f"{r['library']} {r['library_version'] or '(not installed)'}"
        a = r.get("audit") or {}
        size = f"{a['vocab_size']:,}" if a and a.get("vocab_size") is not None else ""
        draws = f"{a['samples_drawn']:,}" if a else ""
        lines.append(
            f"| {_cell(lib)} | `{r['name']}` | {_cell(short_claim(r))} | {_cell(headline(r))} | {size} | "
            f"{draws} | {r['seconds']:.0f} |"
        )
    return "\n".join(lines)
