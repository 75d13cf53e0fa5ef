"""The device mesh in the real window (issue #7), on 4 simulated CPU devices (tests/conftest.py): the
device panel, a tp=2 run on the built-in model (8 heads, 8 KV heads, MLP 688: tp=2 divides them, tp=3
does not), the collectives table above hloView, per-device bytes, and ``--devices`` for the GUI."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from conftest import run_and_wait  # noqa: E402
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QPlainTextEdit, QPushButton, QWidget

ROOT = Path(__file__).resolve().parents[3]




def _legend(plot) -> list[str]:
    return [label.text for _, label in plot.legend.items]


def test_device_panel_lists_the_devices(window):
    panel = window.findChild(QWidget, "devicePanel")
    assert panel is window.ui.device_panel and panel.device_count() == 4
    assert panel.table.rowCount() == 4
    assert [panel.table.item(i, 0).text() for i in range(4)] == ["cpu:0", "cpu:1", "cpu:2", "cpu:3"]
    assert {panel.table.item(i, 1).text() for i in range(4)} == {"unknown"}  # XLA:CPU reports no memory
    picker = window.findChild(QComboBox, "meshPicker")
    assert [picker.itemData(i) for i in range(picker.count())] == ["tp=1", "tp=2", "tp=4"]
    assert picker.currentData() == "tp=1" and "1 device" in panel.mesh_label.text()


def test_tp2_run_collectives_bytes_then_a_bad_tp(qtbot, window):
    run_and_wait(qtbot, window)  # one device first, to overlay
    panel, status = window.ui.device_panel, window.findChild(QLabel, "statusLabel")
    assert panel.bytes_text("Weights")["cpu:0"] != "—" and panel.bytes_text("Weights")["cpu:1"] == "—"

    picker = window.findChild(QComboBox, "meshPicker")
    picker.setCurrentIndex(picker.findData("tp=2"))
    qtbot.mouseClick(window.findChild(QPushButton, "applyMeshButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.mesh.current == "tp=2", timeout=60_000)
    assert "tp=2" in panel.mesh_label.text() and "Mesh applied" in status.text()
    run_and_wait(qtbot, window)
    assert status.text().startswith("Done"), status.text()
    legend = _legend(window.ui.plot)
    assert len(legend) == 2 and "1 device" in legend[0] and "· tp=2 ·" in legend[1], legend

    # Collectives of the partitioned module, above hloView; a row click shows its line.
    tabs = window.ui.ir_tabs
    tabs.tabs.setCurrentWidget(tabs.panels["hlo"])
    label = window.findChild(QLabel, "collectivesLabel")
    assert label.isVisible()
    m = re.search(r"(\d+) collectives?: (.*)", label.text())
    n_reduce = re.search(r"(\d+) all-reduce", label.text())
    assert m and int(m.group(1)) > 0 and n_reduce and int(n_reduce.group(1)) > 0, label.text()
    table = window.inspect.collectives.table
    assert table.rowCount() == int(m.group(1))
    row = table.rowCount() - 1
    line = int(table.item(row, 3).text())
    qtbot.mouseClick(
        table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualItemRect(table.item(row, 0)).center()
    )
    hlo = window.findChild(QPlainTextEdit, "hloView")
    assert hlo.textCursor().blockNumber() == line - 1
    assert table.item(row, 0).text() in hlo.textCursor().block().text()

    # Bytes per device: two devices hold weights and KV cache, the other two nothing.
    for column in ("Weights", "KV cache"):
        held = {k: v for k, v in panel.bytes_text(column).items() if v != "—"}
        assert set(held) == {"cpu:0", "cpu:1"}, (column, held)

    # The picker greys out sizes the model does not allow (its 4 heads: tp=3 of a 3- or 4-device count).
    sizes = window.session.loaded.tp_sizes
    for i in range(picker.count()):
        tp = int(picker.itemData(i).removeprefix("tp="))
        assert picker.model().item(i).isEnabled() == (tp in sizes), (tp, sizes)
    # tp=3 does not divide the heads: an error in the status bar, the mesh stays tp=2.
    window.mesh.request_mesh("tp=3")
    qtbot.waitUntil(lambda: status.property("error") is True, timeout=30_000)
    assert "tp=3" in status.text() and "divide" in status.text()
    error = window.findChild(QLabel, "meshError")  # also inline, under the picker
    assert error.isVisibleTo(window) and "tp=3" in error.text()
    assert window.mesh.current == "tp=2" and picker.currentData() == "tp=2"
    run_and_wait(qtbot, window)
    assert status.text().startswith("Done"), status.text()
    assert "· tp=2 ·" in _legend(window.ui.plot)[-1]

    # Back to one device: bytes on cpu:0 only, no collectives.
    picker.setCurrentIndex(picker.findData("tp=1"))
    qtbot.mouseClick(window.findChild(QPushButton, "applyMeshButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.mesh.current == "1 device", timeout=60_000)
    run_and_wait(qtbot, window)
    assert {k for k, v in panel.bytes_text("Weights").items() if v != "—"} == {"cpu:0"}
    assert window.inspect.collectives.isHidden()


def test_mesh_follows_a_new_model_or_is_dropped_with_a_note(qtbot, window, gui_model, model_dirs):
    tiny = model_dirs("llama")  # 4 heads, 2 KV heads: tp=4 does not fit, tp=2 does
    window.mesh.request_mesh("tp=4")
    qtbot.waitUntil(lambda: window.mesh.current == "tp=4", timeout=60_000)
    window.request_load(tiny)
    qtbot.waitUntil(lambda: window.loaded.request.model == tiny and not window.is_busy(), timeout=120_000)
    qtbot.waitUntil(lambda: window.mesh.current == "1 device", timeout=10_000)
    assert window.ui.model_warning.isVisible() and "tp=4" in window.ui.model_warning.text()
    assert window.ui.device_panel.picker.currentData() == "tp=1"

    window.mesh.request_mesh("tp=2")
    qtbot.waitUntil(lambda: window.mesh.current == "tp=2", timeout=60_000)
    window.request_load(gui_model)
    qtbot.waitUntil(
        lambda: window.loaded.request.model == gui_model and not window.is_busy(), timeout=120_000
    )
    qtbot.waitUntil(lambda: window.ui.device_panel.picker.currentData() == "tp=2", timeout=10_000)
    assert window.mesh.current == "tp=2" and not window.ui.model_warning.isVisible()
    run_and_wait(qtbot, window)
    assert "· tp=2 ·" in _legend(window.ui.plot)[-1]

    # jit-loop runs on a mesh too (issue 39: its token callback reaches one device per process)
    window.ui.form.mode.setCurrentText("jit-loop")
    run_and_wait(qtbot, window)
    assert "jit-loop · tp=2 ·" in _legend(window.ui.plot)[-1]
    # a run of another mode refused before it compiles (a KV cache shorter than the prompt): the IR tabs, cleared
    # for the new mode, say the run did not compile, not "Waiting for the first compile"
    window.ui.form.mode.setCurrentText("jit-dynamic")
    window.ui.form.cache_len.setValue(2)
    status = window.findChild(QLabel, "statusLabel")
    window.run()  # refused: it adds no run to wait for (issue 55: a refused run leaves no trace)
    qtbot.waitUntil(lambda: status.property("error") is True and not window.is_busy(), timeout=30_000)
    jaxpr = window.ui.ir_tabs.panels["jaxpr"]
    assert jaxpr.text() is None and "did not compile" in jaxpr.view.placeholderText(), jaxpr.view.placeholderText()
    assert "the KV cache holds 2 positions" in jaxpr.view.placeholderText()


SCRIPT = """
import sys
import app.gui.main as gui

def main(argv=None):  # gui.main's argument handling, without opening a window
    gui.parse_args(argv)
    import jax
    print("devices", jax.device_count())
    return 0

gui.main = main
from app.cli import main as cli_main
sys.exit(cli_main(sys.argv[1:]))
"""


@pytest.mark.parametrize("argv, n", [(["--devices", "3"], 3), (["gui", "--devices", "2"], 2)])
def test_devices_option_reaches_the_gui(argv, n):
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith(f"devices {n}")


def test_a_new_model_clears_the_previous_models_text_and_ir(qtbot, window, model_dirs):
    run_and_wait(qtbot, window)
    assert window.ui.tokens.tokens() and "HloModule" in window.ui.ir_tabs.panels["hlo"].view.toPlainText()
    window.request_load(model_dirs("gpt2"))
    qtbot.waitUntil(lambda: window.loaded.request.model == model_dirs("gpt2") and not window.is_busy(),
                    timeout=120_000)
    assert window.ui.tokens.tokens() == [] and window.ui.tokens.toPlainText() == ""
    assert "HloModule" not in window.ui.ir_tabs.panels["hlo"].view.toPlainText()
    assert window.ui.stats.text("tokens") == "–"

