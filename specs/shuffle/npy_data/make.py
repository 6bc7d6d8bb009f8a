"""Writes the .npy files of specs/shuffle/npy_data.yaml from their rule (needs numpy):

    nchw.npy  float32 [1, 3, 224, 224]   in[0, c, h, w]  = 50176 c + 224 h + w   (an arange)
    nhwc.npy  float32 [1, 224, 224, 3]   out[0, h, w, c] = 50176 c + 224 h + w

The transpose (0, 2, 3, 1) takes out[0, h, w, c] from in[0, c, h, w], so the second file is the
first's values by that rule; both are written from the formula, neither from the other. Every
value is below 2^24, so exact in float32. Run: python3 specs/shuffle/npy_data/make.py
"""

import pathlib

import numpy as np

HERE = pathlib.Path(__file__).parent


def rule(c, h, w):
    return (50176 * c + 224 * h + w).astype(np.float32)


c, h, w = np.meshgrid(np.arange(3), np.arange(224), np.arange(224), indexing="ij")
np.save(HERE / "nchw.npy", rule(c, h, w)[None])
h, w, c = np.meshgrid(np.arange(224), np.arange(224), np.arange(3), indexing="ij")
np.save(HERE / "nhwc.npy", rule(c, h, w)[None])
