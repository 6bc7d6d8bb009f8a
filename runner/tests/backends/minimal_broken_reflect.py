"""The minimal backend (runner/backends/minimal/backend.py) with one planted bug: REFLECT
mirrors about the outer edge of the end elements (period 2d, the edge element repeated) instead
of about their centres (period 2d - 2, docs/semantics.md section 2.2). The suite must catch it
and name the clause slice.reflect.mirror."""
import importlib.util
import os

path = os.path.join(os.path.dirname(__file__), "..", "..", "backends", "minimal", "backend.py")
spec = importlib.util.spec_from_file_location("minimal_backend", path)
minimal = importlib.util.module_from_spec(spec)
spec.loader.exec_module(minimal)
right_source = minimal.source


def source(mode, x, d):
    if mode == "reflect":
        c = abs(x) % (2 * d)
        return 2 * d - 1 - c if c >= d else c
    return right_source(mode, x, d)


minimal.source = source
minimal.main()
