"""A small MLP training step in plain JAX

One step of SGD with momentum on a two-layer MLP: forward, loss, jax.grad, and the optimizer update, all in
one jitted function of pytrees (no Flax, no optax: every equation in the jaxpr is visible and yours).
"""

import jax
import jax.numpy as jnp


def init(key, sizes=(32, 64, 10)):
    keys = jax.random.split(key, len(sizes) - 1)
    return [{"w": jax.random.normal(k, (a, b)) / jnp.sqrt(a), "b": jnp.zeros((b,))}
            for k, a, b in zip(keys, sizes[:-1], sizes[1:])]


def forward(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):
    logits = forward(params, x)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, logits.shape[-1]), axis=-1))


def train_step(params, momentum, x, y, lr=0.1, beta=0.9):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    # SGD with momentum: m = beta * m + g; p = p - lr * m (tree_map applies it to every leaf).
    momentum = jax.tree_util.tree_map(lambda m, g: beta * m + g, momentum, grads)
    params = jax.tree_util.tree_map(lambda p, m: p - lr * m, params, momentum)
    return params, momentum, loss


def train_step_args():
    params = init(jax.random.key(0))
    momentum = jax.tree_util.tree_map(jnp.zeros_like, params)
    x = jax.random.normal(jax.random.key(1), (64, 32))
    y = jax.random.randint(jax.random.key(2), (64,), 0, 10)
    return (params, momentum, x, y)
