"""Execution modes: the catalog (``catalog``: one :class:`ModeInfo` per mode, the one place mode names,
help, compilers and capabilities are written), the base class and shared helpers (``base``), the eager
modes (``eager``), the JAX-jit modes (``jit``) and PyTorch's own compiler (``torch_compile``,
``torch_compile_capture``). Classes are imported by name from the catalog, never registered on import."""
