#!/usr/bin/env python3
"""Batching never changes a reply: the same requests sent to the adapter once as single `run`
requests and once as `batch` requests of the hello's size get, case for case, equal replies (type,
kind, message, outputs, composed notes), one reply per case. Run by runner/tests/engines.rs on
batch_sample.jsonl (640 requests of the suite: blocks of 40 consecutive requests from a
`runner --dump-requests` of the whole run, so that its structures repeat as in a run); give a
dump to check a whole run:

    python3 runner/backends/onnxruntime/test_batch.py [DUMP] [--batch N]

Exit 0 when every reply is equal."""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BACKEND = [sys.executable, os.path.join(HERE, "backend.py")]


def replies(lines):
    """The adapter's replies to the hello and then `lines` (JSON request lines), by case id;
    the hello's reply apart."""
    text = "".join(line + "\n" for line in [json.dumps({"type": "hello", "protocol": 1})] + lines)
    out = subprocess.run(BACKEND, input=text, capture_output=True, text=True, check=True).stdout
    got = [json.loads(line) for line in out.splitlines()]
    hello, by_id = got[0], {}
    for reply in got[1:]:
        assert reply["id"] not in by_id, f"two replies to {reply['id']}"
        by_id[reply["id"]] = reply
    return hello, by_id


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dump", nargs="?", default=os.path.join(HERE, "batch_sample.jsonl"))
    parser.add_argument("--batch", type=int, help="cases per batch (default: the hello's batch)")
    args = parser.parse_args()
    with open(args.dump) as f:
        requests = [json.loads(line) for line in f if line.strip()]
    hello, single = replies([json.dumps(r) for r in requests])
    size = args.batch or hello.get("batch")
    assert isinstance(size, int) and size > 1, f"the hello declares no batch: {hello.get('batch')!r}"
    batches = [json.dumps({"type": "batch", "cases": requests[i : i + size]}) for i in range(0, len(requests), size)]
    _, batched = replies(batches)
    ids = [r["id"] for r in requests]
    assert sorted(single) == sorted(batched) == sorted(ids), "a case got no reply, or a reply names no case"
    differ = [i for i in ids if single[i] != batched[i]]
    for i in differ[:10]:
        print(f"DIFFER {i}:\n  single:  {json.dumps(single[i])[:400]}\n  batched: {json.dumps(batched[i])[:400]}", file=sys.stderr)
    kinds = {}
    for reply in single.values():
        kind = reply["type"] + (f" {reply['kind']}" if "kind" in reply else "") + (" composed" if "composed" in reply else "")
        kinds[kind] = kinds.get(kind, 0) + 1
    print(f"{len(ids)} cases in batches of {size}: {len(ids) - len(differ)} replies equal, {len(differ)} differ")
    print("replies: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
