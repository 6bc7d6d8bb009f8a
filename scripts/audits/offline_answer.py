#!/usr/bin/env python3
"""A harness of offline cases in plain Python (standard library only): it reads the folder
`runner export --cases DIR` wrote, and nothing else of this project, and writes the answers
`runner judge DIR` reads (docs/protocol.md, "Offline cases"). A harness on a device does the
same in its own language, calling its engine where this one asks a protocol backend.

    python3 scripts/audits/offline_answer.py DIR --backend CMD [--wrong ID ...]

Each case of DIR/index.json is sent to the backend process CMD (any protocol backend, such as
`target/release/runner --serve`) as the `run` request a live run sends, its tensors read from
their files; its reply is written to DIR/answers/<key>.json without its `id`, each output's
bytes to DIR/answers/<key>.out<k>.bin, named by `file`. The backend's hello goes to
DIR/answers/hello.json, with the machine's facts as `platform` (read as the runner reads them:
the operating system, the architecture and the first processor of /proc/cpuinfo), since the
judge runs elsewhere. `--wrong ID` flips the lowest bit of the first byte of case ID's first
output, as an engine with a bug would (for the tests).
"""

import argparse
import base64
import json
import os
import platform
import shlex
import subprocess
import sys


def machine():
    """The facts of this machine, as the runner reads its own (runner/src/backend/facts.rs)."""
    facts = {"os": platform.system().lower(), "arch": platform.machine()}
    try:
        with open("/proc/cpuinfo") as f:
            first = f.read().split("\n\n")[0]
    except OSError:
        return facts
    for line in first.splitlines():
        key, colon, value = line.partition(":")
        if not colon:
            continue
        key, value = key.strip(), value.strip()
        if key == "vendor_id":
            facts["cpu_vendor"] = value
        elif key == "model name":
            facts["cpu_model"] = value
        elif key in ("flags", "Features"):
            facts["cpu_flags"] = sorted(value.split())
    return facts


def read(folder, tensor):
    """A tensor of the index, `{dtype, shape, file}`, as the wire's `{dtype, shape, data}`."""
    with open(os.path.join(folder, tensor["file"]), "rb") as f:
        data = f.read()
    return {"dtype": tensor["dtype"], "shape": tensor["shape"], "data": base64.b64encode(data).decode()}


def request(folder, case):
    """The `run` request of a case of the index, as a live run sends it."""
    attrs = {name: read(folder, value) if isinstance(value, dict) and "file" in value else value
             for name, value in case["attrs"].items()}
    inputs = [None if t is None else read(folder, t) for t in case["inputs"]]
    return {"type": "run", "id": case["id"], "op": case["op"], "attrs": attrs, "inputs": inputs}


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f)
        f.write("\n")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--backend", required=True, help="a protocol backend's command line")
    parser.add_argument("--wrong", action="append", default=[], metavar="ID")
    args = parser.parse_args(argv)
    folder = args.folder
    with open(os.path.join(folder, "index.json")) as f:
        index = json.load(f)
    answers = os.path.join(folder, "answers")
    os.makedirs(answers, exist_ok=True)
    backend = subprocess.Popen(shlex.split(args.backend), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(message):
        backend.stdin.write(json.dumps(message) + "\n")
        backend.stdin.flush()
        return json.loads(backend.stdout.readline())

    hello = ask({"type": "hello", "protocol": 1})
    hello["platform"] = {**machine(), **hello.get("platform", {})}
    write_json(os.path.join(answers, "hello.json"), hello)
    for case in index["cases"]:
        key = case["key"]
        reply = ask(request(folder, case))
        reply.pop("id", None)  # the file names the case
        for k, output in enumerate(reply.get("outputs", [])):
            if "data" not in output:
                continue
            data = bytearray(base64.b64decode(output.pop("data")))
            if case["id"] in args.wrong and k == 0 and data:
                data[0] ^= 1
            output["file"] = f"answers/{key}.out{k}.bin"
            with open(os.path.join(folder, output["file"]), "wb") as f:
                f.write(data)
        write_json(os.path.join(answers, f"{key}.json"), reply)
    backend.stdin.close()
    backend.wait()
    print(f"answered {len(index['cases'])} cases in {answers}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
