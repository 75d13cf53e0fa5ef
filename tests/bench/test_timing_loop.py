"""bench/timing_loop.py reads a pytest run's output: a failed test fails the run, the suite's slow-test gate alone
does not (it is about the suite's budget on a quiet machine, not a threshold a test asserts), and each test's call
time is kept (issue 53)."""

from __future__ import annotations

from bench.timing_loop import read_run

STOP = "tests/gui/lifecycle/test_stop_quit.py::test_stop_mid_run"
QUIT = "tests/gui/lifecycle/test_quit_states.py::test_quit_ends_the_process_within_1_5_s[idle]"
DURATIONS = f"""============================= slowest durations ==============================
55.02s call     {STOP}
3.10s setup    {STOP}
1.25s call     {QUIT}
"""


def test_a_run_whose_tests_passed_passes_even_when_the_slow_test_gate_failed_it() -> None:
    out = (f"....\nSLOW TEST GATE: {STOP} took 58.1 s (over 45 s) and has no reason in tests/slow_tests.toml\n"
           f"{DURATIONS}20 passed, 154 warnings in 508.96s (0:08:28)\n")
    run = read_run(out, 1)
    assert run["passed"] and run["failed"] == [] and run["tail"] == ""
    assert run["gate"] == [f"{STOP} took 58.1 s (over 45 s) and has no reason in tests/slow_tests.toml"]
    assert run["calls"] == {STOP: 55.02, QUIT: 1.25}


def test_a_failed_or_erroring_test_fails_the_run_whatever_the_gate_says() -> None:
    out = (f"..F.\nSLOW TEST GATE: {STOP} took 58.1 s (over 45 s)\n{DURATIONS}"
           f"FAILED {QUIT} - AssertionError: ('idle', 1.62)\nERROR {STOP} - TimeoutError\n"
           "1 failed, 18 passed, 1 error in 500.00s\n")
    run = read_run(out, 1)
    assert not run["passed"] and run["failed"] == [QUIT, STOP] and "1 failed" in run["tail"]
    assert run["why"] == [f"FAILED {QUIT} - AssertionError: ('idle', 1.62)", f"ERROR {STOP} - TimeoutError"]
    assert not read_run(f"{DURATIONS}20 passed in 500.00s\n", 2)["passed"]  # interrupted: no gate line says why
    assert read_run(f"{DURATIONS}20 passed in 500.00s\n", 0)["passed"]
