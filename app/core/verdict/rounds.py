"""Steady-state rounds as plain data: one timed block per mode per round, the clocks that time a block, and the
rule that drops a preempted round.

A block is the same short generation repeated until it lasts at least ~100 ms (pyperf calibrates its loops the
same way, so the clock's resolution and one-off hiccups weigh little). Its wall time comes from
``time.perf_counter``, its CPU time from ``time.process_time`` (every thread of the process, user + system), and
the time the hypervisor stole from this machine's CPUs from the ``steal`` column of ``/proc/stat`` (Linux;
``proc(5)``: "stolen time, which is the time spent in other operating systems when running in a virtualized
environment", in clock ticks of ``os.sysconf("SC_CLK_TCK")``).

A round is dropped when one of its blocks was preempted: the kernel counted stolen time worth more than
:data:`STEAL_SHARE` of the block's wall time, or the process got well under its usual share of the CPU — its
CPU time over ``wall × threads`` below :data:`CPU_SHARE_DROP` of that mode's median over the phase (a process
that waits for a core runs fewer CPU seconds per wall second). Every pair then loses that round alike.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

#: A block is preempted when stolen time exceeds this share of its wall time (any CPU of the machine).
STEAL_SHARE = 0.05
#: A block is preempted when its CPU share falls below this fraction of its mode's median CPU share.
CPU_SHARE_DROP = 0.7
#: Suffix of the label of the baseline's second block in a round (the A/A pair).
AA_SUFFIX = " (A/A)"


def steal_ms() -> float | None:
    """Stolen time of all CPUs since boot in ms (``/proc/stat``'s first line, 8th value, in clock ticks); None
    where ``/proc/stat`` is missing or has no such column (not Linux, a container that hides it)."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
        return int(fields[8]) * 1000.0 / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


@dataclass(frozen=True)
class Block:
    """One timed block of a round.

    ``label``: the mode, or the mode with :data:`AA_SUFFIX` for the baseline's second copy; ``mode``: the mode;
    ``ms_per_token``: the block's figure (ms per decode token, its decode calls' wall time over their count);
    ``wall_ms``: the block's wall time; ``cpu_ms``: the process's CPU time over the block (all threads);
    ``stolen_ms``: stolen time counted by the kernel over the block (all CPUs; None where not known);
    ``tokens``: tokens generated in the block; ``reps``: generations in the block.
    """

    label: str
    mode: str
    ms_per_token: float
    wall_ms: float
    cpu_ms: float
    stolen_ms: float | None = None
    tokens: int = 0
    reps: int = 1

    def cpu_share(self, threads: int) -> float:
        """CPU time over ``wall × threads`` (1.0: every thread of the budget busy the whole block)."""
        return self.cpu_ms / (self.wall_ms * max(1, threads)) if self.wall_ms > 0 else 0.0


@dataclass(frozen=True)
class Round:
    """One round of a steady-state phase: ``index`` (from 0) and its blocks in the order they ran."""

    index: int
    blocks: tuple[Block, ...]

    def figure(self, label: str) -> float | None:
        """ms/token of the block labelled ``label`` (None when the round has none)."""
        return next((b.ms_per_token for b in self.blocks if b.label == label), None)


class BlockClock:
    """Times one block: ``with BlockClock() as clock: …`` then :attr:`wall_ms`, :attr:`cpu_ms` and
    :attr:`stolen_ms` (None where ``/proc/stat`` is not readable)."""

    wall_ms: float = 0.0
    cpu_ms: float = 0.0
    stolen_ms: float | None = None

    def __enter__(self) -> BlockClock:
        self._steal = steal_ms()
        self._cpu = time.process_time()
        self._wall = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall_ms = (time.perf_counter() - self._wall) * 1000.0
        self.cpu_ms = (time.process_time() - self._cpu) * 1000.0
        after = steal_ms()
        self.stolen_ms = after - self._steal if after is not None and self._steal is not None else None


@dataclass
class Screen:
    """Which rounds are kept: ``kept`` the rounds kept, ``dropped`` round index → why it was dropped."""

    kept: list[Round] = field(default_factory=list)
    dropped: dict[int, str] = field(default_factory=dict)


def preempted(block: Block, usual_share: float | None, threads: int) -> str | None:
    """Why ``block`` counts as preempted, or None. ``usual_share``: its mode's median CPU share
    (:meth:`Block.cpu_share`) over the phase; ``threads``: the thread budget."""
    if block.stolen_ms is not None and block.stolen_ms > STEAL_SHARE * block.wall_ms:
        return f"{block.label}: {block.stolen_ms:.0f} ms stolen in {block.wall_ms:.0f} ms"
    share = block.cpu_share(threads)
    if usual_share and share < CPU_SHARE_DROP * usual_share:
        return (f"{block.label}: CPU time {block.cpu_ms:.0f} ms in {block.wall_ms:.0f} ms × {threads} threads "
                f"({share:.0%} against the usual {usual_share:.0%})")
    return None


def screen(rounds: Sequence[Round], threads: int) -> Screen:
    """Split ``rounds`` into kept and dropped ones (:func:`preempted`; each mode's usual CPU share is its
    median over all ``rounds``). ``threads``: the thread budget every mode had (>= 1)."""
    shares: dict[str, list[float]] = {}
    for r in rounds:
        for b in r.blocks:
            shares.setdefault(b.label, []).append(b.cpu_share(threads))
    usual = {label: statistics.median(v) for label, v in shares.items()}
    out = Screen()
    for r in rounds:
        why = next((w for b in r.blocks if (w := preempted(b, usual.get(b.label), threads))), None)
        if why is None:
            out.kept.append(r)
        else:
            out.dropped[r.index] = why
    return out
