"""The settings race's lockstep view: where two settings' pass pipelines part
(:class:`widgets.demo.parting_view.PartingDialog` of a :class:`app.core.compile_settings.parting.Parting`)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QWidget

from app.core.passes.diff import diff_rows
from widgets.demo.parting_view import LockstepRow, PartingDialog


def open_parting(host: QWidget, p: Any, previous: PartingDialog | None) -> PartingDialog:
    """Open the lockstep view of ``p`` over ``host`` (GUI thread): the two pipelines' rows, the first parting
    row's diff and the second setting's module after it, the fusions each kept. ``previous`` (one comparison open
    at a time: each holds two modules' texts) is closed."""
    rows = [LockstepRow(r.pipeline, r.pass_name, r.a.label if r.a else "", r.b.label if r.b else "", r.differs)
            for r in p.pairs]
    new_text = ""
    if p.diff is not None and p.first is not None:  # the second setting's module after the parting row
        new_text = next(r.b.text for r in reversed(p.pairs[:p.first + 1]) if r.b is not None)
    fusions = "Fusions kept: " + " · ".join(
        f"{label} {sum(c.values())} ({', '.join(f'{k} {n}' for k, n in sorted(c.items())) or 'none'})"
        + (f", {len(o)} only here" if o else "") for label, c, o in zip(p.labels, p.fusion_counts(), p.only()))
    if previous is not None:
        previous.close()
        previous.deleteLater()
    dlg = PartingDialog(host, p.labels, rows, p.first, p.sentence().split(";")[0],
                        diff_rows(p.diff) if p.diff is not None else None, new_text, fusions)
    dlg.show()
    return dlg
