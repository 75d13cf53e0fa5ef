"""Token rules for jaxpr, StableHLO and optimized-HLO text (pure Python, no Qt).

:func:`lex_line` splits one line into ``(start, length, kind)`` spans; the Qt side maps each ``kind`` to a
text format. Rules are deliberately few and line-local so a 1-3 MB module can be highlighted lazily, one
visible line at a time.
"""

from __future__ import annotations

import re
from functools import lru_cache

KINDS: tuple[str, ...] = ("comment", "string", "keyword", "type", "op", "var", "number", "meta")

_RULES: list[tuple[str, str]] = [
    ("comment", r"//[^\n]*|^\#loc[^\n]*"),
    ("string", r'"(?:[^"\\]|\\.)*"'),
    ("meta", r"\b(?:metadata|loc|backend_config|frontend_attributes|sharding)(?==|\()"),
    (
        "keyword",
        r"\b(?:HloModule|ENTRY|ROOT|lambda|let|in|module|func\.func|return|stablehlo\.return|func\.return"
        r"|call|pjit|jit|custom_jvp_call|scan|while|cond)\b",
    ),
    (
        "type",
        r"\b(?:[fsu]\d+|bf16|pred|i\d+|ui\d+|token)\[[^\]]*\](?:\{[\d,]*\})?"
        r"|\btensor<[^>]*>|\b(?:[fsu]\d+|bf16|pred|i\d+)\b(?=[\[\s,)>:]|$)",
    ),
    (
        "op",
        r"\bstablehlo\.[a-z_]+\b|\bchlo\.[a-z_]+\b|\b[a-z_][a-z_0-9]*(?=\[|\()|(?<==\s)[a-z_]+[a-z_0-9-]*\b",
    ),
    ("var", r"%[\w.\-#]+|\#loc\d+|\b[a-z]{1,3}\b(?=:)"),
    ("number", r"(?<![\w.%])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?\b"),
]

_PATTERN = re.compile("|".join(f"(?P<{kind}>{rx})" for kind, rx in _RULES))


@lru_cache(maxsize=4096)
def lex_line(line: str) -> tuple[tuple[int, int, str], ...]:
    """Spans ``(start, length, kind)`` of the highlighted tokens of ``line``, left to right.

    Lines longer than 4,000 characters are only highlighted in their first 4,000 characters.
    """
    spans = []
    for match in _PATTERN.finditer(line, 0, min(len(line), 4000)):
        kind = match.lastgroup
        if kind is not None and match.end() > match.start():
            spans.append((match.start(), match.end() - match.start(), kind))
    return tuple(spans)
