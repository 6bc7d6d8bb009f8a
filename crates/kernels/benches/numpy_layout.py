"""numpy's side of benches/layout.rs: the same operations on the same shapes, done the usual
numpy way, each timed against np.copy of its output bytes in the same run.

Usage: python3 benches/numpy_layout.py [REPS] [--serve]. Prints `#numpy<TAB>version`, then one
`name<TAB>seconds<TAB>copy_seconds` line per operation (medians of REPS, after one warm-up).
The names are the Rust harness's line names. With --serve, it measures a line when its name
arrives on stdin (names in the harness's order; lines not asked for are passed over; a name
already passed starts the lines over, for the harness's next whole run), so that each line is
timed right after the harness's own timing of it.
"""

import statistics
import sys
import time

import numpy as np

MIB = 1 << 20
NCHW = (1, 64, 512, 512)  # 64 MiB of float32
NCHW_F16 = (2, 64, 512, 512)  # 64 MiB of float16
NCHW_F16_DLA = (2, 64, 512, 500)  # DLA_LINEAR rows padded from 500 to 512 float16
FLAT_F16 = 32 * MIB


def noise(shape, dtype):
    rng = np.random.default_rng(0)
    return rng.integers(0, 1 << 14, size=shape, dtype=np.uint16).view(np.uint16).astype(dtype)


def pack_vector_major(x, lanes):
    n, c, h, w = x.shape
    return np.ascontiguousarray(x.reshape(n, c // lanes, lanes, h, w).transpose(0, 1, 3, 4, 2)).reshape(-1)


def unpack_vector_major(m, shape, lanes):
    n, c, h, w = shape
    return m.reshape(n, c // lanes, h, w, lanes).transpose(0, 1, 4, 2, 3).reshape(shape)


def dla_pack(x):
    n, c, h, w = x.shape
    out = np.zeros((n, c, h, -(-w // 32) * 32), x.dtype)
    out[..., :w] = x
    return out.reshape(-1)


def dla_unpack(m, shape):
    n, c, h, w = shape
    return m.reshape(n, c, h, -(-w // 32) * 32)[..., :w].copy()


def scale_channel(x, s, t):
    y = x * s[:, None, None]
    y += t[:, None, None]
    return y


def lines():
    f32 = noise(NCHW, np.float32)
    pad = ((0, 0), (0, 0), (8, 8), (8, 8))
    yield "shuffle NCHW→NHWC", f32, lambda x: np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    yield "shuffle swap last two axes", f32, lambda x: np.ascontiguousarray(x.transpose(0, 1, 3, 2))
    yield "shuffle transpose–reshape–transpose", f32, lambda x: np.ascontiguousarray(
        x.transpose(0, 2, 3, 1).reshape(1, 512, 512, 8, 8).transpose(0, 3, 1, 2, 4)
    )
    yield "slice strided (H, W step 2)", f32, lambda x: x[:, :, ::2, ::2].copy()
    yield "slice negative stride (C, H, W reversed)", f32, lambda x: x[:, ::-1, ::-1, ::-1].copy()
    yield "slice crop STRICT_BOUNDS (8 off each edge)", f32, lambda x: x[:, :, 8:504, 8:504].copy()
    yield "slice pad 8 WRAP", f32, lambda x: np.pad(x, pad, mode="wrap")
    yield "slice pad 8 CLAMP", f32, lambda x: np.pad(x, pad, mode="edge")
    yield "slice pad 8 FILL", f32, lambda x: np.pad(x, pad, mode="constant")
    yield "slice pad 8 REFLECT", f32, lambda x: np.pad(x, pad, mode="reflect")
    flat = noise((FLAT_F16,), np.float16)
    windows = (FLAT_F16 - 64) // 32 + 1
    yield "as_strided overlapping windows (64 every 32)", flat, lambda x: np.lib.stride_tricks.as_strided(
        x, (windows, 64), (32 * x.itemsize, x.itemsize)
    ).copy()
    del flat
    f16 = noise(NCHW_F16, np.float16)
    yield "pack CHW4 (float16)", f16, lambda x: pack_vector_major(x, 4)
    yield "unpack CHW4 (float16)", pack_vector_major(f16, 4), lambda m: unpack_vector_major(m, NCHW_F16, 4)
    yield "pack CHW32 (float32)", f32, lambda x: pack_vector_major(x, 32)
    yield "unpack CHW32 (float32)", pack_vector_major(f32, 32), lambda m: unpack_vector_major(m, NCHW, 32)
    yield "pack HWC8 (float16)", f16, lambda x: np.ascontiguousarray(x.transpose(0, 2, 3, 1)).reshape(-1)
    hwc8 = np.ascontiguousarray(f16.transpose(0, 2, 3, 1)).reshape(-1)
    yield "unpack HWC8 (float16)", hwc8, lambda m: np.ascontiguousarray(
        m.reshape(2, 512, 512, 64).transpose(0, 3, 1, 2)
    )
    del f16, hwc8
    dla = noise(NCHW_F16_DLA, np.float16)
    yield "pack DLA_LINEAR (float16, W 500)", dla, dla_pack
    yield "unpack DLA_LINEAR (float16, W 500)", dla_pack(dla), lambda m: dla_unpack(m, NCHW_F16_DLA)
    del dla
    s = (0.5 + np.arange(64, dtype=np.float32) / 64).astype(np.float32)
    t = (np.arange(64, dtype=np.float32) - 32).astype(np.float32)
    x = ((np.arange(np.prod(NCHW), dtype=np.int64) * 7919 % 2048) / 1024).astype(np.float32).reshape(NCHW)
    yield "scale CHANNEL (float32)", x, lambda x: scale_channel(x, s, t)


def timed(f, *args):
    started = time.perf_counter()
    result = f(*args)
    return time.perf_counter() - started, result


def measure(name, x, op, reps):
    out = op(x)  # warm-up
    source = np.full(out.nbytes, 0x5A, np.uint8)
    del out
    op_times, copy_times = [], []
    for _ in range(reps):
        seconds, out = timed(op, x)
        op_times.append(seconds)
        del out
        seconds, copied = timed(np.copy, source)
        copy_times.append(seconds)
        del copied
    return f"{name}\t{statistics.median(op_times)}\t{statistics.median(copy_times)}"


def serve(reps):
    def find(pending, name):
        return next(((x, op) for line_name, x, op in pending if line_name == name), None)

    pending = lines()
    for request in sys.stdin:
        name = request.rstrip("\n")
        found = find(pending, name)
        if found is None:
            # A name already passed: the harness's next whole run starts the lines over.
            pending = lines()
            found = find(pending, name)
        if found is None:
            print(f"{name}\tunknown", flush=True)
        else:
            print(measure(name, *found, reps), flush=True)


def main():
    args = [a for a in sys.argv[1:] if a != "--serve"]
    reps = int(args[0]) if args else 5
    print(f"#numpy\t{np.__version__}", flush=True)
    if "--serve" in sys.argv[1:]:
        serve(reps)
        return
    for name, x, op in lines():
        print(measure(name, x, op, reps), flush=True)


if __name__ == "__main__":
    main()
