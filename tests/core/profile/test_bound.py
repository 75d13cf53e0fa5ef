"""The memory-bandwidth gauge (issue 38, item 3): the bound's arithmetic, the bandwidth measured at most once a day
per machine and kept on disk with its date (the best figure measured), the session's live share, and the CLI's ``--json`` summary."""

from __future__ import annotations

import io
import json

from app.core.profile import bound as bound_mod
from app.core.profile.bound import MemoryBound


def test_the_bound_is_weight_bytes_over_bandwidth():
    b = MemoryBound(weight_bytes=538_000_000, bandwidth_gbs=30.5, probe="host read", measured_on="2026-11-26")
    assert abs(b.bound_ms - 17.639) < 0.01
    assert abs(b.share(24.9) - 0.708) < 0.01 and b.share(None) is None
    assert "538 MB of weights ÷ 30.5 GB/s (host read, measured 2026-11-26) = 17.6 ms per token" in b.explain()


def test_the_bandwidth_is_measured_once_a_day_and_kept_on_disk(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(bound_mod, "read_bandwidth_gbs", lambda n: calls.append(n) or 25.0)
    monkeypatch.setattr(bound_mod, "_store", lambda: tmp_path / "bandwidth.json")
    first = bound_mod.machine_bandwidth("cpu")
    second = bound_mod.machine_bandwidth("cpu")
    assert first == second and first[0] == 25.0 and first[1] == "host read" and len(calls) == 1
    kept = json.loads((tmp_path / "bandwidth.json").read_text())
    assert [v["gbs"] for v in kept.values()] == [25.0] and all(v["date"] for v in kept.values())


def test_a_day_later_it_is_measured_again_and_the_best_figure_stays(tmp_path, monkeypatch):
    """A figure measured under load (18.4 GB/s on a machine that reads 43) would put a steady decode at 148 % of the
    bandwidth for good: the next day's probe replaces it when it reads more, and a low probe never replaces a
    better figure."""
    store = tmp_path / "bandwidth.json"
    monkeypatch.setattr(bound_mod, "_store", lambda: store)
    monkeypatch.setattr(bound_mod, "read_bandwidth_gbs", lambda n: 18.4)
    assert bound_mod.machine_bandwidth("cpu")[0] == 18.4
    key = next(iter(json.loads(store.read_text())))
    store.write_text(json.dumps({key: {"gbs": 18.4, "date": "2026-11-26"}}))  # kept yesterday
    monkeypatch.setattr(bound_mod, "read_bandwidth_gbs", lambda n: 43.0)
    gbs, _probe, date = bound_mod.machine_bandwidth("cpu")
    assert gbs == 43.0 and date != "2026-11-26"  # measured again today: the better figure
    store.write_text(json.dumps({key: {"gbs": 43.0, "date": "2026-11-26"}}))
    monkeypatch.setattr(bound_mod, "read_bandwidth_gbs", lambda n: 20.0)  # today's probe beside other work
    assert bound_mod.machine_bandwidth("cpu")[0] == 43.0
    assert json.loads(store.read_text())[key]["gbs"] == 43.0


def test_the_read_bandwidth_is_the_faster_of_a_numpy_sum_and_an_xla_product(monkeypatch):
    """Either kernel can be bound by the CPU rather than the memory (27 Nov here: NumPy's sum read 13 GB/s, XLA's
    matrix-vector product 30): the probe takes the faster, so a slow sum cannot put a decode under its bound."""
    from app.core.profile import probes

    n = 8 << 20
    monkeypatch.setattr(probes, "_numpy_sum_seconds", lambda matrix, repeats, workers: 0.002)
    monkeypatch.setattr(probes, "_matvec_seconds", lambda matrix, repeats: 0.001)
    assert probes.read_bandwidth_gbs(n, repeats=1, cached=False) == n / 0.001 / 1e9
    monkeypatch.setattr(probes, "_matvec_seconds", lambda matrix, repeats: 0.004)
    assert probes.read_bandwidth_gbs(n, repeats=1, cached=False) == n / 0.002 / 1e9
    monkeypatch.undo()
    assert probes.read_bandwidth_gbs(n, repeats=1, cached=False) > 0  # the real product runs


def test_the_session_shows_the_steady_decode_share_of_the_bound():
    from app.core.events import CallRecord
    from app.core.session import requests as rq
    from app.core.session.model import Session
    from app.core.settings import GenerationSettings

    session = Session(lambda request: None)
    b = MemoryBound(100_000_000, 10.0, "host read", "2026-11-26")  # 10 ms per token
    session.apply(rq.ModelLoaded(rq.LoadRequest("m"), "m", "m", 1.0, bound=b))
    session.pending = rq.RunRequest("p", GenerationSettings())
    session.send_pending()
    records = [CallRecord(index=i, step="decode", mode="jit-static", input_shapes={}, wall_ms=20.0, execute_ms=20.0,
                          compiled=False) for i in range(3)]
    session.apply_all(records)
    f = session.figures()
    assert f.steady_ms == 20.0 and abs(f.bandwidth_share - 0.5) < 1e-9 and "10.0 ms per token" in f.bound_note


def test_the_cli_json_summary_carries_the_bound(model_dirs, tmp_path, monkeypatch):
    from app.cli import main

    monkeypatch.setattr(bound_mod, "_store", lambda: tmp_path / "bandwidth.json")
    out = io.StringIO()
    assert main(["generate", "--model", model_dirs("llama"), "--prompt", "The jit", "--max-new-tokens", "4",
                 "--ignore-eos", "--json"], out=out, err=io.StringIO()) == 0
    summary = [json.loads(line) for line in out.getvalue().splitlines() if '"summary"' in line][-1]
    assert summary["bound_ms"] > 0 and summary["bandwidth_gbs"] > 0
    assert abs(summary["x_bound"] - summary["steady_decode_ms"] / summary["bound_ms"]) < 1e-9


def test_a_tp_mesh_halves_the_bound_and_the_session_follows(llama_engine, tmp_path, monkeypatch):
    """The weights each device reads change with the mesh: the service sends the new bound with the mesh, the
    session's gauge follows (it kept the one-device bound after ``tp=2``)."""
    import jax
    import pytest

    from app.core.session import requests as rq
    from app.core.session.compute.service import ComputeService
    from app.core.session.model import Session

    if jax.device_count() < 2:
        pytest.skip("tp=2 needs 2 devices (conftest simulates 4 CPU devices)")
    monkeypatch.setattr(bound_mod, "_store", lambda: tmp_path / "bandwidth.json")
    monkeypatch.setattr(bound_mod, "machine_bandwidth", lambda *a: (20.0, "host read", "2026-11-26"))
    service = ComputeService()
    service.engine = llama_engine
    session = Session(lambda request: None)
    try:
        one = bound_mod.memory_bound(llama_engine)
        session.apply(rq.ModelLoaded(rq.LoadRequest("m"), "m", "m", 1.0, bound=one))
        [changed] = [e for e in service.handle(rq.MeshRequest("tp=2")) if isinstance(e, rq.MeshChanged)]
        session.apply(changed)
        assert changed.bound is not None and changed.bound.weight_bytes < 0.75 * one.weight_bytes
        assert session.bound is changed.bound
    finally:
        list(service.handle(rq.MeshRequest("tp=1")))


def test_both_read_probes_read_one_buffer_in_place(monkeypatch):
    """The NumPy sum and the XLA product read the same buffer (NumPy views XLA's matrix without a copy): a
    process's first probe fills 1 GiB of fresh memory, not 2 (2.5 → 0.8 s on the model load's path, 7 Dec)."""
    import numpy as np

    from app.core.profile import probes

    seen: list[tuple[object, bool]] = []
    real_sum, real_matvec = probes._numpy_sum_seconds, probes._matvec_seconds

    def numpy_sum(matrix, repeats, workers):  # noqa: ANN001, ANN202
        seen.append((matrix, np.asarray(matrix).ctypes.data == matrix.unsafe_buffer_pointer()))
        return real_sum(matrix, repeats, workers)

    def matvec(matrix, repeats):  # noqa: ANN001, ANN202
        seen.append((matrix, True))
        return real_matvec(matrix, repeats)

    monkeypatch.setattr(probes, "_numpy_sum_seconds", numpy_sum)
    monkeypatch.setattr(probes, "_matvec_seconds", matvec)
    assert probes.read_bandwidth_gbs(8 << 20, repeats=1, cached=False) > 0
    (first, in_place), (second, _) = seen
    assert first is second and in_place
    assert first.shape == ((8 << 20) // 4 // probes.MATVEC_COLS, probes.MATVEC_COLS)
