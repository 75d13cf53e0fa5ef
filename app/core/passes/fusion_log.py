"""XLA's fusion log, parsed into decisions. Pure text parsing.

XLA logs its fusion decisions at verbosity 2 of ``xla/service/instruction_fusion.cc`` and
``xla/service/cpu/cpu_instruction_fusion.cc`` when ``TF_CPP_MIN_LOG_LEVEL=0
TF_CPP_VMODULE=cpu_instruction_fusion=2,instruction_fusion=2`` are in the environment before jaxlib loads
(absl/tsl read them once), so the log can only be had from a child process (:mod:`app.core.passes._child`).
Lines look like (jaxlib 0.10.2)::

    I1125 11:45:04.694500    5834 instruction_fusion.cc:1142] Evaluating fusion: producer 'tanh.1' into consumer 'reduce_sum.7'.
    I1125 11:45:04.694504    5834 cpu_instruction_fusion.cc:483] Fusing: consumer is elementwise or fusible.
    I1125 11:45:04.694508    5834 instruction_fusion.cc:848] Fusing %tanh.1 = … into %reduce_sum.7 = …
    I1125 11:45:04.694538    5834 instruction_fusion.cc:855]        created new fusion: %tanh_reduce_fusion = f32[] fusion(…), kind=kLoop, …

A refusal is an "Evaluating fusion" followed by a reason ("Producer is not loop-fusible.", "Don't fuse
non-scalar constants.") and no "Fusing %" line.
"""

from __future__ import annotations

import re

from app.core.backends import CPU
from app.core.inspect.text_index import HLO_KIND
from app.core.passes.model import FusionDecision

_LOG_LINE = re.compile(r"^[IWEF]\d{4} [\d:.]+\s+\d+ ([\w.\-]+):\d+\] ?(.*)$")
_EVALUATING = re.compile(r"Evaluating fusion: producer '([^']+)' into consumer '([^']+)'")
_CREATED = re.compile(r"created new fusion: %?([\w.\-]+) = ")
_FUSING = re.compile(r"^Fusing %?[\w.\-]+ = ")
#: Source files whose lines belong to fusion decisions.
FUSION_SOURCES = tuple(f"{module}.cc" for module in CPU.fusion_log_modules)


def parse_fusion_log(text: str) -> tuple[list[FusionDecision], int]:
    """Every fusion decision in a log text (``(decisions, fusion-related lines read)``), in log order.

    Lines of other sources are skipped; "Considering for fusion" and "Fusion count" lines close the
    decision in progress."""
    decisions: list[FusionDecision] = []
    current: FusionDecision | None = None
    reasons: list[str] = []
    n_lines = 0

    def close() -> None:
        nonlocal current, reasons
        if current is not None:
            current.reason = "; ".join(reasons)
            decisions.append(current)
        current, reasons = None, []

    for raw in text.splitlines():
        m = _LOG_LINE.match(raw)
        if not m or m.group(1) not in FUSION_SOURCES:
            continue
        n_lines += 1
        msg = m.group(2).strip()
        if ev := _EVALUATING.search(msg):
            close()
            current = FusionDecision(len(decisions), ev.group(1), ev.group(2), False, "")
        elif msg.startswith("Considering for fusion") or msg.startswith("Fusion count"):
            close()
        elif current is None:
            continue
        elif _FUSING.match(msg):
            current.fused = True
            if not current.fusion and current.consumer.find("fusion") >= 0:
                current.fusion = current.consumer
        elif c := _CREATED.search(msg):
            current.fusion = c.group(1)
            if k := HLO_KIND.search(msg):
                current.kind = k.group(1)
        else:
            reasons.append(msg)
    close()
    kinds = {d.fusion: d.kind for d in decisions if d.kind}
    for d in decisions:  # a producer fused into an existing fusion: that fusion's kind, when it was logged
        if d.fused and d.fusion and not d.kind:
            d.kind = kinds.get(d.fusion, "")
    return decisions, n_lines
