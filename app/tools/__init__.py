"""Offline developer tools (not imported by the application at run time).

``python -m app.tools.train_builtin`` trains the built-in ``assets/models/pydoc-llama`` model from the
docstrings of the installed Python packages; :mod:`app.tools.pydoc_corpus` builds that corpus.
"""
