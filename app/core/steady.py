"""The steady-state phase of a mode race: paired, interleaved rounds after the cold lanes, and their verdicts.

After every lane has run cold (its first call, compile split and time to first token stay the lane's figures),
each mode is warmed (one untimed generation; the engine keeps each mode's compiled steps, so nothing compiles
again when the race cleared only the lane's own mode, :meth:`app.core.engine.engine.Engine.clear_compiled`) and
calibrated: a block repeats the same short generation (same prompt, same start position, the lane's KV-cache
length, no IR capture) until it lasts at least :attr:`SteadyPlan.block_ms`. Then rounds: one block per mode, the
baseline twice (the A/A pair), in an order shuffled per round from a seeded generator (Google Benchmark's random
interleaving: drift and a neighbour's load fall on every mode alike), until :class:`app.core.verdict.stats.
StoppingRule` says stop. Every mode runs with the same thread budget: PyTorch's intra-op threads are set to
XLA:CPU's for the phase (and put back), and both are stated. ``torchax-eager`` (a capped lane, seconds per
token) is left out, and says so.

Events: a :class:`PhaseEvent` (``"running"``, ``"steady-state rounds"``) at the start and end, a
:class:`SteadyBlockEvent` as each warm-up and block starts (a progress line: round, mode, elapsed), a
:class:`SteadyRoundEvent` per round, a :class:`VerdictsEvent` last (also after Stop, with the rounds so far).
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.errors import InvalidSettingsError
from app.core.events import (
    CallRecord,
    FinishedEvent,
    PhaseEvent,
    RaceEvent,
    SteadyBlockEvent,
    SteadyRoundEvent,
    VerdictsEvent,
)
from app.core.mode_catalog import REFERENCE_MODE, mode_info
from app.core.settings import GenerationSettings
from app.core.steps import DECODE
from app.core.verdict import (
    AA_SUFFIX,
    MIN_ROUNDS,
    TARGET_HALF_WIDTH_PCT,
    Block,
    BlockClock,
    Round,
    StoppingRule,
)
from app.core.verdict import judge as judge_rounds

if TYPE_CHECKING:
    from app.core.engine.engine import Engine

PHASE = "steady-state rounds"


@dataclass(frozen=True)
class SteadyPlan:
    """How a race's steady-state phase runs.

    ``budget_s``: seconds of rounds after which no new round starts once ``min_rounds`` were kept (the rounds'
    time; warm-up excluded); ``min_rounds``: kept rounds at least (>= 2); ``target_pct``: stop earlier once every
    pair's 95 % interval is within ± this %; ``max_rounds``: rounds at most; ``tokens``: tokens per generation
    (at most the race's ``max_new_tokens``); ``block_ms``: a block's length at least (ms); ``seed``: of the
    shuffled order.
    """

    budget_s: float = 30.0
    min_rounds: int = MIN_ROUNDS
    target_pct: float = TARGET_HALF_WIDTH_PCT
    max_rounds: int = 200
    tokens: int = 8
    block_ms: float = 100.0
    seed: int = 0

    def validated(self) -> SteadyPlan:
        """``self`` when every field is in range; raises :class:`InvalidSettingsError` naming the field."""
        if not self.budget_s >= 0:
            raise InvalidSettingsError(f"The steady-state budget must be >= 0 seconds; got {self.budget_s!r}.")
        if not 2 <= self.min_rounds <= self.max_rounds:
            raise InvalidSettingsError(f"The steady-state rounds must be at least 2 (and at most {self.max_rounds}); "
                                       f"got {self.min_rounds!r}.")
        if self.tokens < 2 or self.block_ms <= 0:
            raise InvalidSettingsError("A steady-state block needs >= 2 tokens per generation and a positive length.")
        return self

    def rule(self) -> StoppingRule:
        return StoppingRule(self.budget_s, self.min_rounds, self.target_pct, self.max_rounds)


def xla_cpu_threads() -> int:
    """XLA:CPU's intra-op thread pool: the cores this process may run on (``os.sched_getaffinity``, what
    ``tsl::port::MaxParallelism`` counts), 1 with ``--xla_cpu_multi_thread_eigen=false`` in ``XLA_FLAGS``."""
    if "--xla_cpu_multi_thread_eigen=false" in os.environ.get("XLA_FLAGS", ""):
        return 1
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@contextmanager
def same_threads() -> Iterator[dict[str, int]]:
    """Give PyTorch XLA:CPU's thread budget for the block (``torch.set_num_threads``; put back after) and yield
    the budget: ``{"torch_intra_op": …, "xla_cpu": …}``."""
    import torch

    before, xla = torch.get_num_threads(), xla_cpu_threads()
    if before != xla:
        torch.set_num_threads(xla)
    try:
        yield {"torch_intra_op": torch.get_num_threads(), "xla_cpu": xla}
    finally:
        if before != xla:
            torch.set_num_threads(before)


def steady_modes(modes: list[str]) -> tuple[list[str], dict[str, str], str]:
    """``(modes in the phase, left out → why, baseline)``: capped lanes (torchax-eager) are left out; the
    baseline is torch when it raced, else the first mode."""
    left = {m: "capped lane, seconds per token: too slow for rounds" for m in modes
            if mode_info(m).token_cap is not None}
    run = [m for m in dict.fromkeys(modes) if m not in left]
    baseline = REFERENCE_MODE if REFERENCE_MODE in run else (run[0] if run else "")
    return run, left, baseline


def steady_settings(settings: GenerationSettings, mode: str, tokens: int,
                    cache_len: int | None) -> GenerationSettings:
    """The short generation of ``mode``'s blocks: the race's settings, ``tokens`` new tokens at most, no IR
    capture, the lane's KV-cache length ``cache_len`` (so its compiled steps serve it as they are)."""
    out = settings.with_(mode=mode, max_new_tokens=max(1, min(tokens, settings.max_new_tokens)), capture_ir=False)
    if settings.max_cache_len is None and cache_len is not None:
        out = out.with_(max_cache_len=cache_len)
    return out


def time_block(engine: Engine, prompt: str, settings: GenerationSettings, reps: int, label: str,
               should_stop: Callable[[], bool]) -> Block:
    """Run the generation ``reps`` times as one timed block (:class:`app.core.verdict.rounds.BlockClock`);
    its figure is the mean wall ms of its decode calls (the race table's steady ms/token, prefill excluded),
    the block's wall time per token when it made no decode call."""
    decode_ms: list[float] = []
    tokens = 0
    with BlockClock() as clock:
        for _ in range(reps):
            for event in engine.generate(prompt, settings, should_stop):
                if isinstance(event, CallRecord) and event.step == DECODE:
                    decode_ms.append(event.wall_ms)
                elif isinstance(event, FinishedEvent):
                    tokens += event.summary.n_tokens
    figure = sum(decode_ms) / len(decode_ms) if decode_ms else clock.wall_ms / max(1, tokens)
    return Block(label, settings.mode, figure, clock.wall_ms, clock.cpu_ms, clock.stolen_ms, tokens, reps)


def calibrate(engine: Engine, prompt: str, settings: GenerationSettings, block_ms: float,
              should_stop: Callable[[], bool]) -> int:
    """Warm ``settings.mode`` up (one untimed generation) and return the generations a block needs to last
    ``block_ms`` (from one timed generation; pyperf calibrates its loops the same way)."""
    for _ in engine.generate(prompt, settings, should_stop):
        pass
    one = time_block(engine, prompt, settings, 1, settings.mode, should_stop)
    return max(1, math.ceil(block_ms / max(one.wall_ms, 1e-3)))


def steady_phase(engine: Engine, prompt: str, modes: list[str], settings: GenerationSettings, plan: SteadyPlan,
                 should_stop: Callable[[], bool] = lambda: False,
                 cache_lens: dict[str, int | None] | None = None) -> Iterator[RaceEvent]:
    """The steady-state phase over ``modes`` (see the module's docstring): per round a
    :class:`SteadyRoundEvent`, then one :class:`VerdictsEvent`. ``cache_lens``: each lane's KV-cache length
    (its :class:`PromptEvent`'s). Stops between blocks once ``should_stop()`` is true (within a block, between
    the engine's steps); an unfinished round is not counted. Nothing is yielded when no mode can take part."""
    run, left_out, baseline = steady_modes(modes)
    if not run or should_stop():
        return
    plan = plan.validated()
    gens = {m: steady_settings(settings, m, plan.tokens, (cache_lens or {}).get(m)) for m in run}
    yield PhaseEvent("running", True, PHASE)
    started = time.perf_counter()
    with same_threads() as threads:
        reps = {}
        for m in run:
            if should_stop():
                break
            yield SteadyBlockEvent(-1, m, time.perf_counter() - started, plan.budget_s, plan.min_rounds)
            reps[m] = calibrate(engine, prompt, gens[m], plan.block_ms, should_stop)
        events, progress = _rounds(engine, prompt, gens, reps, baseline, plan, threads, should_stop, started)
        yield from events
    yield PhaseEvent("running", False, PHASE, (time.perf_counter() - started) * 1000.0)
    yield _verdicts(progress, run, baseline, plan, threads, left_out, reps, gens)


@dataclass
class _Progress:
    rounds: list[Round]
    started: float = 0.0
    stopped_by: str = "stopped"


def _rounds(engine: Engine, prompt: str, gens: dict[str, GenerationSettings], reps: dict[str, int],
            baseline: str, plan: SteadyPlan, threads: dict[str, int],
            should_stop: Callable[[], bool],
            t0: float) -> tuple[Iterator[SteadyBlockEvent | SteadyRoundEvent], _Progress]:
    """The rounds as a generator of :class:`SteadyBlockEvent` (each block's start; ``t0``: the phase's start,
    :func:`time.perf_counter`) and :class:`SteadyRoundEvent`, and the progress it fills in as it runs."""
    progress = _Progress([])
    n_threads = threads["xla_cpu"]

    def go() -> Iterator[SteadyBlockEvent | SteadyRoundEvent]:
        rng, rule = random.Random(plan.seed), plan.rule()
        progress.started = time.perf_counter()
        while len(reps) == len(gens) and not should_stop():
            labels = [*gens, baseline + AA_SUFFIX]
            rng.shuffle(labels)
            blocks = []
            for label in labels:
                if should_stop():
                    return
                mode = label.removesuffix(AA_SUFFIX)
                yield SteadyBlockEvent(len(progress.rounds), label, time.perf_counter() - t0, plan.budget_s,
                                       plan.min_rounds)
                blocks.append(time_block(engine, prompt, gens[mode], reps[mode], label, should_stop))
            if should_stop():
                return
            progress.rounds.append(Round(len(progress.rounds), tuple(blocks)))
            judged = judge_rounds(progress.rounds, list(gens), baseline, n_threads)
            yield SteadyRoundEvent(len(progress.rounds) - 1, tuple(blocks),
                                   judged.dropped.get(len(progress.rounds) - 1, ""))
            reason = rule.stop_reason(judged.rounds, len(progress.rounds), time.perf_counter() - progress.started,
                                      judged.intervals())
            if reason is not None:
                progress.stopped_by = reason
                return

    return go(), progress


def _verdicts(progress: _Progress, run: list[str], baseline: str, plan: SteadyPlan, threads: dict[str, int],
              left_out: dict[str, str], reps: dict[str, int], gens: dict[str, GenerationSettings]) -> VerdictsEvent:
    judged = judge_rounds(progress.rounds, run, baseline, threads["xla_cpu"])
    try:
        load = tuple(round(x, 2) for x in os.getloadavg())
    except OSError:
        load = ()
    elapsed = time.perf_counter() - progress.started if progress.started else 0.0
    return VerdictsEvent(
        pairs=judged.pairs, baseline=baseline, modes=tuple(run), rounds=judged.rounds, dropped=len(judged.dropped),
        aa_noise=judged.aa_noise, noisy=judged.noisy, threads=dict(threads), load_avg=load, budget_s=plan.budget_s,
        elapsed_s=elapsed, stopped_by=progress.stopped_by, left_out=left_out,
        dropped_rounds=tuple(f"round {i + 1}: {why}" for i, why in sorted(judged.dropped.items())),
        tokens=next(iter(gens.values())).max_new_tokens if gens else 0, reps=dict(reps))
