"""The command line of torchax-playground (``torchax-playground`` / ``python -m app``): see
:mod:`app.cli.parser`. The window never imports this package; what both need is in :mod:`app.options`."""

from app.cli.parser import build_parser, main

__all__ = ["build_parser", "main"]
