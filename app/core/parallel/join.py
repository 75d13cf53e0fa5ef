"""Joining the processes of a run across hosts: ``jax.distributed.initialize()`` with a timeout the user sets, one
clear line (and an exit) when a peer never arrives, and a watchdog that ends every process when one of them fails.

JAX's own behaviour, measured on jax 0.12: a peer that never registers makes ``initialize`` abort the process from
C++ (``F… client.h:86] Terminating process because the JAX distributed service detected fatal errors … Deadline
Exceeded``) after ``initialization_timeout``; a process that fails after joining waits in JAX's shutdown barrier
(``shutdown_timeout_seconds``) while the others wait for it in their next collective. Here:

- :func:`check_join` refuses impossible arguments (``--process-id`` out of range) before anything starts;
- :func:`join` starts a timer of ``timeout_s`` that prints one line and exits (status 2) while ``initialize`` is
  still waiting (JAX's own deadline is set later than ours, so it never fires first);
- :func:`announce_failure` writes a failing process's error into the coordination service's key-value store,
  where the other processes' watchdog (:class:`_Watchdog`, polling it) finds it, prints one line naming the
  process and exits; the failing process then exits without JAX's shutdown barrier (:func:`exit_now`).

The key-value store is the coordination service every joined process already talks to (the one
``jax.experimental.multihost_utils`` uses); nothing else is opened.
"""

from __future__ import annotations

import atexit
import os
import sys
import tempfile
import threading
from dataclasses import dataclass
from typing import TextIO

from app.core.errors import InvalidSettingsError
from app.core.jax_private import distributed_client

#: Seconds every process waits for the others to join (``--distributed-timeout``'s default).
DEFAULT_TIMEOUT_S = 120.0
#: Where a failing process leaves its error for the others (one key per process id).
_FAILED = "torchax-playground/failed/"
#: Seconds between two reads of the failures by the watchdog.
_POLL_S = 0.25
#: Seconds JAX's own deadlines are set beyond ours: its connect aborts the process from C++ without a message.
_JAX_GRACE_S = 30


@dataclass(frozen=True)
class Joined:
    """This process in a joined run: ``index`` of ``count`` processes, the coordinator's address (None when JAX
    found it itself: Cloud TPU, Slurm, Open MPI), and this process's devices (``cpu:2048``)."""

    index: int
    count: int
    coordinator: str | None
    local_devices: tuple[str, ...]

    def follow_line(self) -> str:
        """The one line a process other than 0 prints in text mode."""
        where = f" via {self.coordinator}" if self.coordinator else ""
        return (f"process {self.index} of {self.count} ({', '.join(self.local_devices)}) joined{where}: it runs "
                "every step with process 0, which prints the run (--json: every process writes its own)")


def check_join(coordinator: str | None, num_processes: int | None, process_id: int | None,
               timeout_s: float) -> None:
    """Refuse what cannot join, before anything starts: a process id outside ``0 … num_processes-1``, fewer than
    one process, a coordinator without a port, a timeout that is not positive. Raises
    :class:`InvalidSettingsError`."""
    if timeout_s <= 0:
        raise InvalidSettingsError(f"--distributed-timeout must be positive seconds; got {timeout_s:g}.")
    if num_processes is not None and num_processes < 1:
        raise InvalidSettingsError(f"--num-processes must be at least 1; got {num_processes}.")
    if process_id is not None and (process_id < 0 or (num_processes is not None and process_id >= num_processes)):
        top = f"0 … {num_processes - 1}" if num_processes else "0 or more"
        raise InvalidSettingsError(
            f"--process-id {process_id} is out of range: with --num-processes {num_processes} the ids are {top} "
            "(0 is the coordinator's host)."
        )
    if coordinator is not None and not coordinator.rpartition(":")[2].isdigit():
        raise InvalidSettingsError(f"--coordinator {coordinator!r}: give HOST:PORT (process 0's host and a free port).")


def join(coordinator: str | None, num_processes: int | None, process_id: int | None, timeout_s: float,
         err: TextIO | None = None) -> Joined:
    """``jax.distributed.initialize(coordinator, num_processes, process_id)`` (None: detected by JAX) with Gloo for
    the CPU's collectives; if not every process has joined within ``timeout_s`` seconds, print one line on
    ``err`` and exit with status 2. Then start the failure watchdog (:func:`announce_failure`). Call before any
    other JAX work."""
    import jax

    check_join(coordinator, num_processes, process_id, timeout_s)
    stream: TextIO = err if err is not None else sys.stderr
    if jax.config.jax_cpu_collectives_implementation in (None, "", "none"):  # collectives between CPU processes
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    where = coordinator or "the coordinator JAX detected"

    def give_up() -> None:
        exit_now(2, f"error: not every process joined at {where} within {timeout_s:g} s (this is process "
                    f"{'?' if process_id is None else process_id} of {num_processes or '?'}): start the same "
                    "command on every host, each with its own --process-id, or raise --distributed-timeout.", stream)

    timer = threading.Timer(timeout_s, give_up)
    timer.daemon = True
    timer.start()
    seconds = int(timeout_s) + _JAX_GRACE_S
    try:
        jax.distributed.initialize(coordinator, num_processes, process_id, initialization_timeout=seconds,
                                   heartbeat_timeout_seconds=seconds, shutdown_timeout_seconds=seconds)
    except ValueError as exc:  # arguments JAX could not find: no cluster detected, or some left out
        raise InvalidSettingsError(
            f"jax.distributed.initialize: {exc} JAX finds them itself on Cloud TPU, Slurm and Open MPI only; "
            "elsewhere give --coordinator HOST:PORT --num-processes N --process-id I."
        ) from None
    finally:
        timer.cancel()
    joined = Joined(jax.process_index(), jax.process_count(), coordinator,
                    tuple(f"{d.platform}:{d.id}" for d in jax.local_devices()))
    _Watchdog(joined, stream).start()
    _first_collective()
    return joined


def _first_collective() -> None:
    """One tiny collective over every device now (``multihost_utils.sync_global_devices``): the processes' CPU
    collectives connect here, not in the first step, and Gloo's ``[Gloo] Rank 0 is connected to 1 peer ranks``,
    which its C++ writes on file descriptor 1, is kept out of stdout (``--json`` lines stay parseable)."""
    from jax.experimental import multihost_utils

    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # stdout is not a file (a test's buffer): nothing to keep clean
        fd = None
    if fd is None:
        multihost_utils.sync_global_devices("torchax-playground: joined")
        return
    sys.stdout.flush()
    saved = os.dup(fd)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), fd)
        try:
            multihost_utils.sync_global_devices("torchax-playground: joined")
        finally:
            os.dup2(saved, fd)
            os.close(saved)


def _client():
    """The coordination service's client of this process (None before :func:`join`)."""
    return distributed_client()


def announce_failure(message: str) -> None:
    """Leave this process's error where the other processes' watchdog finds it (they print it and exit). Does
    nothing before :func:`join`; never raises (the process is failing already)."""
    import jax

    client = _client()
    if client is None:
        return
    try:
        client.key_value_set(f"{_FAILED}{jax.process_index()}", message)
    except Exception:  # noqa: BLE001 - the service may be gone too
        pass


def exit_now(status: int, line: str | None = None, err: TextIO | None = None) -> None:
    """Print ``line`` on ``err`` and end the process with ``status`` now, without JAX's shutdown barrier (which
    would wait ``shutdown_timeout_seconds`` for peers that have stopped)."""
    if line:
        print(line, file=err if err is not None else sys.stderr, flush=True)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed stream
            pass
    os._exit(status)


class _Watchdog:
    """Polls the failures of the other processes (:func:`announce_failure`) on a daemon thread; on one, prints
    ``error: process K of N failed: …`` and exits with status 2. Stopped at exit before JAX shuts its client
    down (``atexit`` runs handlers last registered first, and JAX registered its own at ``initialize``)."""

    def __init__(self, joined: Joined, err: TextIO) -> None:
        self.joined = joined
        self.err = err
        self.stop = threading.Event()

    def start(self) -> None:
        atexit.register(self.stop.set)
        threading.Thread(target=self._run, name="distributed-watchdog", daemon=True).start()

    def _run(self) -> None:
        client = _client()
        while client is not None and not self.stop.wait(_POLL_S):
            try:
                found = client.key_value_dir_get(_FAILED)
            except Exception:  # noqa: BLE001 - the service is shutting down
                return
            for key, message in found:
                index = key.rpartition("/")[2]
                if index != str(self.joined.index) and not self.stop.is_set():
                    text = message.removeprefix("error: ")
                    exit_now(2, f"error: process {index} of {self.joined.count} failed, so this one stops: {text}",
                             self.err)
