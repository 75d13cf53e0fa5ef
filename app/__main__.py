"""``python -m app`` — the same as the ``torchax-playground`` console script."""

from app.cli import main

raise SystemExit(main())
