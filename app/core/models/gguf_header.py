"""GGUF headers: read a file's metadata and tensor table fast, name it, and check transformers can load it.

GGUF is llama.cpp's model format (spec: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md): a
header with metadata (architecture, hyper-parameters, tokenizer) and a tensor table (name, shape, ggml
type), then the tensor data. No Qt, no JAX; gguf-py and transformers are imported lazily.
"""

from __future__ import annotations

import math
import mmap
import re
import struct
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from app.core.errors import ModelNotFoundError, UnsupportedModelError

_FLOAT_TYPES = {"F32", "F16", "BF16"}
# GGUF metadata value types (spec, "gguf_metadata_value_type"): the fixed-size ones as struct formats.
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
# A quant tag ending a file stem: "SmolLM2-135M-Instruct.Q4_1", "llama-7b-q4_k_m", "x.f16".
_QUANT_TAG = re.compile(r"[._-](?:I?Q\d\w*|TQ\d_\d|MXFP4|BF16|F16|F32)$", re.IGNORECASE)
# Architecture names transformers' legacy loader renames before its support check (load_gguf_checkpoint).
_ARCH_ALIASES = {"qwen2moe": "qwen2_moe", "qwen3moe": "qwen3_moe", "gpt-oss": "gpt_oss", "minimax-m2": "minimax_m2",
                 "t5encoder": "t5"}


@dataclass(frozen=True)
class GgufInfo:
    """A GGUF file's header. ``tensor_types``: ``((type name, tensors, elements), ...)``, most elements
    first; ``data_start``: byte offset where tensor data begins; ``size`` (bytes) and ``mtime_ns`` identify
    the file version on disk."""

    path: Path
    architecture: str
    general_name: str | None
    tokenizer_pre: str | None
    tensor_types: tuple[tuple[str, int, int], ...]
    data_start: int
    size: int
    mtime_ns: int

    @property
    def name(self) -> str:
        """The file stem without its quant tag, or ``general.name`` for a generic stem like ``model``."""
        stem = file_display_name(self.path)
        return self.general_name if stem.lower() in ("model", "ggml-model") and self.general_name else stem

    @property
    def quant(self) -> str:
        """The dominant tensor type by element count, e.g. ``Q4_1``."""
        return self.tensor_types[0][0] if self.tensor_types else "?"

    def label(self, dtype: str) -> str:
        return f"{self.name} · {self.quant} → {dtype}"


def file_display_name(path: str | Path) -> str:
    """``SmolLM2-135M-Instruct.Q4_1.gguf`` → ``SmolLM2-135M-Instruct``."""
    stem = Path(path).stem
    return _QUANT_TAG.sub("", stem) or stem


def read_info(path: str | Path) -> GgufInfo:
    """``path``'s header, cached per (path, size, mtime). Raises :class:`ModelNotFoundError` for a missing
    or non-GGUF file. Reads the metadata and tensor table itself and skips the vocabulary: 0.02 s on
    SmolLM2's 98 MB file, where ``gguf.GGUFReader`` takes 3-4 s decoding all 49,152 token strings."""
    path = Path(path).absolute()  # not resolved: a HF cache snapshot links to a blob named by its hash
    try:
        stat = path.stat()
    except OSError as exc:
        raise ModelNotFoundError(f"GGUF file {str(path)!r} cannot be read: {exc}.") from exc
    return _read_info_cached(path, stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=32)
def _read_info_cached(path: Path, size: int, mtime_ns: int) -> GgufInfo:
    import gguf

    try:
        metadata, tensors, data_start = _parse_header(path)
    except (OSError, ValueError, struct.error, UnicodeDecodeError) as exc:
        raise ModelNotFoundError(f"{str(path)!r} is not a readable GGUF file ({exc}).") from exc
    counts: dict[str, list[int]] = {}
    for dims, type_id in tensors:
        known = type_id in gguf.GGMLQuantizationType._value2member_map_
        entry = counts.setdefault(gguf.GGMLQuantizationType(type_id).name if known else f"type {type_id}", [0, 0])
        entry[0] += 1
        entry[1] += math.prod(dims)
    types = tuple(sorted(((k, n, e) for k, (n, e) in counts.items()), key=lambda t: -t[2]))
    get = metadata.get
    return GgufInfo(path, str(get("general.architecture", "?")), get("general.name"), get("tokenizer.ggml.pre"),
                    types, data_start, size, mtime_ns)


def _parse_header(path: Path) -> tuple[dict[str, Any], list[tuple[tuple[int, ...], int]], int]:
    """``(metadata without string arrays, [(ggml dims, ggml type id)], data offset)``."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        if buf[:4] != b"GGUF":
            raise ValueError("no GGUF magic bytes")
        version, n_tensors, n_kv = struct.unpack_from("<IQQ", buf, 4)
        if version not in (2, 3):
            raise ValueError(f"GGUF version {version} (2 and 3 are read)")
        pos, metadata = 24, {}
        for _ in range(n_kv):
            key, pos = _read_string(buf, pos)
            metadata[key], pos = _read_value(buf, pos + 4, struct.unpack_from("<I", buf, pos)[0])
        tensors = []
        for _ in range(n_tensors):
            _, pos = _read_string(buf, pos)
            (n_dims,) = struct.unpack_from("<I", buf, pos)
            dims = struct.unpack_from(f"<{n_dims}Q", buf, pos + 4)
            tensors.append((dims, struct.unpack_from("<I", buf, pos + 4 + 8 * n_dims)[0]))
            pos += 4 + 8 * n_dims + 4 + 8  # dims, type, data offset
        alignment = int(metadata.get("general.alignment", 32))
        return metadata, tensors, -(-pos // alignment) * alignment


def _read_string(buf: mmap.mmap | bytes, pos: int) -> tuple[str, int]:
    (length,) = struct.unpack_from("<Q", buf, pos)
    return bytes(buf[pos + 8 : pos + 8 + length]).decode("utf-8"), pos + 8 + length


def _read_value(buf: mmap.mmap | bytes, pos: int, value_type: int) -> tuple[Any, int]:
    """One metadata value and the offset after it; a long or string array is returned as its length."""
    if value_type in _SCALARS:
        return struct.unpack_from(_SCALARS[value_type], buf, pos)[0], pos + struct.calcsize(_SCALARS[value_type])
    if value_type == _STRING:
        return _read_string(buf, pos)
    if value_type != _ARRAY:
        raise ValueError(f"unknown metadata value type {value_type}")
    item_type, count = struct.unpack_from("<IQ", buf, pos)
    pos += 12
    if item_type in _SCALARS:
        fmt = _SCALARS[item_type]
        values = list(struct.unpack_from(f"<{count}{fmt[1]}", buf, pos)) if count <= 4096 else count
        return values, pos + count * struct.calcsize(fmt)
    for _ in range(count):  # strings (vocabulary, merges) or nested arrays: walk past them
        if item_type == _STRING:
            pos += 8 + struct.unpack_from("<Q", buf, pos)[0]
        else:
            _, pos = _read_value(buf, pos, item_type)
    return count, pos


# -- support checks --------------------------------------------------------------------------------------
def supported_architectures() -> set[str]:
    """``general.architecture`` values transformers loads: ``GGUF_SUPPORTED_ARCHITECTURES`` of its legacy
    loader (transformers/modeling_gguf_pytorch_utils.py) and ``GGUF_ARCHS`` of its block-keeping one
    (transformers/integrations/gguf/gguf_conversion_mapping.py)."""
    from transformers.integrations.gguf.gguf_conversion_mapping import GGUF_ARCHS
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES

    return (set(GGUF_SUPPORTED_ARCHITECTURES) - {"general", "tokenizer"}) | set(GGUF_ARCHS)


@lru_cache(maxsize=8)
def supported_quant_types(architecture: str) -> frozenset[str]:
    """Tensor types transformers turns into floats for ``architecture``: on the block-keeping path the float
    types and ``GGML_BLOCK`` (transformers/integrations/gguf/dequant.py); on the legacy path each type
    gguf-py's ``gguf.dequantize`` implements (probed on one zero block)."""
    import gguf
    import numpy as np
    from transformers.integrations.gguf.gguf_conversion_mapping import GGUF_ARCHS

    if architecture in GGUF_ARCHS:
        from transformers.integrations.gguf.dequant import GGML_BLOCK

        return frozenset(_FLOAT_TYPES | {gguf.GGMLQuantizationType(t).name for t in GGML_BLOCK})
    found = set()
    for qtype, (_, type_size) in gguf.GGML_QUANT_SIZES.items():
        try:
            gguf.dequantize(np.zeros((1, type_size), dtype=np.uint8), qtype)
            found.add(qtype.name)
        except NotImplementedError:
            pass
    return frozenset(found - {"I8", "I16", "I32", "I64", "F64"})


def check_supported(info: GgufInfo) -> None:
    """Refuse, before any slow work, a GGUF whose architecture or tensor types transformers cannot load.
    Raises :class:`UnsupportedModelError` naming the architecture, or the types with their tensor counts."""
    import transformers

    archs = supported_architectures()
    if info.architecture not in archs and _ARCH_ALIASES.get(info.architecture) not in archs:
        raise UnsupportedModelError(
            f"{info.name}: GGUF architecture {info.architecture!r} cannot be loaded by transformers "
            f"{transformers.__version__} (it reads {', '.join(sorted(archs))}). Pick a GGUF of one of these, "
            "or the model's Hugging Face folder."
        )
    ok = supported_quant_types(info.architecture)
    bad = [f"{name} ({n} tensors)" for name, n, _ in info.tensor_types if name not in ok]
    if bad:
        raise UnsupportedModelError(
            f"{info.name}: tensors of type {', '.join(bad)} cannot be dequantized for {info.architecture!r} "
            f"(supported: {', '.join(sorted(ok))}). Use a GGUF quantized as Q8_0, Q4_K_M or F16."
        )
