"""The suite's time budget (issue 53): each folder's time, the budget line, and the list of slow tests that gates.

Loaded by ``tests/conftest.py`` (``pytest_plugins``). At the end of a run the terminal summary shows

* each test folder's time (setup, call and teardown of its tests, summed), slowest first;
* one line comparing the whole run's wall time to ``budget_s`` in ``tests/slow_tests.toml`` (it reports, it does
  not gate: time on a shared 2-core machine moves by 2x from week to week);
* the XLA compiles the run paid cold (persistent-cache misses, :mod:`tests.compile_sharing`) against those it
  shared.

What gates: a test slower than ``threshold_s`` (30 s) must be listed under ``[slow]`` in ``tests/slow_tests.toml``
with a one-line reason, and that list may only shrink (``ceiling``, the ratchet). A test over the threshold that
is not listed is named in the summary; it fails the run (exit status 1) once it is over ``threshold_s`` ×
``noise_band`` (1.5: 45 s), as does a list longer than its ceiling. The band is the machine's own noise, measured:
on 6 Dec the same unlisted tests took 20–26 s in one clean-clone run and 30–37 s in the next (the other worker
compiling beside them), so a hard line at 30 s failed a run whose every test passed. The gate looks only at
tests that ran in full: a run of a few files (``-k``, a path) checks the tests it ran.
"""

from __future__ import annotations

import time
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

BUDGET_FILE = Path(__file__).resolve().parent / "slow_tests.toml"
ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Budget:
    """``tests/slow_tests.toml``: ``budget_s`` (the suite's wall-time budget, s), ``threshold_s`` (a test slower
    than this needs a reason), ``ceiling`` (the most entries ``slow`` may hold), ``slow`` (node id → reason) and
    ``noise_band`` (an unlisted test fails the gate only over ``threshold_s × noise_band``; between the two it
    is named, not failed)."""

    budget_s: float
    threshold_s: float
    ceiling: int
    slow: dict[str, str] = field(default_factory=dict)
    noise_band: float = 1.5

    @property
    def fail_s(self) -> float:
        """Seconds over which an unlisted test fails the run."""
        return self.threshold_s * self.noise_band

    @classmethod
    def read(cls, path: Path = BUDGET_FILE) -> Budget:
        """Raises ``ValueError`` for a missing key or a reason left empty."""
        data = tomllib.loads(path.read_text())
        slow = {str(k): str(v) for k, v in data.get("slow", {}).items()}
        empty = [k for k, v in slow.items() if not v.strip()]
        if empty:
            raise ValueError(f"{path.name}: a slow test needs a one-line reason: {', '.join(empty)}")
        return cls(float(data["budget_s"]), float(data["threshold_s"]), int(data["ceiling"]), slow,
                   float(data.get("noise_band", 1.5)))


def folder_of(nodeid: str) -> str:
    """``tests/gui/demo/test_x.py::test_y`` → ``tests/gui/demo``."""
    path = nodeid.split("::", 1)[0]
    return path.rsplit("/", 1)[0] if "/" in path else "."


def _unlisted_over(durations: dict[str, float], budget: Budget, seconds_over: float) -> list[tuple[str, float]]:
    return [(nodeid, seconds) for nodeid, seconds in sorted(durations.items(), key=lambda kv: -kv[1])
            if seconds > seconds_over and nodeid not in budget.slow]


def verdicts(durations: dict[str, float], budget: Budget) -> list[str]:
    """The gate's complaints (empty when it passes): tests over ``threshold_s × noise_band`` without a reason, a
    list over its ceiling."""
    problems = [f"{nodeid} took {seconds:.1f} s (over {budget.fail_s:.0f} s) and has no reason in "
                f"tests/{BUDGET_FILE.name} [slow]: make it cheaper (docs/testing.md) or add one line saying why"
                for nodeid, seconds in _unlisted_over(durations, budget, budget.fail_s)]
    if len(budget.slow) > budget.ceiling:
        problems.append(f"tests/{BUDGET_FILE.name} lists {len(budget.slow)} slow tests, more than its ceiling of "
                        f"{budget.ceiling}: the list may only shrink")
    return problems


def near_the_gate(durations: dict[str, float], budget: Budget) -> list[str]:
    """Unlisted tests over ``threshold_s`` but within the noise band: named in the summary, not failed."""
    return [f"{nodeid} took {seconds:.1f} s (over {budget.threshold_s:.0f} s, under the gate's "
            f"{budget.fail_s:.0f} s): make it cheaper before it crosses"
            for nodeid, seconds in _unlisted_over(durations, budget, budget.threshold_s)
            if seconds <= budget.fail_s]


def _with_workers(mine: dict, pattern: str) -> Counter:
    """``mine`` plus the same figures the pytest-xdist workers left in the run's scratch folder (JSON files named
    ``pattern``, :mod:`tests.suite_budget_plugin`), added key by key."""
    import json
    import os

    total = Counter(mine)
    for path in Path(os.environ.get("TORCHAX_PLAYGROUND_TEST_SCRATCH", "/nonexistent")).glob(pattern):
        total.update(json.loads(path.read_text()))
    return total


def compile_counts() -> Counter[str]:
    """This process's :data:`tests.compile_sharing.COUNTS`, plus those the workers left (``compile-counts-gw*.json``)."""
    from tests.compile_sharing import COUNTS

    return _with_workers(COUNTS, "compile-counts-*.json")


def compile_seconds_per_test() -> dict[str, float]:
    """XLA backend compile seconds per test (:data:`tests.compile_sharing.TEST_COMPILE_S`), this process's and
    the workers' (``compile-seconds-gw*.json``)."""
    from tests.compile_sharing import TEST_COMPILE_S

    return dict(_with_workers(TEST_COMPILE_S, "compile-seconds-*.json"))


def xla_time_lines(counts: dict[str, float], per_test: dict[str, float], test_s: float, top: int = 5) -> list[str]:
    """Where the run's JAX time went (``counts``: :func:`compile_counts`, seconds summed over every thread and
    worker; ``test_s``: the tests' own time summed): ``"XLA time: trace 95 s, lower 60 s, backend compile 640 s
    (26 % of 2,440 s of tests)"``, then the ``top`` tests by backend compile seconds."""
    trace, lower, compile_ = (counts.get(k, 0.0) for k in ("trace_s", "lower_s", "compile_s"))
    share = f" ({(trace + lower + compile_) / test_s:.0%} of {test_s:,.0f} s of tests)" if test_s > 0 else ""
    lines = [f"XLA time: trace {trace:,.0f} s, lower {lower:,.0f} s, backend compile {compile_:,.0f} s{share}"]
    worst = sorted(per_test.items(), key=lambda kv: -kv[1])[:top]
    if worst:
        lines.append("most XLA backend compile time: " + " · ".join(f"{s:.0f} s {n}" for n, s in worst))
    return lines


#: The environment variable naming the per-file time history (JSON); see :func:`history_file`.
HISTORY_ENV = "TORCHAX_PLAYGROUND_TEST_HISTORY"


def history_file(environ: dict[str, str] | None = None) -> Path:
    """Where each test file's time from earlier runs is kept (only for the order of files, :func:`longest_first`):
    ``$TORCHAX_PLAYGROUND_TEST_HISTORY``, else ``${XDG_CACHE_HOME:-~/.cache}/torchax-playground-tests/
    file-durations.json`` — beside the app's cache folder, never inside it (``tests/conftest.py`` resolves it
    before pointing XDG_CACHE_HOME at the run's scratch)."""
    import os

    env = os.environ if environ is None else environ
    if env.get(HISTORY_ENV):
        return Path(env[HISTORY_ENV])
    home = env.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(home) / "torchax-playground-tests" / "file-durations.json"


#: A file the history has not timed yet counts as this long (s) when ordering: most new files are short.
UNKNOWN_FILE_S = 20.0


def file_of(nodeid: str) -> str:
    """``tests/gui/demo/test_x.py::test_y[a]`` → ``tests/gui/demo/test_x.py``."""
    return nodeid.split("::", 1)[0]


def longest_first(items: list, seconds: dict[str, float]) -> list:
    """``items`` (pytest items) grouped by file, the files in descending order of ``seconds`` (file → s, from
    earlier runs; :data:`UNKNOWN_FILE_S` for a file not in it), each file's tests in their own order. A stable
    sort: equal times keep the collection order. Longest-processing-time-first is the classic greedy rule for
    two machines (Graham 1969: within 7/6 of the best schedule)."""
    first_index: dict[str, int] = {}
    for index, item in enumerate(items):
        first_index.setdefault(file_of(item.nodeid), index)
    return sorted(items, key=lambda item: (-float(seconds.get(file_of(item.nodeid), UNKNOWN_FILE_S)),
                                           first_index[file_of(item.nodeid)]))


def record_file_times(path: Path, durations: dict[str, float]) -> None:
    """Add this run's time per file (s) to the history at ``path`` (JSON, file → s; a file timed again takes the
    new time). Written atomically; a run of a few files updates only those."""
    import json
    import os

    history: dict[str, float] = {}
    try:
        history = {str(k): float(v) for k, v in json.loads(path.read_text()).items()}
    except (OSError, ValueError, AttributeError):
        pass
    per_file: dict[str, float] = defaultdict(float)
    for nodeid, seconds in durations.items():
        per_file[file_of(nodeid)] += seconds
    history.update({k: round(v, 1) for k, v in per_file.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps(history, indent=0, sort_keys=True))
    os.replace(partial, path)


class BudgetPlugin:
    """Collects each test's time (setup + call + teardown, s) and reports at the end of the run; leaves the time
    per file in ``history`` (a JSON file, :func:`record_file_times`) for the next run's order."""

    def __init__(self, history: Path | None = None) -> None:
        self.started = time.monotonic()
        self.durations: dict[str, float] = defaultdict(float)
        self.problems: list[str] = []
        self.history = history

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.durations[report.nodeid] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.durations:
            return
        self.problems = verdicts(dict(self.durations), Budget.read())
        if self.history is not None:
            record_file_times(self.history, dict(self.durations))
        if self.problems and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter) -> None:  # noqa: ANN001
        if not self.durations:
            return
        write = terminalreporter.write_line
        budget = Budget.read()
        folders: dict[str, float] = defaultdict(float)
        counts: dict[str, int] = defaultdict(int)
        for nodeid, seconds in self.durations.items():
            folders[folder_of(nodeid)] += seconds
            counts[folder_of(nodeid)] += 1
        terminalreporter.section("time per folder")
        for folder, seconds in sorted(folders.items(), key=lambda kv: -kv[1]):
            write(f"{seconds:8.1f} s  {counts[folder]:4d} tests  {folder}")
        counts = compile_counts()
        write(f"XLA compiles: {counts.get('misses', 0)} cold (persistent-cache misses), {counts.get('hits', 0)} "
              f"shared (hits); tests marked cold_compile: {counts.get('cold_tests', 0)}")
        for line in xla_time_lines(counts, compile_seconds_per_test(), sum(folders.values())):
            write(line)
        for line in near_the_gate(dict(self.durations), budget):
            terminalreporter.write_line(f"near the slow-test gate: {line}", yellow=True)
        for line in self.problems:
            terminalreporter.write_line(f"SLOW TEST GATE: {line}", red=True)
        total = time.monotonic() - self.started
        share = total / budget.budget_s
        write(f"suite budget: {total / 60:.1f} min of {budget.budget_s / 60:.0f} min ({share:.0%})"
              f"{'' if share <= 1 else ' — over budget (reported, not gated: see docs/testing.md)'}; "
              f"{len(budget.slow)} of {budget.ceiling} slow-test reasons used", bold=True)
