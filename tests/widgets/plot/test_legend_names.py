"""The run legend names every run readably in a small plot (issue 37, the random walk's "names cut" flaw): each
entry keeps its run number, mode and model or ``file:entry`` whole — the devices and the machine go first, by
meaning, not by place — or, when the legend's rows cannot hold one entry per run, the oldest runs are named
together ("runs 1–9 · 9 earlier runs"); the newest run and the newest race's lanes keep their own entries."""

from __future__ import annotations

import os
import re

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402
from qt_helpers import call_record  # noqa: E402

from widgets.plot.latency_plot import LatencyPlot  # noqa: E402
from widgets.plot.latency_runs import essential  # noqa: E402
from widgets.plot.plot_fitting import LEGEND_LEAVES_PX  # noqa: E402

REC = " · recorded on CPU × 4"
#: (label, what the entry must name): the walk's failing mix (seed 197, step 8)
RUNS = [
    ("jit-static · 1 device · pydoc-llama" + REC, "pydoc-llama"),
    ("jit-static · 1 device · pydoc-llama" + REC, "pydoc-llama"),
    ("jit-static · 1 device · pydoc-llama" + REC, "pydoc-llama"),
    ("jit · 1 device · 02_static_shapes.py:normalize", "02_static_shapes.py:normalize"),
    ("jit-static · 1 device · pydoc-llama", "pydoc-llama"),
    ("jit · 1 device · 05_loops.py:python_loop", "05_loops.py:python_loop"),
]


def settle(qtbot) -> None:
    for _ in range(3):
        QApplication.processEvents()
    qtbot.wait(20)


def draw(plot: LatencyPlot, runs: list[tuple[str, str]]) -> None:
    for run_id, (label, _what) in enumerate(runs, start=1):
        plot.start_run(label, run_id=run_id)
        for i in range(6):
            plot.add_record(call_record(i, "prefill" if i == 0 else "decode", 900.0 if i < 2 else 5.0 + run_id,
                                        compiled=i < 2))
        plot.redraw()


def draw_lanes(plot: LatencyPlot, runs: list[tuple[str, int | None]], first: int = 1) -> None:
    """Draw ``runs`` (label, race group or None) as runs ``first``, ``first`` + 1, …: runs outside a race faded, a
    race's lanes with a steady value of 21.4 ms."""
    for run_id, (label, group) in enumerate(runs, start=first):
        plot.start_run(label, run_id=run_id, group=group, fade=group is None)
        for i in range(6):
            plot.add_record(call_record(i, "prefill" if i == 0 else "decode", 900.0 if i < 2 else 20.0 + run_id,
                                        compiled=i < 2))
        plot.redraw()
        if group:
            plot.set_run_steady(run_id, 21.4)


def readable(plot: LatencyPlot, runs: list[tuple[str, str]]) -> list[str]:
    """The runs whose legend entry does not name their mode and model whole (nor a "runs a–b" entry them)."""
    names = [label.text for _, label in plot.legend.items]
    bad = []
    for run_id, (label, what) in enumerate(runs, start=1):
        mode = label.split(" · ")[0]
        own = next((n for n in names if re.match(rf"run {run_id}\b", n)), "")
        grouped = any((m := re.match(r"runs (\d+)–(\d+)\b", n)) and int(m[1]) <= run_id <= int(m[2])
                      for n in names)
        if grouped and not own:
            continue
        if not own or mode not in own or (what not in own and what not in plot.shared_label()):
            bad.append(f"run {run_id} shown as {own!r}")
    return bad


def test_essential_drops_devices_and_machine_by_meaning():
    assert essential("run 2 · jit-static · 1 device · pydoc-llama · recorded on CPU × 4") == \
        "run 2 · jit-static · pydoc-llama"
    assert essential("run 2 · jit-static · pydoc-llama · recorded on CPU × 4") == "run 2 · jit-static · pydoc-llama"
    assert essential("run 3 · jit-static · dp=2,tp=2 · SmolLM2 · Q4_1 → float32 ┄ 9.5 ms") == \
        "run 3 · jit-static · SmolLM2 · Q4_1 → float32"


def test_a_small_plot_names_each_run_or_groups_the_oldest(qtbot):
    for size in ((300, 200), (420, 260), (700, 420)):
        plot = LatencyPlot()
        qtbot.addWidget(plot)
        plot.resize(*size)
        plot.show()
        draw(plot, RUNS)
        settle(qtbot)
        names = [label.text for _, label in plot.legend.items]
        assert not readable(plot, RUNS), (size, names, plot.shared_label())
        assert any(n.startswith("run 6 ·") for n in names), names  # the newest run has its own entry
        legend = plot.mapFromScene(plot.legend.sceneBoundingRect()).boundingRect()
        assert plot.viewport().rect().adjusted(-1, -1, 1, 1).contains(legend), (size, legend, names)
        plot.close()


def test_a_roomy_plot_keeps_one_entry_per_run(qtbot):
    plot = LatencyPlot()
    qtbot.addWidget(plot)
    plot.resize(1100, 700)
    plot.show()
    draw(plot, RUNS)
    settle(qtbot)
    names = [label.text for _, label in plot.legend.items]
    assert [n.split(" · ")[0] for n in names] == [f"run {i}" for i in range(1, 7)], names
    assert not readable(plot, RUNS), names


def test_a_lane_keeps_its_model_before_its_steady_value(qtbot):
    """A race lane's steady value (" ┄ 907 ms", in its entry when the key has no room) is left out before its
    model is cut (the walk, seed 197: "run 17 · torchax-eager ▶ replay · pyd… ┄ 907 ms")."""
    runs = [("jit · 1 device · 05_loops.py:python_loop", "05_loops.py:python_loop"),
            ("torch ▶ replay · 1 device · pydoc-llama", "pydoc-llama"),
            ("torchax-eager ▶ replay · 1 device · pydoc-llama", "pydoc-llama")]
    for size in ((320, 240), (520, 300)):
        plot = LatencyPlot()
        qtbot.addWidget(plot)
        plot.resize(*size)
        plot.show()
        plot.start_run(runs[0][0], run_id=1)
        for i in range(4):
            plot.add_record(call_record(i, "call", 300.0 if i == 0 else 2.0, compiled=i == 0))
        for run_id, (label, _what) in enumerate(runs[1:], start=2):
            plot.start_run(label, run_id=run_id, group=7, fade=False)
            for i in range(6):
                plot.add_record(call_record(i, "prefill" if i == 0 else "decode", 900.0 if i < 2 else 400.0 + run_id,
                                            compiled=i < 2))
            plot.redraw()
            plot.set_run_steady(run_id, 400.0 + run_id + 500)
        settle(qtbot)
        names = [label.text for _, label in plot.legend.items]
        assert not readable(plot, runs), (size, names, plot.shared_label(), plot.key_text())
        plot.close()


def test_a_name_wider_than_the_plot_takes_two_lines(qtbot):
    """The walk (seed 301, a 1019-px window): "run 4 · jit · 02_static_shapes.py:norm…" in a 300-px plot."""
    runs = [("jit-static · 1 device · pydoc-llama", "pydoc-llama"),
            ("jit · 1 device · 02_static_shapes.py:normalize · recorded on CPU × 1 as run 1",
             "02_static_shapes.py:normalize")]
    plot = LatencyPlot()
    qtbot.addWidget(plot)
    plot.resize(290, 260)
    plot.show()
    draw(plot, runs)
    settle(qtbot)
    names = [label.text for _, label in plot.legend.items]
    assert not readable(plot, runs), names
    assert any("<br>" in n for n in names), names
    legend = plot.mapFromScene(plot.legend.sceneBoundingRect()).boundingRect()
    assert plot.viewport().rect().adjusted(-1, -1, 1, 1).contains(legend), (legend, names)


def test_the_legend_fits_a_plot_at_its_minimum_size(qtbot):
    """The walk (seed 304, 1024×600, Code workspace): a sweep's two entries on two lines each hung 36 px below a
    180-px plot. At :data:`MIN_SIZE` the legend lies inside the plot."""
    from widgets.plot.latency_plot import MIN_SIZE

    runs = [("jit · 1 device · 02_static_shapes.py:normalize", "02_static_shapes.py:normalize"),
            ("jit-static · 1 device · pydoc-llama · recorded on CPU × 1 as run 1", "pydoc-llama")]
    plot = LatencyPlot()
    qtbot.addWidget(plot)
    plot.resize(*MIN_SIZE)
    plot.show()
    draw(plot, runs)
    settle(qtbot)
    names = [label.text for _, label in plot.legend.items]
    legend = plot.mapFromScene(plot.legend.sceneBoundingRect()).boundingRect()
    assert plot.viewport().rect().adjusted(-1, -1, 1, 1).contains(legend), (legend, names)
    assert not readable(plot, runs), names


def test_what_every_run_shares_names_the_model_before_the_devices(qtbot):
    """The walk (seed 309, 1024×600): the x axis said "every run: 1 d…", the model cut away."""
    runs = [("jit-static · 1 device · pydoc-llama", "pydoc-llama")] * 5
    plot = LatencyPlot()
    qtbot.addWidget(plot)
    plot.resize(300, 260)
    plot.show()
    draw(plot, runs)
    settle(qtbot)
    assert plot.shared_label() == "pydoc-llama · 1 device", plot.shared_label()


def test_ten_runs_in_a_narrow_plot_keep_the_newest_name_whole(qtbot):
    """The walk (seed 309, 1024×600: ten stopped runs): the newest entry read "run 10 · jit-st…" — a column's
    room was counted with one gap too few and a label's text margins left out."""
    runs = [("jit-static · 1 device · pydoc-llama", "pydoc-llama")] * 10
    plot = LatencyPlot()
    qtbot.addWidget(plot)
    plot.resize(284, 329)
    plot.show()
    draw(plot, runs)
    settle(qtbot)
    names = [label.text for _, label in plot.legend.items]
    assert not readable(plot, runs) and not any(n.endswith("…") and n.startswith("run ") for n in names), names


def test_a_runs_kv_cache_size_goes_before_where_it_was_recorded_and_is_dropped_first():
    from app.gui.panels.run_view import with_cache_len
    from widgets.plot.latency_runs import essential

    assert with_cache_len("jit-static · 1 device · m", 256) == "jit-static · 1 device · m · KV 256"
    recorded = with_cache_len("jit-loop · 1 device · m · recorded on CPU × 4 · KV 256", 8192)
    assert recorded == "jit-loop · 1 device · m · KV 8,192 · recorded on CPU × 4"
    assert essential(f"run 3 · {recorded}") == "run 3 · jit-loop · m"


def test_a_replayed_race_beside_older_runs_keeps_the_legend_in_its_rows(qtbot):
    """Issue 55, the plot's drawing area at its edge: a replayed race's two lanes beside the older runs took three
    legend rows in one column (names with their steady values too wide for two), over a short plot's two-row
    budget — 172 px of drawing area in the Code workspace at 1280×720 (the suite's walk, seed 197 step 14) and
    173 px in the Run workspace at 1324×723 (walk seed 7). The steady values give way to a second column."""
    older = [("jit · 1 device · 05_loops.py:python_loop", None)] * 3 + [
        ("torch · 1 device · pydoc-llama", 5), ("torchax-eager · 1 device · pydoc-llama", 5)]
    replayed = [("torch ▶ replay · 1 device · pydoc-llama", 6), ("torchax-eager ▶ replay · 1 device · pydoc-llama", 6)]
    raced = [("torchax-eager · 1 device · pydoc-llama", 6), ("jit-static · 1 device · pydoc-llama · KV 64", 6)]
    # the Code workspace's plot at 1280×720 after a replay; the Run workspace's at 1324×723 after a race
    for size, runs in (((690, 330), older + replayed), ((565, 356), older + raced)):
        plot = LatencyPlot()
        qtbot.addWidget(plot)
        plot.resize(*size)
        plot.show()
        draw_lanes(plot, runs)
        settle(qtbot)
        names = [label.text for _, label in plot.legend.items]
        rows = -(-len(names) // plot.legend.columnCount)
        assert rows <= plot._legend_rows(), (size, names)
        assert not readable(plot, [(label, "pydoc-llama" if group else "") for label, group in runs]), names
        assert plot.plotItem.getViewBox().sceneBoundingRect().height() >= 180, (size, names)
        plot.close()


def test_an_entry_of_several_runs_is_named_whole_in_its_room():
    """An entry of several runs too wide for its room takes a shorter name that is whole, never one cut with "…"
    (issue 55, in a real window at 1280×720: "runs 1–4 · default, O…", "runs 1–6 · 6 earlier …"): a settings
    race's settings counted, else the runs' span alone; its tool tip names each run."""
    from widgets.plot.latency_runs import PlotRun, entry_tip, race_entry_name

    def runs(lanes: list[str], group: int | None) -> list[PlotRun]:
        return [PlotRun(i, f"{lane or 'jit-static'} · 1 device", "#000", None, {}, None, group=group, lane=lane)
                for i, lane in enumerate(lanes, start=1)]

    def width(text: str) -> float:
        return 7.0 * len(text)  # px

    race, older = runs(["default", "O1", "O3", "O0"], 1), runs(["", "", "", "", "", ""], None)
    assert race_entry_name(race) == "runs 1–4 · default, O1, O3, O0"
    assert race_entry_name(race, width, width("runs 1–4 · default, O1, O3, O0")) == "runs 1–4 · default, O1, O3, O0"
    assert race_entry_name(race, width, width("runs 1–4 · 4 settings")) == "runs 1–4 · 4 settings"
    assert race_entry_name(race, width, width("runs 1–4 · 4 settings") - 1) == "runs 1–4"
    assert race_entry_name(older, width, 1000) == "runs 1–6 · 6 earlier runs"
    assert race_entry_name(older, width, width("runs 1–6 · 6 earlier runs") - 1) == "runs 1–6"
    assert race_entry_name(runs(["jit", "no-jit"], 2), width, width("runs 1–2 · 2 lanes")) == "runs 1–2 · 2 lanes"
    modes = runs(["", "", ""], 3)
    assert race_entry_name(modes, width, width("runs 1–3 · race of 3 modes") - 1) == "runs 1–3"
    tip = entry_tip(race).splitlines()
    assert tip == ["runs 1–4 · default, O1, O3, O0", *(f"run {i} · {s} · 1 device" for i, s in
                                                       enumerate(["default", "O1", "O3", "O0"], start=1))]


def test_earlier_runs_go_under_the_x_axis_when_the_newest_race_fills_the_legends_rows(qtbot):
    """Issue 55, walk seed 7 at 1920×1080 (step 16, the window shrunk to 1324×723): five earlier runs of two models
    and the newest race's two lanes (never merged: a race is one unit) took three legend rows in a 420-px-wide plot —
    one entry for the earlier runs, one per lane — and the drawing area fell to 173 px. Where the rows would leave the
    drawing area under :data:`LEGEND_LEAVES_PX`, the earlier runs are named under the x axis ("runs 5–9 earlier",
    whole) and the lanes keep the legend's rows, each naming its mode and model; a plot with the room keeps them."""
    older = [("jit-static · 1 device · pydoc-llama · KV 64", None)] * 3 + [
        ("jit-static · 1 device · random:mixtral-tiny", None), ("torch · 1 device · pydoc-llama · recorded on CPU × 4", None)]
    raced = [("torchax-eager · 1 device · pydoc-llama", 6), ("jit-static · 1 device · pydoc-llama · KV 64", 6)]
    for size in ((420, 300), (420, 330), (500, 300), (430, 380)):
        plot = LatencyPlot()
        qtbot.addWidget(plot)
        plot.resize(*size)
        plot.show()
        draw_lanes(plot, older + raced, first=5)
        settle(qtbot)
        names = [label.text for _, label in plot.legend.items]
        title = plot.plotItem.getAxis("bottom").labelText
        drawing = plot.plotItem.getViewBox().sceneBoundingRect().height()
        assert "…" not in title, title  # each part whole or left out
        if size == (430, 380):  # the room for three rows
            assert names[0] == "runs 5–9 · 5 earlier runs" and drawing >= LEGEND_LEAVES_PX, (names, drawing)
            plot.close()
            continue
        rows = -(-len(names) // plot.legend.columnCount)
        assert rows <= plot._legend_rows(), (size, names)
        assert [n.split(" · ")[:2] for n in names] == [["run 10", "torchax-eager"], ["run 11", "jit-static"]], names
        assert all("pydoc-llama" in n for n in names) or "runs 10–11: pydoc-llama" in title, (names, title)
        assert "runs 5–9 earlier" in title, title
        for scale in (1.6, 1.0):  # presentation's larger fonts and back (walk seed 4 at 1280×720, step 52): the
            plot.set_font_scale(scale)  # earlier runs are named in the legend or under the x axis, never nowhere
            settle(qtbot)
            names = [label.text for _, label in plot.legend.items]
            title = plot.plotItem.getAxis("bottom").labelText
            assert names[0].startswith("runs 5–9") or "runs 5–9 earlier" in title, (scale, names, title)
        plot.close()
