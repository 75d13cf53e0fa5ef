"""The source-map panel: structure explorer and its rows, dataflow graph, prefill-versus-decode comparison."""
