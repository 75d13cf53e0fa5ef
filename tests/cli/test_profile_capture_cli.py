"""``torchax-playground profile --capture FILE.xplane.pb --hlo FILE.hlo.txt``: a capture recorded on an NVIDIA
H200 (``tests/fixtures/gpu/``, see ``tests/core/profile/test_profile_device.py``) read here, without a GPU or a model:
the table per line / op / fusion / module, ``--json`` rows whose times add up to the device's busy time, the
roofline only with ``--bandwidth-gbs`` / ``--peak-tflops``, the command-buffer note, clear errors."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest

from app.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gpu"
CAPTURE = FIXTURES / "h200-pydoc-llama-decode-profile.xplane.pb.gz"
HLO = FIXTURES / "h200-pydoc-llama-decode.hlo.txt.gz"


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def plain_files(tmp_path_factory):
    """The fixtures as the user has them: an uncompressed .xplane.pb and .hlo.txt."""
    folder = tmp_path_factory.mktemp("h200")
    capture, hlo = folder / "decode.xplane.pb", folder / "decode.hlo.txt"
    capture.write_bytes(gzip.decompress(CAPTURE.read_bytes()))
    hlo.write_bytes(gzip.decompress(HLO.read_bytes()))
    return capture, hlo


def test_text_table_by_line_names_llama_lines_and_says_why_no_roofline(plain_files):
    capture, hlo = plain_files
    code, out, err = run_cli("profile", "--capture", capture, "--hlo", hlo, "--by", "line")
    assert code == 0, err
    assert "decode.xplane.pb | decode step | 5 calls profiled | rows by line" in out
    assert "modeling_llama.py:164" in out
    assert "device /device:GPU:0: busy" in out and "launch gaps" in out
    assert "no roofline figures" in out and "--bandwidth-gbs" in out
    assert "--xla_gpu_enable_command_buffer=" in out
    assert "host python3" in out  # the timeline's host track


@pytest.mark.parametrize("by", ["op", "fusion", "line", "module"])
def test_json_rows_add_up_to_the_device_busy_time(by):
    code, out, err = run_cli("profile", "--capture", CAPTURE, "--hlo", HLO, "--by", by, "--json")
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    rows, summary = events[:-1], events[-1]
    assert summary["event"] == "summary" and summary["device"] == "/device:GPU:0" and summary["n_steps"] == 5
    assert all(r["event"] == "row" and r["by"] == by for r in rows)
    busy_us = summary["device_busy_ms"] * 1e3
    assert sum(r["wall_us_per_step"] for r in rows) == pytest.approx(busy_us, rel=0.05)
    assert sum(r["us_per_step"] for r in rows) == pytest.approx(summary["busy_ms"] * 1e3, rel=1e-6)
    assert all(r["bandwidth_share"] is None and r["bound_us"] is None for r in rows)
    assert summary["bound_ms"] is None and summary["compute_bound_ms"] is None
    if by == "fusion":
        assert len(rows) == 79  # 76 instructions of jit_step, memcpy H2D / D2H, jit_squeeze's copy
    if by == "line":
        assert sum("modeling_llama.py:" in r["key"] for r in rows) >= 10


def test_roofline_from_the_options():
    code, out, err = run_cli("profile", "--capture", CAPTURE, "--hlo", HLO, "--by", "fusion", "--json",
                             "--bandwidth-gbs", "4000", "--peak-tflops", "989")
    assert code == 0, err
    *rows, summary = [json.loads(line) for line in out.splitlines()]
    assert summary["bandwidth_gbs"] == 4000.0 and summary["peak_tflops"] == 989.0
    assert summary["bound_ms"] == pytest.approx(summary["bytes_per_step"] / 4000.0 / 1e6)
    assert summary["compute_bound_ms"] == pytest.approx(summary["flops_per_step"] / 989.0 / 1e9)
    assert any(r["bandwidth_share"] for r in rows)
    code, out, err = run_cli("profile", "--capture", CAPTURE, "--hlo", HLO, "--bandwidth-gbs", "4000")
    assert code == 0, err
    assert "roofline: its" in out and "no roofline figures" not in out


def test_the_hlo_beside_the_capture_is_found_and_its_absence_is_one_line(tmp_path):
    import shutil

    code, out, err = run_cli("profile", "--capture", CAPTURE, "--by", "fusion", "--json")
    assert code == 0, err
    assert "HLO text beside the capture: h200-pydoc-llama-decode.hlo.txt.gz" in err
    assert json.loads(out.splitlines()[-1])["event"] == "summary"
    alone = tmp_path / "alone.xplane.pb.gz"
    shutil.copy(CAPTURE, alone)
    code, out, err = run_cli("profile", "--capture", str(alone))
    assert code == 2 and "No optimized HLO text beside alone.xplane.pb.gz" in err and len(err.strip().splitlines()) == 1


def test_errors_are_one_line():
    code, out, err = run_cli("profile", "--capture", "missing.xplane.pb", "--hlo", HLO)
    assert code == 2 and "Cannot read the capture missing.xplane.pb" in err
    code, out, err = run_cli("profile", "--capture", CAPTURE, "--hlo", HLO, "--bandwidth-gbs", "0")
    assert code == 2 and "bandwidth (GB/s) must be positive" in err
