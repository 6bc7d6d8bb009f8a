#!/usr/bin/env python3
"""Batching never changes a reply: the suite's requests sent to the adapter once as single `run`
lines and once as `batch` lines of the hello's size (each through its own backend process, over
the protocol), and once more batched in-process with every failure taken as naming no case (so
that each is found by `bisect`, halves then singles), must get equal replies case for case: the
same type, error kind, outputs and composed notes, and the same message but where it names a
node of the batch (`c<i>/`, the case's index) or a node OpenVINO numbered itself.

The one exception is a Gather of an index outside its data (an as_strided view past the input's
end, a stride-0 slice axis starting outside the input): the CPU plugin returns what lies past the
buffer there (repro/gather_int64_reads_past_the_end.py), different from run to run, so those
replies are compared on type, dtype and shape only.

    python3 test_batch.py                  # the sample beside it (batch_sample.jsonl)
    python3 test_batch.py DUMP [--batch N] # every request of a `runner --dump-requests` file
    python3 test_batch.py --write-sample DUMP  # rewrites batch_sample.jsonl from a dump

Run by runner/tests/engines.rs on the sample; exit 0 when every reply is equal."""

import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "common")]
SAMPLE = os.path.join(HERE, "batch_sample.jsonl")
BACKEND = os.path.join(HERE, "backend.py")


def replies(requests, batch):
    """{id: reply} of a fresh backend process sent `requests` singly (batch 1) or in batches."""
    process = subprocess.Popen([sys.executable, BACKEND], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    process.stdin.write(json.dumps({"type": "hello", "protocol": 1}) + "\n")
    process.stdin.flush()
    hello = json.loads(process.stdout.readline())
    out = {}
    for i in range(0, len(requests), batch):
        group = requests[i:i + batch]
        line = group[0] if batch == 1 else {"type": "batch", "cases": group}
        process.stdin.write(json.dumps(line) + "\n")
        process.stdin.flush()
        for _ in group:
            reply = json.loads(process.stdout.readline())
            out[reply["id"]] = reply
    process.stdin.close()
    process.wait()
    return hello, out


def replies_unnamed(requests, batch, alone):
    """{id: reply} of batches answered in this process with every failure naming no case (the
    batches that hold a case answered `error` alone: the others have no failure to split on),
    and how many times a batch was split."""
    import backend
    from wire import answer_batch

    class Counted(backend.Unnamed):
        raised = 0

        def __init__(self, *args):
            Counted.raised += 1
            super().__init__(*args)

    backend.named_case = lambda e, heads: (None, False)
    backend.Unnamed = Counted
    out = {}
    for i in range(0, len(requests), batch):
        group = requests[i:i + batch]
        if any(alone[r["id"]]["type"] == "error" for r in group):
            for reply in answer_batch(group, backend.run, backend.run_batch):
                out[reply["id"]] = json.loads(json.dumps(reply))
    return out, Counted.raised


def reads_past_the_input(request):
    """Whether the case is a Gather of an index outside its data (see the module's doc)."""
    from convert import SlicePlan, as_strided_indices
    from wire import INPUT_COUNT, inputs_of, prod

    try:
        t = inputs_of(request["inputs"], INPUT_COUNT[request["op"]])
        if request["op"] == "as_strided":
            n = prod(t[0].shape)
            index = as_strided_indices(request["attrs"])
            return index.size > 0 and (n == 0 or index.max() >= n or index.min() < -n)
        if request["op"] == "slice":
            plan = SlicePlan(request["attrs"], t[0], t[1], t[2], t[3], t[5], t[4])
            dims = [d + b + a for d, b, a in zip(t[0].shape, plan.before, plan.after)]
            return any(not -dims[axis] <= int(index[0]) < dims[axis] for axis, index in plan.slice_and_gathers()[1])
    except Exception:  # noqa: BLE001 - a case the adapter cannot write reads nothing
        return False
    return False


def message(reply):
    text = reply.get("message") or reply.get("reason") or ""
    text = re.sub(r"(?<![\w.])c\d+/", "c/", text)
    return re.sub(r"_\d+", "_N", text)


def differences(requests, one, other):
    """The lines saying where two sets of replies differ."""
    out = []
    for request in requests:
        a, b = one[request["id"]], other[request["id"]]
        fields = ["type", "kind", "composed"]
        if reads_past_the_input(request):
            if [(o["dtype"], o["shape"]) for o in a.get("outputs", [])] != [(o["dtype"], o["shape"]) for o in b.get("outputs", [])]:
                out.append(f"{request['id']}: outputs of other dtypes or shapes")
        else:
            fields.append("outputs")
        for field in fields:
            if a.get(field) != b.get(field):
                out.append(f"{request['id']}: {field} {str(a.get(field))[:200]} != {str(b.get(field))[:200]}")
        ma, mb = message(a), message(b)
        n = min(len(ma), len(mb))  # a message cut at its length limit ends earlier where names are longer
        if ma[:n] != mb[:n] or (n == 0) != (max(len(ma), len(mb)) == 0):
            out.append(f"{request['id']}: message\n  {ma[:300]}\n  {mb[:300]}")
    return out


def write_sample(dump):
    """Every 24th request of the dump and every request answered `error` alone (so that batches
    hold failures that name their case, next to each other and apart), none over 16 KB."""
    lines = [line for line in open(dump) if len(line) <= 16384]
    requests = [json.loads(line) for line in lines]
    _, alone = replies(requests, 1)
    keep = [line for n, (line, r) in enumerate(zip(lines, requests)) if n % 24 == 0 or alone[r["id"]]["type"] == "error"]
    with open(SAMPLE, "w") as f:
        f.writelines(keep)
    print(f"{SAMPLE}: {len(keep)} of {len(lines)} requests")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump", nargs="?", default=SAMPLE)
    parser.add_argument("--batch", type=int, help="cases per batch (default: the hello's `batch`)")
    parser.add_argument("--write-sample", action="store_true")
    args = parser.parse_args()
    if args.write_sample:
        return write_sample(args.dump)
    requests = [json.loads(line) for line in open(args.dump)]
    hello, alone = replies(requests, 1)
    batch = args.batch or hello["batch"]
    _, batched = replies(requests, batch)
    found = differences(requests, alone, batched)
    unnamed, splits = replies_unnamed(requests, batch, alone)
    found += [f"(bisect) {line}" for line in differences([r for r in requests if r["id"] in unnamed], alone, unnamed)]
    if splits == 0 and any(r["type"] == "error" for r in alone.values()):
        found.append("(bisect) no batch was split: the failures did not reach bisect")
    for line in found:
        print(line)
    kinds = {}
    for reply in alone.values():
        kinds[reply["type"]] = kinds.get(reply["type"], 0) + 1
    past = sum(reads_past_the_input(r) for r in requests)
    print(f"{len(requests)} requests ({kinds}; {past} reading past their input), alone vs batches of {batch}, "
          f"and vs batches whose failures name no case ({splits} split): {len(found)} differences")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
