"""Journeys in a real X11 window (Xvfb, Debian's ``xvfb``, installed by ``.ci/run``), not offscreen: a new user
at 1280×720 runs, races three modes, presents, inspects, exports the plot (rendered by cairosvg, not Qt),
stops during a compile and closes during a compile; at 1920×1080 the same up to the export. Screenshots of
every step are kept in ``tests/artifacts/<journey>/`` (ignored by git) to be looked at."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
JOURNEY = Path(__file__).with_name("journey.py")
TIMEOUT_S = 600

pytestmark = pytest.mark.skipif(shutil.which("Xvfb") is None, reason="needs Debian's xvfb (.ci/run installs it)")


def _journey(display: str, out: Path, tmp_path: Path, short: bool) -> tuple[dict, float | None]:
    """Run the journey; returns its results and the seconds from its close to the process's end."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "HF_HUB_OFFLINE": "1",
           "TORCHAX_PLAYGROUND_CONFIG_DIR": str(tmp_path / "config")}
    env.pop("TORCHAX_PLAYGROUND_TEST_COMPILE_DELAY_S", None)
    proc = subprocess.Popen([sys.executable, str(JOURNEY), str(out), *(["--short"] if short else [])],
                            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log, _ = proc.communicate(timeout=TIMEOUT_S)
    ended = time.time()
    (out / "app.log").write_text(log)
    results_file = out / "results.json"
    assert results_file.exists(), log[-3000:]
    results = json.loads(results_file.read_text())
    closed = results.get("close_at")
    return results, (ended - closed if closed else None)


def _svg_matches_png(png: Path, svg: Path) -> None:
    cairosvg = pytest.importorskip("cairosvg")
    from PIL import Image

    qt = np.asarray(Image.open(png).convert("RGB")).astype(float)
    other = np.asarray(Image.open(io.BytesIO(cairosvg.svg2png(
        url=str(svg), output_width=qt.shape[1], output_height=qt.shape[0]))).convert("RGB")).astype(float)
    ink_qt, ink_other = ((img.sum(axis=-1) < 600).mean() for img in (qt, other))
    assert ink_other > 0.005 and 0.4 < ink_other / ink_qt < 2.5, (ink_qt, ink_other)
    Image.fromarray(other.astype(np.uint8)).save(png.with_name("plot-svg-by-cairosvg.png"))


@pytest.mark.parametrize("x_display", [(1280, 720)], indirect=True, ids=["1280x720"])
def test_a_new_user_at_1280x720(x_display, tmp_path):
    out = ARTIFACTS / "journey-1280x720"
    results, close_s = _journey(x_display, out, tmp_path, short=False)
    assert results["errors"] == []
    assert results["jaxpr_lines_visible"] >= 30
    assert results["stop_to_usable_s"] < 2.0
    assert close_s is not None and close_s < 2.5, close_s  # closing during a compile ends the process
    (out / "timings.json").write_text(json.dumps({"stop_to_usable_s": results["stop_to_usable_s"],
                                                  "close_to_exit_s": close_s}))
    _svg_matches_png(out / "plot.png", out / "plot.svg")
    assert len(list(out.glob("[0-9][0-9]-*.png"))) == len(results["steps"]) >= 8


@pytest.mark.parametrize("x_display", [(1920, 1080)], indirect=True, ids=["1920x1080"])
def test_presenting_and_inspecting_at_1920x1080(x_display, tmp_path):
    out = ARTIFACTS / "journey-1920x1080"
    results, _ = _journey(x_display, out, tmp_path, short=True)
    assert results["errors"] == []
    assert results["jaxpr_lines_visible"] >= 30
    _svg_matches_png(out / "plot.png", out / "plot.svg")
