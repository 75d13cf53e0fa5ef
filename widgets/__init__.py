"""Qt views of torchax-playground: one widget per module, no JAX and no torch.

Every widget takes plain data (strings, numbers, dicts, dataclass-like records read by attribute) and is
touched only from the GUI thread.
"""
