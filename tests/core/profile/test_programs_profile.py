"""The profiler on a program (issue 21): the example's entry point measured per op and per line, the line rows
naming the program's own file:line."""

from __future__ import annotations

import os

from app.core.profile.build import aggregate
from app.core.profile.step import profile_call
from app.core.programs.compute.profile import program_step_call
from app.core.programs.gallery import example
from app.core.programs.loader import load_program


def test_profile_program_rows_name_the_users_lines():
    path = example("jit_speedup").path
    prepared = load_program(path).prepare("selu")
    call, live = program_step_call(prepared)
    assert live.traced_jaxpr is not None
    profile = profile_call(call, "selu", n_steps=5, warmup=1, bandwidth_gbs=10.0, label="01_jit_speedup.py:selu")
    assert profile.step == "selu" and profile.n_steps == 5
    rows = aggregate(profile, "line")
    assert rows
    named = [r for r in rows if os.path.basename(path) in (r.source or "")]
    assert named, [r.source for r in rows]
    assert sum(r.us_per_step for r in named) > 0
