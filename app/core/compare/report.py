"""A comparison of two runs as a one-page, self-contained HTML report to share (``compare --report OUT.html``,
the window's Compare two runs ▸ Save report…): the verdict line first, which runs, steady speed (its ratio with
the 95 % interval as a plot, or the sentence saying none was recorded), compile time per stage (a table and a
bar plot), the structural diffs of the optimized HLO and of StableHLO (changed, added and removed instructions
and fusions with their source lines), the first differing XLA pass, token parity and what differs in
versions, flags, backend and machine. Plots are inline SVG (:mod:`app.core.compare.charts`); no script, no
external asset; every text is escaped. Pure Python."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from app.core.compare.charts import COLOURS, compile_svg, speedup_svg
from app.core.compare.text import steady_sentence
from app.core.inspect.hlo_diff import FUSIONS_FIELD
from app.core.inspect.views import HLO, PASSES, STABLEHLO, view

#: Changes of one step's diff listed in the report (the rest counted; ``--json`` lists all).
MAX_ROWS = 200
#: Fusions named in one step's line (the rest counted).
MAX_FUSIONS = 24

_STYLE = """
body { font-family: 'DejaVu Sans', Helvetica, Arial, sans-serif; margin: 24px auto; max-width: 980px;
       color: #222; line-height: 1.4; padding: 0 16px; }
h1 { font-size: 1.35em; margin: 0 0 12px; padding: 12px 14px; background: #f3f6fb; border-left: 6px solid #4C72B0; }
h2 { font-size: 1.1em; margin: 22px 0 6px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.9em; margin: 6px 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
code { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 0.95em; }
.runs { color: #444; } .note { color: #666; font-style: italic; }
.added { color: #1b7a1b; } .removed { color: #b22222; } .changed { color: #a05a00; }
footer { margin-top: 28px; color: #888; font-size: 0.85em; }
"""


def _e(value: Any) -> str:
    return escape("–" if value is None else str(value))


def _ms(v: float | None) -> str:
    return "–" if v is None else f"{v:,.1f}"


def _table(head: list[str], rows: list[list[str]], numeric: tuple[int, ...] = ()) -> str:
    """A table of already escaped cells (``numeric``: right-aligned columns)."""
    th = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td class='n'>{c}</td>" if j in numeric else f"<td>{c}</td>"
                                    for j, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _steady(s: dict[str, Any], plots: bool) -> str:
    sentence = steady_sentence(s)
    line = _e(sentence[:1].upper() + sentence[1:])
    body = f"<p>{line}</p>"
    if not s["interval"]:
        body += f"<p class='note'>{_e(s['note'] or 'no interval')}: the ratio of two medians, not a verdict.</p>"
    return "<h2>Steady speed</h2>" + body + (speedup_svg(s) if plots else "")


def _compile(doc: dict[str, Any], plots: bool) -> str:
    rows = [(k, a, b) for k, (a, b) in doc["compile"].items() if a is not None or b is not None]
    if not rows:
        return "<h2>Compile time per stage</h2><p class='note'>none recorded</p>"
    cells = [[_e(k), _e(_ms(a)), _e(_ms(b)), _e(f"{b - a:+,.1f}" if a is not None and b is not None else None)]
             for k, a, b in rows]
    return ("<h2>Compile time per stage (ms)</h2>" + _table(["stage", "A", "B", "B − A"], cells, (1, 2, 3))
            + (compile_svg(doc["compile"]) if plots else ""))


def _change_row(c: dict[str, Any]) -> list[str]:
    name = c["b_name"] or c["a_name"]
    was = f" (was %{c['a_name']})" if c["change"] == "changed" and c["a_name"] != c["b_name"] else ""
    what = c["opcode"] + (f" {c['kind']}" if c["kind"] else "")
    if c["change"] == "changed" and c.get("a_opcode") and c["a_opcode"] != c["opcode"]:
        what = f"{c['a_opcode']} → {what}"
    shape = c["shape"] if not c.get("a_shape") or c["a_shape"] == c["shape"] else f"{c['a_shape']} → {c['shape']}"
    return [f"<span class='{_e(c['change'])}'>{_e(c['change'])}</span>", f"<code>%{_e(name)}{_e(was)}</code>",
            _e(what), f"<code>{_e(shape)}</code>", _e(f"%{c['fusion']}" if c["fusion"] else ""), _e(c["source"])]


def _diffs(title: str, diffs: dict[str, dict[str, Any]], unit: str) -> str:
    if not diffs:
        return f"<h2>{_e(title)}</h2><p class='note'>not recorded by both runs: no structural diff</p>"
    out = [f"<h2>{_e(title)}: structural diff</h2>"]
    for step, d in diffs.items():
        out.append(f"<p><b>{_e(step)}</b>: {_e(d['summary'])} ({d['n_a']} vs {d['n_b']} {_e(unit)})</p>")
        if d[FUSIONS_FIELD]:
            shown, more = d[FUSIONS_FIELD][:MAX_FUSIONS], len(d[FUSIONS_FIELD]) - MAX_FUSIONS
            out.append(f"<p>fusions: {_e(', '.join('%' + f for f in shown))}"
                       + (f" … and {more} more</p>" if more > 0 else "</p>"))
        if d["changes"]:
            rows = [_change_row(c) for c in d["changes"][:MAX_ROWS]]
            out.append(_table(["", "name", "op", "shape", "fusion", "source"], rows))
            if len(d["changes"]) > MAX_ROWS:
                out.append(f"<p class='note'>… {len(d['changes']) - MAX_ROWS} more (compare --json lists all)</p>")
    return "".join(out)


def _tokens(t: dict[str, Any]) -> str:
    if t["same"] is None:
        text = "not generated by both runs"
    elif t["same"]:
        text = f"the same {t['n_a']} tokens"
    else:
        text = (f"first differ at index {t['first_difference']} (A {t['a_token']}, B {t['b_token']}; "
                f"{t['n_a']} vs {t['n_b']} tokens)")
    return f"<h2>Tokens</h2><p>{_e(text)}</p>"


def _differ(differ: dict[str, list[Any]]) -> str:
    if not differ:
        return "<h2>What differs</h2><p>nothing in versions, machine, flags or settings</p>"
    rows = [[_e(k), f"<code>{_e(a)}</code>", f"<code>{_e(b)}</code>"] for k, (a, b) in differ.items()]
    return "<h2>What differs (versions, flags, backend, machine, settings)</h2>" + _table(["", "A", "B"], rows)


def report_html(doc: dict[str, Any], generated: str = "", plots: bool = True, verdict: bool = True) -> str:
    """The report of :func:`app.core.compare.runs.compare_runs`'s dict as one HTML page (UTF-8 text).
    ``generated``: a footer line (e.g. the date and the files compared), escaped; ``plots``: False leaves the
    SVG plots out (for a rich-text view that draws no SVG, such as the window's); ``verdict``: False leaves the
    verdict heading out (a view that shows the verdict line above the page)."""
    a, b = doc["a"], doc["b"]
    key = (f"<span style='color:{COLOURS[0]}'>■</span> A: {_e(a['label'])} · {_e(a['machine'])}<br>"
           f"<span style='color:{COLOURS[1]}'>■</span> B: {_e(b['label'])} · {_e(b['machine'])}")
    parts = [
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>",
        f"<title>{_e(a['label'])} vs {_e(b['label'])}</title><style>{_STYLE}</style></head><body>",
        f"<h1 id='verdict'>{_e(doc['verdict'])}</h1>" if verdict else "", f"<p class='runs'>{key}</p>",
        _steady(doc["steady"], plots), _compile(doc, plots), _diffs("Optimized HLO", doc[HLO], view(HLO).unit),
        _diffs(view(STABLEHLO).title, doc.get(STABLEHLO) or {}, view(STABLEHLO).unit),
        f"<h2>XLA passes</h2><p>{_e(doc[PASSES]['line'])}</p>" if PASSES in doc else "",
        _tokens(doc["tokens"]), _differ(doc["differ"]),
        f"<footer>torchax-playground compare{' · ' + _e(generated) if generated else ''}</footer></body></html>\n",
    ]
    return "".join(parts)


def write_report(doc: dict[str, Any], path: str | Path, generated: str = "") -> Path:
    """Write :func:`report_html` to ``path`` (UTF-8). Raises OSError when it cannot be written."""
    out = Path(path)
    out.write_text(report_html(doc, generated), encoding="utf-8")
    return out
