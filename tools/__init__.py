"""Offline developer tools (not imported by the application at run time).

``python -m tools.train_builtin`` trains the built-in ``assets/models/pydoc-llama`` model from the
docstrings of the installed Python packages; :mod:`tools.pydoc_corpus` builds that corpus.
"""
