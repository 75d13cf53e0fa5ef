"""The command line: ``torchax-playground generate|inspect|race|profile|program|passes|show-session …``; no
subcommand opens the window.

One module per command (:mod:`app.cli.generate`, :mod:`app.cli.inspect`, :mod:`app.cli.race`,
:mod:`app.cli.profile`, :mod:`app.cli.program`, :mod:`app.cli.passes`, :mod:`app.cli.show_session`), each with
``add_parser(subparsers)`` and ``run(args, out, err) -> int``; what
they share is :mod:`app.cli.common`. Errors exit with status 2 and one clear line on stderr (a traceback
only with ``--debug``).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO, cast

from app.cli import generate, inspect, passes, profile, program, race, show_session
from app.cli.common import quiet_libraries, use_persistent_cache
from app.core.errors import PlaygroundError
from app.options import add_devices_arg, apply_devices

#: The subcommands, in ``--help`` order: each module's ``add_parser`` and ``run``.
COMMANDS = {"generate": generate, "inspect": inspect, "race": race, "profile": profile, "program": program,
            "passes": passes, "show-session": show_session}


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
    for command in sub.choices.values():  # ``program … --debug`` as well as ``--debug program …``
        # SUPPRESS: a subcommand without it leaves the top-level value (``--debug`` before the subcommand)
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                             help="show tracebacks on errors (also accepted before the subcommand)")
    return parser


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Entry point of ``torchax-playground`` and ``python -m app``. Returns the exit status."""
    # typeshed types sys.stdout / sys.stderr as possibly None (a process started without them)
    out = cast(TextIO, sys.stdout) if out is None else out
    err = cast(TextIO, sys.stderr) if err is None else err
    argv = list(sys.argv[1:] if argv is None else argv)
    sessions: list[str] = []
    if not any(a in COMMANDS for a in argv):  # ``torchax-playground PATH.session``: the window opens it
        from app.gui.main import is_session_path

        sessions = [a for a in argv if is_session_path(a)]
        argv = [a for a in argv if not is_session_path(a)]
    parser = build_parser()
    args = parser.parse_args(argv)
    devices = apply_devices(parser, args)
    if getattr(args, "distributed", False) or getattr(args, "coordinator", None):
        import jax

        jax.distributed.initialize(args.coordinator, args.num_processes, args.process_id)
    if args.command in (None, "gui"):
        from app.gui.main import main as gui_main

        model = getattr(args, "model", None) or args.window_model
        gui_args = ([] if model is None else ["--model", model]) + sessions
        return gui_main(gui_args + ([] if devices is None else ["--devices", str(devices)]))
    try:
        if getattr(COMMANDS[args.command], "NEEDS_LIBRARIES", True):  # show-session reads files only
            quiet_libraries()
        use_persistent_cache(args, err)
        return COMMANDS[args.command].run(args, out, err)
    except PlaygroundError as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=err)
        return 2
    except Exception as exc:  # an unexpected failure still exits with one line
        if args.debug:
            raise
        print(f"error: {type(exc).__name__}: {exc} (run with --debug for the traceback)", file=err)
        return 1
