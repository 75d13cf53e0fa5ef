"""Qt views of torchax-playground: one widget per module, no JAX and no torch.

Every widget takes plain data (strings, numbers, dicts, dataclass-like records read by attribute) and is
touched only from the GUI thread.

Grouped by the view they serve: ``run`` (the Run workspace), ``plot`` (the latency plot and its exports),
``ir`` (the IR views), ``source`` (the source-map panel), ``passes``, ``profile``, ``code`` (the Code
workspace), ``demo`` (the demo kit's docks), ``devices``; ``common`` holds what they share (the read-only
table base, the splitter helper, the busy indicator).
"""
