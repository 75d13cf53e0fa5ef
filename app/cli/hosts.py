"""The command line across hosts (issue 39): the arguments of one process of a run across hosts, what is refused
before joining, joining (:mod:`app.core.parallel.join`), and what a run's JSON says about its processes. The
same command runs on every host; docs/mesh.md, "Several hosts"."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from app.core.errors import InvalidSettingsError
from app.core.inspect.views import KIND_PASSES, cli_names
from app.core.parallel.hosts import MODES_ACROSS_PROCESSES, check_modes_across_processes
from app.core.parallel.join import DEFAULT_TIMEOUT_S, check_join, join
from app.core.parallel.mesh import parse_mesh


def _modes(args: argparse.Namespace) -> list[str]:
    """The modes the command will run (``--modes`` of race, else ``--mode``), as :func:`app.cli.common.command_modes`."""
    modes = getattr(args, "modes", None)
    return list(modes) if modes else [m for m in [getattr(args, "mode", None)] if m]


def add_distributed_args(p: argparse.ArgumentParser) -> None:
    """``--distributed``, ``--coordinator``, ``--num-processes``, ``--process-id``, ``--distributed-timeout``: one
    process of a run across hosts (docs/mesh.md, "Several hosts")."""
    group = p.add_argument_group("several hosts (the same command on every host; --mesh spans all their devices)")
    group.add_argument("--distributed", action="store_true",
                       help="join the other processes with jax.distributed.initialize() first (found by JAX on "
                            "Cloud TPU, Slurm, Open MPI; elsewhere give --coordinator, --num-processes, --process-id)")
    group.add_argument("--coordinator", default=None, metavar="HOST:PORT",
                       help="process 0's host and a free port, the same on every process (implies --distributed)")
    group.add_argument("--num-processes", type=int, default=None, metavar="N", help="processes in the run")
    group.add_argument("--process-id", type=int, default=None, metavar="I", help="this process: 0 … N-1")
    group.add_argument("--distributed-timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                       help="how long every process waits for the others to join before it stops with an error "
                            f"(default {DEFAULT_TIMEOUT_S:g})")


def distributed(args: argparse.Namespace) -> bool:
    """Whether this command joins other processes (``--distributed`` or ``--coordinator``)."""
    return bool(getattr(args, "distributed", False) or getattr(args, "coordinator", None))


def check_across_processes(args: argparse.Namespace) -> None:
    """Before joining (and before anything loads): refuse what cannot run across processes, by name. The modes
    (:func:`app.core.parallel.hosts.check_modes_across_processes`; ``race`` without ``--modes`` races those that
    can), ``passes`` and ``inspect``'s pass views (XLA's pass pipeline is recorded by compiling again in a
    child process, on one host), and a run without ``--mesh`` spanning the processes. Raises
    :class:`InvalidSettingsError`."""
    check_join(args.coordinator, args.num_processes, args.process_id, args.distributed_timeout)
    processes = args.num_processes if args.num_processes is not None else 2  # detected by JAX: assume several
    if processes <= 1:
        return
    if getattr(args, "records_passes", False) or (
            args.command == "inspect" and getattr(args, "what", None) in cli_names(kind=KIND_PASSES)):
        raise InvalidSettingsError(f"{args.command} records XLA's pass pipeline by compiling again in a child process "
                                   "on this host: run it without --distributed (on one host, --devices N simulates "
                                   "a mesh).")
    if args.command == "race" and not args.modes:
        args.modes = list(MODES_ACROSS_PROCESSES)
    check_modes_across_processes(_modes(args), processes)
    if parse_mesh(args.mesh).n_devices == 1:
        raise InvalidSettingsError(f"Across {processes} processes give --mesh tp=N spanning every device of them "
                                   "(one device each: --mesh tp=" + str(processes) + ").")


def join_processes(args: argparse.Namespace, err: TextIO) -> Any:
    """Join the other processes when the command asks to (:func:`distributed`), after
    :func:`check_across_processes`: :func:`app.core.parallel.join.join`, which exits with one line when a peer
    never arrives. Returns its :class:`app.core.parallel.join.Joined`, or None on one process."""
    if not distributed(args):
        return None
    check_across_processes(args)
    return join(args.coordinator, args.num_processes, args.process_id, args.distributed_timeout, err)


def process_fields() -> dict[str, Any]:
    """``{"process_index", "process_count", "mesh_devices"}`` for the JSON lines of a run across processes (the
    devices of the engine's mesh, each with its process: ``cpu:2048@1``); empty on one process."""
    import jax

    if jax.process_count() == 1:
        return {}
    return {"process_index": jax.process_index(), "process_count": jax.process_count(),
            "mesh_devices": [f"{d.platform}:{d.id}@{d.process_index}" for d in jax.devices()]}
