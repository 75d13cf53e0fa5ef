"""The command line: ``torchax-playground generate|inspect|race|tradeoff|profile|program|passes|show-session|compare|
report|install-desktop …``;
no subcommand opens the window.

One module per command (:mod:`app.cli.generate`, :mod:`app.cli.inspect`, :mod:`app.cli.race`,
:mod:`app.cli.tradeoff`, :mod:`app.cli.profile`, :mod:`app.cli.program`, :mod:`app.cli.passes`,
:mod:`app.cli.show_session`, :mod:`app.cli.compare`, :mod:`app.cli.report`, :mod:`app.cli.desktop`), each with
``add_parser(subparsers)`` and ``run(args, out, err) -> int``; what
they share is :mod:`app.cli.common`. Errors exit with status 2 and one clear line on stderr (a traceback
only with ``--debug``).
"""

from __future__ import annotations

import argparse
import io
import sys
import traceback
from typing import TYPE_CHECKING, TextIO, cast

from app.cli import (
    compare,
    desktop,
    generate,
    inspect,
    passes,
    profile,
    program,
    race,
    report,
    show_session,
    tradeoff,
)
from app.cli.common import quiet_libraries, use_persistent_cache
from app.cli.hosts import join_processes
from app.core.errors import PlaygroundError
from app.core.parallel.join import announce_failure, exit_now
from app.gui.main import is_session_path
from app.gui.main import main as gui_main
from app.options import add_devices_arg, apply_devices

if TYPE_CHECKING:
    from app.core.parallel.join import Joined

#: The subcommands, in ``--help`` order: each module's ``add_parser`` and ``run``.
COMMANDS = {"generate": generate, "inspect": inspect, "race": race, "tradeoff": tradeoff, "profile": profile,
            "program": program, passes.COMMAND: passes, "show-session": show_session,
            "compare": compare, "report": report, "install-desktop": desktop}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchax-playground",
        description="Run a Hugging Face causal LM on JAX through torchax. No subcommand opens the window.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    add_devices_arg(parser)  # for the window: ``torchax-playground --devices 4``
    parser.add_argument("--model", dest="window_model", default=None, metavar="MODEL",
                        help="the window's model: built-in name, random:<preset>, hub id or folder")
    sub = parser.add_subparsers(dest="command")
    for command in COMMANDS.values():
        command.add_parser(sub)
    gui = sub.add_parser("gui", help="open the window (the default)")
    gui.add_argument("--model", default=None)
    add_devices_arg(gui)
    for p in (parser, gui):  # the window runs on this host's devices: refused with what to run instead
        p.add_argument("--distributed", action="store_true", default=argparse.SUPPRESS, help=WINDOW_DISTRIBUTED)
    for command in sub.choices.values():  # ``program … --debug`` as well as ``--debug program …``
        # SUPPRESS: a subcommand without it leaves the top-level value (``--debug`` before the subcommand)
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                             help="show tracebacks on errors (also accepted before the subcommand)")
    return parser


#: What the window does with ``--distributed``: nothing across hosts; it says so and exits (status 2).
WINDOW_DISTRIBUTED = (
    "the window runs on this host's devices only and never joins other processes: with --distributed it exits "
    "saying so. Across hosts run the same command on each (generate, race, inspect, profile with --coordinator "
    "HOST:PORT --num-processes N --process-id I --mesh tp=M; docs/mesh.md), then open a --save-session file here"
)


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Entry point of ``torchax-playground`` and ``python -m app``. Returns the exit status."""
    # typeshed types sys.stdout / sys.stderr as possibly None (a process started without them)
    out = cast(TextIO, sys.stdout) if out is None else out
    err = cast(TextIO, sys.stderr) if err is None else err
    argv = list(sys.argv[1:] if argv is None else argv)
    sessions: list[str] = []
    if not any(a in COMMANDS for a in argv):  # ``torchax-playground PATH.session``: the window opens it
        sessions = [a for a in argv if is_session_path(a)]
        argv = [a for a in argv if not is_session_path(a)]
    parser = build_parser()
    args = parser.parse_args(argv)
    devices = apply_devices(parser, args)
    if args.command in (None, "gui") and getattr(args, "distributed", False):
        print(f"error: --distributed: {WINDOW_DISTRIBUTED}.", file=err)
        return 2
    if args.command in (None, "gui"):
        model = getattr(args, "model", None) or args.window_model
        gui_args = ([] if model is None else ["--model", model]) + sessions
        return gui_main(gui_args + ([] if devices is None else ["--devices", str(devices)]))
    joined = None
    try:
        joined = join_processes(args, err)  # several hosts: the others joined (or one line and exit 2)
        run_out, run_err = follow_streams(joined, args, out, err)
        if getattr(COMMANDS[args.command], "NEEDS_LIBRARIES", True):  # show-session reads files only
            quiet_libraries()
        use_persistent_cache(args, run_err)
        return COMMANDS[args.command].run(args, run_out, run_err)
    except PlaygroundError as exc:
        if args.debug and joined is None:
            raise
        return _failed(joined, f"error: {exc}", 2, err)
    except KeyboardInterrupt:
        if joined is None:
            raise
        return _failed(joined, "error: interrupted", 130, err)
    except Exception as exc:  # an unexpected failure still exits with one line
        if args.debug and joined is None:
            raise
        if args.debug:
            traceback.print_exc(file=err)
        return _failed(joined, f"error: {type(exc).__name__}: {exc} (run with --debug for the traceback)", 1, err)


def follow_streams(joined: Joined | None, args: argparse.Namespace, out: TextIO, err: TextIO) -> tuple[TextIO, TextIO]:
    """Where the command writes: ``out`` and ``err`` on one process and on process 0; a process other than 0 of
    a run across hosts prints its one line (:meth:`app.core.parallel.join.Joined.follow_line`) and then only
    errors, with ``--json`` writes its own JSON lines on ``out``, and writes no file (``--save-session``,
    ``--perfetto``, ``-o``, ``--xplane``, ``--csv`` are process 0's: on one machine they would share a path)."""
    if joined is None or joined.index == 0:
        return out, err
    for name in _PROCESS_0_FILES:
        if getattr(args, name, None):
            setattr(args, name, None)
    print(joined.follow_line(), file=err, flush=True)
    return (out if getattr(args, "json", False) else _Discard()), _Discard()


#: The file outputs only process 0 of a run across hosts writes.
_PROCESS_0_FILES = ("save_session", "perfetto", "output", "xplane", "csv")


class _Discard(io.StringIO):
    """A text stream that keeps nothing (what a following process's run prints)."""

    def write(self, text: str) -> int:
        return len(text)


def _failed(joined: Joined | None, line: str, status: int, err: TextIO) -> int:
    """Print the error ``line``; on a run across hosts also tell the other processes (which then stop, naming
    this one) and exit now, without JAX's shutdown barrier waiting for them."""
    print(line, file=err, flush=True)
    if joined is None:
        return status
    announce_failure(line)
    exit_now(status)
    return status
