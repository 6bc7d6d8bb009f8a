#!/usr/bin/env python3
"""Mutation testing of the numpy backend (runner/backends/numpy/backend.py) by the suite.

Each mutant is the backend with one small change to its op semantics: an operator replaced
(+/-, * and //, % and //, <-><=, ==/!=, in/not in, and/or, min/max, any/all), an integer or
float constant off by one, a boolean flipped, an `if` condition forced true or false, an operand
of `and`/`or` dropped, a `not` or a unary minus dropped, two adjacent call arguments swapped, an
element dropped from a literal tuple of names (dtypes, modes), or a statement dropped. Only the
op functions and the tables they read are mutated, never the protocol plumbing (decoding,
encoding, the main loop); error messages are not mutated (the suite checks kinds, and a message
fragment only where a case asks for one).

A mutant is killed when the suite, run through `runner --backend` against a temporary copy of
the mutated backend, fails; only the trials of the ops whose handlers reach the mutated code run,
with `--fail-fast` (a killed mutant needs only its first failing trial), from this repository's
specs/, sweeps/ and golden/ whichever checkout the runner binary was built from.
Mutant ids are stable: `<function>.<operator>.<hash>`, the hash taken over the function, the
operator, the original and mutated source text and the ordinal of that same change within the
function, so an edit elsewhere in the backend leaves them unchanged.

A mutant that no case can kill (it changes nothing observable, or only an implementation-defined
result that the suite reports as a skip) is listed with its reason in
runner/backends/numpy/equivalent-mutants.toml.

    python3 scripts/mutation/mutate_numpy.py list                 # every mutant: id, ops, line, change
    python3 scripts/mutation/mutate_numpy.py show ID              # the mutated line(s) of one mutant
    python3 scripts/mutation/mutate_numpy.py run [--sample N] [--ids ID...] [--function F] [--resume] [--jobs 1]
    python3 scripts/mutation/mutate_numpy.py report               # docs/mutation.md from the last run
    python3 scripts/mutation/mutate_numpy.py ci                   # the fixed CI sample; fails on a survivor

`run` adds each verdict to target/mutation/numpy.json as it comes (`run --resume` carries on an
interrupted campaign; verdicts of another version of the backend are dropped), and `report`
writes docs/mutation.md from it. A mutant whose run ends without a verdict (the runner itself
failed) is recorded as `error` with the runner's output, reported, and run again by `--resume`.
The runner binary is target/release/runner (brought up to date with cargo first), or
--runner PATH.
"""

import argparse
import ast
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutation_page import KINDS, ORDER, md_cell, replace_sections  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BACKEND = os.path.join(ROOT, "runner", "backends", "numpy", "backend.py")
EQUIVALENT = os.path.join(ROOT, "runner", "backends", "numpy", "equivalent-mutants.toml")
RESULTS = os.path.join(ROOT, "target", "mutation", "numpy.json")
DOC = os.path.join(ROOT, "docs", "mutation.md")

# The op handlers of the backend (HANDLERS in backend.py, `op_<op>`), by op name, for the ops of
# the vocabulary generated from the Rust definitions (crates/spec/src/vocabulary.rs).
with open(os.path.join(ROOT, "schema", "vocabulary.json"), encoding="utf-8") as _f:
    HANDLERS = {op["name"]: f"op_{op['name']}" for op in json.load(_f)["ops"]}
# Functions that are protocol plumbing, not op semantics: never mutated.
PLUMBING = {
    "decode", "encode", "int_list", "shape_tensor", "get_input", "list_from",
    "coeffs", "summarize_exc", "handle", "main", "OpError", "Unsupported", "T",
}
# Calls whose arguments are not mutated (the error's kind and message) or not swapped
# (symmetric in their arguments).
NO_MUTATE_CALLS = {"OpError", "get_input", "list_from", "int_list", "shape_tensor", "decode", "encode"}
NO_SWAP_CALLS = {"min", "max", "np.add", "np.multiply", "OpError"}
# Guards of the wire format, protocol plumbing: the spec loader always provides input 0 (clause
# common.input.required has no case for that reason), requires a known mode, and types every
# attribute (reformat's `from` and `to` are required names of known formats, `dla` is orin or
# xavier), so only a malformed request reaches these (as `invalid_input`).
PLUMBING_TESTS = {
    "f is None",
    "f not in FORMATS",
    'dla not in ("orin", "xavier")',
    "x is None",
    "mode is None",
    'mode not in ("uniform", "channel", "elementwise")',
    "mode not in SLICE_MODES",
    "out_dtype is None",
    "not isinstance(zip_, bool)",
    "type(ca) is not int",
}

BINOP = {
    ast.Add: [ast.Sub], ast.Sub: [ast.Add], ast.Mult: [ast.FloorDiv],
    ast.FloorDiv: [ast.Mult, ast.Div], ast.Mod: [ast.FloorDiv], ast.Div: [ast.FloorDiv],
    ast.Pow: [ast.Mult], ast.BitAnd: [ast.BitOr], ast.BitOr: [ast.BitAnd],
    ast.BitXor: [ast.BitOr], ast.LShift: [ast.RShift], ast.RShift: [ast.LShift],
}
CMPOP = {
    ast.Lt: [ast.LtE], ast.LtE: [ast.Lt], ast.Gt: [ast.GtE], ast.GtE: [ast.Gt],
    ast.Eq: [ast.NotEq], ast.NotEq: [ast.Eq], ast.In: [ast.NotIn], ast.NotIn: [ast.In],
    ast.Is: [ast.IsNot], ast.IsNot: [ast.Is],
}
NAME_SWAP = {"min": "max", "max": "min", "any": "all", "all": "any"}
DEFAULT_SAMPLE = 60
class Mutant:
    __slots__ = ("id", "function", "operator", "line", "original", "mutated", "ops", "start", "end")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)

    def apply(self, source_bytes):
        return source_bytes[: self.start] + self.mutated.encode() + source_bytes[self.end :]

    def describe(self):
        return f"line {self.line}: `{self.original}` -> `{self.mutated}`"


def line_offsets(source_bytes):
    offs = [0]
    for i, b in enumerate(source_bytes):
        if b == 0x0A:
            offs.append(i + 1)
    return offs


def span(node, offs):
    return offs[node.lineno - 1] + node.col_offset, offs[node.end_lineno - 1] + node.end_col_offset


def names_used(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def reachable(tree):
    """Per op, the module-level names (functions and tables) its handler reaches."""
    defs = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
            defs[stmt.name] = names_used(stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    defs[t.id] = names_used(stmt.value)
    out = {}
    for op, handler in HANDLERS.items():
        seen, todo = set(), [handler]
        while todo:
            name = todo.pop()
            if name in seen or name not in defs:
                continue
            seen.add(name)
            todo.extend(defs[name])
        out[op] = seen
    return out


class Collector:
    """Walks one mutable unit (a function, or a module-level table) and records changes."""

    def __init__(self, unit, source_bytes, offs, ops):
        self.unit = unit
        self.src = source_bytes
        self.offs = offs
        self.ops = ops
        self.found = []  # (operator, node start, node end, original text, mutated text)
        self.index_zero = set()  # ids of constant 0 subscripts: x[0] -> x[-1] is no off-by-one
        self.minus_one_reshape = set()  # ids of the 1 in reshape(-1)

    def text(self, node):
        a, b = span(node, self.offs)
        return self.src[a:b].decode()

    def add(self, operator, node, mutated, start=None, end=None):
        a, b = span(node, self.offs)
        if start is not None:
            a, b = start, end
        original = self.src[a:b].decode()
        if original == mutated:
            return
        self.found.append((operator, node.lineno, a, b, original, mutated))

    def replace_expr(self, operator, node, new_node):
        self.add(operator, node, "(" + ast.unparse(new_node) + ")")

    def visit(self, node, parent_stmt_list=None):
        if isinstance(node, ast.JoinedStr):
            return  # error messages
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in NO_MUTATE_CALLS:
            return
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # docstring
        if isinstance(node, ast.If) and self.text(node.test) in PLUMBING_TESTS:
            for item in node.orelse:
                self.visit(item)
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "reshape":
            # numpy reads every negative reshape dim as "infer": reshape(-1) -> reshape(-2)
            # changes nothing; only reshape(-1) -> reshape(0) is a change.
            for arg in node.args:
                if isinstance(arg, ast.UnaryOp) and isinstance(arg.op, ast.USub) and isinstance(arg.operand, ast.Constant):
                    self.minus_one_reshape.add(id(arg.operand))
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == 0:
            # x[0] -> x[-1] reads the same element of a one-element sequence and the last one
            # otherwise: only x[0] -> x[1] is the off-by-one.
            self.index_zero.add(id(node.slice))
        self.mutate(node)
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item, value if isinstance(item, ast.stmt) else None)
            elif isinstance(value, ast.AST):
                if field == "annotation":
                    continue
                self.visit(value)

    def mutate(self, node):
        import copy

        if isinstance(node, ast.BinOp):
            for new in BINOP.get(type(node.op), []):
                m = copy.deepcopy(node)
                m.op = new()
                self.replace_expr("binop", node, m)
        elif isinstance(node, ast.AugAssign):
            for new in BINOP.get(type(node.op), []):
                m = copy.deepcopy(node)
                m.op = new()
                self.add("binop", node, ast.unparse(m))
        elif isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                for new in CMPOP.get(type(op), []):
                    m = copy.deepcopy(node)
                    m.ops[i] = new()
                    self.replace_expr("compare", node, m)
                # An element dropped from a literal tuple of names: a dtype or mode left out.
                right = node.comparators[i]
                if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                    self.drop_elements(right)
        elif isinstance(node, ast.BoolOp):
            m = copy.deepcopy(node)
            m.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            self.replace_expr("boolop", node, m)
            for i in range(len(node.values)):
                m = copy.deepcopy(node)
                del m.values[i]
                self.replace_expr("drop-operand", node, m.values[0] if len(m.values) == 1 else m)
        elif isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not) or (
                isinstance(node.op, ast.USub) and not isinstance(node.operand, ast.Constant)
            ):
                self.replace_expr("drop-unary", node, node.operand)
        elif isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool):
                self.add("constant", node, repr(not v))
            elif isinstance(v, int):
                if id(node) not in self.minus_one_reshape:
                    self.add("constant", node, "(" + str(v + 1) + ")" if v + 1 < 0 else str(v + 1))
                if id(node) not in self.index_zero:
                    self.add("constant", node, "(" + str(v - 1) + ")" if v - 1 < 0 else str(v - 1))
            elif isinstance(v, float) and v == v:
                self.add("constant", node, repr(v + 1.0))
                self.add("constant", node, "(" + repr(v - 1.0) + ")")
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in NAME_SWAP:
                self.add("name-swap", f, NAME_SWAP[f.id])
            fname = ast.unparse(f)
            if fname not in NO_SWAP_CALLS and not any(isinstance(a, ast.Starred) for a in node.args):
                for i in range(len(node.args) - 1):
                    a, b = node.args[i], node.args[i + 1]
                    if self.text(a) == self.text(b):
                        continue
                    m = copy.deepcopy(node)
                    m.args[i], m.args[i + 1] = m.args[i + 1], m.args[i]
                    self.replace_expr("swap-args", node, m)
        elif isinstance(node, (ast.If, ast.IfExp)):
            for value in (True, False):
                self.add("condition", node.test, repr(value))

    def drop_elements(self, seq):
        if len(seq.elts) < 2 or not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in seq.elts):
            return
        import copy

        for i in range(len(seq.elts)):
            m = copy.deepcopy(seq)
            del m.elts[i]
            text = ast.unparse(m)
            if isinstance(m, ast.Tuple) and len(m.elts) == 1:
                text = "(" + ast.unparse(m.elts[0]) + ",)"
            self.add("drop-element", seq, text)

    def statements(self, body, defined):
        """Statement drops in a function body: a raise, a call for its effect, an augmented
        assignment, a `continue`, an assignment into an existing object or re-binding a name
        bound before (dropping a first binding only raises NameError). A raise alone in an `if`
        body is left to the condition mutants (forcing that `if` false is the same change)."""
        for stmt in body:
            if isinstance(stmt, ast.If) and self.text(stmt.test) in PLUMBING_TESTS:
                self.statements(stmt.orelse, set(defined))
                continue
            drop = False
            if isinstance(stmt, ast.Raise):
                drop = True
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                drop = True
            elif isinstance(stmt, (ast.AugAssign, ast.Continue)):
                drop = True
            elif isinstance(stmt, ast.Assign):
                drop = all(
                    not isinstance(t, ast.Name) or t.id in defined for t in stmt.targets
                )
            if drop:
                a, b = span(stmt, self.offs)
                self.found.append(("drop-statement", stmt.lineno, a, b, self.src[a:b].decode(), "pass"))
            # Names bound by this statement are defined for the statements after it; nested
            # bodies see the names bound so far.
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    if isinstance(stmt, ast.If) and field == "body" and len(inner) == 1 and isinstance(inner[0], ast.Raise) and not stmt.orelse:
                        continue
                    self.statements(inner, set(defined) | bound_names(stmt, exclude_body=True))
            defined |= bound_names(stmt)


def bound_names(stmt, exclude_body=False):
    names = set()
    nodes = [stmt]
    if exclude_body:
        nodes = [getattr(stmt, f) for f in ("target", "items", "test", "iter") if getattr(stmt, f, None) is not None]
        flat = []
        for n in nodes:
            flat.extend(n if isinstance(n, list) else [n])
        nodes = flat
    for n in nodes:
        for t in ast.walk(n) if isinstance(n, ast.AST) else []:
            if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store):
                names.add(t.id)
    return names


def enumerate_mutants(path=BACKEND):
    with open(path, "rb") as f:
        src = f.read()
    tree = ast.parse(src)
    offs = line_offsets(src)
    reach = reachable(tree)
    base_dump = ast.dump(tree)
    mutants, seen_dumps = [], set()
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef):
            unit, body_nodes = stmt.name, [stmt]
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            unit, body_nodes = stmt.targets[0].id, [stmt.value]
        else:
            continue
        if unit in PLUMBING or unit == "HANDLERS":
            continue
        ops = sorted(op for op, names in reach.items() if unit in names)
        if not ops:
            continue  # not op semantics (protocol constants, the element budget variable, ...)
        c = Collector(unit, src, offs, ops)
        if isinstance(stmt, ast.FunctionDef):
            for item in stmt.body:
                c.visit(item)
            c.statements(stmt.body, {a.arg for a in stmt.args.args})
        else:
            c.visit(stmt.value)
            # Tables: a tuple of names (the dtypes a format or op accepts) loses an element.
            for node in ast.walk(stmt.value):
                if isinstance(node, (ast.Tuple, ast.List)):
                    c.drop_elements(node)
        counts = {}
        for operator, line, a, b, original, mutated in sorted(c.found, key=lambda f: (f[2], f[3], f[0], f[5])):
            mutated_src = src[:a] + mutated.encode() + src[b:]
            try:
                dump = ast.dump(ast.parse(mutated_src))
            except SyntaxError as e:
                raise SystemExit(f"internal error: mutant at line {line} ({original!r} -> {mutated!r}) does not parse: {e}")
            if dump == base_dump or dump in seen_dumps:
                continue  # the same program as the original or as an earlier mutant
            seen_dumps.add(dump)
            key = (operator, original, mutated)
            counts[key] = counts.get(key, 0) + 1
            h = hashlib.sha256(f"{unit}\0{operator}\0{original}\0{mutated}\0{counts[key]}".encode()).hexdigest()[:8]
            mutants.append(Mutant(
                id=f"{unit}.{operator}.{h}", function=unit, operator=operator, line=line,
                original=" ".join(original.split()), mutated=mutated, ops=ops, start=a, end=b,
            ))
    ids = [m.id for m in mutants]
    assert len(ids) == len(set(ids)), "mutant ids collide"
    return mutants, src


def ci_sample(mutants, n=DEFAULT_SAMPLE):
    """A fixed sample: the n mutants whose ids hash lowest (stable while the ids are)."""
    return sorted(mutants, key=lambda m: hashlib.sha256(m.id.encode()).hexdigest())[:n]


def load_equivalent():
    if not os.path.exists(EQUIVALENT):
        return {}
    with open(EQUIVALENT, "rb") as f:
        data = tomllib.load(f)
    out = {}
    for key, entry in data.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("reason"), str) or not entry["reason"].strip():
            raise SystemExit(f"{EQUIVALENT}: [{key!r}] needs a non-empty `reason` string")
        reason = entry["reason"].strip()
        if not reason.startswith(tuple(k + ":" for k in KINDS)):
            raise SystemExit(f"{EQUIVALENT}: [{key!r}] reason must start with one of {', '.join(k + ':' for k in KINDS)}")
        out[key] = reason
    return out


# ----------------------------------------------------------------------------------------------
# Running


def find_runner(path):
    if path:
        return os.path.abspath(path)
    # Always through cargo: a binary left from another version of the runner may lack a flag.
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "opspec-runner", "--bin", "runner"], cwd=ROOT, check=True)
    return os.path.join(ROOT, "target", "release", "runner")


def run_suite(runner, backend_path, ops, workdir, timeout):
    """Runs the trials of `ops` against the backend at `backend_path`; returns (status, detail)."""
    # The backend runs under a memory cap, so a mutant that drops a size check fails its case
    # instead of exhausting the machine.
    cmd = f"ulimit -v 2500000; OPENBLAS_NUM_THREADS=1 exec python3 {backend_path}"
    # The folders are named: a runner reads by default those of the checkout it was built from.
    args = [
        runner, "--backend", cmd, "--timeout", "20", "--backend-log", os.path.join(workdir, "backend.log"),
        "--specs", os.path.join(ROOT, "specs"), "--sweeps", os.path.join(ROOT, "sweeps"),
        "--golden", os.path.join(ROOT, "golden"), "--fail-fast", "-q", "--test-threads", "1",
    ]
    if len(ops) == 1:
        args.append(f"{ops[0]}::")
    else:
        for op in HANDLERS:
            if op not in ops:
                args += ["--skip", f"{op}::"]
    try:
        p = subprocess.run(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, text=True)
    except subprocess.TimeoutExpired:
        return "killed", f"the run took over {timeout} s"
    out = p.stdout
    m = re.search(r"test result: \w+\. (\d+) passed; (\d+) failed", out)
    if p.returncode == 0 and m and int(m.group(2)) == 0:
        return "survived", f"{m.group(1)} trials passed"
    if m and int(m.group(2)) > 0:
        failed = re.findall(r"^    (\S+)$", out, re.M)
        first = failed[0] if failed else ""
        return "killed", f"{m.group(1)} trials passed, then {first or 'a trial'} failed"
    return "error", f"exit status {p.returncode}: " + out[-2000:]


def run_one(runner, mutant, src, timeout):
    work = tempfile.mkdtemp(prefix="opspec-mutant-")
    try:
        path = os.path.join(work, "backend.py")
        with open(path, "wb") as f:
            f.write(mutant.apply(src) if mutant is not None else src)
        t0 = time.monotonic()
        status, detail = run_suite(runner, path, mutant.ops if mutant is not None else list(HANDLERS), work, timeout)
        return status, detail, time.monotonic() - t0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def load_results(src):
    """Saved results of the current backend (results of another version of it are dropped)."""
    if not os.path.exists(RESULTS):
        return {}
    with open(RESULTS) as f:
        data = json.load(f)
    if data.get("backend") != hashlib.sha256(src).hexdigest():
        return {}
    return data.get("results", {})


def save_results(src, results):
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    tmp = RESULTS + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"backend": hashlib.sha256(src).hexdigest(), "results": results}, f, indent=1, sort_keys=True)
    os.replace(tmp, RESULTS)


def campaign(mutants, src, runner, jobs, timeout, progress=True, save=None):
    """Runs `mutants`; with `save` (the ids of every current mutant), adds each verdict to the
    results file as it comes, dropping those of mutants that no longer exist."""
    # The unmutated backend passes every op's trials, or no verdict means anything.
    for op in HANDLERS:
        fake = Mutant(id="original", function="", operator="", line=0, original="", mutated="", ops=[op], start=0, end=0)
        status, detail, _ = run_one(runner, fake, src, timeout)
        if status != "survived":
            raise SystemExit(f"the unmutated backend fails the {op} trials: {detail}")
    results = {}
    saved = {i: r for i, r in load_results(src).items() if i in save} if save else {}
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_one, runner, m, src, timeout): m for m in mutants}
        for i, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            m = futures[fut]
            status, detail, secs = fut.result()
            if status == "error":
                print(f"mutant {m.id}: the runner gave no verdict:\n{detail}", file=sys.stderr, flush=True)
            results[m.id] = {"status": status, "detail": detail, "seconds": round(secs, 2)}
            if save:
                saved[m.id] = results[m.id]
                save_results(src, saved)
            if progress:
                print(f"[{i}/{len(mutants)}] {status:8} {m.id}  {m.describe()}", file=sys.stderr, flush=True)
    return results, time.monotonic() - t0


# ----------------------------------------------------------------------------------------------
# Report


def write_report(all_mutants, results, equivalent):
    by_id = {m.id: m for m in all_mutants}
    errors = [m for m in all_mutants if results.get(m.id, {}).get("status") == "error"]
    results = {i: r for i, r in results.items() if r["status"] != "error"}
    not_run = [m for m in all_mutants if m.id not in results]
    mutants = [m for m in all_mutants if m.id in results]
    if not mutants:
        raise SystemExit(f"no result in {RESULTS} for this version of the backend: run `run` first")
    per_mutant = sum(results[m.id]["seconds"] for m in mutants) / len(mutants)
    print(f"one mutant's run took {per_mutant:.1f} s on average", file=sys.stderr)
    killed = [m for m in mutants if results[m.id]["status"] == "killed"]
    surv = [m for m in mutants if results[m.id]["status"] == "survived"]
    eq = [m for m in surv if m.id in equivalent]
    live = [m for m in surv if m.id not in equivalent]
    total = len(mutants)
    score = len(killed) / (total - len(eq)) if total > len(eq) else 1.0
    stale = sorted(set(equivalent) - set(by_id))
    killed_eq = sorted(m.id for m in killed if m.id in equivalent)
    # This campaign's sections of the page; the reference's is scripts/mutation/mutate_reference.py's.
    lines = [
        "## The numpy backend",
        "",
        "Regenerated by `python3 scripts/mutation/mutate_numpy.py run && python3 scripts/mutation/mutate_numpy.py report`.",
        "",
        "Each mutant is `runner/backends/numpy/backend.py` with one small change to its op semantics",
        "(an operator, a constant off by one, a flipped boolean, a forced condition, a dropped operand,",
        "argument, table entry or statement; `scripts/mutation/mutate_numpy.py` lists the operators). It is",
        "killed when the suite, run through the backend protocol against the mutant, fails; only the",
        "trials of the ops whose handlers reach the mutated code run, and the run stops at the first",
        "failing trial (`runner --fail-fast`). An equivalent mutant is one no case can kill; its",
        "reason is kept in `runner/backends/numpy/equivalent-mutants.toml`.",
        "The reasons are of three kinds:",
        "",
    ] + [f"- {kind}: {text}." for kind, text in KINDS.items()] + [
        "",
        "| | mutants |",
        "|---|---|",
        f"| total | {total}" + (f" run, of {len(all_mutants)} ({len(not_run)} not run yet"
                                + (f", {len(errors)} of them without a verdict" if errors else "")
                                + ": the figures cover only the run ones)" if not_run else "") + " |",
        f"| killed | {len(killed)} |",
        f"| survived, listed as not killable | {len(eq)} ({100 * len(eq) / total:.1f} % of the total) |",
    ] + [
        f"| - {kind.lower()} | {sum(equivalent[m.id].startswith(kind + ':') for m in eq)} |" for kind in KINDS
    ] + [
        f"| survived, not equivalent | {len(live)} |",
        f"| **score** (killed / non-equivalent) | **{100 * score:.1f} %** |",
        "",
        # The time per mutant goes to stderr, not to the page: it has no date or machine with it
        # (scripts/benchmarks/test_figures.py).
        "",
        "Per function:",
        "",
        "| function | ops | mutants | killed | equivalent | survived |",
        "|---|---|---|---|---|---|",
    ]
    funcs = []
    for m in mutants:
        if m.function not in funcs:
            funcs.append(m.function)
    for fn in funcs:
        ms = [m for m in mutants if m.function == fn]
        k = sum(results[m.id]["status"] == "killed" for m in ms)
        e = sum(m in eq for m in ms)
        s = sum(m in live for m in ms)
        lines.append(f"| `{fn}` | {', '.join(ms[0].ops)} | {len(ms)} | {k} | {e} | {s} |")
    lines += ["", "Per operator:", "", "| operator | mutants | killed | equivalent | survived |", "|---|---|---|---|---|"]
    for op in sorted({m.operator for m in mutants}):
        ms = [m for m in mutants if m.operator == op]
        k = sum(results[m.id]["status"] == "killed" for m in ms)
        lines.append(f"| {op} | {len(ms)} | {k} | {sum(m in eq for m in ms)} | {sum(m in live for m in ms)} |")
    if live:
        lines += ["", "### Surviving mutants", "", "| id | change |", "|---|---|"]
        for m in live:
            lines.append(f"| `{m.id}` | {md_cell(m.describe())} |")
    lines += ["", "### Equivalent mutants", ""]
    if eq:
        lines += ["| id | change | why no case can kill it |", "|---|---|---|"]
        for m in eq:
            lines.append(f"| `{m.id}` | {md_cell(m.describe())} | {md_cell(equivalent[m.id])} |")
    else:
        lines.append("None.")
    if stale or killed_eq:
        lines += ["", "### Stale entries of the equivalents file", ""]
        for i in stale:
            lines.append(f"- `{i}`: no such mutant any more")
        for i in killed_eq:
            lines.append(f"- `{i}`: listed as equivalent, but killed")
    ci = [
        "## CI",
        "",
        f"`.ci/run` runs a fixed sample of {DEFAULT_SAMPLE} of these mutants (`python3 scripts/mutation/mutate_numpy.py ci`:",
        "the mutants whose ids hash lowest) and fails if a non-equivalent one survives.",
        "",
    ]
    replace_sections({"The numpy backend": lines, "CI": ci}, ORDER, doc=DOC)
    return live, stale, killed_eq


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    p_show = sub.add_parser("show")
    p_show.add_argument("id")
    for name in ("run", "ci"):
        p = sub.add_parser(name)
        p.add_argument("--runner", help="runner binary (default target/release/runner, built if missing)")
        p.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
        p.add_argument("--timeout", type=int, default=300, help="seconds for one mutant's run")
        if name == "run":
            p.add_argument("--sample", type=int, help="only the first N mutants of the CI order")
            p.add_argument("--ids", nargs="+", help="only these mutants")
            p.add_argument("--function", help="only the mutants of this function")
            p.add_argument("--resume", action="store_true", help="skip the mutants target/mutation/numpy.json has a result for")
        else:
            p.add_argument("--sample", type=int, default=DEFAULT_SAMPLE)
    sub.add_parser("report")
    args = ap.parse_args(argv)

    mutants, src = enumerate_mutants()
    if args.cmd == "list":
        for m in mutants:
            print(f"{m.id}\t{','.join(m.ops)}\t{m.describe()}")
        print(f"{len(mutants)} mutants", file=sys.stderr)
        return 0
    if args.cmd == "show":
        m = next((m for m in mutants if m.id == args.id), None)
        if m is None:
            raise SystemExit(f"no mutant {args.id!r} (see `list`)")
        print(f"{m.id} ({', '.join(m.ops)}): {m.describe()}")
        return 0
    equivalent = load_equivalent()
    if args.cmd == "report":
        live, stale, killed_eq = write_report(mutants, load_results(src), equivalent)
        print(f"wrote {os.path.relpath(DOC, ROOT)}: {len(live)} non-equivalent survivors", file=sys.stderr)
        return 0
    runner = find_runner(args.runner)
    if args.cmd == "run":
        chosen = mutants
        if args.ids:
            known = {m.id for m in mutants}
            bad = [i for i in args.ids if i not in known]
            if bad:
                raise SystemExit(f"no mutant {bad[0]!r} (see `list`)")
            chosen = [m for m in mutants if m.id in args.ids]
        if args.function:
            chosen = [m for m in chosen if m.function == args.function]
        if args.sample:
            chosen = ci_sample(chosen, args.sample)
        if args.resume:
            done = {i for i, r in load_results(src).items() if r["status"] != "error"}
            chosen = [m for m in chosen if m.id not in done]
        results, elapsed = campaign(chosen, src, runner, args.jobs, args.timeout, save={m.id for m in mutants})
        survived = [m for m in chosen if results[m.id]["status"] == "survived"]
        errors = [m for m in chosen if results[m.id]["status"] == "error"]
        live = [m for m in survived if m.id not in equivalent]
        print(f"{len(chosen)} mutants in {elapsed:.0f} s: {len(chosen) - len(survived) - len(errors)} killed, "
              f"{len(survived) - len(live)} equivalent, {len(live)} survived, {len(errors)} without a verdict",
              file=sys.stderr)
        for m in live:
            print(f"survived: {m.id} ({', '.join(m.ops)}) {m.describe()}")
        for m in errors:
            print(f"no verdict: {m.id} ({', '.join(m.ops)}) {m.describe()}")
        return 1 if errors else 0
    # ci
    stale = sorted(set(equivalent) - {m.id for m in mutants})
    if stale:
        print(f"{os.path.relpath(EQUIVALENT, ROOT)} lists mutants that no longer exist (the backend changed): "
              f"{', '.join(stale)}; remove them or re-check their reasons")
        return 1
    chosen = ci_sample(mutants, args.sample)
    results, elapsed = campaign(chosen, src, runner, args.jobs, args.timeout, progress=False)
    survived = [m for m in chosen if results[m.id]["status"] == "survived"]
    errors = [m for m in chosen if results[m.id]["status"] == "error"]
    live = [m for m in survived if m.id not in equivalent]
    print(f"mutation sample: {len(chosen)} mutants of the numpy backend in {elapsed:.0f} s: "
          f"{len(chosen) - len(survived) - len(errors)} killed, {len(survived) - len(live)} equivalent, "
          f"{len(live)} survived, {len(errors)} without a verdict")
    for m in live:
        print(f"  survived: {m.id} ({', '.join(m.ops)}) {m.describe()}")
    for m in errors:
        print(f"  no verdict: {m.id} ({', '.join(m.ops)}): {results[m.id]['detail'][-500:]}")
    return 1 if live or errors else 0


if __name__ == "__main__":
    sys.exit(main())
