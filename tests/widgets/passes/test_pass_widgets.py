"""The Passes tab's widgets on synthetic plain data: pass list (hide unchanged, selection), counts chart,
fusion table and the compile bar (its parts, tool tip, and the compile split led by trace and lower)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from widgets.passes.compile_bar import CompileBar  # noqa: E402
from widgets.passes.fusion_table import FusionTable  # noqa: E402
from widgets.passes.pass_chart import PassChart  # noqa: E402
from widgets.passes.pass_list import PassList  # noqa: E402

ROWS = [
    {"pipeline": "simplification", "pass": "algsimp", "index": 3, "changed": 2, "ms": 1.5, "runs": 4,
     "n_instructions": 40, "n_fusions": 0, "fusion_kinds": {}},
    {"pipeline": "simplification", "pass": "dce", "index": None, "changed": 0, "ms": 0.2, "runs": 4,
     "n_instructions": None, "n_fusions": None, "fusion_kinds": None},
    {"pipeline": "fusion", "pass": "fusion", "index": 5, "changed": 1, "ms": 3.25, "runs": 1,
     "n_instructions": 20, "n_fusions": 3, "fusion_kinds": {"kLoop": 2, "kInput": 1}},
]
SNAPSHOTS = [
    {"index": -1, "pass": "before", "pipeline": "", "n_instructions": 50, "n_fusions": 0},
    {"index": 3, "pass": "algsimp", "pipeline": "simplification", "n_instructions": 40, "n_fusions": 0},
    {"index": 5, "pass": "fusion", "pipeline": "fusion", "n_instructions": 20, "n_fusions": 3},
]


def test_pass_list_hides_unchanged_and_selects(qtbot):
    w = PassList()
    qtbot.addWidget(w)
    w.set_rows(ROWS)
    assert [r["pass"] for r in w.rows()] == ["algsimp", "dce", "fusion"]
    assert "3 of 3 passes · 2 changed" in w.count.text()
    assert w.table.item(0, 5).text() == "✓ 2" and w.table.item(1, 5).text() == ""
    w.hide_unchanged.setChecked(True)
    assert [r["pass"] for r in w.rows()] == ["algsimp", "fusion"]
    with qtbot.waitSignal(w.passSelected) as sig:
        w.table.setCurrentCell(1, 0)
    assert sig.args[0]["pass"] == "fusion"
    assert w.select_index(3) and w.current_row()["pass"] == "algsimp"
    assert w.select_pass("fusion", "fusion") and w.current_row()["index"] == 5
    assert not w.select_index(99)
    w.table.sortItems(3)  # by ms, ascending
    assert [r["ms"] for r in w.rows()] == [1.5, 3.25]


def test_pass_chart_series_marker_and_click(qtbot):
    w = PassChart()
    qtbot.addWidget(w)
    w.set_snapshots(SNAPSHOTS)
    assert w.series() == ([50.0, 40.0, 20.0], [0.0, 0.0, 3.0])
    w.select(5)
    assert w.marked() == 5
    with qtbot.waitSignal(w.snapshotClicked) as sig:
        w.click_at(1)
    assert sig.args == [3]


def test_fusion_table_absorbed_and_decisions(qtbot):
    w = FusionTable()
    qtbot.addWidget(w)
    fusions = [
        {"name": "fusion.1", "kind": "kLoop", "created_by": "fusion", "created_in": "0005 fusion / fusion",
         "source": "modeling_llama.py:70", "absorbed": [["add.3", "add", "modeling_llama.py:70"],
                                                       ["exp.1", "exponential", "modeling_llama.py:71"]],
         "decisions": [{"producer": "exp.1", "consumer": "add.3", "fused": True, "reason": "elementwise"},
                       {"producer": "dot.2", "consumer": "add.3", "fused": False, "reason": ""}]},
        {"name": "ynn_fusion", "kind": "kCustom", "created_by": "", "created_in": "", "source": "",
         "absorbed": [], "decisions": []},
    ]
    w.set_fusions(fusions, have_log=True)
    assert w.names() == ["fusion.1", "ynn_fusion"] and w.current() == "fusion.1"
    assert "kCustom 1" in w.count.text() and "kLoop 1" in w.count.text()
    assert w.absorbed_rows() == [["add.3", "add", "modeling_llama.py:70"],
                                 ["exp.1", "exponential", "modeling_llama.py:71"]]
    assert w.decision_rows() == [["fused", "exp.1", "add.3", "elementwise"],
                                 ["refused", "dot.2", "add.3", "(no reason logged)"]]
    assert "1 fused, 1 refused" in w.decisions_label.text()
    with qtbot.waitSignal(w.fusionSelected) as sig:
        assert w.select("ynn_fusion")
    assert sig.args == ["ynn_fusion"] and w.decision_rows() == []
    assert w.table.item(1, 2).text() == "(final module)"
    assert not w.select("nope")


def test_compile_bar_parts_caption_and_labels(qtbot):
    w = CompileBar()
    qtbot.addWidget(w)
    assert w.caption().startswith("Record")
    parts = [{"label": "HLO passes: simplification", "ms": 100.0, "group": "HLO passes"},
             {"label": "LLVM", "ms": 800.0, "group": "backend"},
             {"label": "other backend", "ms": 60.0, "group": "backend"},
             {"label": "outside XLA", "ms": 40.0, "group": "other"},
             {"label": "other XLA", "ms": 0.0, "group": "other"}]
    w.set_parts(1000.0, parts)
    w.resize(1000, w.sizeHint().height())
    assert len(w.parts()) == 4  # zero-ms parts are left out
    assert w.caption() == ("compile 1,000 ms = HLO passes 100 ms (10%) + backend 860 ms (86%) + "
                           "other 40 ms (4%)")
    assert "LLVM 800 ms" in w.labels() and any(t.endswith("100 ms") for t in w.labels())
    w.grab()  # paints without error


def test_compile_bar_tool_tip_names_the_part_under_the_mouse(qtbot, monkeypatch):
    """The part's tool tip: a QHelpEvent has pos(), not position() (the tip raised AttributeError)."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QToolTip

    w = CompileBar()
    qtbot.addWidget(w)
    w.set_parts(1000.0, [{"label": "LLVM", "ms": 800.0, "group": "backend"},
                         {"label": "outside XLA", "ms": 200.0, "group": "other"}])
    w.resize(1000, w.sizeHint().height())
    w.grab()  # lays the parts out
    shown: list[str] = []
    monkeypatch.setattr(QToolTip, "showText", lambda _pos, text, *_a: shown.append(text))
    where = w.rect().center()
    where.setX(100)  # inside the first (LLVM) part
    assert w.event(QHelpEvent(QEvent.Type.ToolTip, where, w.mapToGlobal(where)))
    assert shown and "<b>LLVM</b>: 800.0 ms (80%)" in shown[0]


def test_compile_bar_with_trace_and_lower(qtbot):
    w = CompileBar()
    qtbot.addWidget(w)
    parts = [{"label": "trace", "ms": 100.0, "group": "trace"}, {"label": "lower", "ms": 30.0, "group": "lower"},
             {"label": "HLO passes: simplification", "ms": 70.0, "group": "HLO passes"},
             {"label": "LLVM", "ms": 700.0, "group": "backend"}, {"label": "outside XLA", "ms": 100.0, "group": "other"}]
    w.set_parts(1000.0, parts)
    assert w.caption() == ("first call's compile 1,000 ms = trace 100 ms (10%) + lower 30 ms (3%) + "
                           "HLO passes 70 ms (7%) + backend 700 ms (70%) + other 100 ms (10%)")
    assert [p["colour"] for p in w.parts()][:2] == ["#7c3aed", "#0f766e"]
    w.resize(900, w.sizeHint().height())
    w.grab()
