"""static_argnums

create_filled(val, length) builds an array whose *shape* depends on length, so length must be static:
it becomes part of the compiled program, and a new length compiles again ("static argument length changed").
"""

from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(1,))
def create_filled(val, length):
    # Without static_argnums=(1,) JAX cannot know the output shape while tracing.
    return jnp.full((length,), val)


def create_filled_args():
    return (jnp.float32(2.0), 5)
