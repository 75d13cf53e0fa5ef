"""The decode loop: :class:`app.core.engine.engine.Engine` (load a model, run prefill and decode steps in
one execution mode, stream typed events), chat templates (``chat``) and incremental detokenization
(``detok``)."""
