#!/usr/bin/env python3
"""Batching never changes a verdict, and every reply says the composed paths its case took.

- `SameReplies`: the suite's own requests (test_batch_sample.jsonl, every 16th request of a run's
  `--dump-requests`, written by `bench_batch.py DUMP --every 16 --write-sample ...`) sent to the
  adapter as single `run` lines and as `batch` requests of the hello's size: every case's reply
  is the same, message included.
- `Paths`: each way a case of a batch is answered (backend.py, "Batches"), on a case that takes
  it, the builds it costs counted: built together; refused while added; named by a failed build;
  a failed build naming no case (bisect); a format answered alone from the start.
- `Composed`: each composing branch of the adapter on a case that takes it, the key its reply
  lists, alone and in a batch; a native case lists none; the manifest's `[composed]` holds exactly
  the keys the branches note, and the hello declares it and its batch size.

    python3 runner/backends/tensorrt_rtx/test_batch.py

Needs the adapter's packages (requirements.txt); runner/tests/engines.rs runs it.
"""

import base64
import json
import os
import sys
import unittest

sys.dont_write_bytecode = True  # leave no __pycache__ beside the sources

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import numpy as np  # noqa: E402

import backend  # noqa: E402
import bench_batch  # noqa: E402
import wire  # noqa: E402
from wire import OpError, Unsupported  # noqa: E402

SAMPLE = os.path.join(HERE, "test_batch_sample.jsonl")


def tensor(dtype, shape, values=None):
    """A wire tensor object; `values` default to zeros."""
    raw = {"float32": "<f4", "float16": "<f2", "int8": "i1", "int32": "<i4", "int64": "<i8"}[dtype]
    count = int(np.prod(shape)) if shape else 1
    array = np.zeros(count, raw) if values is None else np.array(values, raw).reshape(-1)
    return {"dtype": dtype, "shape": list(shape), "data": base64.b64encode(array.tobytes()).decode()}


def floats(values):
    return tensor("float32", [len(values)], values)


F23 = tensor("float32", [2, 3])
# Cases the builder builds, one of each op.
BUILDS = [
    ("shuffle", {"first_transpose": [1, 0], "reshape_dims": [6]}, [F23, None]),
    ("slice", {"start": [0, 1], "size": [2, 2], "stride": [1, 1]}, [F23, None, None, None, None, None]),
    ("scale", {"mode": "uniform", "scale": floats([2])}, [tensor("float32", [1, 1, 2, 2])]),
    ("reformat", {"from": "LINEAR", "to": "HWC"}, [tensor("float32", [1, 2, 1, 1])]),
]
# Refused while its layers are added (the permutation's setter logs the error).
REFUSED_WHILE_ADDED = ("shuffle", {"first_transpose": [1, 1]}, [F23, None])
# Refused by the build, whose message names the network output of the case's layer.
NAMED_BY_THE_BUILD = ("reformat", {"from": "LINEAR", "to": "HWC"}, [tensor("int8", [1, 3, 1, 2])])
# An internal error of the Myelin compiler, which names no layer.
NAMES_NO_CASE = ("reformat", {"from": "CHW4", "shape": [2, 1, 3, 1, 2], "to": "LINEAR"}, [tensor("float16", [16])])
# A dim left unknown (-1): the build's rejection names no layer, so the case goes alone when added.
UNKNOWN_DIM = ("reformat", {"from": "CHW2", "shape": [1, -1, 1, 1], "to": "LINEAR"}, [tensor("float16", [2])])
# A DLA format: answered alone from the start (LONE_FORMATS).
LONE_FORMAT = ("reformat", {"from": "LINEAR", "to": "DLA_LINEAR"}, [tensor("float16", [1, 2, 2, 3])])


def alone(request):
    """What a single `run` answers: the output object, or the exception."""
    op, attrs, inputs = request
    try:
        return backend.run(op, attrs, inputs)
    except (OpError, Unsupported) as e:
        return e


def same(a, b):
    """Two answers are the same: equal outputs, or the same exception, kind and message."""
    if isinstance(a, Exception) or isinstance(b, Exception):
        return (type(a), getattr(a, "kind", None), str(a)) == (type(b), getattr(b, "kind", None), str(b))
    return a == b


class Builds:
    """Counts the builds (`backend.plan_of`) of networks of a batch and of cases alone."""

    def __enter__(self):
        self.kinds, self.original = [], backend.plan_of

        def counted(n):
            self.kinds.append("batch" if n.prefix else "alone")
            return self.original(n)

        backend.plan_of = counted
        return self

    def __exit__(self, *exc):
        backend.plan_of = self.original
        return False


class SameReplies(unittest.TestCase):
    def test_batched_replies_equal_single_replies_on_the_suites_requests(self):
        requests = bench_batch.load(SAMPLE)
        self.assertGreater(len(requests), 200)
        single = bench_batch.serve(requests, 1)[0]
        batched = bench_batch.serve(requests, backend.BATCH)[0]
        self.assertEqual(len(single), len(requests))
        self.assertEqual({r["type"] for r in single.values()} >= {"built", "error"}, True)
        for request in requests:
            self.assertEqual(batched.get(request["id"]), single[request["id"]], request["id"])


class Paths(unittest.TestCase):
    def batch(self, requests):
        """run_batch's answers, each checked equal to the case's single answer."""
        with Builds() as builds:
            answers = backend.run_batch([(f"case-{i}", op, attrs, inputs) for i, (op, attrs, inputs) in enumerate(requests)])
        for request, answer in zip(requests, answers):
            self.assertTrue(same(answer, alone(request)), f"{request[:2]}: batched {answer!r}, alone {alone(request)!r}")
        return answers, builds.kinds

    def test_cases_that_build_are_built_in_one_network(self):
        answers, builds = self.batch(BUILDS)
        self.assertEqual(builds, ["batch"])
        self.assertTrue(all(isinstance(a, dict) for a in answers))

    def test_a_case_refused_while_added_is_answered_alone(self):
        answers, builds = self.batch(BUILDS[:2] + [REFUSED_WHILE_ADDED] + BUILDS[2:])
        self.assertEqual(answers[2].kind, "invalid_permutation")
        self.assertEqual(builds.count("batch"), 1)

    def test_a_build_failure_naming_a_case_goes_to_that_case(self):
        answers, builds = self.batch(BUILDS[:2] + [NAMED_BY_THE_BUILD] + BUILDS[2:])
        self.assertEqual(answers[2].kind, "unsupported_dtype")
        self.assertEqual(builds, ["batch", "alone", "batch"])

    def test_a_build_failure_naming_no_case_is_split(self):
        answers, builds = self.batch(BUILDS + [NAMES_NO_CASE])
        self.assertEqual(answers[-1].kind, "internal")
        self.assertGreater(builds.count("batch"), 1)

    def test_bisect_alone_gives_the_same_answers(self):
        # With no message taken as naming a case, every failure is found by halving.
        named = backend.named
        backend.named = lambda _: set()
        try:
            answers, builds = self.batch(BUILDS[:2] + [NAMED_BY_THE_BUILD] + BUILDS[2:] + [NAMES_NO_CASE])
        finally:
            backend.named = named
        self.assertEqual(answers[2].kind, "unsupported_dtype")
        self.assertGreater(builds.count("batch"), 2)

    def test_an_unknown_dim_is_answered_alone(self):
        answers, builds = self.batch(BUILDS + [UNKNOWN_DIM])
        self.assertIsInstance(answers[-1], OpError)
        self.assertEqual(builds, ["alone", "batch"])

    def test_a_lone_format_is_answered_alone_from_the_start(self):
        answers, builds = self.batch([LONE_FORMAT] + BUILDS)
        self.assertEqual(answers[0].kind, "internal")
        self.assertEqual(builds, ["alone", "batch"])

    def test_what_is_answered_before_any_build_is_the_same(self):
        answers, builds = self.batch([("as_strided", {"size": [1], "stride": [1]}, [F23]), ("slice", {}, [None] * 6)] + BUILDS[:1])
        self.assertIsInstance(answers[0], Unsupported)
        self.assertEqual(answers[1].kind, "invalid_input")


INT8_SCALE = ("scale", {"mode": "uniform", "scale": floats([2])}, [tensor("int8", [1, 1, 2, 2], [1, 2, 3, 4])])
# Dequantize, then the float Scale, with no Quantize after it: a float32 output.
INT8_SCALE_TO_FLOAT = ("scale", {"mode": "uniform", "output_dtype": "float32"}, [tensor("int8", [1, 1, 2, 2])])
# Each composing branch: a case that takes it, and the key its reply lists.
COMPOSED = [(INT8_SCALE, ["scale:int8"]), (INT8_SCALE_TO_FLOAT, ["scale:int8"])]


def replies(requests, batched):
    """The adapter's replies (wire.answer_run / answer_batch, as the request loop sends them)."""
    messages = [{"type": "run", "id": f"case-{i}", "op": op, "attrs": attrs, "inputs": inputs}
                for i, (op, attrs, inputs) in enumerate(requests)]
    if batched:
        return wire.answer_batch(messages, backend.run, backend.run_batch, answer="built")
    return [wire.answer_run(message, backend.run, answer="built") for message in messages]


class Composed(unittest.TestCase):
    def test_each_composing_branch_lists_its_key(self):
        for batched in (False, True):
            for request, keys in COMPOSED:
                with self.subTest(request=request[:2], batched=batched):
                    reply = replies(BUILDS[:1] + [request], batched)[1]
                    self.assertEqual(reply["type"], "built", reply)
                    self.assertEqual(reply.get("composed"), keys)

    def test_native_cases_list_none(self):
        for batched in (False, True):
            for reply in replies(BUILDS, batched):
                self.assertEqual(reply["type"], "built", reply)
                self.assertNotIn("composed", reply)

    def test_the_catalogue_is_what_the_branches_note(self):
        noted = {key for _, keys in COMPOSED for key in keys}
        self.assertEqual(set(wire.composed_of(backend.__file__)), noted)

    def test_the_hello_declares_the_catalogue_and_the_batch_size(self):
        hello = backend.hello()
        self.assertEqual(hello["composed"], wire.composed_of(backend.__file__))
        self.assertEqual(hello["batch"], backend.BATCH)


if __name__ == "__main__":
    unittest.main()
