"""Writes the expected outputs of specs/slice/large.yaml from their rule (needs numpy):

    wrap_3d_float32.npy  float32 [2, 262142, 1]  out[a, i, 0] = x[a, (1 + i) mod 3, 0] = 10 a + (1 + i) mod 3 + 1
    wrap_1d_int8.npy     int8    [262145]        out[i] = x[(2 + i) mod 3] = 5 + (2 + i) mod 3
    wrap_1d_float16.npy  float16 [262145]        the same values
    wrap_1d_int64.npy    int64   [262145]        the same values
    fill_3d_int8.npy     int8    [2, 262143, 2]  out[0][i][b] = 9; out[1][i][b] = x[0][i][b] = 10 i + b + 1 for i < 3, else 9

x is the case's inline input; FILL gives the fill value, 9, where a coordinate is outside (axis 0
reads coordinate a - 1, axis 1 coordinate i of an axis of 3); WRAP reads coordinate 1 + i (2 + i) of an axis of 3 at
(1 + i) mod 3 ((2 + i) mod 3). The files hold those formulas' values, computed here and not by
any implementation of the op. Every value is a small integer, exact in every dtype.
Run: python3 specs/slice/large/make.py
"""

import pathlib

import numpy as np

HERE = pathlib.Path(__file__).parent

a, i = np.meshgrid(np.arange(2), np.arange(262142), indexing="ij")
np.save(HERE / "wrap_3d_float32.npy", (10 * a + (1 + i) % 3 + 1).astype(np.float32)[:, :, None])

i = np.arange(262145)
for name, dtype in (("int8", np.int8), ("float16", np.float16), ("int64", np.int64)):
    np.save(HERE / f"wrap_1d_{name}.npy", (5 + (2 + i) % 3).astype(dtype))

a, i, b = np.meshgrid(np.arange(2), np.arange(262143), np.arange(2), indexing="ij")
inside = (a == 1) & (i < 3)
np.save(HERE / "fill_3d_int8.npy", np.where(inside, 10 * i + b + 1, 9).astype(np.int8))
