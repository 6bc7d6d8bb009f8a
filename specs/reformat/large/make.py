"""Writes the .npy files of specs/reformat/large.yaml from their rule (needs numpy):

    hwc_logical_uint8.npy  uint8 [1, 2, 262143, 2]  in[0][c][h][w] = (100 c + 2 h + w) mod 256
    hwc_buffer_uint8.npy   uint8 [1048572]          buffer[(h W + w) C + c] = (100 c + 2 h + w) mod 256
    dla_logical_int8.npy   int8  [1, 1, 4194305, 1] in[0][0][h][0] = h mod 100

HWC stores coordinate (0, c, h, w) at [0][h][w][c] (C = 2, W = 2): the buffer, read in
row-major order of (h, w, c), holds the values of the same rule. Both files are written from the
formula, neither from the other, and not by any implementation of the op.
Run: python3 specs/reformat/large/make.py
"""

import pathlib

import numpy as np

HERE = pathlib.Path(__file__).parent
C, H, W = 2, 262143, 2


def rule(c, h, w):
    return ((100 * c + 2 * h + w) % 256).astype(np.uint8)


c, h, w = np.meshgrid(np.arange(C), np.arange(H), np.arange(W), indexing="ij")
np.save(HERE / "hwc_logical_uint8.npy", rule(c, h, w)[None])
h, w, c = np.meshgrid(np.arange(H), np.arange(W), np.arange(C), indexing="ij")
np.save(HERE / "hwc_buffer_uint8.npy", rule(c, h, w).reshape(-1))

np.save(HERE / "dla_logical_int8.npy", (np.arange(4194305) % 100).astype(np.int8).reshape(1, 1, 4194305, 1))
