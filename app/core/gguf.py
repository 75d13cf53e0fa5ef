"""GGUF model files: a fast header reader, support checks, display labels and a conversion cache.

A GGUF (llama.cpp's file format, spec: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md) holds a
model's config, tokenizer and (usually quantized) tensors. ``transformers`` loads it by dequantizing every
tensor to a dense float tensor (``transformers/modeling_gguf_pytorch_utils.py``, ``load_gguf_checkpoint``,
using gguf-py's ``gguf.dequantize``; architectures in ``transformers/integrations/gguf/`` go through
``GgufHfQuantizer`` instead). That takes ~20 s for SmolLM2-135M here, so :func:`ensure_converted` does it
once and stores a standard Hugging Face folder (``model.safetensors``, ``config.json``,
``generation_config.json``, tokenizer files with the chat template) under :func:`cache_root`; later loads
read that folder through the ordinary ``from_pretrained`` path in a few seconds.

No Qt and no JAX here; torch and transformers are imported inside the functions that need them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import mmap
import os
import re
import shutil
import struct
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from app.core.errors import ModelNotFoundError, UnsupportedModelError

#: Environment variable overriding the cache root (tests point it at a temp dir).
CACHE_ENV = "TORCHAX_PLAYGROUND_CACHE_DIR"
#: Bumped when the folder layout written by :func:`convert` changes, so old conversions are not reused.
CONVERSION_VERSION = 1
SOURCE_FILE = "gguf_source.json"
_FLOAT_TYPES = ("F32", "F16", "BF16")
# GGUF metadata value types (spec, "gguf_metadata_value_type"): fixed-size ones as struct formats.
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
# A quant tag at the end of a file stem ("SmolLM2-135M-Instruct.Q4_1", "llama-7b-q4_k_m", "x.f16").
_QUANT_TAG = re.compile(r"[._-](?:I?Q\d\w*|TQ\d_\d|MXFP4|BF16|F16|F32)$", re.IGNORECASE)
# llama.cpp pre-tokenizers that isolate every digit before the GPT-2 split (src/llama-vocab.cpp,
# LLAMA_VOCAB_PRE_TYPE_SMOLLM and the cases sharing its regex); transformers 5.23 lacks them and falls back
# to plain GPT-2 splitting, which tokenizes whitespace before a digit differently ("a  1").
_DIGIT_ISOLATING_PRE = frozenset({"smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva"})
# GGUF architecture names transformers' legacy loader renames before its support check
# (``load_gguf_checkpoint`` in transformers/modeling_gguf_pytorch_utils.py).
_ARCH_ALIASES = {"qwen2moe": "qwen2_moe", "qwen3moe": "qwen3_moe", "gpt-oss": "gpt_oss", "minimax-m2": "minimax_m2",
                 "t5encoder": "t5"}
_CONVERT_LOCK = threading.Lock()


@dataclass(frozen=True)
class GgufInfo:
    """What the header of one GGUF file says, read without touching tensor data.

    ``tensor_types``: ``((type name, tensor count, element count), ...)``, most elements first;
    ``data_start``: byte offset of the tensor data (the header, metadata and tensor table precede it);
    ``size`` in bytes and ``mtime_ns`` identify the file version on disk.
    """

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
        """Display name: the file stem without its quant tag, or ``general.name`` for a generic stem."""
        stem = file_display_name(self.path)
        if stem.lower() in ("model", "ggml-model") and self.general_name:
            return self.general_name
        return stem

    @property
    def quant(self) -> str:
        """The dominant tensor type by element count (e.g. ``Q4_1``)."""
        return self.tensor_types[0][0] if self.tensor_types else "?"

    def label(self, dtype: str) -> str:
        return f"{self.name} · {self.quant} → {dtype}"


def file_display_name(path: str | Path) -> str:
    """A GGUF file's stem without its quant tag: ``SmolLM2-135M-Instruct.Q4_1.gguf`` → ``SmolLM2-135M-Instruct``."""
    stem = Path(path).stem
    return _QUANT_TAG.sub("", stem) or stem


def read_info(path: str | Path) -> GgufInfo:
    """Parse ``path``'s GGUF header (cached per path, size and mtime).

    Reads the metadata and tensor table directly (GGUF spec above) and skips the vocabulary arrays: about
    0.02 s on SmolLM2's 98 MB file, where ``gguf.GGUFReader`` takes 3-4 s because it decodes every one of
    the 49,152 token strings. Raises :class:`ModelNotFoundError` for a missing or non-GGUF file.
    """
    path = Path(path).absolute()  # not resolved: a HF cache snapshot links to a blob named by its hash
    try:
        stat = path.stat()
    except OSError as exc:
        raise ModelNotFoundError(f"GGUF file {str(path)!r} cannot be read: {exc}.") from exc
    return _read_info_cached(path, stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=32)
def _read_info_cached(path: Path, size: int, mtime_ns: int) -> GgufInfo:
    try:
        metadata, tensors, data_start = _parse_header(path)
    except (OSError, ValueError, struct.error, UnicodeDecodeError) as exc:
        raise ModelNotFoundError(f"{str(path)!r} is not a readable GGUF file ({exc}).") from exc
    import gguf

    counts: dict[str, list[int]] = {}
    for _, shape, type_id in tensors:
        try:
            type_name = gguf.GGMLQuantizationType(type_id).name
        except ValueError:
            type_name = f"type {type_id}"
        entry = counts.setdefault(type_name, [0, 0])
        entry[0] += 1
        entry[1] += _prod(shape)
    types = tuple(sorted(((k, n, e) for k, (n, e) in counts.items()), key=lambda t: -t[2]))
    return GgufInfo(
        path, str(metadata.get("general.architecture", "?")), metadata.get("general.name"),
        metadata.get("tokenizer.ggml.pre"), types, data_start, size, mtime_ns,
    )


def _parse_header(path: Path) -> tuple[dict[str, Any], list[tuple[str, tuple[int, ...], int]], int]:
    """``(metadata without string arrays, [(tensor name, ggml dims, ggml type id)], data offset)``."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        if buf[:4] != b"GGUF":
            raise ValueError("no GGUF magic bytes")
        version, n_tensors, n_kv = struct.unpack_from("<IQQ", buf, 4)
        if version not in (2, 3):
            raise ValueError(f"GGUF version {version} (2 and 3 are read)")
        pos, metadata = 24, {}
        for _ in range(n_kv):
            key, pos = _read_string(buf, pos)
            (value_type,) = struct.unpack_from("<I", buf, pos)
            metadata[key], pos = _read_value(buf, pos + 4, value_type)
        tensors = []
        for _ in range(n_tensors):
            name, pos = _read_string(buf, pos)
            (n_dims,) = struct.unpack_from("<I", buf, pos)
            dims = struct.unpack_from(f"<{n_dims}Q", buf, pos + 4)
            (type_id,) = struct.unpack_from("<I", buf, pos + 4 + 8 * n_dims)
            pos += 4 + 8 * n_dims + 4 + 8  # dims, type, data offset
            tensors.append((name, dims, type_id))
        alignment = int(metadata.get("general.alignment", 32))
        return metadata, tensors, -(-pos // alignment) * alignment


def _read_string(buf: Any, pos: int) -> tuple[str, int]:
    (length,) = struct.unpack_from("<Q", buf, pos)
    return bytes(buf[pos + 8 : pos + 8 + length]).decode("utf-8"), pos + 8 + length


def _read_value(buf: Any, pos: int, value_type: int) -> tuple[Any, int]:
    """One metadata value and the offset after it; an array of strings is returned as its length only."""
    if value_type in _SCALARS:
        fmt = _SCALARS[value_type]
        return struct.unpack_from(fmt, buf, pos)[0], pos + struct.calcsize(fmt)
    if value_type == _STRING:
        return _read_string(buf, pos)
    if value_type != _ARRAY:
        raise ValueError(f"unknown metadata value type {value_type}")
    item_type, count = struct.unpack_from("<IQ", buf, pos)
    pos += 12
    if item_type in _SCALARS:
        fmt = _SCALARS[item_type]
        width = struct.calcsize(fmt)
        values = list(struct.unpack_from(f"<{count}{fmt[1]}", buf, pos)) if count <= 4096 else count
        return values, pos + count * width
    for _ in range(count):  # strings (vocabulary, merges) or nested arrays: walk past them
        if item_type == _STRING:
            pos += 8 + struct.unpack_from("<Q", buf, pos)[0]
        else:
            _, pos = _read_value(buf, pos, item_type)
    return count, pos


def _prod(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def package_file(package: str, filename: str) -> Path | None:
    """``filename`` inside the installed package ``package``, or None. The package is located with
    ``importlib.util.find_spec`` and never imported."""
    found = importlib.util.find_spec(package)
    for location in (found.submodule_search_locations or []) if found is not None else []:
        if (Path(location) / filename).is_file():
            return Path(location) / filename
    return None


def hub_file(repo: str, filename: str, download: bool, reachable: Callable[[], bool]) -> Path | None:
    """A hub repository's file from the local Hugging Face cache (``hf_hub_download(local_files_only=True)``),
    else downloaded when ``download`` and ``reachable()``; None when neither applies. A failed download
    raises huggingface_hub's error (HTTP error, ``OSError``)."""
    from huggingface_hub import hf_hub_download

    try:
        return Path(hf_hub_download(repo, filename, local_files_only=True))
    except (OSError, ValueError):
        if not download or not reachable():
            return None
    return Path(hf_hub_download(repo, filename))


# -- support checks --------------------------------------------------------------------------------------
def supported_architectures() -> set[str]:
    """GGUF ``general.architecture`` values transformers can load: its legacy dequantizing loader's table
    (``GGUF_SUPPORTED_ARCHITECTURES`` in ``transformers/modeling_gguf_pytorch_utils.py``) and the archs of
    its block-keeping path (``GGUF_ARCHS`` in ``transformers/integrations/gguf/gguf_conversion_mapping.py``)."""
    from transformers.integrations.gguf.gguf_conversion_mapping import GGUF_ARCHS
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES

    return (set(GGUF_SUPPORTED_ARCHITECTURES) - {"general", "tokenizer"}) | set(GGUF_ARCHS)


def supported_quant_types(architecture: str) -> set[str]:
    """Tensor types transformers can turn into float tensors for ``architecture``: on the block-keeping
    path the float types plus ``GGML_BLOCK`` (``transformers/integrations/gguf/dequant.py``); on the legacy
    path every type gguf-py's ``gguf.dequantize`` implements (probed with one zero block each)."""
    from transformers.integrations.gguf.gguf_conversion_mapping import GGUF_ARCHS

    if architecture in GGUF_ARCHS:
        import gguf
        from transformers.integrations.gguf.dequant import GGML_BLOCK

        return set(_FLOAT_TYPES) | {gguf.GGMLQuantizationType(t).name for t in GGML_BLOCK}
    return _gguf_py_dequantizable()


@lru_cache(maxsize=1)
def _gguf_py_dequantizable() -> set[str]:
    import gguf
    import numpy as np

    found = set()
    for qtype, (_, type_size) in gguf.GGML_QUANT_SIZES.items():
        try:
            gguf.dequantize(np.zeros((1, type_size), dtype=np.uint8), qtype)
        except NotImplementedError:
            continue
        found.add(qtype.name)
    return found - {"I8", "I16", "I32", "I64", "F64"}


def check_supported(info: GgufInfo) -> None:
    """Refuse a GGUF whose architecture or tensor types transformers cannot load, before any slow work.

    Raises :class:`UnsupportedModelError` naming the architecture or the quant types (with tensor counts).
    """
    import transformers

    archs = supported_architectures()
    if info.architecture not in archs and _ARCH_ALIASES.get(info.architecture) not in archs:
        raise UnsupportedModelError(
            f"{info.name}: GGUF architecture {info.architecture!r} cannot be loaded by transformers "
            f"{transformers.__version__} (it reads {', '.join(sorted(archs))}). Pick a GGUF of one of these, or "
            "the model's Hugging Face folder."
        )
    ok = supported_quant_types(info.architecture)
    bad = [f"{name} ({n} tensors)" for name, n, _ in info.tensor_types if name not in ok]
    if bad:
        raise UnsupportedModelError(
            f"{info.name}: tensors of type {', '.join(bad)} cannot be dequantized for {info.architecture!r} "
            f"(supported: {', '.join(sorted(ok))}). Use a GGUF quantized as Q8_0, Q4_K_M or F16."
        )


# -- conversion cache ------------------------------------------------------------------------------------
def cache_root() -> Path:
    """``$TORCHAX_PLAYGROUND_CACHE_DIR/gguf`` or ``platformdirs.user_cache_dir("torchax-playground")/gguf``
    (``~/.cache/torchax-playground/gguf`` on Linux)."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser() / "gguf"
    import platformdirs

    return Path(platformdirs.user_cache_dir("torchax-playground")) / "gguf"


def cache_key(info: GgufInfo) -> str:
    """Folder name for ``info``'s conversion: ``<name>-<20 hex>``, the hex a sha256 of the file's size,
    mtime and header bytes (metadata and tensor table), the transformers and gguf versions and
    :data:`CONVERSION_VERSION`. Any change to the file or to the converting libraries gives a new key."""
    from importlib.metadata import version

    digest = hashlib.sha256()
    digest.update(f"v{CONVERSION_VERSION}|{version('transformers')}|{version('gguf')}|".encode())
    digest.update(f"{info.size}|{info.mtime_ns}|".encode())
    with open(info.path, "rb") as f:
        digest.update(f.read(info.data_start))
    safe = re.sub(r"[^\w.-]+", "_", info.name)[:60] or "model"
    return f"{safe}-{digest.hexdigest()[:20]}"


def cached_folder(info: GgufInfo) -> Path | None:
    """The finished conversion folder of ``info``, or None. Only complete folders exist under their final
    name (:func:`convert` renames a temp folder into place last)."""
    folder = cache_root() / cache_key(info)
    return folder if (folder / SOURCE_FILE).is_file() else None


def load_gguf_config(info: GgufInfo) -> Any:
    """The model's ``PretrainedConfig``: from the conversion folder if there is one (fast), else parsed from
    the GGUF by transformers (``AutoConfig.from_pretrained(dir, gguf_file=name)``, ~5 s on SmolLM2 because
    it uses ``gguf.GGUFReader``). Raises :class:`UnsupportedModelError` when transformers cannot map it."""
    import transformers

    folder = cached_folder(info)
    try:
        if folder is not None:
            return transformers.AutoConfig.from_pretrained(str(folder))
        return transformers.AutoConfig.from_pretrained(str(info.path.parent), gguf_file=info.path.name)
    except (ValueError, KeyError, NotImplementedError) as exc:
        raise UnsupportedModelError(f"{info.name}: transformers cannot read this GGUF's config: {exc}") from exc


def ensure_converted(
    info: GgufInfo, on_progress: Callable[[str], None] | None = None, config: Any = None
) -> Path:
    """The conversion folder of ``info``, converting first when there is none (see :func:`convert`)."""
    folder = cached_folder(info)
    if folder is not None:
        return folder
    with _CONVERT_LOCK:  # one conversion at a time: the progress hooks are process-global
        return cached_folder(info) or convert(info, on_progress, config)


def convert(info: GgufInfo, on_progress: Callable[[str], None] | None = None, config: Any = None) -> Path:
    """Dequantize ``info``'s GGUF to float32 with transformers and write a Hugging Face folder atomically.

    Everything is written to ``<root>/.tmp-<key>-<pid>-<rand>`` and renamed to ``<root>/<key>`` last, so an
    interrupted conversion never leaves a folder that looks finished; temp folders of dead processes are
    removed on the next conversion. ``config``: the GGUF's config if already parsed (saves ~5 s).
    ``on_progress`` receives ``"dequantizing N/M tensors · 3.2 s"``-style messages. Raises
    :class:`UnsupportedModelError` (transformers cannot convert it) or :class:`ModelNotFoundError` (the
    cache folder cannot be written).
    """
    report = on_progress or (lambda msg: None)
    t0 = time.perf_counter()
    root = cache_root()
    final = root / cache_key(info)
    try:
        root.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(root)
        tmp = root / f".tmp-{final.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
    except OSError as exc:
        raise ModelNotFoundError(_unwritable(root, exc)) from exc
    try:
        model, tokenizer = _dequantize(info, config, report, t0)
        report(f"writing the conversion cache · {time.perf_counter() - t0:.1f} s")
        _write_folder(model, tokenizer, tmp, info, time.perf_counter() - t0)
        del model
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / SOURCE_FILE).is_file():  # not a concurrent conversion that finished first
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ModelNotFoundError(_unwritable(root, exc)) from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    report(f"converted {info.name} in {time.perf_counter() - t0:.1f} s")
    return final


def _unwritable(root: Path, exc: OSError) -> str:
    return (
        f"Could not write the GGUF conversion cache under {root} ({exc}). Free some disk space (a float32 copy "
        f"of the model is stored) or set {CACHE_ENV} to a writable folder."
    )


def _remove_stale_temps(root: Path) -> None:
    """Delete ``.tmp-…-<pid>-…`` folders whose process is gone (a killed conversion)."""
    for tmp in root.glob(".tmp-*"):
        match = re.search(r"-(\d+)-[0-9a-f]{8}$", tmp.name)
        if match is None or _pid_alive(int(match.group(1))):
            continue
        shutil.rmtree(tmp, ignore_errors=True)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists but belongs to someone else
        return True
    return True


@contextmanager
def shared_parsing() -> Iterator[None]:
    """Within this block, transformers' repeated gguf-py parsing of one file is done once. Profiled on
    SmolLM2 here (cold load 31 s → ~15 s):

    - ``gguf.GGUFReader(path)`` runs three times (``AutoConfig``, the config again in ``AutoTokenizer``,
      the tensors in ``load_gguf_checkpoint``, transformers/modeling_gguf_pytorch_utils.py), 3-5 s each: one
      reader per path is shared (a read-only memory map);
    - ``gguf.get_tensor_name_map(arch, n_blocks)`` runs once per submodule in ``get_gguf_hf_weights_map``
      (397 calls, 25 ms each, 10 s): memoized per ``(arch, n_blocks)`` (its result is only read).
    Both are looked up on the ``gguf`` module at call time, so replacing them there for the block suffices."""
    import gguf

    original_reader, original_map = gguf.GGUFReader, gguf.get_tensor_name_map
    readers: dict[str, Any] = {}
    name_maps: dict[tuple[Any, int], Any] = {}

    def reader(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if mode != "r" or args or kwargs:
            return original_reader(path, mode, *args, **kwargs)
        key = str(Path(path).resolve())
        if key not in readers:
            readers[key] = original_reader(path)
        return readers[key]

    def name_map(arch: Any, n_blocks: int) -> Any:
        if (arch, n_blocks) not in name_maps:
            name_maps[arch, n_blocks] = original_map(arch, n_blocks)
        return name_maps[arch, n_blocks]

    gguf.GGUFReader, gguf.get_tensor_name_map = reader, name_map
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = original_reader, original_map
        readers.clear()
        name_maps.clear()


def _dequantize(info: GgufInfo, config: Any, report: Callable[[str], None], t0: float) -> tuple[Any, Any]:
    """``(model, tokenizer)`` loaded from the GGUF by transformers in float32 (the slow part)."""
    import torch
    import transformers

    folder, name = str(info.path.parent), info.path.name
    try:
        if config is None:
            report("reading the GGUF config")
            config = transformers.AutoConfig.from_pretrained(folder, gguf_file=name)
        report(f"reading the GGUF tokenizer · {time.perf_counter() - t0:.1f} s")
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
        _fix_pre_tokenizer(tokenizer, info)
        report(f"reading the GGUF tensors · {time.perf_counter() - t0:.1f} s")
        with _progress_hooks(report, t0):
            model = transformers.AutoModelForCausalLM.from_pretrained(
                folder, gguf_file=name, config=config, dtype=torch.float32
            )
    except (ValueError, KeyError, NotImplementedError, TypeError) as exc:
        raise UnsupportedModelError(f"{info.name}: transformers could not convert this GGUF: {exc}") from exc
    return model.eval(), tokenizer


def _fix_pre_tokenizer(tokenizer: Any, info: GgufInfo) -> None:
    """Give a byte-level tokenizer the digit-isolating split of llama.cpp's ``smollm``-style pre-tokenizers
    when transformers does not know the file's ``tokenizer.ggml.pre`` (its table is
    ``GGUF_PRE_TOKENIZER_SPLITS`` in ``transformers/integrations/gguf/gguf_tokenizer_mapping.py``)."""
    from tokenizers import Regex, pre_tokenizers
    from transformers.integrations.gguf.gguf_tokenizer_mapping import GGUF_PRE_TOKENIZER_SPLITS

    pre = info.tokenizer_pre
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if pre not in _DIGIT_ISOLATING_PRE or pre in GGUF_PRE_TOKENIZER_SPLITS or backend is None:
        return
    if type(backend.pre_tokenizer).__name__ != "ByteLevel":
        return
    backend.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"\p{N}"), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])


@contextmanager
def _progress_hooks(report: Callable[[str], None], t0: float) -> Iterator[None]:
    """Report transformers' GGUF tensor loop (the ``tqdm`` over ``reader.tensors`` in
    ``load_gguf_checkpoint``) as ``dequantizing N/M tensors`` and its weight-loading loop (through the
    public ``transformers.utils.logging.set_tqdm_hook``) as ``loading weights N/M``."""
    import transformers.modeling_gguf_pytorch_utils as gguf_utils
    from transformers.utils import logging as hf_logging

    original = gguf_utils.tqdm
    gguf_utils.tqdm = lambda iterable, *a, **k: _Reporting(original(iterable, *a, **k), "dequantizing", report, t0)
    previous = hf_logging.set_tqdm_hook(
        lambda factory, args, kwargs: _Reporting(factory(*args, **kwargs), "loading weights", report, t0)
    )
    try:
        yield
    finally:
        gguf_utils.tqdm = original
        hf_logging.set_tqdm_hook(previous)


class _Reporting:
    """Wraps a tqdm bar: iterating it reports ``"<what> N/M … · s"`` at most every 0.25 s and at the end."""

    def __init__(self, bar: Any, what: str, report: Callable[[str], None], t0: float) -> None:
        self._bar, self._what, self._report, self._t0 = bar, what, report, t0

    def __iter__(self) -> Iterator[Any]:
        total = getattr(self._bar, "total", None)
        noun = " tensors" if self._what == "dequantizing" else ""
        last = 0.0
        for i, item in enumerate(self._bar, 1):
            now = time.perf_counter()
            if i == 1 or i == total or now - last >= 0.25:
                last = now
                self._report(f"{self._what} {i}/{total or '?'}{noun} · {now - self._t0:.1f} s")
            yield item

    def __getattr__(self, name: str) -> Any:
        return getattr(self._bar, name)

    def __enter__(self) -> _Reporting:
        self._bar.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._bar.__exit__(*exc)


def _write_folder(model: Any, tokenizer: Any, dest: Path, info: GgufInfo, seconds: float) -> None:
    """Weights (``safetensors.torch.save_file``: ``save_pretrained`` refuses a GGUF-loaded model), config
    without its GGUF ``quantization_config``, generation config, tokenizer and a ``gguf_source.json``."""
    import copy

    import transformers
    from safetensors.torch import save_file

    tied = bool(getattr(model.config.get_text_config(decoder=True), "tie_word_embeddings", False))
    tensors, storages = {}, set()
    for key, value in model.state_dict().items():
        ptr = value.untyped_storage().data_ptr()
        if ptr in storages:
            if tied:  # lm_head.weight is the embedding matrix; from_pretrained ties it again
                continue
            value = value.clone()
        storages.add(ptr)
        tensors[key] = value.detach().contiguous()
    save_file(tensors, str(dest / "model.safetensors"), metadata={"format": "pt"})
    config = copy.deepcopy(model.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.save_pretrained(dest)
    model.generation_config.save_pretrained(dest)
    tokenizer.save_pretrained(dest)
    source = {
        "gguf": str(info.path), "size": info.size, "mtime_ns": info.mtime_ns, "architecture": info.architecture,
        "quant": info.quant, "tensor_types": info.tensor_types, "transformers": transformers.__version__,
        "conversion_version": CONVERSION_VERSION, "seconds": round(seconds, 2),
    }
    (dest / SOURCE_FILE).write_text(json.dumps(source, indent=1))
