#!/usr/bin/env python3
"""Tests of scripts/engines/engines_md.py: docs/engines.md's counts are the runs' own. From a folder of
JSON reports (made up here, one per engine, each entry of its known-failures file matching a
number of trials of its own), every engine's column and section add up to its report's known
failures, trials the hello excluded count nowhere, and docs/engine-runs.json keeps what the page
is written from; a missing report, one made with another version of the known-failures file, one
whose known failures do not add up, and a file whose entries are not those its run counted stop
the script with the command that makes the report. And the page in the repository adds up to the
runs docs/engine-runs.json records. The known-failures files are read through the runner
(`runner expectations`): OPSPEC_RUNNER, target/release/runner, or cargo. Run by
runner/tests/engines.rs; exit 0 when every test passes.

    python3 scripts/engines/test_engines_md.py
"""

import contextlib
import io
import json
import os
import re
import sys
import tempfile
import unittest
from unittest import mock

sys.dont_write_bytecode = True  # leave no __pycache__ beside the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import engines_md  # noqa: E402

ROOT = engines_md.ROOT
RUNNER = os.environ.get("OPSPEC_RUNNER") or (
    os.path.join(ROOT, "target", "release", "runner") if os.path.exists(os.path.join(ROOT, "target", "release", "runner")) else None
)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def report(engine, manifest, shift=0):
    """A made-up report of the engine's run: entry i of its known-failures file makes
    (i + shift) % 3 trials known failures; besides, two passed trials (one composed) and three
    excluded ones (one of them composed)."""
    listed = engines_md.listing(RUNNER, os.path.join(ROOT, manifest["expectations"]))
    trials, matched = [], []
    for i, entry in enumerate(listed["entries"]):
        names = [f"slice::made_up::line{entry['line']}::{k}" for k in range((i + shift) % 3)]
        trials += [{"name": n, "op": "slice", "dtype": None, "status": "known_failure", "message": "", "seconds": 0.0} for n in names]
        if names:
            matched.append({"line": entry["line"], "selector": entry["selector"], "clause": entry["clause"], "class": entry["class"], "reason": entry["reason"], "trials": names})
    trials += [
        {"name": "shuffle::made_up::a", "op": "shuffle", "dtype": None, "status": "passed", "message": "", "seconds": 0.0},
        {"name": "shuffle::made_up::b", "op": "shuffle", "dtype": None, "status": "passed", "message": "", "seconds": 0.0, "composed": ["shuffle"]},
    ] + [
        {"name": f"scale::made_up::{k}", "op": "scale", "dtype": None, "status": "excluded", "message": "", "seconds": 0.0, "composed": ["scale"] if k == 0 else []}
        for k in range(3)
    ]
    known = sum(len(m["trials"]) for m in matched)
    return {
        "backend": manifest["backend"],
        "facts": {"engine": engine, "version": "1.0", "os": "linux", "arch": "x86_64", "cpu_model": "Test CPU"},
        "run": {"runner": "0.0.0", "selected": len(trials), "expectations": listed["fingerprint"], "backend_command": manifest["backend"]},
        "passed": 2,
        "known_failures": known,
        "excluded": 3,
        "known_failure_entries": matched,
        "trials": trials,
    }


def column_sums(page):
    """{engine's display name: the sum of its column of the summary table}."""
    lines = page.split("\n")
    head = next(i for i, l in enumerate(lines) if l.startswith("| clause | rule | "))
    names = [c.strip() for c in lines[head].strip("|").split("|")][2:]
    sums = dict.fromkeys(names, 0)
    for line in lines[head + 2:]:
        if not line.startswith("| `"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")][-len(names):]
        for name, cell in zip(names, cells):
            sums[name] += sum(int(n) for n in re.findall(r"(\d+) (?:semantics|defect|adapter|untriaged)", cell))
    return sums


def sections(page):
    """{engine's display name: (trials its section counts, its run's known failures)}."""
    found = {}
    for name, total, known in re.findall(r"\n## (.+)\n\n`[^`]+`: \d+ clauses, (\d+) trials\..*\n.*?(\d+) known failures\.", page):
        found[name] = (int(total), int(known))
    return found


class Counts(unittest.TestCase):
    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.folder = folder.name
        self.reports = {}
        for engine, manifest in engines_md.ENGINES.items():
            self.reports[engine] = report(engine, manifest, shift=len(self.reports))
            self.write(engine, self.reports[engine])

    def write(self, engine, data):
        with open(os.path.join(self.folder, f"{engine}.json"), "w", encoding="utf-8") as f:
            json.dump(data, f)

    def refused(self, *expected):
        with self.assertRaises(SystemExit) as stop, contextlib.redirect_stderr(io.StringIO()):
            engines_md.read_runs(RUNNER, self.folder)
        message = str(stop.exception.code)
        for text in expected:
            self.assertIn(text, message)
        return message

    def test_the_page_counts_the_trials_of_each_report(self):
        runs = engines_md.read_runs(RUNNER, self.folder)
        page = engines_md.page(RUNNER, runs)
        sums, totals = column_sums(page), sections(page)
        for engine, data in self.reports.items():
            name = engines_md.ENGINE_NAMES[engine]
            with self.subTest(engine=engine):
                self.assertEqual(sums[name], data["known_failures"])
                self.assertEqual(totals[name], (data["known_failures"], data["known_failures"]))
                self.assertEqual(runs[engine]["known_failures"], data["known_failures"])
                # Excluded trials count nowhere: 2 shuffle trials judged (1 composed), no scale.
                self.assertEqual(runs[engine]["ops"]["shuffle"], {"trials": 2, "composed": 1})
                self.assertNotIn("scale", runs[engine]["ops"])
                self.assertEqual(runs[engine]["excluded"], 3)
        self.assertIn("Test CPU linux x86_64", page)

    def test_the_runs_file_gives_the_same_page_without_the_reports(self):
        runs = engines_md.read_runs(RUNNER, self.folder)
        saved = os.path.join(self.folder, "engine-runs.json")
        with open(saved, "w", encoding="utf-8") as f:
            json.dump(runs, f)
        with mock.patch.object(engines_md, "RUNS", saved):
            again = engines_md.read_runs(RUNNER, None)
        self.assertEqual(engines_md.page(RUNNER, again), engines_md.page(RUNNER, runs))

    def test_a_missing_report_stops_the_script_with_the_command_that_makes_it(self):
        engine = next(iter(engines_md.ENGINES))
        os.remove(os.path.join(self.folder, f"{engine}.json"))
        self.refused(f"no report of {engine}'s run", f"python3 scripts/engines/engines.py run {engine} --ci -- -q --report-json")

    def test_a_report_of_another_known_failures_file_stops_the_script(self):
        engine = next(iter(engines_md.ENGINES))
        self.reports[engine]["run"]["expectations"] = "0000000000000000"
        self.write(engine, self.reports[engine])
        self.refused("made with another version of", "run it again")

    def test_known_failures_that_do_not_add_up_stop_the_script(self):
        engine = next(iter(engines_md.ENGINES))
        self.reports[engine]["known_failures"] += 1
        self.write(engine, self.reports[engine])
        self.refused("do not add up")

    def test_a_part_of_a_run_stops_the_script(self):
        engine = next(iter(engines_md.ENGINES))
        self.reports[engine]["run"]["partition"] = "1/2"
        self.write(engine, self.reports[engine])
        self.refused("part 1/2 of a run")

    def test_entries_that_are_not_those_the_run_counted_stop_the_script(self):
        runs = engines_md.read_runs(RUNNER, self.folder)
        engine = next(iter(engines_md.ENGINES))
        runs[engine]["entries"][0]["key"] = "slice::other | slice.reflect.mirror | semantics | "
        with self.assertRaises(SystemExit) as stop:
            engines_md.page(RUNNER, runs)
        self.assertIn("its entries are not those its run counted", str(stop.exception.code))


class Repository(unittest.TestCase):
    def test_the_page_adds_up_to_the_recorded_runs(self):
        runs = json.loads(read(engines_md.RUNS))
        page = read(engines_md.PAGE)
        sums, totals = column_sums(page), sections(page)
        for engine, run in runs.items():
            name = engines_md.ENGINE_NAMES[engine]
            with self.subTest(engine=engine):
                self.assertEqual(sum(e["trials"] for e in run["entries"]), run["known_failures"])
                self.assertEqual(sums[name], run["known_failures"])
                self.assertEqual(totals[name], (run["known_failures"], run["known_failures"]))


if __name__ == "__main__":
    unittest.main()
