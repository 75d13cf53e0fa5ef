"""Rich-text tool tip of one model call: timings, why it compiled, whether the disk cache served it."""

from __future__ import annotations

from typing import Any

from app.core.units import ms

COMPILE_COLOUR = "#ea580c"
DISK_COLOUR = "#059669"


#: Titles of the timing fields when no column table is given (the app passes its one call-record table,
#: ``app.core.report.columns.CALL_COLUMNS``, whose titles these mirror).
DEFAULT_TITLES = {"wall_ms": "wall", "execute_ms": "execute", "trace_ms": "trace", "lower_ms": "lower",
                  "compile_ms": "compile"}


#: The parts of a call's host-dispatch breakdown (``CallRecord.host_ms``), in order, with what each measures
#: (mirrors ``app.core.events.HOST_PARTS``; plain data, so this widget imports nothing of the app).
HOST_PARTS: tuple[tuple[str, str], ...] = (
    ("transfer", "inputs built and copied host → device"),
    ("flatten", "arguments flattened and signed in Python"),
    ("compile", "trace + lower + compile"),
    ("dispatch", "the executable's call (C++ flatten, checks, enqueue)"),
    ("callback", "inside the step's host callbacks (timestamps taken in them)"),
    ("wait", "waiting for the device"),
    ("token", "the token to the host (copy, int, record)"),
)
#: Parts that are the device's time; the rest (compile aside) is the host's share.
DEVICE_PARTS = ("wait",)
#: The device's parts of a synchronous call (its program calls the host, so XLA:CPU ran it inside the call).
SYNCHRONOUS_DEVICE_PARTS = ("dispatch", "wait")
#: What ``dispatch`` holds in a synchronous call.
SYNCHRONOUS_DISPATCH = "the executable's call, the device's run inside it (synchronous call)"
#: What the host share of a synchronous call counts, and why (the tool tips' note).
SYNCHRONOUS_NOTE = ("synchronous call: its program calls the host, so the call returned after the device finished; "
                    "dispatch is the device's run, and the host's share is transfer + flatten + callback + token "
                    "(the call's own dispatch work is inside dispatch, not separable on the host's clock)")


def host_share(parts: dict[str, float] | None, synchronous: bool = False) -> float | None:
    """``(sum - compile - device) / (sum - compile)`` of a breakdown, the device's parts ``wait`` (and
    ``dispatch`` for a ``synchronous`` call); None when empty."""
    if not parts:
        return None
    total = sum(parts.values()) - parts.get("compile", 0.0)
    if total <= 0:
        return None
    device = SYNCHRONOUS_DEVICE_PARTS if synchronous else DEVICE_PARTS
    return (total - sum(parts.get(k, 0.0) for k in device)) / total


def share_text(share: float) -> str:
    """A host share as the app prints it: "<0.1 %", one decimal below 10 % ("1.2 %"), whole from there
    ("30 %"), so a measured share of a few per mille never reads "0 %"."""
    pct = share * 100
    if pct < 0.1:
        return "<0.1 %"
    return f"{pct:.1f} %" if pct < 10 else f"{pct:.0f} %"


def host_lines(parts: dict[str, float] | None, leaves: int | None = None, synchronous: bool = False) -> list[str]:
    """Rich-text lines of a host-dispatch breakdown: the parts that are not zero, then the host share (and, for a
    synchronous call, :data:`SYNCHRONOUS_NOTE`)."""
    if not parts:
        return []
    items = []
    for key, _ in HOST_PARTS:
        value = parts.get(key, 0.0)
        if value or key in ("dispatch", "wait"):
            text = f"{key} {ms(value)}"
            if key == "flatten" and leaves is not None:
                text += f" ({leaves:,} leaves)"
            items.append(text)
    share = host_share(parts, synchronous)
    lines = ["<b>host breakdown:</b> " + " · ".join(items)]
    if share is not None:
        lines.append(f"host {share_text(share)} of the call (not waiting for the device)")
    if synchronous:
        lines.append(SYNCHRONOUS_NOTE)
    return lines


def describe(record: Any, run: str = "", titles: dict[str, str] | None = None) -> str:
    """Rich-text description of a call record (attributes of :class:`app.core.events.CallRecord`);
    ``run`` is the plot run's label, shown on top when given; ``titles`` maps a timing field to its column
    title (the call-record column table's, given as plain data)."""
    titles = {**DEFAULT_TITLES, **(titles or {})}

    def g(name):
        return getattr(record, name, None)

    def timing(name):
        return f"{titles[name]} {ms(g(name))}"

    lines = [f"<b>call {g('index')}</b> · {g('step')} · {g('mode') or ''}", timing("wall_ms")]
    if g("timing") == "callback interval":  # jit-loop: one compiled loop, each token's point the host's interval
        lines[-1] = (f"{ms(g('wall_ms'))} between this token's callback and the one before (one compiled "
                     "while_loop: a token is not a call)")
    if run:
        lines.insert(0, f"<i>{run}</i>")
    if g("execute_ms") is not None:
        lines[-1] += f" · {timing('execute_ms')}"
    if g("compiled"):
        lines.append(
            f"<span style='color:{COMPILE_COLOUR}'>compiled: {timing('trace_ms')} · "
            f"{timing('lower_ms')} · {timing('compile_ms')}</span>"
        )
        if g("compile_reason"):
            lines.append(f"<b>why it compiled:</b> {g('compile_reason')}")
        if g("persistent_cache_hit"):
            lines.append(
                f"<span style='color:{DISK_COLOUR}'>◆ served by the persistent compilation cache</span>"
            )
    for c in g("inner_compiles") or ():  # a program's entry run as written: the jitted functions it compiled
        cost = sum(c.get(k) or 0.0 for k in ("trace_ms", "lower_ms", "compile_ms"))
        lines.append(f"<span style='color:{COMPILE_COLOUR}'>compiled inside: {c.get('function') or 'jit'} "
                     f"{ms(cost)}</span> · {c.get('compile_reason') or ''}")
    lines.extend(host_lines(g("host_ms"), g("leaves"), bool(g("synchronous"))))
    shapes = g("input_shapes")
    if shapes:
        lines.append(", ".join(f"{k} {tuple(v)}" for k, v in shapes.items()))
    return "<br>".join(lines)
