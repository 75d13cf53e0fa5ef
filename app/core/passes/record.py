"""Record XLA's pass pipeline for one jax ``Lowered``: compile it again with the pass dumps on, under a
profiler session, and read back every snapshot, pass time and backend phase (:mod:`app.core.passes.parse`).

In process (the default): ``lowered.compile(compiler_options={"xla_dump_to": d, **DUMP_OPTIONS})`` (per-compile debug options, ``jax/_src/stages.py``). The dump flags
are left out of the persistent compilation cache key (``jax/_src/cache_key.py``), so a cache hit would dump
nothing: the persistent cache is turned off around the compile and back on after it; the in-memory
executable cache never hits (its key holds the fresh dump directory).

In a child process (:mod:`app.core.passes._child`, from ``lowered.as_text(debug_info=True)``, one CPU device):

- with ``fusion_log=True``, because XLA reads ``TF_CPP_VMODULE`` once, when jaxlib loads;
- whenever the compile dumps the kernels' IR (``kernel_ir=True`` on a backend row with ``kernel_ir_options``):
  jax 0.12.0.1's XLA:CPU aborts the whole process while dumping it ("pure virtual method called", "double
  free or corruption": ``tools/repro_kernel_ir_abort.py``), so such a compile never runs in the caller's
  process. When that child dies, the recording is compiled again without the kernel-IR options (in process,
  or in a child with the fusion log) and ``PassPipeline.kernel_ir`` holds a one-line note saying what was lost.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.core import children
from app.core.backends import BACKENDS, CPU, BackendFacts
from app.core.compile_cache.xla import persistent_cache_dir, set_persistent_cache
from app.core.errors import PlaygroundError
from app.core.passes.dumps import build_pipeline, find_capture
from app.core.passes.fusion_log import parse_fusion_log
from app.core.passes.model import KERNEL_IR_DUMPED, KERNEL_IR_NOT_REQUESTED, PassPipeline

#: Dump options passed to ``Lowered.compile(compiler_options=…)`` (XLA ``DebugOptions`` fields).
DUMP_OPTIONS = dict(CPU.dump_options)
#: Environment of the child that logs fusion decisions (tsl logging: ``tsl/platform/default/logging.cc``).
FUSION_LOG_ENV = {"TF_CPP_MIN_LOG_LEVEL": "0",
                  "TF_CPP_VMODULE": ",".join(f"{module}=2" for module in CPU.fusion_log_modules)}
CHILD_TIMEOUT_S = 300.0
#: Children that compile with kernel-IR dumps before the recording goes on without kernel IR (each failed try
#: costs ~0.7 s on a small MLP here).
KERNEL_IR_TRIES = 2


class RecordingError(PlaygroundError):
    """A pipeline could not be recorded: a profiler session already running, no dumps written, a child
    process that failed or timed out, or a step that is not an XLA ``Lowered``."""


class ChildCompileFailed(RecordingError):
    """The compiling child process ended with a non-zero exit status (``returncode``: negative for a signal,
    ``-6`` for an abort); ``line``: its stderr's line that names the failure (:func:`failure_line`)."""

    def __init__(self, message: str, returncode: int, line: str) -> None:
        super().__init__(message)
        self.returncode, self.line = returncode, line


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
    (:data:`app.core.backends.CPU` ``.kernel_ir_options``), always in a child process: jax 0.12's XLA:CPU aborts
    the process that dumps it, at random (``tools/repro_kernel_ir_abort.py``). When that child fails (any
    non-zero exit: an abort, a crash, an exception) the step is compiled again without the kernel IR and
    ``PassPipeline.kernel_ir`` says so in one line; a step on a device mesh is recorded without kernel IR (the
    child compiles for one device) and says so too. ``on_progress``: called with a line at each stage (the
    compile with dumps, reading the dump files, reading the profiler capture), from the recording's thread. The
    compiled executable is dropped; the caller's own executable is untouched.
    Raises :class:`RecordingError` (see there); a child that runs past ``timeout_s`` is ended and raises it
    too (no second compile: the wait would double)."""
    stop = should_stop or (lambda: False)
    progress = on_progress or (lambda message: None)
    _check_recordable(lowered, stop)
    with tempfile.TemporaryDirectory(prefix="xla-passes-") as tmp:
        work = Path(keep_dir) if keep_dir is not None else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        extra = dict(compiler_options or {})
        text, ir_options, status = _plan_kernel_ir(lowered, fusion_log, kernel_ir)
        compiled: tuple[float, str | None] | None = None
        if ir_options:  # a compile that dumps kernel IR never runs in this process (XLA:CPU may abort it)
            compiled, status = _kernel_ir_in_child(text, work, stop, timeout_s, {**extra, **ir_options},
                                                   fusion_log, progress, status)
        if compiled is None:
            compiled = _compile_without_kernel_ir(lowered, text, work, stop, timeout_s, extra, fusion_log, progress)
        if stop():
            raise RecordingStopped("Pipeline recording stopped after the compile.")
        return _finish(work, compiled[0], compiled[1] if fusion_log else None, extra, status, progress)


def _check_recordable(lowered: Any, stop: Callable[[], bool]) -> None:
    """Raise :class:`RecordingError` when ``lowered`` is no jax ``Lowered``, :class:`RecordingStopped` when
    ``stop()`` already says so."""
    if not hasattr(lowered, "compile") or not hasattr(lowered, "as_text"):
        raise RecordingError(f"Cannot record XLA's passes of a {type(lowered).__name__}: it is not a jax Lowered "
                             "(torch-compile steps are compiled by Inductor, not XLA).")
    if stop():
        raise RecordingStopped("Pipeline recording stopped before the compile.")


def _plan_kernel_ir(lowered: Any, fusion_log: bool, kernel_ir: bool) -> tuple[str, dict[str, Any], str]:
    """``(StableHLO text for a child process or "", kernel-IR dump options or {}, PassPipeline.kernel_ir
    status)`` of a recording: the options of the backend's row when ``kernel_ir`` is asked for, none (and a
    note saying why) for a step on a device mesh."""
    row = CPU if fusion_log else _default_backend()
    ir_options = dict(row.kernel_ir_options) if kernel_ir else {}
    # a row without kernel-IR options (XLA:GPU, whose report counts its .ptx files itself) does not say
    status = KERNEL_IR_NOT_REQUESTED if not kernel_ir else KERNEL_IR_DUMPED if ir_options else ""
    text = lowered.as_text(debug_info=True) if (ir_options or fusion_log) else ""
    partitions = _num_partitions(text)
    if ir_options and partitions > 1:
        ir_options, status = {}, (f"kernel IR not dumped: this step runs on a device mesh ({partitions} "
                                  "partitions) and kernel IR is compiled in a one-device child process; "
                                  "the pass pipeline is shown without kernel IR")
    return text, ir_options, status


def _compile_without_kernel_ir(lowered: Any, text: str, work: Path, stop: Callable[[], bool], timeout_s: float,
                               extra: dict[str, Any], fusion_log: bool,
                               progress: Callable[[str], None]) -> tuple[float, str | None]:
    """``(compile_ms, the child's log or None)`` of the compile with the pass dumps: in a child process with
    ``fusion_log``, else here under the profiler."""
    if fusion_log:
        progress("compiling in a child process with XLA's pass dumps and fusion log")
        return _compile_in_child_process(text, work, stop, timeout_s, extra, True)
    progress("compiling with XLA's pass dumps under the profiler")
    return _compile_here(lowered, work, extra, user_options=bool(extra)), None


def _finish(work: Path, compile_ms: float, log_text: str | None, extra: dict[str, Any], status: str,
            progress: Callable[[str], None]) -> PassPipeline:
    """Read the recording in ``work`` back (:func:`_read`) with its options and kernel-IR status, leaving out
    the pass times of the passes that ``xla_disable_hlo_passes`` skipped."""
    dump = work / "dump"
    n_files = sum(1 for _ in dump.iterdir()) if dump.is_dir() else 0
    progress(f"compiled in {compile_ms / 1000:.1f} s; reading {n_files:,} dump files and the profiler capture")
    pipeline = _read(work, compile_ms, log_text)
    pipeline.compiler_options = extra
    pipeline.kernel_ir = status
    # since jax 0.11 the profiler records a pass that xla_disable_hlo_passes skipped as a ~1 µs event (its
    # real runs took 16 µs+ on a small MLP): XLA did not run it, so it is no pass time
    disabled = {name.strip() for name in str(extra.get("xla_disable_hlo_passes", "")).split(",") if name.strip()}
    pipeline.pass_times = [t for t in pipeline.pass_times if t.pass_name not in disabled]
    return pipeline


def kernel_ir_lost_note(returncode: int, line: str) -> str:
    """The one-line :attr:`PassPipeline.kernel_ir` note of a kernel-IR child that ended with ``returncode``,
    ``line`` its stderr's line naming the failure: what happened, the jax / jaxlib version and what is lost."""
    import jax
    import jaxlib

    # jaxlib.__version__ is public; jaxlib/__init__.py imports it from .version without re-exporting it
    jaxlib_version = jaxlib.__version__  # pyright: ignore[reportPrivateImportUsage]
    versions = (f"jax {jax.__version__}" if jax.__version__ == jaxlib_version
                else f"jax {jax.__version__}, jaxlib {jaxlib_version}")
    detail = f"{versions}, exit {returncode}" + (f": {line}" if line else "")
    if returncode in (-signal.SIGABRT, 128 + signal.SIGABRT):
        what = "XLA:CPU aborted while dumping kernel IR"
    elif returncode == -signal.SIGKILL:
        what = "The child process compiling kernel IR was killed (SIGKILL: out of memory?)"
    elif returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        what = f"XLA:CPU crashed ({name}) while dumping kernel IR"
    else:
        what = "The compile that dumps kernel IR failed in its child process"
    return f"{what} ({detail}); the pass pipeline is shown without kernel IR"


#: Lines of a child's stderr that name a native crash (glibc, the C++ runtime, XLA's CHECKs, Python's own).
_CRASH_MARKERS = ("pure virtual", "terminate called", "double free", "corrupt", "free():", "malloc",
                  "Segmentation fault", "Check failed", "Fatal Python error", "Aborted")
#: Lines that never say what failed: a traceback's frames and carets, XLA's info / warning log lines.
_NOISE = re.compile(r"^(File \"|Traceback |\^+$|~+|[IW]\d{4} |Current thread|Thread 0x|Extension modules:)")


def failure_line(log_text: str, limit: int = 160) -> str:
    """The stderr line of a failed child that says what failed: the first line naming a native crash, else
    the last line that is not a traceback frame or an info log line (cut to ``limit`` characters)."""
    lines = [ln.strip() for ln in log_text.splitlines() if ln.strip()]
    line = next((ln for ln in lines if any(m in ln for m in _CRASH_MARKERS)), None)
    if line is None:
        line = next((ln for ln in reversed(lines) if not _NOISE.match(ln)), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _num_partitions(text: str) -> int:
    """``mhlo.num_partitions`` of a StableHLO module's text (1 when it does not say)."""
    m = re.search(r"mhlo\.num_partitions = (\d+)", text)
    return int(m.group(1)) if m else 1


def _clear_attempt(work: Path) -> None:
    """Remove what a failed child wrote into ``work`` (its dumps, capture and result), keeping its log as
    ``kernel-ir-child.log`` (seen with ``keep_dir``)."""
    for name in ("dump", "profile"):
        shutil.rmtree(work / name, ignore_errors=True)
    for name in ("result.json", "final.txt"):
        (work / name).unlink(missing_ok=True)
    if (work / "xla.log").exists():
        (work / "xla.log").replace(work / "kernel-ir-child.log")


def _default_backend() -> BackendFacts:
    """The row of JAX's default backend (``jax.default_backend()``; CPU for a platform without a row)."""
    import jax

    return BACKENDS.get(jax.default_backend(), CPU)


def _read(work: Path, compile_ms: float, log_text: str | None) -> PassPipeline:
    """The recording in ``work`` (``dump/`` and ``profile/``), its backend told from the dump files' names
    (:func:`app.core.passes.dumps.build_pipeline`)."""
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


def _kernel_ir_in_child(text: str, work: Path, stop: Callable[[], bool], timeout_s: float, options: dict[str, Any],
                        fusion_log: bool, progress: Callable[[str], None],
                        status: str) -> tuple[tuple[float, str | None] | None, str]:
    """Compile with the kernel-IR dump options in a child process, up to :data:`KERNEL_IR_TRIES` times (XLA:CPU
    aborts at random while dumping: ``tools/repro_kernel_ir_abort.py`` saw 12 of 20 runs die). Returns
    ``(compile_ms, log) or None, status``: None with the lost-kernel-IR note when every try died (the caller
    then compiles without kernel IR)."""
    dumped = status
    for attempt in range(1, KERNEL_IR_TRIES + 1):
        progress("compiling with XLA's pass dumps and kernel IR" + (" and fusion log" if fusion_log else "")
                 + " in a child process" + (f" (try {attempt} of {KERNEL_IR_TRIES})" if attempt > 1 else ""))
        try:
            return _compile_in_child_process(text, work, stop, timeout_s, options, fusion_log), dumped
        except ChildCompileFailed as exc:  # try again, then compile without kernel IR, and say so
            status = kernel_ir_lost_note(exc.returncode, exc.line)
            if attempt == KERNEL_IR_TRIES and KERNEL_IR_TRIES > 1:
                status = status.replace("; the pass pipeline", f" ({KERNEL_IR_TRIES} tries); the pass pipeline", 1)
            progress(status)
            _clear_attempt(work)
    return None, status


def _child_command(module_path: Path, work: Path) -> list[str]:
    """The command line of the compiling child process (tests replace it with one that aborts)."""
    return [sys.executable, "-m", "app.core.passes._child", str(module_path), str(work)]


def _compile_in_child_process(text: str, work: Path, stop: Callable[[], bool], timeout_s: float,
                              extra: dict[str, Any], fusion_log: bool) -> tuple[float, str]:
    """Compile the StableHLO ``text`` (``Lowered.as_text(debug_info=True)``) with the pass dumps and ``extra``
    options in a child process (:mod:`app.core.passes._child`) writing into ``work``; with ``fusion_log`` its
    environment turns XLA's fusion log on. Returns ``(compile_ms, the child's stdout and stderr)``. Polls
    ``stop`` every 0.1 s (:class:`RecordingStopped`, the child killed); past ``timeout_s`` the child is killed
    and :class:`RecordingError` raised; a non-zero exit raises :class:`ChildCompileFailed`."""
    if fusion_log and _num_partitions(text) > 1:
        raise RecordingError("The fusion log is recorded for one device only: this step runs on a device mesh.")
    module_path = work / "module.mlir"
    module_path.write_text(text, encoding="utf-8")
    log_path = work / "xla.log"
    env = {**os.environ, **(FUSION_LOG_ENV if fusion_log else {}), "JAX_PLATFORMS": CPU.platform}
    env.pop("XLA_FLAGS", None) if "xla_dump" in env.get("XLA_FLAGS", "") else None
    # -m with the checkout's root first on the path: the child imports app.core.jax_private from this tree
    root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    with open(log_path, "w", encoding="utf-8") as log:
        (work / "options.json").write_text(json.dumps(extra), encoding="utf-8")
        # remembered so that quitting the app ends it too (the window's process ends with os._exit)
        proc = children.started(subprocess.Popen(_child_command(module_path, work), stdout=log,
                                                 stderr=subprocess.STDOUT, env=env))
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
            children.ended(proc)
    log_text = log_path.read_text("utf-8", "replace")
    if proc.returncode != 0:
        tail = "\n".join(log_text.strip().splitlines()[-3:])
        raise ChildCompileFailed(f"The compiling child process failed (exit {proc.returncode}): {tail}",
                                 proc.returncode, failure_line(log_text))
    compile_ms = json.loads((work / "result.json").read_text())["compile_ms"]
    return compile_ms, log_text
