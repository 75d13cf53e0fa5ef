"""``python -m torchax_playground``: the same as the ``torchax-playground`` console script."""

from torchax_playground import main

raise SystemExit(main())
