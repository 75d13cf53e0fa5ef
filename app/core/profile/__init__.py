"""Measured time per op: capture a ``jax.profiler`` trace of a compiled step (``step``, ``capture``), parse
it and the optimized HLO (``hlo``), attribute time to instructions, fusions, source lines and modules
(``attrib``, ``build``, ``source``), the result model (``model``) and its columns (``columns``). On a GPU/TPU the
kernels of the device plane are joined to the HLO's instructions first (``device``)."""
