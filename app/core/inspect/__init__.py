"""Inspecting a compiled step: IR capture (``ir``), HLO / StableHLO text indexing (``text_index``), the
source map from PyTorch lines to jaxpr equations, StableHLO ops and HLO instructions (``source_map``,
``source_map_io``), the prefill/decode diff (``source_diff``), module paths, FLOPs estimates, the
dataflow graph (``dataflow``, ``dataflow_groups``), and the catalog of IR views with the names of a model's
steps (``views``: pure data, read by every layer)."""
