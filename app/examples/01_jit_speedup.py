"""jit speed-up

A SELU-style function of a 1000x1000 array: op by op, each jnp call is its own dispatch; under jax.jit it
compiles once into one fused kernel. Compare jit vs no-jit: the first jit call pays the compile, later calls
are much faster than op-by-op.
"""

import jax.numpy as jnp


def selu(x, alpha=1.67, lmbda=1.05):
    # Five element-wise ops: comparison, exp, multiply, subtract, select.
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def selu_args():
    # One 1000x1000 float32 array (4 MB).
    return (jnp.arange(1_000_000, dtype=jnp.float32).reshape(1000, 1000) / 1e6 - 0.5,)
