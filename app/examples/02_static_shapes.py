"""Static shapes, recompiles and bucketing

jit compiles for the shapes of its inputs: a new shape means a new trace and a new compile. Sweep the first
axis (program 02_static_shapes.py --sweep 1:16): 16 compiles, one per size. Padded to power-of-two buckets
(--bucket): 5 compiles for sizes 1..16.
"""

import jax.numpy as jnp


def normalize(x):
    # Each row scaled to unit length; any number of rows.
    return x / jnp.sqrt(jnp.sum(x * x, axis=-1, keepdims=True) + 1e-6)


def normalize_args():
    return (jnp.ones((4, 128), jnp.float32),)
