"""File ▸ Compare two runs… (issue 58): the verdict first, the same line as ``torchax-playground compare``, on the
plot's runs (a race's two lanes, from a session file) or on two session files picked in the dialog; Save report…
writes the one-page HTML. No model is loaded or compiled: the session files are written here."""

from __future__ import annotations

import io
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QFileDialog, QMainWindow  # noqa: E402

from app.cli import main  # noqa: E402
from app.core.recording.store import SessionFile  # noqa: E402
from tests.cli.test_compare_cli import _run  # noqa: E402
from tests.core.compare.test_compare_programs import check_html  # noqa: E402
from tests.core.inspect.test_hlo_structural_diff import A, _renamed  # noqa: E402


def _verdicts(ratio: float, lo: float, hi: float) -> list[dict]:
    """A race's steady-state verdicts as a session file keeps them (jit-loop against jit-static, 12 rounds)."""
    from app.core.events import VerdictsEvent
    from app.core.verdict.words import PairVerdict

    pair = PairVerdict("jit-loop", "jit-static", ratio, lo, hi, 12, 1.0, 0, False, f"jit-loop: {ratio:.2f}×")
    event = VerdictsEvent((pair,), "jit-static", ("jit-static", "jit-loop"), 12, 0, 1.0, False)
    return [{**event.to_json(), "race": 1}]


def _cli_verdict(*argv) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert main(["compare", *map(str, argv)], out=out, err=err) == 0, err.getvalue()
    return out.getvalue().splitlines()[0]


def test_a_races_two_lanes_show_the_clis_verdict_and_save_the_report(qtbot, make_window, gui_model, tmp_path):
    path = tmp_path / "race.session"
    SessionFile(runs=[_run("jit-static", 10.0, A, [1, 2, 3]), _run("jit-loop", 8.0, _renamed(A), [1, 2, 3])],
                verdicts=_verdicts(1.25, 1.18, 1.31)).save(path)
    win = make_window(gui_model, autoload=False)
    try:
        assert win.sessions.open_paths([path])
        texts = [a.text() for a in win.menuBar().actions()[0].menu().actions()]
        assert texts.index("Compare &two runs…") == texts.index("&Diff IR of two runs…") + 1
        win.compare_runs.action.trigger()
        dialog = win.compare_runs.dialog
        assert dialog is not None and dialog.isVisible()
        verdict = dialog.verdict.text()
        assert verdict == _cli_verdict(path)
        assert verdict.startswith("B is 1.25× faster at steady decode (95 % CI 1.18–1.31); the same optimized HLO")
        assert "over 12 paired rounds, B's speed-up 1.250× (95 % CI 1.180–1.310)" in dialog.view.toPlainText()
        assert win.ui.status_label.text().startswith("Compare: B is 1.25×")
        out = dialog.save(tmp_path / "report.html")
        assert out is not None
        page = out.read_text(encoding="utf-8")
        assert verdict in " ".join(check_html(page).text) and page.count("<svg") == 2
        assert dialog.save(tmp_path / "missing" / "r.html") is None and "Cannot write" in dialog.verdict.text()
        dialog.close()
    finally:
        win.close()


def test_two_session_files_picked_in_the_dialog(qtbot, monkeypatch, tmp_path):
    from app.gui.panels.sessions.compare_runs import CompareRunsDialog

    a, b, bad = tmp_path / "cpu.session", tmp_path / "gpu.session", tmp_path / "bad.session"
    SessionFile(runs=[_run("jit-static", 10.0, A, [1, 2, 3])], verdicts=_verdicts(1.0, 0.9, 1.1)).save(a)
    changed = A.replace("sine(%p0)", "cosine(%p0)")
    SessionFile(runs=[_run("jit-loop", 8.0, changed, [1, 2, 4], jax="0.8.0", platform="gpu")],
                verdicts=_verdicts(1.0, 0.9, 1.1)).save(b)
    bad.write_text("not a session", encoding="utf-8")
    host = QMainWindow()
    qtbot.addWidget(host)
    host.resize(1280, 720)
    host.show()
    dialog = CompareRunsDialog([], host)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.doc is None and "Pick two runs" in dialog.verdict.text() and not dialog.save_button.isEnabled()
    assert dialog.width() <= 1280 and dialog.height() <= 720
    assert not dialog.open_paths([str(bad)]) and dialog.verdict.text().startswith("Cannot compare: ")
    assert dialog.a.count() == 0
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(lambda *_, **__: ([str(a), str(b)], "")))
    dialog.open_button.click()
    assert [dialog.a.currentIndex(), dialog.b.currentIndex()] == [0, 1] and dialog.a.count() == 2
    verdict = dialog.verdict.text()
    assert verdict == _cli_verdict(a, b)  # two files: no race pairs their runs, whatever their race numbers
    assert "(recorded without rounds: no interval)" in verdict and "decode 1 change" in verdict
    view = dialog.view.toPlainText()
    assert "cosine" in view and "model.py:3" in view and "0.8.0" in view and "gpu" in view
    dialog.pick(1, 0)
    assert dialog.verdict.text().startswith("B is 1.25× slower")
    dialog.close()
