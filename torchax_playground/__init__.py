"""torchax-playground's installed import package and the ``torchax-playground`` console script's entry point.

Installed from a wheel or sdist, this package holds the whole app: ``torchax_playground.app``,
``torchax_playground.widgets`` and the data it reads, ``torchax_playground/assets`` (tools/package_build.py
builds that layout and rewrites the project's imports, so ``from app.cli.parser import main`` below reads
``from torchax_playground.app.cli.parser import main`` there). In a checkout (``make``'s editable install)
``app`` and ``widgets`` stay top-level packages and this one only starts them.
"""

from __future__ import annotations


def main() -> int:
    """The ``torchax-playground`` command (:func:`app.cli.parser.main`): returns the exit status."""
    from app.cli.parser import main as cli_main  # noqa: PLC0415 - cycle: in a wheel app/ is this package's child

    return cli_main()
