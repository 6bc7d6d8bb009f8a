#!/usr/bin/env python3
"""Tests of scripts/engines/engines.py, the reader of the engine manifests: the repository's manifests are
valid and name files that exist, a manifest with an unknown, missing or mistyped key stops every
command naming the file and the key, and a run's command line is the manifest's. Run by
runner/tests/engines.rs; exit 0 when every test passes.

    python3 scripts/engines/test_engines.py
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

import engines  # noqa: E402

VALID = """display = "Engine"
python = "python3"
modules = "engine"
install = "python3 -m pip install -r runner/backends/engine/requirements.txt"
backend = "python3 runner/backends/engine/backend.py"
expectations = "runner/backends/engine/known-failures.txt"
options = ["--timeout", "10"]
ci = "whole"
"""


class Manifests(unittest.TestCase):
    def backends(self, **manifests):
        """A folder of adapters, a `<name>/engine.toml` of each text given (None: none)."""
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        for name, text in manifests.items():
            os.mkdir(os.path.join(scratch.name, name))
            if text is None:
                continue
            with open(os.path.join(scratch.name, name, "engine.toml"), "w", encoding="utf-8") as f:
                f.write(text)
        return scratch.name

    def main(self, backends, *argv):
        """(exit code, stdout, stderr) of engines.py with `argv` on the adapters of `backends`."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = engines.main(list(argv), backends)
        return code, out.getvalue(), err.getvalue()

    def test_the_repository_manifests_are_valid_and_name_files_that_exist(self):
        found = engines.manifests()
        self.assertIn("onnxruntime", found)
        for name, manifest in found.items():
            with self.subTest(engine=name):
                self.assertTrue(os.path.isfile(os.path.join(engines.ROOT, manifest["expectations"])))
                script = manifest["backend"].split()[-1]
                self.assertTrue(os.path.isfile(os.path.join(engines.ROOT, script)), script)
                self.assertTrue(manifest["backend"].startswith(manifest["python"] + " "), manifest["backend"])

    def test_an_unknown_key_is_named_with_its_file(self):
        backends = self.backends(engine=VALID + 'timeout = "10"\n')
        code, out, err = self.main(backends, "list")
        self.assertEqual(code, 2)
        self.assertEqual(out, "")
        self.assertIn(os.path.join(backends, "engine", "engine.toml") + ": unknown key `timeout`", err)

    def test_a_missing_key_is_named_with_its_file(self):
        backends = self.backends(good=VALID, engine=VALID.replace('ci = "whole"\n', ""))
        code, _, err = self.main(backends, "show", "good", "display")
        self.assertEqual(code, 2)
        self.assertIn(os.path.join(backends, "engine", "engine.toml") + ": missing key `ci`", err)

    def test_a_mistyped_or_empty_key_is_named_with_its_file(self):
        for text, message in [
            (VALID.replace('["--timeout", "10"]', '"--timeout 10"'), "key `options` must be a list of strings"),
            (VALID.replace('["--timeout", "10"]', '["--timeout", 10]'), "key `options` must be a list of strings"),
            (VALID + "build_only = 1\n", "key `build_only` must be true or false"),
            (VALID.replace('modules = "engine"', 'modules = " "'), "key `modules` is empty"),
            ("display = \n", "not TOML"),
            (VALID + 'version_matrix = "1.0"\n', "key `version_matrix` must be a table"),
            (VALID + '[version_matrix]\npackage = "engine"\n', "missing key `version_matrix.versions`"),
            (VALID + '[version_matrix]\npackage = "engine"\nversions = ["1.0"]\nnumpy = "2"\n', "unknown key `version_matrix.numpy`"),
            (VALID + '[version_matrix]\npackage = "engine"\nversions = "1.0"\n', "key `version_matrix.versions` must be the released versions to run, a list of strings"),
            (VALID + '[version_matrix]\npackage = "engine"\nversions = ["1.0"]\noverrides = { "2.0" = { numpy = "2" } }\n',
             'key `version_matrix.overrides."2.0"`: \'2.0\' is not one of `version_matrix.versions`'),
            (VALID + '[version_matrix]\npackage = "engine"\nversions = ["1.0"]\noverrides = { "1.0" = { numpy = 2 } }\n',
             'key `version_matrix.overrides."1.0"` must be a table of strings'),
            (VALID + '[version_matrix]\npackage = "engine"\nversions = ["1.0"]\nnotes = { "1.0" = "" }\n',
             'key `version_matrix.notes."1.0"` must be a string, not empty'),
        ]:
            with self.subTest(message=message):
                code, _, err = self.main(self.backends(engine=text), "list")
                self.assertEqual(code, 2)
                self.assertIn("engine.toml: " + message, err)

    def test_the_fields_as_the_readers_see_them(self):
        backends = self.backends(b=VALID.replace('"Engine"', '"B"') + "build_only = true\n", a=VALID, common=None)
        self.assertEqual(self.main(backends, "list"), (0, "a\nb\n", ""))
        self.assertEqual(self.main(backends, "show", "a", "options"), (0, "--timeout\n10\n", ""))
        self.assertEqual(self.main(backends, "show", "a", "build_only"), (0, "false\n", ""))
        self.assertEqual(self.main(backends, "show", "b", "build_only"), (0, "true\n", ""))
        self.assertEqual([engines.label(m) for m in engines.manifests(backends).values()], ["Engine", "B (build-only)"])
        code, _, err = self.main(backends, "show", "a", "timeout")
        self.assertEqual(code, 2)
        self.assertIn("no field 'timeout'", err)
        with self.assertRaises(SystemExit) as stop, contextlib.redirect_stderr(io.StringIO()) as err:
            engines.main(["show", "d", "display"], backends)
        self.assertEqual(stop.exception.code, 2)
        self.assertIn("no engine 'd': the engines are a, b", err.getvalue())

    def test_a_run_is_the_manifest_s_backend_expectations_and_options(self):
        manifest = engines.load(os.path.join(self.backends(engine=VALID.replace('"whole"', '"slice::"')), "engine", "engine.toml"))
        self.assertEqual(
            engines.run_command(manifest, "target/release/runner", extra=["-q"]),
            ["target/release/runner", "--backend", "python3 runner/backends/engine/backend.py",
             "--expectations", "runner/backends/engine/known-failures.txt", "--timeout", "10", "-q"],
        )
        # CI's run: the sample filter last; the cargo command without a runner.
        self.assertEqual(engines.run_command(manifest, ci=True)[:-7], engines.RUNNER)
        self.assertEqual(engines.run_command(manifest, ci=True)[-1], "slice::")
        manifest["ci"] = "whole"
        self.assertEqual(engines.run_command(manifest, ci=True)[-1], "10")

    def test_install_and_run_make_the_manifest_s_commands_from_the_repository_root(self):
        backends = self.backends(engine=VALID.replace('"whole"', '"slice::"'))
        with mock.patch.object(engines.subprocess, "run") as run:
            run.return_value.returncode = 101
            self.assertEqual(self.main(backends, "install", "engine")[0], 101)
            self.assertEqual(self.main(backends, "run", "engine", "--ci", "--runner", "target/release/runner", "--", "-q")[0], 101)
            self.assertEqual(self.main(backends, "run", "engine", "--runner", "runner", "--ci")[0], 101)
            self.assertEqual(self.main(backends, "run", "engine", "--runner")[0], 2)
        (install, kw), (ci, _), (swapped, _) = [(c.args[0], c.kwargs) for c in run.call_args_list]
        self.assertEqual(kw, {"cwd": engines.ROOT})
        self.assertEqual(install, ["python3", "-m", "pip", "install", "-r", "runner/backends/engine/requirements.txt"])
        # A path given is the caller's, made absolute for the run from the root; a name is a command.
        self.assertEqual(ci[0], os.path.abspath("target/release/runner"))
        self.assertEqual(ci[-2:], ["-q", "slice::"])
        self.assertEqual(swapped[0], "runner")
        self.assertEqual(swapped[-1], "slice::")

    def test_an_engine_toml_that_is_no_regular_file_is_reported_not_skipped(self):
        for kind in ["folder", "fifo", "zero", "dangling"]:
            with self.subTest(kind=kind):
                backends = self.backends(good=VALID, engine=None)
                path = os.path.join(backends, "engine", "engine.toml")
                if kind == "folder":
                    os.mkdir(path)
                elif kind == "fifo":
                    os.mkfifo(path)
                elif kind == "zero":
                    os.symlink("/dev/zero", path)
                else:
                    os.symlink("gone.toml", path)
                code, out, err = self.main(backends, "list")
                self.assertEqual((code, out), (2, ""), err)
                self.assertIn(path + ": ", err)
                expected = {"folder": "is a folder", "fifo": "is a FIFO", "zero": "is a device", "dangling": "a link to nothing"}[kind]
                self.assertIn(expected, err)

    def test_manifests_that_cannot_be_read_are_messages_not_tracebacks(self):
        for text, message in [
            (VALID.encode() + b'# \xff\xfe\n', "not UTF-8 text"),
            (("x = " + "[" * 100_000 + "]" * 100_000 + "\n").encode(), "values nested too deep"),
        ]:
            with self.subTest(message=message):
                backends = self.backends(engine=None)
                with open(os.path.join(backends, "engine", "engine.toml"), "wb") as f:
                    f.write(text)
                code, _, err = self.main(backends, "list")
                self.assertEqual(code, 2)
                self.assertIn("engine.toml: " + message, err)
                self.assertNotIn("Traceback", err)

    def test_hidden_folders_are_no_engines_and_a_name_with_a_space_is_reported(self):
        backends = self.backends(good=VALID, **{".hidden": VALID, "..x": VALID})
        self.assertEqual(self.main(backends, "list"), (0, "good\n", ""))
        backends = self.backends(good=VALID, **{"my engine": VALID})
        code, out, err = self.main(backends, "list")
        self.assertEqual((code, out), (2, ""))
        self.assertIn("'my engine' is no engine name", err)

    def test_optional_fields_absent_are_shown_empty(self):
        backends = self.backends(engine=VALID)
        self.assertEqual(self.main(backends, "show", "engine", "not_declared"), (0, "", ""))
        self.assertEqual(self.main(backends, "show", "engine", "composed"), (0, "{}\n", ""))
        self.assertEqual(self.main(backends, "show", "engine", "version_matrix"), (0, "{}\n", ""))
        with_them = VALID + 'not_declared = ["as_strided"]\n[composed]\nslice = "Gather"\n'
        backends = self.backends(engine=with_them)
        self.assertEqual(self.main(backends, "show", "engine", "not_declared"), (0, "as_strided\n", ""))
        self.assertEqual(self.main(backends, "show", "engine", "composed"), (0, '{"slice": "Gather"}\n', ""))

    def test_commands_that_cannot_run_or_answer_are_messages_not_tracebacks(self):
        for backend, message in [
            ("true", "the backend wrote nothing to stdout"),
            ("echo not json", "the backend's first line is not JSON"),
            ("echo '{\"type\": \"ok\"}'", "the backend's first line is not a hello"),
            ("python3 'unclosed", "its backend command \"python3 'unclosed\" cannot be read as words"),
            ("no-such-program-opspec", "no program 'no-such-program-opspec'"),
        ]:
            with self.subTest(backend=backend):
                text = VALID.replace('"python3 runner/backends/engine/backend.py"', json.dumps(backend))
                code, _, err = self.main(self.backends(engine=text), "check-hello", "engine")
                self.assertEqual(code, 2, err)
                self.assertIn("check-hello engine: " + message, err)
                self.assertNotIn("Traceback", err)
        text = VALID.replace('"python3 -m pip install -r runner/backends/engine/requirements.txt"', '"no-such-installer-opspec x"')
        code, _, err = self.main(self.backends(engine=text), "install", "engine")
        self.assertEqual(code, 2)
        self.assertIn("install engine: no program 'no-such-installer-opspec'", err)
        code, _, err = self.main(self.backends(engine=VALID), "run", "engine", "--runner", "/no/such/runner")
        self.assertEqual(code, 2)
        self.assertIn("run engine: no program '/no/such/runner'", err)

    def test_the_documented_manifest_shows_every_key_and_is_valid(self):
        with open(os.path.join(engines.ROOT, "CONTRIBUTING.md"), encoding="utf-8") as f:
            text = f.read()
        section = text[text.index("**Adding an engine**"):]
        example = section.split("```toml\n", 1)[1].split("```", 1)[0]
        documented = engines.tomllib.loads(example)
        self.assertEqual(set(documented), set(engines.KEYS))
        backends = self.backends(openvino=example)
        self.assertEqual(self.main(backends, "list"), (0, "openvino\n", ""))


class Check(unittest.TestCase):
    """`check NAME`: what runner/tests/engines.rs checks of an engine folder, in seconds."""

    def checkout(self, known, repro=()):
        """A scratch checkout with one adapter, `engine`: its known-failures file holds `known`,
        its repro/ the scripts named in `repro`. The adapters' folder."""
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        folder = os.path.join(scratch.name, "runner", "backends", "engine")
        os.makedirs(os.path.join(folder, "repro"))
        for name, text in [("engine.toml", VALID), ("backend.py", ""), ("known-failures.txt", known)]:
            with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
                f.write(text)
        for name in repro:
            open(os.path.join(folder, "repro", name), "w").close()
        return os.path.dirname(folder)

    def run_check(self, backends, installed=False, runner_code=0):
        """(exit code, stdout) of `check engine` with every process it starts faked: the runner
        reading the file exits `runner_code`, the run without packages says the install command."""

        def run(command, **kwargs):
            done = mock.Mock(returncode=0, stdout="", stderr="")
            if "--list" in command:
                done.returncode = runner_code
                done.stderr = "error: known-failures.txt: line 1: unknown class `defct`" if runner_code else ""
            elif "--backend" in command:
                done.returncode = 2
                done.stderr = "error: ... install them with: python3 -m pip install -r runner/backends/engine/requirements.txt"
            elif "-c" in command:
                done.returncode = 0 if installed else 1
            return done

        out, err = io.StringIO(), io.StringIO()
        with mock.patch.object(engines.subprocess, "run", side_effect=run) as calls, \
                mock.patch.object(engines, "hello_of", return_value={"ops": ["shuffle", "slice", "as_strided", "scale", "reformat"]}), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = engines.main(["check", "engine", "--runner", "target/release/runner"], backends)
        self.calls = [c.args[0] for c in calls.call_args_list]
        return code, out.getvalue()

    def test_a_folder_that_holds_passes_each_check(self):
        known = "# a defect\nslice::a::* | slice.wrap.modulo | defect | wraps twice (repro/wrap.py)\n"
        code, out = self.run_check(self.checkout(known, ["wrap.py"]), installed=True)
        self.assertEqual(code, 0, out)
        for line in ["engine: known failures runner/backends/engine/known-failures.txt, as the runner reads them: ok",
                     "engine: defect entries name their reproducers (1): ok",
                     "engine: without its packages, the run stops with the install command: ok",
                     "engine: the hello leaves out what `not_declared` says: ok"]:
            self.assertIn(line + "\n", out)
        listed = [c for c in self.calls if "--list" in c][0]
        self.assertEqual(listed[0], os.path.abspath("target/release/runner"))
        self.assertEqual(listed[-2], "--expectations")
        self.assertTrue(listed[-1].endswith("runner/backends/engine/known-failures.txt"), listed)

    def test_each_failing_check_is_named_and_fails_the_command(self):
        known = "slice::a::* | slice.wrap.modulo | defect | wraps twice (repro/gone.py)\nslice::b | slice.wrap.modulo | defect | no script\n"
        code, out = self.run_check(self.checkout(known), runner_code=2)
        self.assertEqual(code, 1, out)
        self.assertIn("as the runner reads them: FAILED\n  error: known-failures.txt: line 1: unknown class `defct`", out)
        self.assertIn("defect entries name their reproducers (1): FAILED", out)
        self.assertIn("line 1: names repro/gone.py, which is not in", out)
        self.assertIn("line 2: a defect entry names no reproducer", out)
        # Not installed: the hello is not checked, and says so.
        self.assertIn("the hello leaves out what `not_declared` says: skipped\n  not checked: engine is not installed", out)

    def test_a_hello_that_leaves_out_other_than_not_declared_fails(self):
        backends = self.checkout("")
        with open(os.path.join(backends, "engine", "engine.toml"), "a") as f:
            f.write('not_declared = ["as_strided"]\n')
        code, out = self.run_check(backends, installed=True)
        self.assertEqual(code, 1, out)
        self.assertIn("not_declared ['as_strided'] but the hello leaves out []", out)


if __name__ == "__main__":
    unittest.main()
