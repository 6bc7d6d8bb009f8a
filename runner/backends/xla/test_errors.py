#!/usr/bin/env python3
"""Each message pattern of errors.py against XLA's own message: a jax.lax / jax.numpy program that
XLA (JAX's shape checks) rejects for the rule, whose message must give the pattern's kind (and a
message of another rule, or of another op, must not). Run by runner/tests/engines.rs; exit 0 when
every pattern holds."""

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "common")]
from errors import PATTERNS  # noqa: E402
from kinds import check  # noqa: E402

jax.config.update("jax_enable_x64", True)


def message(program, *args):
    """XLA's message for the jitted `program` on `args`, as the adapter words it."""
    try:
        jax.jit(program)(*args)
    except (TypeError, ValueError, IndexError, ZeroDivisionError) as e:
        return f"xla: {type(e).__name__}: {' '.join(str(e).split())[:300]}"
    raise AssertionError("the program was not rejected")


x23 = np.zeros((2, 3), np.float32)
x03 = np.zeros((0, 3), np.float32)
x5 = np.zeros(5, np.float32)
CASES = [
    # (op of the case, message, expected kind)
    ("shuffle", message(lambda x: lax.transpose(x, (0, 0)), x23), "invalid_permutation"),
    ("shuffle", message(lambda x: jnp.reshape(x, (-1, -1)), x23), "invalid_reshape"),
    ("shuffle", message(lambda x: jnp.reshape(x, (-2, -3)), x23), "invalid_reshape"),
    ("shuffle", message(lambda x: jnp.reshape(x, [-4, 3]), x23), "invalid_reshape"),
    ("shuffle", message(lambda x: jnp.reshape(x, [4, 2]), x23), "volume_mismatch"),
    ("shuffle", message(lambda x: jnp.reshape(x, [4, -1]), x23), "volume_mismatch"),
    # a -1 beside a zero product: jnp.reshape divides by it, which names no rule
    ("shuffle", message(lambda x: jnp.reshape(x, [0, -1]), x03), None),
    ("reformat", message(lambda x: jnp.reshape(x, (1, 1, 2, 4)), np.zeros(6, np.int8)), "invalid_buffer"),
    # a reshape of a 2-D tensor in a reformat is not the buffer's
    ("reformat", message(lambda x: jnp.reshape(x, [4, 2]), x23), None),
    ("slice", message(lambda x: lax.slice(x, [-1], [2]), x5), "out_of_bounds"),
    ("slice", message(lambda x: lax.slice(x, [3], [7]), x5), "out_of_bounds"),
    ("slice", message(lambda x: lax.slice(x, [0], [-3]), x5), "invalid_size"),
    ("slice", message(lambda x: lax.slice(x, [0], [1]), x23), "rank_mismatch"),
    ("slice", message(lambda x: jnp.take(x, np.array([0, 1]), axis=0, mode="clip"), x03), "empty_dimension"),
    ("slice", message(lambda x: jnp.pad(x, [(1, 0), (0, 0)], mode="reflect"), x03), "empty_dimension"),
    ("as_strided", message(lambda x: jnp.take(jnp.reshape(x, (-1,)), np.array([0, 1])), x03), "empty_dimension"),
    ("slice", message(lambda x, v: lax.pad(x, v, [(1, 0, 0)]), x5, np.zeros((1, 1), np.float32)), "invalid_fill"),
    # the same checks in another op name no rule of that op
    ("shuffle", message(lambda x: lax.slice(x, [3], [7]), x5), None),
    ("as_strided", message(lambda x: jnp.reshape(x, (4,)), x5), None),
]


if __name__ == "__main__":
    sys.exit(check(PATTERNS, CASES))
