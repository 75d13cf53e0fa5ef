"""Rich-text tool tip of one model call: timings, why it compiled, whether the disk cache served it."""

from __future__ import annotations

from typing import Any

from app.core.units import ms

COMPILE_COLOUR = "#ea580c"
DISK_COLOUR = "#059669"


def describe(record: Any, run: str = "") -> str:
    """Rich-text description of a call record (attributes of :class:`app.core.events.CallRecord`);
    ``run`` is the plot run's label, shown on top when given."""
    def g(name):
        return getattr(record, name, None)
    lines = [f"<b>call {g('index')}</b> · {g('step')} · {g('mode') or ''}", f"wall {ms(g('wall_ms'))}"]
    if run:
        lines.insert(0, f"<i>{run}</i>")
    if g("execute_ms") is not None:
        lines[-1] += f" · execute {ms(g('execute_ms'))}"
    if g("compiled"):
        lines.append(
            f"<span style='color:{COMPILE_COLOUR}'>compiled: trace {ms(g('trace_ms'))} · "
            f"lower {ms(g('lower_ms'))} · compile {ms(g('compile_ms'))}</span>"
        )
        if g("compile_reason"):
            lines.append(f"<b>why it compiled:</b> {g('compile_reason')}")
        if g("persistent_cache_hit"):
            lines.append(
                f"<span style='color:{DISK_COLOUR}'>◆ served by the persistent compilation cache</span>"
            )
    shapes = g("input_shapes")
    if shapes:
        lines.append(", ".join(f"{k} {tuple(v)}" for k, v in shapes.items()))
    return "<br>".join(lines)
