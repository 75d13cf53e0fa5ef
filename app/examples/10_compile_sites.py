"""Why did it compile, and where?

main runs op by op (try the no-jit mode) and calls two jitted functions of its own: power compiles again each time
its static exponent n changes (1 → 2 → 3 → 4), normalize compiles once. The compile log's "Compiles per call site"
tab totals them per line that called them, with each compile's cause (old → new) and its trace / lower / compile ms.
"""

from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(1,))
def power(x, n):
    # n is static: each new value is a new program (and a new compile); a value seen before reuses its executable
    return x**n


@jax.jit
def normalize(x):
    return x / jnp.linalg.norm(x)


def main(x):
    for n in (1, 2, 3, 4):
        x = power(x, n)
    return normalize(x)


def main_args():
    return (jnp.linspace(0.5, 1.5, 256, dtype=jnp.float32),)
