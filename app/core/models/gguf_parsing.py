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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

__all__ = ["shared_parsing", "plain_array_reader", "parsed_once"]


@contextmanager
def shared_parsing() -> Iterator[None]:
    """Within this block, gguf-py parses a file once for transformers instead of repeatedly. Profiled on
    SmolLM2 here, a cold load went from 31 s to 17 s, then 15.3 → 11.2 CPU s (docs/benchmarks.md):

    - ``gguf.GGUFReader(path)`` runs three times (``AutoConfig``, ``AutoTokenizer``'s config, the tensors in
      ``load_gguf_checkpoint``), 3-5 s each: one read-only reader per path is shared, and it slices a plain
      ndarray view of the file instead of an ``np.memmap`` (:func:`plain_array_reader`: 4.3 → 1.3 CPU s);
    - ``gguf.get_tensor_name_map(arch, n_blocks)`` runs once per submodule in ``get_gguf_hf_weights_map``
      (transformers/modeling_gguf_pytorch_utils.py; 397 calls × 25 ms): memoized (its result is only read).
    - ``load_gguf_checkpoint(path, return_tensors=False)`` — every metadata field turned into Python values, the
      vocabulary and merges included (~1 s here) — runs for ``AutoConfig`` and again for ``AutoTokenizer``'s
      config: parsed once per path, each caller handed its own deep copy (callers pop and edit the dict).
    - ``load_gguf_checkpoint(path, return_tensors=True)`` (the weights) parses every field once more before
      it dequantizes: ``_gguf_parse_value`` remembers each value of the shared reader (:func:`parsed_once`).
    transformers looks each up on its module at call time (``gguf``; ``transformers.modeling_gguf_pytorch_utils``,
    imported inside ``configuration_utils`` and ``tokenization_auto``), so they are swapped there for the block."""
    import gguf
    from transformers import modeling_gguf_pytorch_utils as hf_gguf

    original_reader, original_map = gguf.GGUFReader, gguf.get_tensor_name_map
    original_checkpoint, original_parse = hf_gguf.load_gguf_checkpoint, hf_gguf._gguf_parse_value
    shared_reader = lru_cache(maxsize=None)(plain_array_reader(original_reader))
    shared_metadata = lru_cache(maxsize=None)(lambda path: original_checkpoint(path, return_tensors=False))

    def reader(path: str | os.PathLike[str], mode: Literal["r", "r+", "c"] = "r", *args: object, **kwargs: object) -> Any:
        if mode != "r" or args or kwargs:
            return original_reader(path, mode, *args, **kwargs)
        return shared_reader(str(Path(path).resolve()))

    def checkpoint(path: str | os.PathLike[str], return_tensors: bool = False, *args: object, **kwargs: object) -> Any:
        if return_tensors or args or any(v is not None for v in kwargs.values()):
            return original_checkpoint(path, return_tensors, *args, **kwargs)
        return copy.deepcopy(shared_metadata(str(Path(path).resolve())))

    gguf.GGUFReader, gguf.get_tensor_name_map = reader, lru_cache(maxsize=None)(original_map)
    hf_gguf.load_gguf_checkpoint, hf_gguf._gguf_parse_value = checkpoint, parsed_once(original_parse)
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = original_reader, original_map
        hf_gguf.load_gguf_checkpoint, hf_gguf._gguf_parse_value = original_checkpoint, original_parse


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
