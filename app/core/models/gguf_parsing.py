"""One parse of a GGUF file for all of transformers' readers during a load: :func:`shared_parsing`.

A first start converts the default model's GGUF (:func:`app.core.models.gguf.convert`): ``AutoConfig``,
``AutoTokenizer`` and ``AutoModelForCausalLM`` each read the file with gguf-py's ``GGUFReader`` and turn its
metadata (the 49,152-token vocabulary and 48,900 merges included) into Python values with transformers'
``_gguf_parse_value``. This block makes them share that work instead of repeating it; the libraries still do
the parsing and the dequantizing. No Qt, no JAX; gguf, numpy and transformers are imported lazily.
"""

from __future__ import annotations

import copy
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

__all__ = ["shared_parsing", "dequantize_ahead", "DequantizeAhead", "plain_array_reader", "parsed_once",
           "strings_decoded"]

#: Float32 bytes the background thread may dequantize ahead of the loading thread (:class:`DequantizeAhead`).
AHEAD_BYTES = 256 * 2**20
#: The :class:`_Shared` state of each :func:`shared_parsing` block now open, innermost last.
_OPEN: list[_Shared] = []


class _Shared:
    """One :func:`shared_parsing` block's readers (resolved path → reader) and its dequantizer."""

    def __init__(self, ahead: DequantizeAhead) -> None:
        self.readers: dict[str, Any] = {}
        self.ahead = ahead


def dequantize_ahead(path: str | os.PathLike[str]) -> bool:
    """Within :func:`shared_parsing`, start dequantizing the tensors of ``path``'s shared reader (one that a
    config read already made) on a background thread, for transformers' tensor loop to pick up. Call it once
    the model is known to fit in memory (:func:`app.core.models.size.check_memory`): the thread keeps at most
    :data:`AHEAD_BYTES` of results that the loop has not taken. Returns False (and does nothing) outside a
    block or before the file has a reader."""
    if not _OPEN or (reader := _OPEN[-1].readers.get(str(Path(path).resolve()))) is None:
        return False
    _OPEN[-1].ahead.start(reader.tensors)
    return True


@contextmanager
def shared_parsing() -> Iterator[None]:
    """Within this block, gguf-py parses a file once for transformers instead of repeatedly. Profiled on
    SmolLM2 here, a cold load went from 31 s to 17 s; then (issue 55) its loading thread's CPU time from 14 s to
    8.5 s (docs/benchmarks.md):

    - ``gguf.GGUFReader(path)`` runs three times (``AutoConfig``, ``AutoTokenizer``'s config, the tensors in
      ``load_gguf_checkpoint``), 3-5 s each: one read-only reader per path is shared, and it slices a plain
      ndarray view of the file instead of an ``np.memmap`` (:func:`plain_array_reader`: 4.3 → 1.3 CPU s);
    - ``gguf.get_tensor_name_map(arch, n_blocks)`` runs once per submodule in ``get_gguf_hf_weights_map``
      (transformers/modeling_gguf_pytorch_utils.py; 397 calls × 25 ms): memoized (its result is only read).
    - ``load_gguf_checkpoint(path, return_tensors=False)`` — every metadata field turned into Python values, the
      vocabulary and merges included (~1 s here) — runs for ``AutoConfig`` and again for ``AutoTokenizer``'s
      config: parsed once per path, each caller handed its own deep copy (callers pop and edit the dict).
    - ``load_gguf_checkpoint(path, return_tensors=True)`` (the weights) parses every field once more before
      it dequantizes: ``_gguf_parse_value`` remembers each value of the shared reader (:func:`parsed_once`),
      and decodes a string part without a Python int per byte (:func:`strings_decoded`: ~1 → 0.1 CPU s);
    - the tensors are dequantized on a second thread while the tokenizer and the model are built
      (:func:`dequantize_ahead`, :class:`DequantizeAhead`).
    transformers looks each up on its module at call time (``gguf``; ``transformers.modeling_gguf_pytorch_utils``,
    imported inside ``configuration_utils`` and ``tokenization_auto``), so they are swapped there for the block."""
    import gguf
    from transformers import modeling_gguf_pytorch_utils as hf_gguf

    original_reader, original_map = gguf.GGUFReader, gguf.get_tensor_name_map
    # _gguf_parse_value: a global of that module (imported there from transformers.integrations), looked up per call
    original_parse = hf_gguf._gguf_parse_value  # pyright: ignore[reportPrivateImportUsage]
    original_checkpoint = hf_gguf.load_gguf_checkpoint
    original_dequantize, plain_reader = gguf.dequantize, plain_array_reader(original_reader)
    shared = _Shared(DequantizeAhead(original_dequantize))
    shared_metadata = lru_cache(maxsize=None)(lambda path: original_checkpoint(path, return_tensors=False))

    def reader(path: str | os.PathLike[str], mode: Literal["r", "r+", "c"] = "r", *args: object, **kwargs: object) -> Any:
        if mode != "r" or args or kwargs:
            return original_reader(path, mode, *args, **kwargs)
        resolved = str(Path(path).resolve())
        if resolved not in shared.readers:
            shared.readers[resolved] = plain_reader(resolved)
        return shared.readers[resolved]

    def checkpoint(path: str | os.PathLike[str], return_tensors: bool = False, *args: object, **kwargs: object) -> Any:
        if return_tensors or args or any(v is not None for v in kwargs.values()):
            return original_checkpoint(path, return_tensors, *args, **kwargs)
        return copy.deepcopy(shared_metadata(str(Path(path).resolve())))

    gguf.GGUFReader, gguf.get_tensor_name_map = reader, lru_cache(maxsize=None)(original_map)
    hf_gguf.load_gguf_checkpoint = checkpoint
    hf_gguf._gguf_parse_value = parsed_once(strings_decoded(original_parse))  # pyright: ignore[reportPrivateImportUsage]
    gguf.dequantize = shared.ahead.dequantize
    _OPEN.append(shared)
    try:
        yield
    finally:
        _OPEN.remove(shared)
        shared.ahead.close()
        gguf.GGUFReader, gguf.get_tensor_name_map = original_reader, original_map
        hf_gguf.load_gguf_checkpoint = original_checkpoint
        hf_gguf._gguf_parse_value = original_parse  # pyright: ignore[reportPrivateImportUsage]
        gguf.dequantize = original_dequantize


def plain_array_reader(reader_class: type) -> type:
    """A subclass of gguf-py's ``GGUFReader`` (``reader_class``) whose ``data`` — the whole file, which
    ``GGUFReader.__init__`` maps as an ``np.memmap`` and slices once or more per vocabulary entry — is kept as
    a plain ``np.ndarray`` view of that same read-only mapping (``np.asarray``: no copy). Fields, tensors and
    their bytes are the library's own; only numpy's Python-level ``memmap.__getitem__`` and
    ``__array_finalize__`` (2.8 M and 1.3 M calls for SmolLM2) are skipped, and tensor ``data`` is an ndarray
    instead of a memmap. Only for mode ``"r"``: nothing is flushed."""
    import numpy as np

    class PlainArrayReader(reader_class):
        @property
        def data(self) -> Any:
            return self.__dict__["_plain_data"]

        @data.setter
        def data(self, mapped: object) -> None:
            self.__dict__["_plain_data"] = np.asarray(mapped)

    PlainArrayReader.__name__ = PlainArrayReader.__qualname__ = f"PlainArray{reader_class.__name__}"
    return PlainArrayReader


def strings_decoded(parse: Callable[[object, object], object]) -> Callable[[object, object], object]:
    """``parse`` (transformers' ``_gguf_parse_value(part, types)``) with a string part (``types`` ``[8]``, or
    ``[9, 8]`` for an element of an array of strings; the part a ``uint8`` array of UTF-8 bytes) decoded as
    ``bytes(part).decode()``: the same str as transformers' ``array("B", list(part)).tobytes().decode()``,
    without building a Python int per byte (0.5 → 0.05 CPU s for SmolLM2's 49,152 tokens). Anything else goes
    to ``parse``."""
    import numpy as np

    def parse_strings(value: object, data_type: object) -> object:
        types = data_type if isinstance(data_type, list) else [data_type]
        if types in ([8], [9, 8]) and isinstance(value, np.ndarray) and value.dtype == np.uint8 and value.ndim == 1:
            return bytes(value).decode()
        return parse(value, data_type)

    return parse_strings


def parsed_once(parse: Callable[[object, object], object]) -> Callable[[object, object], object]:
    """``parse`` (transformers' ``_gguf_parse_value(part, types)``, which turns one part of a gguf-py field
    into an int, float, bool or str) remembering its result per ``(part, types)`` object pair, so a shared
    reader's 147 k parts are parsed once per load rather than once per caller. Parts are read-only arrays of
    the reader and the results immutable; the memo holds both objects, so an id is never reused while it
    lives (the block's lifetime)."""
    seen: dict[tuple[int, int], tuple[object, object, object]] = {}

    def parse_once(value: object, data_type: object) -> object:
        hit = seen.get((id(value), id(data_type)))
        if hit is not None and hit[0] is value and hit[1] is data_type:
            return hit[2]
        result = parse(value, data_type)
        seen[(id(value), id(data_type))] = (value, data_type, result)
        return result

    return parse_once


class DequantizeAhead:
    """gguf-py's ``dequantize(data, qtype)``, run ahead on one background thread while the loading thread does
    other work (the tokenizer, building the model), and shared with that thread once it reaches the tensors.

    :meth:`start` queues a reader's tensors; :meth:`dequantize` (the block's ``gguf.dequantize``) hands back a
    queued tensor's result — waiting if the thread is on it, computing it here if the thread has not begun
    it — and dequantizes anything else directly. Results are the library's own (same function, same input).
    numpy releases the GIL inside its array loops, so on two cores the two threads overlap. At most
    ``window_bytes`` of float32 results wait untaken (transformers copies each one it takes), so a large
    model does not hold a second copy. :meth:`close` cancels what has not begun and waits for the rest."""

    def __init__(self, dequantize: Callable[..., Any], window_bytes: int = AHEAD_BYTES) -> None:
        self._dequantize, self._window = dequantize, window_bytes
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="gguf-dequantize")
        self._lock = threading.Lock()
        self._queue: deque[Any] = deque()
        self._jobs: dict[int, tuple[object, object, int, Future[Any]]] = {}  # id(data) → (data, qtype, bytes, job)
        self._ahead = 0  # float32 bytes queued on the thread and not yet taken

    def start(self, tensors: Iterable[Any]) -> None:
        """Queue gguf-py ``ReaderTensor``s (``data``, ``tensor_type``, ``n_elements``), in the loop's order."""
        with self._lock:
            self._queue.extend(tensors)
            self._fill()

    def dequantize(self, data: object, qtype: object) -> Any:
        """``gguf.dequantize(data, qtype)``: a float32 ndarray (gguf-py's result, computed once)."""
        with self._lock:
            job = self._jobs.get(id(data))
            if job is not None and job[0] is data and job[1] == qtype:
                del self._jobs[id(data)]
            else:
                job = None
        if job is None:
            return self._dequantize(data, qtype)
        try:
            return self._dequantize(data, qtype) if job[3].cancel() else job[3].result()
        finally:
            with self._lock:
                self._ahead -= job[2]
                self._fill()

    def close(self) -> None:
        with self._lock:
            self._queue.clear()
            jobs, self._jobs = list(self._jobs.values()), {}
        for job in jobs:
            job[3].cancel()
        self._pool.shutdown(wait=True)

    def _fill(self) -> None:
        """Queue tensors on the thread while the untaken results fit the window (always at least one)."""
        while self._queue and (self._ahead == 0 or self._ahead + 4 * int(self._queue[0].n_elements) <= self._window):
            tensor = self._queue.popleft()
            size = 4 * int(tensor.n_elements)
            job = self._pool.submit(self._dequantize, tensor.data, tensor.tensor_type)
            self._jobs[id(tensor.data)] = (tensor.data, tensor.tensor_type, size, job)
            self._ahead += size
