"""Crash reports, kept on this machine and never uploaded.

- :mod:`~app.core.crash.store`: the crash folder (``<cache>/crash``, :func:`app.core.paths.cache_dir`): one
  folder per running window holding its ``faulthandler`` file and its last actions, and the reports written so
  far (``reports/*.txt``); a window that died hard (its fault file not empty, its process gone) becomes a report
  the next start offers.
- :mod:`~app.core.crash.actions`: the last user actions, a ring buffer kept on disk as they happen.
- :mod:`~app.core.crash.facts`: versions (app, Python, jax/jaxlib, torch, torchax, transformers, PySide6), the
  backend and ``XLA_FLAGS``.
- :mod:`~app.core.crash.blame`: whether a fault lies in the user's own program (its file and line).
- :mod:`~app.core.crash.hooks`: ``faulthandler``, ``sys.excepthook``, ``threading.excepthook`` and
  ``sys.unraisablehook``, installed before any Qt code; the window registers a handler that shows the report.

No Qt, no JAX: this package imports nothing heavy (versions come from package metadata).
"""
