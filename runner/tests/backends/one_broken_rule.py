"""A backend with exactly one rule broken, named by the first argument: the minimal backend
(runner/backends/minimal/backend.py) for Slice and Shuffle, the numpy backend
(runner/backends/numpy/backend.py) for reformat and Scale. runner/tests/clause_citations.rs runs
the suite against each and checks that the failures cite the broken rule, and no clause of
another mode or format.

    reflect    REFLECT mirrors about the outer edges (period 2d), not the edge elements' centres
    wrap       WRAP takes |x| mod d below 0, not the non-negative modulo
    clamp      CLAMP sends x < 0 to d - 1
    fill       FILL reads in[0] for x < 0 instead of the fill value
    strict     STRICT_BOUNDS reads in[d - 1] past the end instead of rejecting the coordinate
    shuffle    Shuffle skips its second transpose
    chw4       packing into CHW4 writes 1, not 0, into the padding lanes
    channel    Scale's CHANNEL mode ignores an explicit channel_axis
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BUG = sys.argv[1]


def load(name):
    path = os.path.join(HERE, "..", "..", "backends", name, "backend.py")
    spec = importlib.util.spec_from_file_location(f"{name}_backend", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if BUG in ("reflect", "wrap", "clamp", "fill", "strict", "shuffle"):
    minimal = load("minimal")
    right_source, right_permutation = minimal.source, minimal.permutation

    def source(mode, x, d):
        if BUG == "reflect" and mode == "reflect":
            c = abs(x) % (2 * d)
            return 2 * d - 1 - c if c >= d else c
        if BUG == "wrap" and mode == "wrap":
            return abs(x) % d
        if BUG == "clamp" and mode == "clamp":
            return d - 1 if x < 0 else min(x, d - 1)
        if BUG == "fill" and mode == "fill" and x < 0:
            return 0
        if BUG == "strict" and mode == "strict_bounds" and x >= d:
            return d - 1
        return right_source(mode, x, d)

    def permutation(perm, rank, name):
        if BUG == "shuffle" and name == "second_transpose":
            return list(range(rank))
        return right_permutation(perm, rank, name)

    minimal.source, minimal.permutation = source, permutation
    minimal.main()
elif BUG in ("chw4", "channel"):
    numpy_backend = load("numpy")
    np = numpy_backend.np
    if BUG == "chw4":
        numpy_backend.OPS = ["reformat"]

        def pack(a, fmt, dtype, dla):
            shape = list(a.shape)
            pshape, perm, _ = numpy_backend.layout(fmt, shape, dtype, dla)
            numpy_backend.check_budget(pshape, "buffer")
            p = (np.ones if fmt == "CHW4" else np.zeros)(pshape, dtype=a.dtype)
            numpy_backend.padded_to_logical_view(p, fmt, shape)[...] = a
            return np.ascontiguousarray(p.transpose(perm)).reshape(-1)

        numpy_backend.pack = pack
    else:
        numpy_backend.OPS = ["scale"]
        right_scale = numpy_backend.HANDLERS["scale"]

        def scale(attrs, inputs):
            if attrs.get("mode") == "channel":
                attrs = {k: v for k, v in attrs.items() if k != "channel_axis"}
            return right_scale(attrs, inputs)

        numpy_backend.HANDLERS["scale"] = scale
    numpy_backend.main()
else:
    sys.exit(f"unknown bug {BUG!r}")
