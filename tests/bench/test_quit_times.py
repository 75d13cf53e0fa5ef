"""bench/quit_times.py refuses what it cannot time before it starts any process."""

from __future__ import annotations

import pytest

from bench import quit_times


@pytest.mark.parametrize(("argv", "said"), [(["--states", "idle,sleeping"], "unknown state 'sleeping'"),
                                            (["--n", "0"], "--n must be at least 1")])
def test_an_unknown_state_or_no_quits_is_refused_with_exit_2(argv, said, capsys, monkeypatch):
    monkeypatch.setattr(quit_times, "one_quit", lambda *_: pytest.fail("a process was started"))
    with pytest.raises(SystemExit) as exit_:
        quit_times.main(argv)
    assert exit_.value.code == 2 and said in capsys.readouterr().err
