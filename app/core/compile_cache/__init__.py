"""The persistent compilation caches: JAX/XLA's (``xla``) and Inductor's (``inductor``), switched on and off
together."""
