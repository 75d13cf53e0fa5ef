"""The engine: a loaded model, its JAX weights, compiled steps, and the streamed generation (its decode loop:
:mod:`app.core.engine.loop`; loading and conversion to JAX: :mod:`app.core.engine.load`).

Use from a script, the CLI or the GUI's worker thread (all calls of one engine on one thread)::

    engine = load_engine("pydoc-llama")
    for event in engine.generate("The jit function", GenerationSettings(max_new_tokens=20)):
        ...

Compiled executables live on the engine, so a second run with the same shapes compiles nothing: the
spike vanishes on the second Run.

An engine runs on one :class:`app.core.engine.device.Device` (``load_engine(..., device="gpu")``; default: JAX's
default backend): its JAX weights and caches live on that platform's first device, the PyTorch module on the
matching torch device (``cuda:0`` on a GPU), and every :class:`app.core.events.CallRecord` names the device that ran the call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from app.core.backends import CPU
from app.core.compile_cache.xla import clear_in_memory_caches
from app.core.engine.chat import end_of_turn_ids, format_chat, has_chat_template, is_instruct
from app.core.engine.device import Device, resolve_device, use_as_default
from app.core.engine.load import load_torch, on_device, phase, place, to_jax
from app.core.engine.loop import decode_loop, raise_friendly
from app.core.errors import EmptyPromptError, InvalidSettingsError, PromptTooLongError
from app.core.events import Event, PhaseEvent, PromptEvent
from app.core.inspect.ir import attribute_to_model_source
from app.core.inspect.routing import RoutingRecorder
from app.core.mode_catalog import mode_class, mode_info
from app.core.models.facts import eos_ids, warnings_for
from app.core.models.sources import LoadedModel, ModelSpec, parse_model
from app.core.modes.base import prompt_bucket
from app.core.parallel import mesh as mesh_lib
from app.core.parallel.mesh import bytes_per_device, place_cache, uncommit_torchax_key
from app.core.runtime.compiled_step import CompiledStep
from app.core.runtime.kv_cache import empty_dynamic_cache, static_cache_template
from app.core.runtime.pytrees import register_cache_pytrees
from app.core.settings import GenerationSettings, refused

if TYPE_CHECKING:
    from app.core.parallel.mesh import MeshSpec


def _never() -> bool:
    return False


def load_engine(
    model: str | ModelSpec, dtype: str = "float32", on_event: Callable[[PhaseEvent], None] | None = None,
    device: str | Device | None = None,
) -> Engine:
    """Resolve and load ``model`` (built-in name, hub id, folder or ``random:…``) into an :class:`Engine` on
    ``device`` (a platform name of :data:`app.core.mode_catalog.PLATFORMS`, a resolved :class:`Device`, or None
    for JAX's default backend).

    ``on_event`` receives ``loading`` and ``converting`` phase events (start/end with ``elapsed_ms``): the
    weights are converted to JAX arrays here, so a run's time to first token measures generation only.
    Random weights on a GPU are initialised on CUDA (:func:`app.core.models.sources.load_model`'s
    ``init_device``). The device becomes the process's default JAX device
    (:func:`app.core.engine.device.use_as_default`). Raises :class:`InvalidSettingsError` for a platform JAX
    does not have here (before anything loads) and the :class:`app.core.errors.PlaygroundError` subclasses of
    :func:`app.core.models.sources.load_model`.
    """
    placed = device if isinstance(device, Device) else resolve_device(device)
    spec = model if isinstance(model, ModelSpec) else parse_model(model, dtype)
    emit = on_event or (lambda e: None)
    loaded = load_torch(spec, placed, emit)
    use_as_default(placed)
    engine = Engine(loaded, placed)
    with phase(emit, "converting", "weights to JAX arrays"):
        engine.jax_state()
    return engine


class Engine:
    """A loaded causal LM ready to run in any mode. Not thread-safe: use it from one thread.

    ``device`` (None: JAX's default backend, :func:`app.core.engine.device.resolve_device`) places the run: the
    PyTorch module moves to its torch device (``cuda:0`` on a GPU; it stays on the CPU where torch has none),
    the JAX weights and cache templates to its JAX device."""

    def __init__(self, loaded: LoadedModel, device: Device | None = None) -> None:
        register_cache_pytrees()
        attribute_to_model_source()
        self.loaded = loaded
        #: Where this engine's runs execute (:class:`app.core.engine.device.Device`).
        self.device: Device = device if device is not None else resolve_device(None)
        torch_device = self.device.torch_device
        if torch_device not in (None, CPU.torch_device) and str(next(loaded.model.parameters()).device) != torch_device:
            loaded.model.to(torch_device)
        if not self.device.is_default:  # torchax's env key may be committed to another device
            uncommit_torchax_key()
        self.model = loaded.model
        self.config = loaded.model.config
        self.tokenizer = loaded.tokenizer
        self._jax: tuple[Any, Any] | None = None
        self._steps: dict[tuple, CompiledStep] = {}
        #: Per-mode state that outlives a run, keyed by mode name: the one place a mode keeps what is not a
        #: :class:`CompiledStep` (torch-compile: its compiled graphs and static caches). Read and created with
        #: :meth:`mode_state`; reset by :meth:`clear_compiled`.
        self._mode_state: dict[str, dict] = {}
        self._static_templates: dict[int, Any] = {}
        self.ir: dict[tuple[str, str], Any] = {}  # (mode, step) → StepIR (with its jaxpr) of the latest compile
        #: steps that were compiled, then dropped by :meth:`clear_compiled`: their next compile says why
        self._dropped: set[tuple[str, str, bool]] = set()
        self.mesh_spec: Any = None  # app.core.parallel.mesh.MeshSpec, None = one device
        self.mesh: Any = None
        self._unsharded: Any = None
        self.warnings: list[str] = warnings_for(loaded)
        self.eos_ids = eos_ids(loaded)
        self.pad_id = self.eos_ids[0] if self.eos_ids else 0
        self.chat_template = has_chat_template(self.tokenizer)
        self.chat_default = is_instruct(f"{loaded.spec.source} {loaded.spec.label}", self.tokenizer)
        self.turn_end_ids = [i for i in end_of_turn_ids(self.tokenizer, self.config,
                                                        getattr(self.model, "generation_config", None))
                             if i < self.vocab_size] if self.chat_template else []
        #: A mixture-of-experts model's router hooks (None for a dense model): each call's experts, issue 42.
        self.routing: RoutingRecorder | None = RoutingRecorder.attach(self.model)

    # -- identity ---------------------------------------------------------------------------------------
    @property
    def spec(self) -> ModelSpec:
        return self.loaded.spec

    @property
    def label(self) -> str:
        return self.spec.label

    @property
    def model_id(self) -> str:
        return self.spec.source

    @property
    def vocab_size(self) -> int:
        """Width of the logits: rows of the output embedding (the LM head)."""
        head = self.model.get_output_embeddings()
        return int((head if head is not None else self.model.get_input_embeddings()).weight.shape[0])

    @property
    def max_positions(self) -> int | None:
        cfg = self.config.get_text_config(decoder=True) if hasattr(self.config, "get_text_config") else self.config
        for name in ("max_position_embeddings", "n_positions"):
            value = getattr(cfg, name, None)
            if isinstance(value, int) and value > 0:
                return value
        return None

    # -- JAX state --------------------------------------------------------------------------------------
    def jax_state(self) -> tuple[Any, Any]:
        """``(weights, fn)`` from ``torchax.extract_jax`` (converted once, on first use).

        ``weights`` is a dict of jax arrays keyed by parameter name; ``fn(weights, args, kwargs)`` runs the
        module on jax arrays. Weights are passed as arguments, never closed over (a closure would embed them
        as constants in the lowered module): :func:`app.core.engine.load.to_jax`."""
        if self._jax is None:
            self._jax = to_jax(self.model, self.device)
        return self._jax

    def on_device(self) -> Any:
        """A context in which new JAX arrays land on this engine's device (``jax.default_device``), and torch
        factory functions on its torch device (``torch.device``); nothing changes on the default device."""
        return on_device(self.device)

    def _place(self, tree: object) -> Any:
        """``tree``'s jax arrays committed to this engine's JAX device (as they are on the default device)."""
        return place(tree, self.device)

    def device_label(self, mode: str) -> str:
        """The device that runs ``mode`` on this engine, as records show it (``"cpu"``,
        ``"NVIDIA H100 80GB HBM3 (gpu:0)"``, the CUDA name for a PyTorch mode)."""
        return self.device.label_for(mode)

    def compiled_step(self, mode: str, kind: str, greedy: bool, build: Callable[[], CompiledStep]) -> CompiledStep:
        """The :class:`CompiledStep` for ``(mode, kind, greedy)``: made once by ``build()`` (the mode object
        owns the step function, argument names and donation) and kept across runs, so a second run compiles
        nothing. Its first compile is explained: a changed static argument, or caches cleared."""
        key = (mode, kind, greedy)
        if key not in self._steps:
            step = build()
            if (mode, kind, not greedy) in self._steps:
                step.first_reason = f"new static argument: greedy={greedy}"
            elif key in self._dropped:
                step.first_reason = "first call after caches were cleared"
            self._steps[key] = step
        return self._steps[key]

    def existing_step(self, mode: str, kind: str, greedy: bool) -> CompiledStep | None:
        """The :class:`CompiledStep` of ``(mode, kind, greedy)`` if a run made it, else None (never builds one)."""
        return self._steps.get((mode, kind, greedy))

    def compiled_steps(self, mode: str) -> dict[tuple, CompiledStep]:
        """A copy of ``mode``'s compiled steps (key → step), to put back later with :meth:`restore_steps`."""
        return {key: step for key, step in self._steps.items() if key[0] == mode}

    def restore_steps(self, steps: dict[tuple, CompiledStep]) -> None:
        """Put ``steps`` (from :meth:`compiled_steps`) back: their executables are called again, not rebuilt."""
        self._steps.update(steps)

    def mode_state(self, mode: str) -> dict:
        """Mode ``mode``'s state on this engine (an empty dict on first use; ``{"cleared": True}`` after
        :meth:`clear_compiled` dropped what the mode had made)."""
        return self._mode_state.setdefault(mode, {})

    def set_mesh(self, spec: MeshSpec | None) -> None:
        """Run on a device mesh (``app.core.parallel.mesh.MeshSpec``; None or tp=1 = one device).

        Checks that ``tp`` divides the model's heads and MLP width, places the weights with
        ``NamedSharding`` (Megatron rules of :mod:`app.core.parallel.mesh`), drops compiled steps and cache
        templates and uncommits torchax's PRNG key (:func:`app.core.parallel.mesh.uncommit_torchax_key`). Raises :class:`InvalidSettingsError` (non-dividing mesh, too few devices) and then
        leaves the engine as it was."""
        if spec is not None and spec.n_devices == 1:
            spec = None
        if spec is not None and not self.device.is_default:
            raise InvalidSettingsError(
                f"A mesh spans the devices of JAX's default backend, and this engine runs on {self.device.label}: "
                f"run with JAX_PLATFORMS={self.device.platform} to build a mesh of {self.device.platform} devices."
            )
        mesh = None
        if spec is not None:
            mesh = mesh_lib.build_mesh(spec)
            import jax

            mesh_lib.check_divisible(self.config, spec.tp, len(jax.devices()))
        weights, fn = self.jax_state()
        if self._unsharded is None:
            self._unsharded = weights
        if spec is None:
            self._jax = (self._unsharded, fn)
            self.mesh_spec = self.mesh = None
        else:
            assert mesh is not None  # built above for every spec
            self._jax = (mesh_lib.shard_weights(self._unsharded, mesh, spec.tp), fn)
            self.mesh_spec, self.mesh = spec, mesh
        mesh_lib.uncommit_torchax_key()
        self._static_templates.clear()
        self.clear_compiled()

    @property
    def mesh_label(self) -> str:
        return str(self.mesh_spec) if self.mesh_spec is not None else "1 device"

    def device_bytes(self) -> dict[str, dict[str, int]]:
        """Bytes per device of the weights and of the latest static KV cache: ``{"weights": {"cpu:0": n},
        "kv_cache": {...}}`` (from each array's addressable shards)."""
        out = {"weights": bytes_per_device(self.jax_state()[0])}
        if self._static_templates:
            out["kv_cache"] = bytes_per_device(self._static_templates_any())
        return out

    def _static_templates_any(self) -> Any:
        return next(reversed(self._static_templates.values()))

    def clear_compiled(self, modes: Iterable[str] | None = None) -> None:
        """Drop every compiled step of this engine (``modes``: only those modes' steps and state; the other
        modes' executables stay usable): the next run traces, lowers and compiles again (new ``jax.jit``
        objects, so JAX's own tracing cache is bypassed too); ``jax.clear_caches()`` as well; torch-compile's
        steps and Dynamo's caches too."""
        only = None if modes is None else set(modes)
        for mode, state in list(self._mode_state.items()):
            if only is not None and mode not in only:
                continue
            if set(state) - {"cleared"}:  # the mode made something: drop it, and say why it compiles again
                mode_class(mode).clear_state(self)
                self._mode_state[mode] = {"cleared": True}
        dropped = {key for key in self._steps if only is None or key[0] in only}
        self._dropped |= dropped  # a step never compiled before compiles for its "first call"
        for key in dropped:
            del self._steps[key]
        clear_in_memory_caches()

    def dynamic_cache(self) -> Any:
        """An empty ``DynamicCache`` whose tensors (if any) are jax arrays."""
        return empty_dynamic_cache(self.config)

    def static_cache(self, max_cache_len: int) -> Any:
        """A zeroed ``StaticCache`` of ``max_cache_len`` positions as a pytree of jax arrays (placed on the
        mesh when there is one); see :func:`app.core.runtime.kv_cache.static_cache_template`."""
        import jax
        import jax.numpy as jnp

        if max_cache_len not in self._static_templates:
            paused = self.routing.paused() if self.routing is not None else nullcontext()
            with self.on_device(), paused:  # its eager 1-token forward runs where the torch module lives; it is
                template = self._place(static_cache_template(self.model, max_cache_len, self.pad_id))  # no call
            if self.mesh is not None:
                template = place_cache(template, self.mesh, self.mesh_spec.tp)
            self._static_templates[max_cache_len] = template
        return jax.tree.map(jnp.zeros_like, self._static_templates[max_cache_len])

    # -- generation -------------------------------------------------------------------------------------
    def prompt_text(self, prompt: str, settings: GenerationSettings) -> tuple[str, bool]:
        """``(text the model reads, chat)``: with chat (``settings.chat``, or by default for an instruct
        model with a template) the user's text inside the chat template (:func:`app.core.engine.chat.format_chat`).
        Raises :class:`InvalidSettingsError` for chat on a tokenizer without a template."""
        chat = self.chat_default if settings.chat is None else settings.chat
        if not chat:
            return prompt, False
        return format_chat(self.tokenizer, prompt, settings.system_prompt or None), True

    def encode(self, prompt: str, chat: bool = False) -> list[int]:
        """Token ids of ``prompt`` (a formatted chat prompt already holds its special tokens: none are
        added). An empty prompt starts from the end-of-text token; InvalidSettingsError without one."""
        ids = list(self.tokenizer.encode(prompt, add_special_tokens=False) if chat else self.tokenizer.encode(prompt))
        if not ids:
            if not self.eos_ids:
                raise EmptyPromptError("The prompt is empty: type a few words.")
            ids = [self.eos_ids[0]]
        return ids

    def cache_len_for(self, n_prompt: int, settings: GenerationSettings) -> int:
        """Static KV-cache length: ``settings.max_cache_len`` or the prompt bucket + ``max_new_tokens``
        rounded up to a multiple of 64, capped at the model's maximum positions."""
        if settings.max_cache_len is not None:
            length = settings.max_cache_len
        else:
            length = -(-(prompt_bucket(n_prompt, 1 << 30) + settings.max_new_tokens) // 64) * 64
        cap = self.max_positions
        if cap is not None:
            if settings.max_cache_len is not None and settings.max_cache_len > cap:
                raise refused(
                    "max_cache_len", f"A KV cache of {settings.max_cache_len:,} positions exceeds the model's {cap:,} positions: use at "
                    f"most {cap:,} (or auto)."
                )
            length = min(length, cap)
        return length

    def generate(
        self,
        prompt: str,
        settings: GenerationSettings,
        should_stop: Callable[[], bool] = _never,
        on_live_phase: Callable[[PhaseEvent], None] | None = None,
    ) -> Iterator[Event]:
        """Stream one generation as events (see :mod:`app.core.events`).

        Yields a :class:`PromptEvent`, phase events, one :class:`CallRecord` per model call, one
        :class:`TokenEvent` per token, :class:`IREvent` s for newly compiled steps (plain texts: the live
        jaxpr stays in :attr:`ir`), and finally one :class:`FinishedEvent`. ``should_stop`` is polled
        between steps (Stop lands within one decode step). ``on_live_phase`` receives phases reported
        while a call blocks (``torch-compile``'s compiler phases), on this thread. Raises
        :class:`InvalidSettingsError` or :class:`PromptTooLongError` before any event when the input is bad
        (also for a mode that cannot run on this engine's device, :meth:`Device.check`),
        and :class:`UnsupportedModelError` when torchax has no lowering for an ATen op of the model.
        """
        import torch

        settings = settings.validated()
        self.device.check(settings.mode)
        text, chat = self.prompt_text(prompt, settings)
        prompt_ids = self.encode(text, chat)
        max_cache_len = self.cache_len_for(len(prompt_ids), settings)
        if len(prompt_ids) >= max_cache_len:
            if settings.max_cache_len is not None and (self.max_positions is None or max_cache_len < self.max_positions):
                advice = ("raise the KV cache length (the form's 'KV cache' field, --max-cache-len) above "
                          f"{len(prompt_ids)} or shorten the prompt.")
            else:
                advice = f"this model holds at most {max_cache_len} positions: shorten the prompt."
            raise PromptTooLongError(
                f"The prompt is {len(prompt_ids)} tokens but the KV cache holds {max_cache_len} positions: {advice}"
            )
        mode = mode_class(settings.mode)(self, settings, max_cache_len)
        if on_live_phase is not None:
            mode.emit_live = on_live_phase
        mode.should_stop = should_stop
        with torch.no_grad():
            try:
                room = max_cache_len - len(prompt_ids) + 1  # the prefill's token, then one per free position
                cap = room if room < settings.max_new_tokens else None
                yield PromptEvent(text, len(prompt_ids), chat, max_cache_len, settings.max_new_tokens, cap)
                events = decode_loop(self, mode, prompt_ids, settings, max_cache_len, should_stop, chat)
                # a MoE model: each call record gets its experts (issue 42); torch.compile's graphs record none
                if self.routing is not None and mode_info(settings.mode).compiler != "inductor":
                    self.routing.clear()
                    events = self.routing.annotate(events, len(prompt_ids))
                yield from events
            except Exception as exc:
                raise_friendly(exc)
                raise
            finally:
                mode.finish()
