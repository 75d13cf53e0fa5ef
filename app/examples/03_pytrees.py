"""Pytrees as arguments

jit accepts any pytree (dicts, lists, tuples) of arrays: the parameters below are one dict argument. The
jaxpr flattens it: one input variable per leaf, in key order.
"""

import jax
import jax.numpy as jnp


def dense(params, x):
    # params is a dict {"w": [in, out], "b": [out]}; x is [batch, in].
    return jax.nn.relu(x @ params["w"] + params["b"])


def dense_args():
    params = {"w": jnp.full((16, 8), 0.1, jnp.float32), "b": jnp.zeros((8,), jnp.float32)}
    return (params, jnp.ones((4, 16), jnp.float32))
