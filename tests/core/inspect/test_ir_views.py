"""The IR-view catalog and the step vocabulary (``app/core/inspect/views.py``, issue 35 item 4): its rows are
sane, and every list of views or steps that was spelled out in parallel now reads them — the CLI's choices,
show-session, the session comparison, the IR tabs, the source-map tab, session files."""

from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path
from typing import get_args

import pytest

from app.core.inspect import views as catalog
from app.core.inspect.ir import StepIR
from app.core.inspect.views import IR_VIEWS, MODEL_STEPS, StepKind, cli_names, is_model_step, keys

ROOT = Path(__file__).resolve().parents[3]


def _choices(command: str, dest: str) -> tuple[str, ...]:
    """The ``choices`` of option ``dest`` of subcommand ``command`` in the real parser."""
    from app.cli.parser import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    action = next(a for a in sub.choices[command]._actions if a.dest == dest)
    return tuple(action.choices)


# -- the catalog itself ------------------------------------------------------------------------------------
def test_rows_are_unique_and_name_real_stepir_fields():
    assert len({v.key for v in IR_VIEWS}) == len({v.cli for v in IR_VIEWS}) == len(IR_VIEWS)
    fields = {f.name for f in dataclasses.fields(StepIR)}
    for v in IR_VIEWS:
        assert v.cli == v.key.replace("_", "-"), v
        assert v.compiler in ("xla", "inductor", "both") and v.kind in get_args(catalog.Kind), v
        if v.kind in ("text", "figures"):  # read off the step's StepIR
            assert v.key in fields, v
        assert not v.recorded or v.key in fields, v  # a session file keeps only StepIR fields
        assert not (v.diffable or v.widget or v.mapped or v.source_lines) or v.kind == "text", v
        assert v.lexer in ("ir", ""), v  # widgets/ir/ir_lexer.py is the one highlighter of the IR views
        assert v.ext and not v.ext.startswith("."), v


def test_lookups():
    assert catalog.view("hlo").title == "optimized HLO"
    assert catalog.view_for_cli("jaxpr-source").key == "jaxpr_source"
    with pytest.raises(KeyError, match="unknown IR view 'nope' \\(one of jaxpr, jaxpr_source"):
        catalog.view("nope")
    with pytest.raises(KeyError, match="unknown --what 'jaxpr_source'"):
        catalog.view_for_cli("jaxpr_source")
    assert keys(diffable=True) == ("jaxpr", "jaxpr_source", "stablehlo", "hlo", "fx_graph", "inductor_code")
    assert keys(source_lines=True) == ("jaxpr_source", "hlo")
    assert cli_names("inductor") == ("fx-graph", "inductor-code")
    assert [v.key for v in catalog.tab_views()] == ["jaxpr", "stablehlo", "hlo", "fx_graph", "inductor_code"]
    with pytest.raises(AttributeError):
        keys(no_such_field=True)


def test_the_step_vocabulary_is_written_once_and_importable_from_its_old_homes():
    from app.core.recording import model, text

    assert MODEL_STEPS == ("prefill", "decode") == get_args(StepKind)
    assert model.MODEL_STEPS is MODEL_STEPS and text.MODEL_STEPS is MODEL_STEPS
    assert is_model_step("decode") and is_model_step("prefill") and not is_model_step("fori")


# -- where the former lists read it ------------------------------------------------------------------------
def test_every_inspect_what_choice_comes_from_the_catalog():
    from app.cli import inspect as cli_inspect

    assert _choices("inspect", "what") == cli_names() == cli_inspect.WHAT
    assert _choices("inspect", "step") == MODEL_STEPS
    assert cli_inspect.WHAT_BY_COMPILER == {"xla": cli_names("xla"), "inductor": cli_names("inductor")}
    assert cli_inspect.PASS_WHAT == cli_names(kind="passes") == ("passes", "fusions", "pass-hlo", "compile-phases")
    # ``program --what`` (app/cli/program.py): the catalog's ``program`` rows
    from app.cli import program

    assert _choices("program", "what") == program.WHAT == cli_names(program=True) == (
        "jaxpr", "jaxpr-source", "stablehlo", "hlo", "cost", "memory", "passes", "fusions", "compile-phases")
    assert program.PASS_WHAT == ("passes", "fusions", "compile-phases")
    what = next(a for a in build_inspect_parser()._actions if a.dest == "what")
    assert what.help == "default: jaxpr (torch-compile: fx-graph)"


def build_inspect_parser() -> argparse.ArgumentParser:
    from app.cli.parser import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["inspect"]


# -- help and units: written in the catalog only ------------------------------------------------------------
def test_the_help_panel_and_the_tabs_tooltips_read_each_views_help(qtbot):
    from app.gui.panels.help import HelpDialog
    from widgets.ir.ir_tabs import IRTabs

    dialog = HelpDialog()
    qtbot.addWidget(dialog)
    text = dialog.text()
    helped = [v for v in IR_VIEWS if v.help]
    assert [v.key for v in helped] == ["jaxpr", "stablehlo", "hlo", "fx_graph", "inductor_code"]
    for v in helped:
        assert f"{v.title} — {v.help}" in text, v.key
    order = [text.index(name) for name in ("Latency per call —", "jaxpr —", "Inductor code —", "Source map —")]
    assert order == sorted(order)
    tabs = IRTabs()
    qtbot.addWidget(tabs)
    assert [tabs.tabs.tabToolTip(i) for i in range(tabs.tabs.count())] == [v.help for v in catalog.tab_views()]


def test_no_views_help_is_written_outside_the_catalog():
    for v in IR_VIEWS:
        if v.help:
            words = v.help[:40]
            found = [p.relative_to(ROOT).as_posix() for p in [*ROOT.glob("app/**/*.py"), *ROOT.glob("widgets/**/*.py")]
                     if words in p.read_text("utf-8") and p.name != "views.py"]
            assert not found, f"{v.key}'s help is written again in {found}: read IRView.help"


def test_units_and_figures_of_the_live_diff_the_ir_tabs_and_the_comparison_come_from_the_catalog():
    from app.core.compare.text import _hlo_lines
    from app.core.inspect.hlo_diff import HloDiff
    from app.core.programs import live
    from widgets.ir.ir_tabs import summary_text

    assert live.UNITS == {"jaxpr": "eqns", "stablehlo": "ops", "hlo": "instrs"}
    assert live.TITLES == {"jaxpr": "jaxpr", "stablehlo": "StableHLO", "hlo": "HLO"}
    assert [f[:2] for f in live.FIGURES] == [("FLOPs", "cost"), ("bytes accessed", "cost"), ("args", "memory"),
                                              ("outputs", "memory"), ("temp", "memory")]
    ir = StepIR(cost={"flops": 2e9, "bytes accessed": 2048.0}, memory={"argument": 1024, "output": 0, "temp": 0},
                n_equations=3, n_stablehlo_ops=4, n_hlo_instructions=5)
    text = summary_text(ir).replace("&nbsp;", " ")
    for part in ("FLOPs <b>2", "bytes accessed <b>2", "args <b>1", "jaxpr eqns <b>3", "StableHLO ops <b>4",
                 "HLO instrs <b>5"):
        assert part in text, (part, text)
    assert (HloDiff().what, HloDiff().unit) == (catalog.view("hlo").title, catalog.view("hlo").unit)
    doc = {"stablehlo": {"decode": {"summary": "s", "n_a": 1, "n_b": 2, "changes": []}}}
    assert _hlo_lines(doc, "stablehlo") == ["StableHLO of decode: s (1 vs 2 ops)"]
    assert _hlo_lines({}) == ["optimized HLO: not recorded by both runs (no structural diff)"]


def test_show_session_and_the_session_comparison_read_the_catalog():
    from app.core.recording import compare

    assert _choices("show-session", "ir") == keys(diffable=True) == compare.IR_TEXTS
    assert compare.SOURCE_TEXTS == keys(source_lines=True)
    with pytest.raises(KeyError, match="unknown IR text 'cost'"):
        compare.ir_diff(None, None, "decode", "cost")  # a catalog view that is not a text is refused first


def test_step_ir_text_prints_figures_as_json_and_texts_by_their_catalog_key():
    from app.cli.common import step_ir_text

    ir = StepIR(jaxpr_source="{ lambda ; a. }  # x.py:1", cost={"flops": 2.0})
    assert step_ir_text(ir, "jaxpr-source") == ir.jaxpr_source
    assert step_ir_text(ir, "cost") == '{\n  "flops": 2.0\n}'
    assert step_ir_text(ir, "memory") == step_ir_text(ir, "hlo") == "not available on this backend"


def test_source_maps_link_the_catalogs_mapped_views():
    from app.core.inspect.source_map import VIEWS

    assert VIEWS == keys(mapped=True)


def test_session_files_keep_every_recorded_view():
    from app.core.recording.model import _ir_to_dict

    saved = _ir_to_dict(StepIR(jaxpr="j", hlo="h", fx_graph="f", cost={"flops": 1.0}))
    assert set(keys(recorded=True)) <= set(saved) and "traced_jaxpr" not in saved


def test_the_ir_tabs_and_the_step_diff_read_the_catalog(qtbot):
    from widgets.ir import ir_tabs
    from widgets.source.step_diff import StepDiff

    assert ir_tabs.STEPS is MODEL_STEPS
    assert ir_tabs.INDUCTOR_VIEWS == keys("inductor", kind="text") == ("fx_graph", "inductor_code")
    tabs = ir_tabs.IRTabs()
    qtbot.addWidget(tabs)
    rows = catalog.tab_views()
    assert list(tabs.panels) == [v.key for v in rows]
    assert [tabs.tabs.tabText(i) for i in range(len(rows))] == [v.title for v in rows]
    assert [p.view.objectName() for p in tabs.panels.values()] == [v.widget for v in rows]
    assert [p._suffix for p in tabs.panels.values()] == [v.ext for v in rows]
    assert list(tabs.step_buttons) == list(MODEL_STEPS)
    diff = StepDiff()
    qtbot.addWidget(diff)
    assert diff.names == MODEL_STEPS


# -- no step pair spelled outside the catalog --------------------------------------------------------------
#: Two adjacent string literals naming both model steps, in either order (a tuple, a list, a ``Literal``).
STEP_PAIR = re.compile(r"""["'](prefill|decode)["']\s*,\s*["'](?!\1)(prefill|decode)["']""")
#: The files this item moved onto :data:`MODEL_STEPS`: none may spell the pair again.
CONVERTED = (
    "app/core/events.py", "app/core/inspect/source_diff.py", "app/core/passes/compare.py",
    "app/core/recording/model.py", "app/core/recording/text.py", "app/core/recording/compare.py",
    "app/cli/inspect.py", "app/cli/show_session.py", "app/cli/common.py", "app/gui/panels/inspect.py",
    "widgets/ir/ir_tabs.py", "widgets/source/step_diff.py",
)
#: Pairs still spelled in files outside this item: app/cli/passes.py (3), app/cli/profile.py,
#: app/core/profile/step.py, app/gui/panels/profile/wiring.py (3), app/gui/panels/profile/links.py, app/gui/panels/passes/wiring.py and the Sessions
#: tab's step box (app/gui/panels/sessions/compare.py). The count may only fall: lower it as they move onto MODEL_STEPS.
REMAINING = 11


def step_pairs(root: Path) -> dict[str, int]:
    """``{path: number of step-pair literals}`` of the .py files under ``root``'s app/ and widgets/, the
    catalog (app/core/inspect/views.py) left out."""
    found = {}
    for path in sorted([*root.glob("app/**/*.py"), *root.glob("widgets/**/*.py")]):
        rel = path.relative_to(root).as_posix()
        if rel != "app/core/inspect/views.py" and (n := len(STEP_PAIR.findall(path.read_text(encoding="utf-8")))):
            found[rel] = n
    return found


def test_no_step_pair_literal_outside_the_catalog():
    found = step_pairs(ROOT)
    assert not {p: n for p, n in found.items() if p in CONVERTED}, found
    assert sum(found.values()) <= REMAINING, f"a new step-pair literal (use MODEL_STEPS): {found}"


def test_the_step_pair_grep_finds_a_planted_literal(tmp_path):
    (tmp_path / "app" / "core" / "inspect").mkdir(parents=True)
    (tmp_path / "widgets").mkdir()
    (tmp_path / "app" / "core" / "inspect" / "views.py").write_text('S = ("prefill", "decode")\n')
    (tmp_path / "app" / "a.py").write_text('x = ("prefill", "decode")\ny = ["decode",\n     "prefill"]\n'
                                           'z = ("decode", "decode")\n')
    (tmp_path / "widgets" / "w.py").write_text("K = Literal['prefill', 'decode']\n")
    assert step_pairs(tmp_path) == {"app/a.py": 2, "widgets/w.py": 1}
