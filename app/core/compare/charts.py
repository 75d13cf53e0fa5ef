"""The report's plots as inline SVG text (no script, no external asset): compile time per stage, A's and B's
bars side by side (:func:`compile_svg`), and B's steady speed-up with its 95 % interval against 1×
(:func:`speedup_svg`). Every text is escaped. Pure Python."""

from __future__ import annotations

import math
from html import escape
from typing import Any

#: A's and B's colours (the report's key uses the same).
COLOURS = ("#4C72B0", "#DD8452")
FONT = "font-family='DejaVu Sans, Helvetica, Arial, sans-serif' font-size='12'"


def _ms(v: float) -> str:
    return f"{v:,.0f} ms" if v >= 10 else f"{v:,.1f} ms"


def compile_svg(compile_ms: dict[str, list[float | None]], width: int = 640) -> str:
    """Grouped horizontal bars, one group per stage (``{"trace": [A ms, B ms], …}``; stages neither run recorded
    are left out); "" when there is nothing to draw."""
    rows = [(k, a, b) for k, (a, b) in compile_ms.items() if a is not None or b is not None]
    if not rows:
        return ""
    top = max(max(a or 0.0, b or 0.0) for _, a, b in rows) or 1.0
    label_w, bar_h, gap = 130, 12, 10
    plot_w = width - label_w - 90
    height = len(rows) * (2 * bar_h + gap) + 30
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
           f"viewBox='0 0 {width} {height}' role='img' aria-label='compile time per stage' {FONT}>"]
    y = 4
    for stage, *values in rows:
        out.append(f"<text x='{label_w - 8}' y='{y + bar_h + 4}' text-anchor='end'>{escape(stage)}</text>")
        for i, v in enumerate(values):
            w = 0 if v is None else max(1.0, plot_w * v / top)
            out.append(f"<rect x='{label_w}' y='{y}' width='{w:.1f}' height='{bar_h}' fill='{COLOURS[i]}'>"
                       f"<title>{'AB'[i]} {escape(stage)}: {'not recorded' if v is None else _ms(v)}</title></rect>")
            text = "–" if v is None else _ms(v)
            out.append(f"<text x='{label_w + w + 4:.1f}' y='{y + bar_h - 2}'>{'AB'[i]} {escape(text)}</text>")
            y += bar_h
        y += gap
    out.append(f"<rect x='{label_w}' y='{height - 18}' width='10' height='10' fill='{COLOURS[0]}'/>"
               f"<text x='{label_w + 14}' y='{height - 9}'>A</text>"
               f"<rect x='{label_w + 40}' y='{height - 18}' width='10' height='10' fill='{COLOURS[1]}'/>"
               f"<text x='{label_w + 54}' y='{height - 9}'>B</text></svg>")
    return "".join(out)


def speedup_svg(steady: dict[str, Any], width: int = 640) -> str:
    """B's speed-up over A on a log axis: its point, its 95 % interval as a bar when recorded (else the words
    "no interval"), and the 1× line; "" when there is no ratio."""
    r, lo, hi = steady.get("ratio"), steady.get("ci_low"), steady.get("ci_high")
    if not r:
        return ""
    values = [r] + [v for v in (lo, hi) if v]
    span = max(abs(math.log(v)) for v in values) * 1.25 or 0.05
    span = max(span, 0.05)
    left, right, height = 40, width - 40, 70

    def x(v: float) -> float:
        return left + (right - left) * (math.log(v) + span) / (2 * span)

    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
           f"viewBox='0 0 {width} {height}' role='img' aria-label=\"B's steady speed-up over A\" {FONT}>",
           f"<line x1='{left}' y1='34' x2='{right}' y2='34' stroke='#999'/>",
           f"<line x1='{x(1.0):.1f}' y1='14' x2='{x(1.0):.1f}' y2='54' stroke='#555' stroke-dasharray='4 3'/>",
           f"<text x='{x(1.0):.1f}' y='10' text-anchor='middle'>1× (no difference)</text>",
           f"<text x='{left}' y='12'>← B slower</text><text x='{right}' y='12' text-anchor='end'>B faster →</text>"]
    if lo and hi:
        out.append(f"<line x1='{x(lo):.1f}' y1='34' x2='{x(hi):.1f}' y2='34' stroke='{COLOURS[1]}' "
                   f"stroke-width='6'><title>95 % CI {lo:.3f}–{hi:.3f}</title></line>")
        out.append(f"<text x='{x(r):.1f}' y='54' text-anchor='middle'>{r:.2f}× (95 % CI {lo:.2f}–{hi:.2f})</text>")
    else:
        out.append(f"<text x='{x(r):.1f}' y='54' text-anchor='middle'>{r:.2f}× (no interval)</text>")
    out.append(f"<circle cx='{x(r):.1f}' cy='34' r='5' fill='{COLOURS[1]}'/></svg>")
    return "".join(out)
