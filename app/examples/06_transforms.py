"""grad, vmap and jvp in the jaxpr

Transformations are programs too: grad adds the backward equations (the transposed dot, mul by the cotangent),
vmap adds a batch axis to every equation, jvp carries a tangent beside each value.
"""

import jax
import jax.numpy as jnp


def loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


def loss_grad(w, x):
    # d loss / d w: the jaxpr holds the forward pass and its transpose.
    return jax.grad(loss)(w, x)


def per_example_loss(w, xs):
    # vmap over the rows of xs: one loss per example, no Python loop.
    return jax.vmap(lambda x: loss(w, x[None]))(xs)


def loss_jvp(w, x):
    # Forward-mode derivative of loss along the direction ones_like(w).
    return jax.jvp(lambda w: loss(w, x), (w,), (jnp.ones_like(w),))


def example_args():
    return (jnp.full((8, 4), 0.1, jnp.float32), jnp.ones((16, 8), jnp.float32))


ENTRY_POINTS = ["loss", "loss_grad", "per_example_loss", "loss_jvp"]
