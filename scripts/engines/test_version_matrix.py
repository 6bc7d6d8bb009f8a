#!/usr/bin/env python3
"""Tests of scripts/engines/version_matrix.py's checks of what it reads: a report filed under a version
its run was not of is refused, and a corrupt report or times.json is a message, not a traceback;
the engines, versions and pins are the `version_matrix` tables of their engine.toml. Run by runner/tests/engines.rs; exit 0 when every test passes.

    python3 scripts/engines/test_version_matrix.py
"""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

sys.dont_write_bytecode = True  # leave no __pycache__ beside the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import version_matrix  # noqa: E402

VERSIONS = ["2024.6.0", "2025.4.1", "2026.0.0"]


class NoRun(unittest.TestCase):
    def setUp(self):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.out = scratch.name
        for patch in [
            mock.patch.object(version_matrix, "OUT", self.out),
            mock.patch.object(version_matrix, "matrix", lambda: {"engine": {"package": "engine", "versions": VERSIONS, "overrides": {}, "notes": {}, "display": "Engine"}}),
            mock.patch.object(version_matrix, "versions", lambda engine, spec: VERSIONS),
        ]:
            patch.start()
            self.addCleanup(patch.stop)

    def report(self, version, facts_version):
        facts = {"engine": "engine"} if facts_version is None else {"engine": "engine", "version": facts_version}
        with open(os.path.join(self.out, f"engine-{version}.json"), "w", encoding="utf-8") as f:
            json.dump({"backend": "engine", "trials": [], "facts": facts}, f)

    def main(self, *argv):
        """(exit code, stderr) of the script with `argv`; the runner's commands are not run."""
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), \
                mock.patch.object(version_matrix.subprocess, "run") as run:
            run.return_value.returncode = 0
            run.return_value.stdout = ""
            try:
                version_matrix.main(["--runner", sys.executable, *argv])
                code = 0
            except SystemExit as stop:
                code = stop.code
        return code, err.getvalue()

    def test_one_report_copied_under_three_versions_is_refused(self):
        for version in VERSIONS:
            self.report(version, "2025.4.1")
        code, err = self.main("engine", "--no-run")
        self.assertEqual(code, 2, err)
        self.assertIn("engine-2024.6.0.json is filed under engine 2024.6.0, but its run was of version 2025.4.1", err)

    def test_reports_of_their_own_versions_are_taken(self):
        for version, said in zip(VERSIONS, ["2024.6.0", "2025.4.1+cpu", "2026"]):
            self.report(version, said)
        code, err = self.main("engine", "--no-run")
        self.assertEqual(code, 0, err)

    def test_a_report_without_a_version_is_refused(self):
        for version in VERSIONS:
            self.report(version, None if version == VERSIONS[1] else version)
        code, err = self.main("engine", "--no-run")
        self.assertEqual(code, 2, err)
        self.assertIn("its run names no engine version", err)

    def test_a_corrupt_report_or_times_file_is_a_message(self):
        for version in VERSIONS:
            self.report(version, version)
        times = os.path.join(self.out, "times.json")
        for text in ['{"engine-2024.6.0": 1', "[1, 2]", '{"total": "ten"}', "\udcff"]:
            with self.subTest(text=text):
                with open(times, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(text)
                code, err = self.main("engine", "--no-run")
                self.assertEqual(code, 2, err)
                self.assertIn("times.json is not the times of a run", err)
                self.assertNotIn("Traceback", err)
        os.remove(times)
        with open(os.path.join(self.out, f"engine-{VERSIONS[0]}.json"), "w", encoding="utf-8") as f:
            f.write("{not json")
        code, err = self.main("engine", "--no-run")
        self.assertEqual(code, 2, err)
        self.assertIn("is not a JSON report", err)

    def test_versions_are_the_same_as_the_runner_says(self):
        same = version_matrix.same_version
        self.assertTrue(same("1.13.1+cpu", "1.13.1"))
        self.assertTrue(same("1.2", "1.2.0"))
        self.assertFalse(same("2.0.0-rc1", "2.0.0"))
        self.assertFalse(same("1.20.1", "1.2.1"))


class Matrix(unittest.TestCase):
    """The engines, versions and pins come from the manifests' `version_matrix` tables."""

    def test_the_matrix_is_the_manifests_tables(self):
        specs = version_matrix.matrix()
        self.assertEqual(list(specs), ["onnxruntime", "openvino"])
        self.assertEqual(specs["onnxruntime"]["display"], "ONNX Runtime")
        self.assertEqual(specs["openvino"]["notes"], {})
        pinned = dict(version_matrix.pins("onnxruntime"))["onnxruntime"]
        runs = version_matrix.versions("onnxruntime", specs["onnxruntime"])
        self.assertEqual(runs[-1], pinned)
        self.assertEqual(runs[0], "1.18.1")
        wanted = version_matrix.requirements("onnxruntime", specs["onnxruntime"], "1.18.1")
        self.assertIn("onnxruntime==1.18.1", wanted)
        self.assertIn("numpy==1.26.4", wanted)

    def test_an_engine_without_a_table_or_a_package_it_does_not_pin_stops_the_script(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), self.assertRaises(SystemExit) as stop:
            version_matrix.main(["numpy", "--no-run"])
        self.assertEqual(stop.exception.code, 2)
        self.assertIn("no engine 'numpy' with a `version_matrix` in its engine.toml", err.getvalue())
        spec = {"package": "no-such-package", "versions": ["1.0"], "overrides": {}, "notes": {}}
        with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as stop:
            version_matrix.versions("onnxruntime", spec)
        self.assertEqual(stop.exception.code, 2)
        self.assertIn("runner/backends/onnxruntime/requirements.txt pins no no-such-package", err.getvalue())


if __name__ == "__main__":
    unittest.main()
