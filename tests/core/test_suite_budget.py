"""The suite's own tooling (issue 53): the file order for pytest-xdist, the per-file time history, where the
compile cache lives between runs, and the slow-test gate."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace

from tests import compile_sharing
from tests.suite_budget import (
    UNKNOWN_FILE_S,
    Budget,
    longest_first,
    near_the_gate,
    record_file_times,
    verdicts,
    xla_time_lines,
)


def _items(*nodeids: str) -> list:
    return [SimpleNamespace(nodeid=n) for n in nodeids]


def test_files_go_longest_first_and_keep_their_own_order():
    items = _items("a.py::t1", "a.py::t2", "b.py::t1", "c.py::t1", "b.py::t2", "d.py::t1")
    seconds = {"a.py": 5.0, "b.py": 90.0, "c.py": UNKNOWN_FILE_S + 1}  # d.py is new: UNKNOWN_FILE_S
    order = [i.nodeid for i in longest_first(items, seconds)]
    assert order == ["b.py::t1", "b.py::t2", "c.py::t1", "d.py::t1", "a.py::t1", "a.py::t2"]


def test_the_history_adds_up_each_file_and_keeps_files_not_run(tmp_path: Path):
    history = tmp_path / "deep" / "file-durations.json"
    record_file_times(history, {"a.py::t1": 1.0, "a.py::t2[x]": 2.5, "b.py::t": 4.0})
    record_file_times(history, {"b.py::t": 7.0})
    assert json.loads(history.read_text()) == {"a.py": 3.5, "b.py": 7.0}
    assert not list(history.parent.glob("*.tmp"))


def test_the_compile_cache_is_the_runs_own_unless_a_folder_is_named(tmp_path: Path):
    scratch = str(tmp_path / "run")
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert compile_sharing.cache_root(scratch, env) == Path(scratch)  # the run's own, by default
    assert compile_sharing.cache_root(scratch, {**env, compile_sharing.CACHE_ENV: "run"}) == Path(scratch)
    assert compile_sharing.cache_root(scratch, {**env, compile_sharing.CACHE_ENV: "/x/y"}) == Path("/x/y")
    key = compile_sharing.versions_key()
    assert key.startswith("py3.") and "jax0." in key and "torch2." in key and "/" not in key


def test_a_slow_test_without_a_reason_fails_the_gate_and_a_listed_one_does_not():
    budget = Budget(budget_s=720, threshold_s=30, ceiling=1, slow={"s.py::listed": "why"})
    durations = {"s.py::listed": 95.0, "s.py::fast": 3.0, "s.py::new": 46.0, "s.py::noisy": 31.0}
    problems = verdicts(durations, budget)
    assert len(problems) == 1 and problems[0].startswith("s.py::new took 46.0 s (over 45 s)")
    near = near_the_gate(durations, budget)
    assert len(near) == 1 and near[0].startswith("s.py::noisy took 31.0 s")
    assert Budget.read().noise_band == 1.5
    over = Budget(budget_s=720, threshold_s=30, ceiling=0, slow={"s.py::listed": "why"})
    assert any("ceiling" in p for p in verdicts({}, over))


def test_the_file_history_lives_beside_the_users_cache_home_unless_named(tmp_path: Path):
    from tests.suite_budget import HISTORY_ENV, history_file

    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert history_file(env) == tmp_path / "xdg" / "torchax-playground-tests" / "file-durations.json"
    assert history_file({**env, HISTORY_ENV: str(tmp_path / "h.json")}) == tmp_path / "h.json"


def test_the_summary_says_where_the_xla_time_went_and_which_tests_spent_it():
    counts = {"misses": 3, "trace_s": 12.4, "lower_s": 7.6, "compile_s": 80.0}
    per_test = {"a.py::t": 50.0, "b.py::t": 25.0, "c.py::t": 5.0}
    head, worst = xla_time_lines(counts, per_test, test_s=400.0, top=2)
    assert head == "XLA time: trace 12 s, lower 8 s, backend compile 80 s (25% of 400 s of tests)"
    assert worst == "most XLA backend compile time: 50 s a.py::t · 25 s b.py::t"


def test_jax_reports_the_compile_time_of_a_test_that_compiles():
    import jax
    import jax.numpy as jnp

    before, unique = compile_sharing.COUNTS["compile_s"], float(time.time_ns() % 1_000_003)
    jax.jit(lambda x: jnp.sin(x) * unique + 0.5).lower(jnp.ones(17)).compile()  # in no cache: compiled here
    assert compile_sharing.COUNTS["compile_s"] > before
    assert compile_sharing.TEST_COMPILE_S[
        "tests/core/test_suite_budget.py::test_jax_reports_the_compile_time_of_a_test_that_compiles"] > 0
