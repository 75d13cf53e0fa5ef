"""Record XLA's pass pipeline for one jax ``Lowered``: compile it again with the pass dumps on, under a
profiler session, and read back every snapshot, pass time and backend phase (:mod:`app.core.passes.parse`).

In process (the default): ``lowered.compile(compiler_options={"xla_dump_to": d, **DUMP_OPTIONS})`` (per-compile debug options, ``jax/_src/stages.py``). The dump flags
are left out of the persistent compilation cache key (``jax/_src/cache_key.py``), so a cache hit would dump
nothing: the persistent cache is turned off around the compile and back on after it; the in-memory
executable cache never hits (its key holds the fresh dump directory).

With ``fusion_log=True`` the compile runs in a child process instead (:mod:`app.core.passes._child`), from
``lowered.as_text(debug_info=True)``, because XLA reads ``TF_CPP_VMODULE`` once, when jaxlib loads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.core.backends import BACKENDS, CPU, BackendFacts
from app.core.errors import PlaygroundError
from app.core.passes.fusion_log import parse_fusion_log
from app.core.passes.model import PassPipeline

#: Dump options passed to ``Lowered.compile(compiler_options=…)`` (XLA ``DebugOptions`` fields).
DUMP_OPTIONS = dict(CPU.dump_options)
#: Environment of the child that logs fusion decisions (tsl logging: ``tsl/platform/default/logging.cc``).
FUSION_LOG_ENV = {"TF_CPP_MIN_LOG_LEVEL": "0", "TF_CPP_VMODULE": "cpu_instruction_fusion=2,instruction_fusion=2"}
CHILD_TIMEOUT_S = 300.0


class RecordingError(PlaygroundError):
    """A pipeline could not be recorded: a profiler session already running, no dumps written, a child
    process that failed or timed out, or a step that is not an XLA ``Lowered``."""


class RecordingStopped(RecordingError):
    """``should_stop()`` returned True: the recording was abandoned (a child process is killed; an
    in-process compile cannot be interrupted and is only stopped before or after it)."""


def record_pipeline(lowered: Any, *, fusion_log: bool = False, should_stop: Callable[[], bool] | None = None,
                    timeout_s: float = CHILD_TIMEOUT_S, keep_dir: str | os.PathLike | None = None,
                    compiler_options: dict[str, Any] | None = None, kernel_ir: bool = False,
                    on_progress: Callable[[str], None] | None = None) -> PassPipeline:
    """Compile ``lowered`` (a ``jax.stages.Lowered``) again with XLA's pass dumps and a profiler session and
    return its :class:`~app.core.passes.model.PassPipeline`.

    ``fusion_log``: compile in a child process with XLA's fusion log on and parse its decisions (slower:
    the child imports JAX, ~2 s). ``should_stop``: polled before and after the compile (and every 0.1 s
    while a child runs); when it returns True, :class:`RecordingStopped` is raised. ``timeout_s``: the
    child's limit. ``keep_dir``: write the dumps and the capture there instead of a temporary directory
    (deleted on return). ``compiler_options``: further XLA ``DebugOptions`` for this compile (``{"xla_cpu_…":
    value}``, see :func:`app.core.passes.compare.parse_xla_flags`), kept on the result as
    ``PassPipeline.compiler_options``. ``kernel_ir``: also dump each fusion kernel's LLVM IR
    (:data:`app.core.backends.CPU` ``.kernel_ir_options``: off by default since jax 0.12, whose XLA:CPU aborted
    the process while dumping a Llama step's kernels). ``on_progress``: called with a line at each stage (the
    compile with dumps, reading the dump files, reading the profiler capture), from the recording's thread. The
    compiled executable is dropped; the caller's own executable is untouched.
    Raises :class:`RecordingError` (see there)."""
    stop = should_stop or (lambda: False)
    progress = on_progress or (lambda message: None)
    if not hasattr(lowered, "compile") or not hasattr(lowered, "as_text"):
        raise RecordingError(f"Cannot record XLA's passes of a {type(lowered).__name__}: it is not a jax Lowered "
                             "(torch-compile steps are compiled by Inductor, not XLA).")
    if stop():
        raise RecordingStopped("Pipeline recording stopped before the compile.")
    with tempfile.TemporaryDirectory(prefix="xla-passes-") as tmp:
        work = Path(keep_dir) if keep_dir is not None else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        extra = dict(compiler_options or {})
        row = CPU if fusion_log else _default_backend()
        dump_extra = {**extra, **(dict(row.kernel_ir_options) if kernel_ir else {})}
        if fusion_log:
            progress("compiling in a child process with XLA's pass dumps and fusion log")
            compile_ms, log_text = _compile_in_child(lowered, work, stop, timeout_s, dump_extra)
        else:
            progress("compiling with XLA's pass dumps under the profiler")
            compile_ms, log_text = _compile_here(lowered, work, dump_extra, user_options=bool(extra)), None
        if stop():
            raise RecordingStopped("Pipeline recording stopped after the compile.")
        dump = work / "dump"
        n_files = sum(1 for _ in dump.iterdir()) if dump.is_dir() else 0
        progress(f"compiled in {compile_ms / 1000:.1f} s; reading {n_files:,} dump files and the profiler capture")
        pipeline = _read(work, compile_ms, log_text)
        pipeline.compiler_options = extra
        # since jax 0.11 the profiler records a pass that xla_disable_hlo_passes skipped as a ~1 µs event (its
        # real runs took 16 µs+ on a small MLP): XLA did not run it, so it is no pass time
        disabled = {name.strip() for name in str(extra.get("xla_disable_hlo_passes", "")).split(",") if name.strip()}
        pipeline.pass_times = [t for t in pipeline.pass_times if t.pass_name not in disabled]
        return pipeline


def _default_backend() -> BackendFacts:
    """The row of JAX's default backend (``jax.default_backend()``; CPU for a platform without a row)."""
    import jax

    return BACKENDS.get(jax.default_backend(), CPU)


def _read(work: Path, compile_ms: float, log_text: str | None) -> PassPipeline:
    """The recording in ``work`` (``dump/`` and ``profile/``), its backend told from the dump files' names
    (:func:`app.core.passes.dumps.build_pipeline`)."""
    from app.core.passes.dumps import build_pipeline, find_capture

    capture = find_capture(work / "profile")
    if capture is None:
        raise RecordingError(f"No pass times: no .xplane.pb under {work / 'profile'}: the profiler wrote no capture.")
    try:
        pipeline = build_pipeline(work / "dump", capture, compile_ms)
    except ValueError as exc:
        raise RecordingError(f"No pass times: {exc}") from exc
    decisions, n_lines = parse_fusion_log(log_text) if log_text is not None else ([], 0)
    pipeline.fusion_log, pipeline.log_lines, pipeline.in_child = decisions, n_lines, log_text is not None
    return pipeline


def _compile_here(lowered: Any, work: Path, extra: dict[str, Any], user_options: bool) -> float:
    import jax

    from app.core.compile_cache.xla import persistent_cache_dir, set_persistent_cache

    options = {**extra, "xla_dump_to": str(work / "dump"), **DUMP_OPTIONS}
    cache_dir = persistent_cache_dir()
    try:
        jax.profiler.start_trace(str(work / "profile"))
    except RuntimeError as exc:  # "Profile has already been started"
        raise RecordingError(f"A profiler session is already running ({exc}); record the passes after it.") from exc
    try:
        if cache_dir is not None:
            set_persistent_cache(None)
        t0 = time.perf_counter()
        try:
            lowered.compile(compiler_options=options)
        except Exception as exc:
            if not user_options:
                raise
            raise RecordingError(f"XLA refused the compile with {extra}: {exc}") from exc
        return (time.perf_counter() - t0) * 1000
    finally:
        jax.profiler.stop_trace()
        if cache_dir is not None:
            set_persistent_cache(cache_dir)


def _compile_in_child(lowered: Any, work: Path, stop: Callable[[], bool], timeout_s: float,
                      extra: dict[str, Any]) -> tuple[float, str]:
    text = lowered.as_text(debug_info=True)
    if "mhlo.num_partitions = 1" not in text and "mhlo.num_partitions" in text:
        raise RecordingError("The fusion log is recorded for one device only: this step runs on a device mesh.")
    module_path = work / "module.mlir"
    module_path.write_text(text, encoding="utf-8")
    log_path = work / "xla.log"
    env = {**os.environ, **FUSION_LOG_ENV, "JAX_PLATFORMS": "cpu"}
    env.pop("XLA_FLAGS", None) if "xla_dump" in env.get("XLA_FLAGS", "") else None
    # -m with the checkout's root first on the path: the child imports app.core.jax_private from this tree
    root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    with open(log_path, "w", encoding="utf-8") as log:
        (work / "options.json").write_text(json.dumps(extra), encoding="utf-8")
        proc = subprocess.Popen([sys.executable, "-m", "app.core.passes._child", str(module_path), str(work)], stdout=log,
                                stderr=subprocess.STDOUT, env=env)
        t0 = time.monotonic()
        try:
            while proc.poll() is None:
                if stop():
                    raise RecordingStopped("Pipeline recording stopped: the compiling child process was ended.")
                if time.monotonic() - t0 > timeout_s:
                    raise RecordingError(f"The compiling child process took over {timeout_s:.0f} s and was ended.")
                time.sleep(0.1)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    log_text = log_path.read_text("utf-8", "replace")
    if proc.returncode != 0:
        tail = "\n".join(log_text.strip().splitlines()[-3:])
        raise RecordingError(f"The compiling child process failed (exit {proc.returncode}): {tail}")
    compile_ms = json.loads((work / "result.json").read_text())["compile_ms"]
    return compile_ms, log_text
