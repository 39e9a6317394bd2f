"""The verdict table as Markdown, for the docs (generated from the same file as the page)."""

from __future__ import annotations

from typing import Any

from dpcore.verdicts.wording import headline, short_claim


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown_table(doc: dict[str, Any]) -> str:
    """A header line, then one table row per verdict row: library, mechanism, claim, verdict, |V|,
    draws, seconds."""
    h = doc["header"]
    lines = [
        f"Generated from `{h['command']}`, {h['started']} to {h['finished']}, on {h['machine']} "
        f"(dpcore {h['dpcore_version']}, seed {h['seed']}, confidence {100 * h['confidence']:g}% "
        "family-wise per row).",
        "",
        "| library | mechanism | claim | verdict | \\|V\\| | draws | s |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in doc["rows"]:
        lib = f"{r['library']} {r['library_version'] or '(not installed)'}"
        a = r.get("audit") or {}
        size = f"{a['vocab_size']:,}" if a else ""
        draws = f"{a['samples_drawn']:,}" if a else ""
        lines.append(
            f"| {_cell(lib)} | `{r['name']}` | {_cell(short_claim(r))} | {_cell(headline(r))} | {size} | "
            f"{draws} | {r['seconds']:.0f} |"
        )
    return "\n".join(lines)
