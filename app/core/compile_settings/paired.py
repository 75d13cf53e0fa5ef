"""The paired steady-state phase of a settings race: after every setting has compiled (its cold figures — compile
split, one-pass steady ms, peak memory — stay the lane's own), each setting's warm step is timed in interleaved
rounds, the mode race's way (:mod:`app.core.steady`, :mod:`app.core.verdict`): one block per setting and the
baseline twice (the A/A noise floor), the order shuffled per round from a seeded generator, each block repeating
the warm step until it lasts at least :attr:`app.core.steady.SteadyPlan.block_ms`, until
:class:`app.core.verdict.stats.StoppingRule` says stop (at least ``min_rounds`` kept rounds; then every interval
within ±3 %, or the budget). Preempted rounds are dropped and counted (:func:`app.core.verdict.rounds.screen`).

Each setting's verdict is :func:`app.core.verdict.judge`'s pair ``(setting, baseline)``: ``ratio`` is the geometric
mean over the paired rounds of the baseline's ms per call over the setting's — a speed-up, > 1 when the setting is
faster — with its 95 % interval and the verdict module's sentence. Pure Python: a setting's step comes as a
:class:`Timer` (JAX stays in :mod:`.race` and :mod:`app.core.programs.compute.race`).

Also the "same optimized HLO" check: :func:`hlo_fingerprint`, the structural fingerprint ``compare``'s diff
matches by (:mod:`app.core.inspect.hlo_diff`: instruction names, order and metadata aside), so two settings that
compiled to the same program are said to.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.core.events import SteadyBlockEvent
from app.core.inspect.hlo_diff import structural_fingerprint
from app.core.steady import SteadyPlan, xla_cpu_threads
from app.core.verdict import AA_SUFFIX, Block, BlockClock, Round, judge
from app.core.verdict.words import short_verdict

#: The phase's name in progress lines.
PHASE = "paired rounds"


@dataclass(frozen=True)
class Timer:
    """How one setting's warm step is timed: ``calibrate(block_ms)`` warms it (untimed) and returns the calls a
    block needs to last ``block_ms``; ``block(reps, label)`` runs ``reps`` calls as one timed
    :class:`app.core.verdict.Block` whose figure is ms per call (ms per token for a model's decode step)."""

    calibrate: Callable[[float], int]
    block: Callable[[int, str], Block]


@dataclass(frozen=True)
class SettingsVerdicts:
    """The end of a settings race's paired phase, as plain data: ``doc`` (:func:`paired_rounds`' fields)."""

    doc: dict[str, Any] = field(default_factory=dict)
    kind = "settings_verdicts"


def call_timer(call: Callable[[], Any]) -> Timer:
    """A :class:`Timer` of ``call`` (one warm call that blocks until its result is ready): blocks of ``reps`` calls,
    ms per call; calibrated by doubling until a block lasts ``block_ms`` (pyperf calibrates its loops so)."""

    def block(reps: int, label: str) -> Block:
        with BlockClock() as clock:
            for _ in range(reps):
                call()
        return Block(label, label.removesuffix(AA_SUFFIX), clock.wall_ms / reps, clock.wall_ms, clock.cpu_ms,
                     clock.stolen_ms, reps=reps)

    def calibrate(block_ms: float) -> int:
        call()
        reps = 1
        while (ms := block(reps, "").wall_ms) < block_ms and reps < 1 << 20:
            reps = max(reps * 2, int(reps * block_ms / max(ms, 1e-3) * 1.1) + 1)
        return reps

    return Timer(calibrate, block)


def paired_rounds(timers: Mapping[str, Timer], baseline: str, plan: SteadyPlan,
                  should_stop: Callable[[], bool] = lambda: False) -> Iterator[SteadyBlockEvent | SettingsVerdicts]:
    """Time ``timers`` (setting name → :class:`Timer`, ``baseline`` among them) in paired rounds: a
    :class:`SteadyBlockEvent` as each warm-up and block starts (round -1 while warming), then one
    :class:`SettingsVerdicts` (also after Stop, with the rounds so far; an unfinished round is not counted).
    Its ``doc``: ``baseline``, ``pairs`` (setting → :func:`pair_fields`), ``rounds`` kept, ``dropped``,
    ``dropped_rounds`` (why), ``aa_noise`` (± %), ``noisy``, ``threads``, ``stopped_by``, ``elapsed_s``,
    ``budget_s``, ``min_rounds``, ``reps`` (calls per block). Raises
    :class:`app.core.errors.InvalidSettingsError` for a plan out of range."""
    plan = plan.validated()
    names, threads = list(timers), xla_cpu_threads()
    started = time.perf_counter()
    reps: dict[str, int] = {}
    for name in names:
        if should_stop():
            break
        yield SteadyBlockEvent(-1, name, time.perf_counter() - started, plan.budget_s, plan.min_rounds)
        reps[name] = timers[name].calibrate(plan.block_ms)
    rng, rule = random.Random(plan.seed), plan.rule()
    rounds: list[Round] = []
    t0, stopped_by = time.perf_counter(), "stopped"
    while len(reps) == len(names) and not should_stop():
        order = [*names, baseline + AA_SUFFIX]
        rng.shuffle(order)
        blocks = []
        for label in order:
            if should_stop():
                break
            name = label.removesuffix(AA_SUFFIX)
            yield SteadyBlockEvent(len(rounds), label, time.perf_counter() - started, plan.budget_s, plan.min_rounds)
            blocks.append(timers[name].block(reps[name], label))
        if len(blocks) < len(order) or should_stop():
            break
        rounds.append(Round(len(rounds), tuple(blocks)))
        found = judge(rounds, names, baseline, threads)
        reason = rule.stop_reason(found.rounds, len(rounds), time.perf_counter() - t0, found.intervals())
        if reason is not None:
            stopped_by = reason
            break
    found = judge(rounds, names, baseline, threads)
    yield SettingsVerdicts({
        "baseline": baseline, "pairs": {p.mode: pair_fields(p) for p in found.pairs if p.against == baseline},
        "rounds": found.rounds, "dropped": len(found.dropped),
        "dropped_rounds": [f"round {i + 1}: {why}" for i, why in sorted(found.dropped.items())],
        "aa_noise": found.aa_noise, "noisy": found.noisy, "threads": {"xla_cpu": threads},
        "stopped_by": stopped_by, "elapsed_s": time.perf_counter() - t0 if rounds else 0.0,
        "budget_s": plan.budget_s, "min_rounds": plan.min_rounds, "reps": reps})


def paired_phase(timers: Mapping[str, Timer], lanes: list[Any], baseline: str, plan: SteadyPlan | None,
                 should_stop: Callable[[], bool]) -> Generator[SteadyBlockEvent | SettingsVerdicts, None, bool]:
    """A settings race's closing phase, a model step's and a program entry's alike: :func:`paired_rounds` of
    ``timers`` (the settings whose lanes ran to their end), the verdicts put on ``lanes`` (every lane yielded:
    :func:`attach`) before the :class:`SettingsVerdicts` is yielded. Nothing without a ``plan``, when stopped, or
    unless the baseline and another setting have a timer; returns whether the rounds ran."""
    if plan is None or should_stop() or baseline not in timers or len(timers) < 2:
        return False
    for event in paired_rounds(timers, baseline, plan, should_stop):
        if isinstance(event, SettingsVerdicts):
            attach(lanes, event.doc)
        yield event
    return True


def pair_fields(p: Any) -> dict[str, Any]:
    """A :class:`app.core.verdict.PairVerdict` as a lane's verdict (``ratio``: the setting's speed-up over the
    baseline; ``text``: the verdict module's sentence; ``short``: its few words)."""
    fields = {"mode": p.mode, "against": p.against, "ratio": p.ratio, "ci_low": p.ci_low, "ci_high": p.ci_high,
              "rounds": p.rounds, "aa_noise": p.aa_noise, "dropped": p.dropped, "noisy": p.noisy, "text": p.text}
    return {**fields, "short": short_verdict(fields)}


def attach(lanes: list[Any], doc: dict[str, Any]) -> None:
    """Put ``doc``'s verdicts (:func:`paired_rounds`) on ``lanes`` (:class:`SettingLane` s, every round's): each
    setting its pair's fields; the baseline its A/A floor (``ratio`` 1.0, no interval) and ``phase``, the phase's
    own fields (``doc`` without ``pairs``: what a saved race states above its verdicts); a setting without a pair
    (an Inductor lane, a lane stopped before its end) keeps None."""
    for lane in lanes:
        if lane.name == doc["baseline"]:
            lane.verdict = {"mode": lane.name, "against": lane.name, "ratio": 1.0, "ci_low": None, "ci_high": None,
                            "rounds": doc["rounds"], "aa_noise": doc["aa_noise"], "dropped": doc["dropped"],
                            "noisy": doc["noisy"], "text": f"{lane.name}: the baseline", "short": "baseline",
                            "phase": {k: v for k, v in doc.items() if k != "pairs"}}
        elif lane.name in doc["pairs"]:
            lane.verdict = dict(doc["pairs"][lane.name])


def hlo_fingerprint(text: str | None) -> str | None:
    """The structural fingerprint of an optimized HLO text (:func:`app.core.inspect.hlo_diff.structural_fingerprint`:
    the same matching as ``compare``'s structural diff, so renamed or reordered instructions read the same); None
    without a text."""
    if not text:
        return None
    return structural_fingerprint(text)


def optimized_hlo(executable: Any) -> str | None:
    """``executable.as_text()`` (a ``jax.stages.Compiled``'s optimized HLO), None where not available."""
    try:
        return executable.as_text() if executable is not None else None
    except Exception:  # noqa: BLE001  (a backend without the text: the lane still counts)
        return None
