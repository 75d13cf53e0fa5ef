"""The decode loop every mode shares: :func:`decode_loop` drives a mode's prefill and decode steps for
:meth:`app.core.engine.engine.Engine.generate`, times each call into a :class:`CallRecord`, detokenizes each
token as it comes, captures the IR of each step kind's first compile and ends with one :class:`FinishedEvent`.

The engine is passed in as a :class:`LoopHost` (:class:`app.core.engine.engine.Engine` is one), so this module
does not import it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from app.core.engine.detok import IncrementalDetokenizer
from app.core.errors import UnsupportedModelError
from app.core.events import CallRecord, Event, FinishedEvent, IREvent, Summary, TokenEvent
from app.core.inspect.views import StepKind
from app.core.mode_catalog import REFERENCE_MODE
from app.core.settings import GenerationSettings
from app.core.steps import DECODE, PREFILL

if TYPE_CHECKING:
    from app.core.modes.base import Mode, StepResult


class LoopHost(Protocol):
    """What the decode loop reads of the engine that drives it."""

    @property
    def tokenizer(self) -> Any: ...

    @property
    def eos_ids(self) -> list[int]: ...

    @property
    def turn_end_ids(self) -> list[int]: ...

    @property
    def ir(self) -> dict[tuple[str, str], Any]: ...  # (mode, step) → StepIR of the latest compile

    @property
    def mesh_label(self) -> str: ...

    def device_label(self, mode: str) -> str: ...


def decode_loop(engine: LoopHost, mode: Mode, prompt_ids: list[int], settings: GenerationSettings, max_cache_len: int,
                should_stop: Callable[[], bool], chat: bool = False) -> Iterator[Event]:
    """Run ``mode`` (an :class:`app.core.modes.base.Mode` of ``engine``) from ``prompt_ids``: its prefill, then one
    decode step per token until end of text (``eos``; ``end_of_turn`` in a ``chat``), ``max_new_tokens``, Stop
    (``should_stop``, polled between steps) or a full KV cache (``max_cache_len`` positions)."""
    detok = IncrementalDetokenizer(engine.tokenizer)
    records: list[CallRecord] = []
    t_start = time.perf_counter()
    ttft_ms = None
    position = len(prompt_ids)
    reason = "max_new_tokens"
    captured: set[tuple[str, str]] = set()
    step_gen, kind = mode.prefill(prompt_ids), PREFILL
    while True:
        result = yield from step_gen
        record = _record(len(records), kind, settings.mode, result, engine.mesh_label,
                         engine.device_label(settings.mode))
        records.append(record)
        yield record
        if result.capture_ir is not None:
            yield from capture_ir(engine, settings, kind, result, captured)
        else:
            yield from reused_ir(engine, settings, kind, captured)
        text = detok.push(result.token)
        elapsed_ms = (time.perf_counter() - t_start) * 1000
        if ttft_ms is None:
            ttft_ms = elapsed_ms
        yield TokenEvent(len(detok.ids) - 1, result.token, text, record.index, elapsed_ms)
        if settings.stop_at_eos and chat and result.token in engine.turn_end_ids:
            reason = "end_of_turn"
            break
        if settings.stop_at_eos and result.token in engine.eos_ids:
            reason = "eos"
            break
        if len(detok.ids) >= settings.max_new_tokens:
            break
        if should_stop():
            reason = "stopped"
            break
        if position >= max_cache_len:
            reason = "cache_full"
            break
        step_gen, kind = mode.decode(result.token, position), DECODE
        position += 1
    mode.finish()  # before the summary: a loop running ahead on the device (jit-loop) stops now
    total_ms = (time.perf_counter() - t_start) * 1000
    summary = Summary.from_records(settings.mode, records, len(detok.ids), ttft_ms, total_ms, cache_positions(mode))
    text = engine.tokenizer.decode(detok.ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)
    yield FinishedEvent(reason, summary, list(detok.ids), text)


def cache_positions(mode: object) -> int | None:
    """Positions ``mode``'s static KV cache holds at the end of its run (:attr:`Summary.cache_len`): a jit mode's
    capacity (its bucket, ``JitStaticMode.capacity``), else the width of a static cache's attention mask
    (torch-compile's ``(1, max_cache_len)``); None for a ``DynamicCache``, which holds the tokens so far."""
    capacity = getattr(mode, "capacity", 0)
    if capacity:
        return int(capacity)
    mask = getattr(mode, "mask", None)
    shape = getattr(mask, "shape", ())
    return int(shape[-1]) if len(shape) == 2 else None


def capture_ir(
    engine: LoopHost, settings: GenerationSettings, kind: StepKind, result: StepResult, captured: set[tuple[str, str]]
) -> Iterator[IREvent]:
    """IR of the first compile of each step kind in a run (jit-dynamic compiles every decode step: one
    decode IR is enough), built after the call's timing was taken; kept in ``engine.ir``."""
    key = (settings.mode, kind)
    if not settings.capture_ir or key in captured or result.capture_ir is None:  # None: the call compiled nothing
        return
    captured.add(key)
    step_ir = result.capture_ir()
    engine.ir[key] = step_ir
    yield IREvent(kind, settings.mode, step_ir.plain())


def reused_ir(engine: LoopHost, settings: GenerationSettings, kind: StepKind,
              captured: set[tuple[str, str]]) -> Iterator[IREvent]:
    """A warm step (compiled by an earlier run) sends, once per run, the IR kept from its compile
    (``IREvent.reused``), so the IR views show what runs rather than waiting for a compile that never comes."""
    key = (settings.mode, kind)
    kept = engine.ir.get(key)
    if not settings.capture_ir or key in captured or kept is None:
        return
    captured.add(key)
    yield IREvent(kind, settings.mode, kept.plain(), reused=True)


def _record(index: int, kind: StepKind, mode: str, result: StepResult, mesh: str, device: str = "") -> CallRecord:
    """The mode's timing record of one call, completed with the loop's bookkeeping."""
    return replace(
        result.record, index=index, step=kind, mode=mode, input_shapes=result.input_shapes,
        wall_ms=result.wall_ms, timestamp=time.time(), mesh=mesh, device=device,
    )


def raise_friendly(exc: BaseException) -> None:
    """Turn torchax's ``OperatorNotFound`` into :class:`UnsupportedModelError` naming the ATen op."""
    if type(exc).__name__ == "OperatorNotFound":
        raise UnsupportedModelError(
            f"torchax has no JAX lowering for an ATen op of this model ({exc}). Run it in '{REFERENCE_MODE}' mode, or "
            "register a lowering with torchax.ops.ops_registry."
        ) from exc
