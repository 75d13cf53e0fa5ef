"""Where two compiler settings part: the same Lowered compiled under each with XLA's pass dumps, the pipelines walked
in lockstep, the first pass whose output HLO differs named, with its diff and the fusions each side kept."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from app.core.compile_settings.catalog import parse_setting
from app.core.compile_settings.parting import part, record_setting, settings_partings, where_settings_part


@pytest.fixture(scope="module")
def matmul_lowered():
    """A dot XLA:CPU hands to YNNPACK by default (a kCustom fusion made by ``dot-library-rewriter``) and keeps as a
    plain dot under ``cpu-no-ynn``: a case built to differ at one pass."""

    def f(x, w):
        return jnp.tanh(x @ w) * 2.0

    return jax.jit(f).lower(jnp.ones((64, 64)), jnp.ones((64, 64)))


def test_the_first_differing_pass_is_found_on_a_case_built_to_differ(matmul_lowered):
    parting = where_settings_part(matmul_lowered, "default", "cpu-no-ynn")
    assert parting.labels == ("default", "cpu-no-ynn")
    row = parting.parting
    assert row is not None and parting.pass_name == "dot-library-rewriter"
    assert row.pipeline == "dot-library-passes" and row.side == "a" and row.b is None  # only the baseline's changed it
    # every row before it holds the same module on both sides; from it on they differ
    assert not any(p.differs for p in parting.pairs[:parting.first]) and parting.pairs[-1].differs
    assert parting.diff is not None and parting.diff.removed > 0
    assert any("ynn" in line.text for hunk in parting.diff.hunks for line in hunk.lines if line.tag == "-")
    counts = parting.fusion_counts()
    assert counts[0].get("kCustom") == 1 and "kCustom" not in counts[1]  # the YNNPACK fusion only the baseline kept
    only_a, only_b = parting.only()
    assert any(name.endswith("kCustom") for name in only_a) and not any(n.endswith("kCustom") for n in only_b)
    found = parting.to_json()
    assert found["pass"] == "dot-library-rewriter" and found["side"] == "a"
    assert parting.sentence().startswith("cpu-no-ynn parts from default at dot-library-passes / dot-library-rewriter")


def test_identical_settings_report_no_pass_differs(matmul_lowered):
    # --xla_cpu_use_xnnpack=true is XLA:CPU's default: another setting, the same compile
    parting = where_settings_part(matmul_lowered, "default", "--xla_cpu_use_xnnpack=true")
    assert parting.first is None and parting.pass_name is None and parting.diff is None
    assert not any(p.differs for p in parting.pairs) and all(p.side == "both" for p in parting.pairs)
    assert "no pass differs" in parting.sentence() and parting.to_json()["pass"] is None
    assert parting.fusion_counts()[0] == parting.fusion_counts()[1]


def test_partings_record_the_baseline_once_and_compare_each_setting(matmul_lowered, monkeypatch):
    import app.core.compile_settings.parting as parting_module

    recorded: list[str] = []

    def counting(lowered, setting, **kwargs):
        recorded.append(setting.name)
        return record_setting(lowered, setting, **kwargs)

    monkeypatch.setattr(parting_module, "record_setting", counting)
    settings = [parse_setting(n) for n in ("default", "O3", "cpu-no-ynn")]
    found = list(settings_partings(matmul_lowered, settings))
    assert recorded == ["default", "O3", "cpu-no-ynn"]
    assert [p.labels for p in found] == [("default", "O3"), ("default", "cpu-no-ynn")]
    assert found[1].pass_name == "dot-library-rewriter"


def test_part_is_pure_over_two_recordings(matmul_lowered):
    """The window can compare two recordings it already has (no compile): the same answer as recording anew."""
    a = record_setting(matmul_lowered, parse_setting("cpu-no-ynn"))
    b = record_setting(matmul_lowered, parse_setting("default"))
    parting = part(a, b, ("cpu-no-ynn", "default"))
    row = parting.parting
    assert parting.pass_name == "dot-library-rewriter" and row is not None and row.side == "b"
