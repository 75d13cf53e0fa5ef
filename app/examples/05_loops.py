"""Python loop vs fori_loop vs scan

A Python for loop is unrolled while tracing: 100 iterations, 100 copies of the body in the jaxpr. lax.fori_loop
and lax.scan keep one body inside a loop equation: a small jaxpr that compiles fast. Compare the three
entry points' jaxpr sizes and compile times.
"""

import jax
import jax.numpy as jnp

STEPS = 100


def step(x):
    # One iteration: a small element-wise update.
    return jnp.tanh(x * 0.9 + 0.1)


def python_loop(x):
    for _ in range(STEPS):  # unrolled: STEPS copies of step() in the jaxpr
        x = step(x)
    return x


def fori(x):
    return jax.lax.fori_loop(0, STEPS, lambda i, x: step(x), x)


def scan(x):
    def body(carry, _):
        carry = step(carry)
        return carry, None

    return jax.lax.scan(body, x, length=STEPS)[0]


def example_args():
    return (jnp.ones((256,), jnp.float32),)


ENTRY_POINTS = ["python_loop", "fori", "scan"]
