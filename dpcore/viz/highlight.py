"""A sanitized line as HTML: every token escaped, replaced words marked, words outside the
vocabulary greyed, kept sensitive words outlined (the Sanitize text page shows these lines)."""

from __future__ import annotations

import html

__all__ = ["highlight"]


def highlight(
    tokens: list[str],
    changed: list[bool],
    oov: list[bool],
    kept: dict[str, tuple[bool, float]] | None = None,
) -> str:
    """HTML for one line: every token escaped; replaced tokens marked, OOV tokens greyed.

    ``kept`` maps a word to (sensitive, N_x): an unchanged sensitive word is outlined in red with
    its N_x = Pr[M(x) = x] on hover (a kept "hiv" must stand out as much as a replaced one).
    WordPiece continuations (``##ing``) of an unchanged word are joined back to it (the pieces show
    on hover); once a piece is replaced, each piece is shown on its own, ``##`` visible.
    """
    groups: list[list[int]] = []
    for i, tok in enumerate(tokens):
        if tok.startswith("##") and groups:
            groups[-1].append(i)
        else:
            groups.append([i])
    # A word whose pieces were all kept is shown whole; once a piece is replaced, every piece is
    # shown on its own (## visible): glued, they would make a word nobody wrote (bert-wordpiece).
    groups = [part for g in groups for part in ([[i] for i in g] if any(changed[i] for i in g) else [g])]
    parts = []
    for g in groups:
        word = tokens[g[0]] + "".join(tokens[i][2:] for i in g[1:])
        t = html.escape(word)
        pieces = f"WordPiece: {' · '.join(tokens[i] for i in g)}" if len(g) > 1 else ""
        if any(oov[i] for i in g):
            tip = "; ".join(x for x in ("out of vocabulary", pieces) if x)
            parts.append(f'<span style="color:#888" title="{html.escape(tip)}">{t}</span>')
        elif any(changed[i] for i in g):
            tip = html.escape(pieces) if pieces else "replaced"
            parts.append(f'<mark style="background:#ffe08a;padding:0 2px" title="{tip}">{t}</mark>')
        elif kept and len(g) == 1 and kept.get(tokens[g[0]], (False, 0.0))[0]:
            nx = kept[tokens[g[0]]][1]
            tip = f"kept sensitive word: N_x = Pr[M(x) = x] = {nx:.3g}"
            parts.append(
                f'<span class="dp-kept" style="outline:2px solid #c0504d;border-radius:3px;padding:0 2px" '
                f'title="{html.escape(tip)}">{t}</span>'
            )
        elif pieces:
            parts.append(
                f'<span style="text-decoration:underline dotted" title="{html.escape(pieces)}">{t}</span>'
            )
        else:
            parts.append(t)
    return " ".join(parts) or "&nbsp;"
