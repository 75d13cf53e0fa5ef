"""Views that follow the session's runs (issue 37): a warm run shows the IR of what runs (not "Waiting for the
first compile…"), and the Passes and Profile tabs show the session's recordings."""

from __future__ import annotations

import pytest

from tests.conftest import run_and_wait

pytest.importorskip("pytestqt")


def test_a_warm_run_in_a_mode_compiled_earlier_shows_its_ir(qtbot, window):
    hlo = window.ui.ir_tabs.panels["hlo"].view
    run_and_wait(qtbot, window)  # jit-static compiles: its IR shows
    first = window.ui.ir_tabs.text_of("decode", "hlo")
    assert first
    window.ui.form.set_values({"mode": "torch"})
    run_and_wait(qtbot, window)  # no compiler: the IR tabs say so
    assert window.ui.ir_tabs.text_of("decode", "hlo") is None
    window.ui.form.set_values({"mode": "jit-static"})
    run_and_wait(qtbot, window)  # warm: nothing compiles, the kept IR shows again, with its source map
    assert not any(r.compiled for r in window.session.current.records)
    assert window.ui.ir_tabs.text_of("decode", "hlo") == first
    assert "Waiting for the first compile" not in hlo.placeholderText() or hlo.toPlainText()
    qtbot.waitUntil(lambda: "decode" in window.inspect.maps, timeout=30_000)


def test_a_run_names_its_kv_cache_size_once_it_ends(qtbot, window):
    """Issue 38: the cache size is part of each run's label (the legend, the call tool tip's header) and of the
    race summary's rows; torch's DynamicCache has none."""
    window.ui.form.set_values({"mode": "jit-static"})
    run_and_wait(qtbot, window)
    cache_len = window.session.current.finished.summary.cache_len
    assert cache_len  # positions at the end (pydoc-llama holds 64 at most)
    label = window.ui.plot.run_labels()[-1]
    assert label.endswith(f" · KV {cache_len:,}"), label
    assert window.session.race_rows()[-1]["cache_len"] == cache_len
    window.ui.form.set_values({"mode": "torch"})
    run_and_wait(qtbot, window)
    assert "KV " not in window.ui.plot.run_labels()[-1]
