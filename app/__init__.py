"""torchax-playground: run a Hugging Face causal LM on JAX through torchax and inspect what JAX does."""

__version__ = "0.1.0"
