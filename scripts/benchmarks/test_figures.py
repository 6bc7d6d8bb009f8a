#!/usr/bin/env python3
"""Every time, memory or thread figure of an adapter README (runner/backends/*/README.md) and of
docs/*.md is written by the script that measured it: inside a block of scripts/benchmarks/measured.py,
whose marker names the script, the date, the machine and the command, and whose digest matches
the text (a figure edited by hand in a block fails too). A figure outside such a block is a
hand-written one and fails, named with its file and line, unless NOT_MEASURED says why it is no
measurement (a limit or a default the code sets, a package's size). Run by runner/tests/engines.rs;
exit 0 when every test passes.

    python3 scripts/benchmarks/test_figures.py
"""

import glob
import os
import re
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # leave no __pycache__ beside the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import measured  # noqa: E402

ROOT = measured.ROOT
FILES = ["runner/backends/*/README.md", "docs/*.md"]
# A number (or a range of two) and a unit of time, memory or threads.
FIGURE = re.compile(
    r"(?<![\w.\-])(?:about |~)?\d[\d,.]*\s?(?:(?:-|to)\s?\d[\d,.]*\s?)?"
    r"(?:s|ms|µs|us|min|minutes?|seconds?|hours?|[KMGT]i?B|kB|threads?)(?![\w])"
)
# (file pattern, text around the figure, why it is no measurement). A whole file only where every
# figure of it is a limit the code sets or the size of a fault a test injects.
NOT_MEASURED = [
    ("docs/protocol.md", r"", "the protocol's limits and defaults (timeouts, line and log caps), set by the runner"),
    ("docs/reliability.md", r"", "the limits the code sets and the sizes and times of the faults its tests inject"),
    ("runner/backends/*/README.md", r"wheel is \d[\d.]* MB|a \d[\d.]* MB wheel", "a package's size on the index, not a run's"),
    ("runner/backends/mnn/README.md", r"a whole run with 2 threads", "a setting given to MNN (OPSPEC_MNN_THREADS), not a count"),
]


def exempt(path, line):
    relative = os.path.relpath(path, ROOT)
    for pattern, around, _why in NOT_MEASURED:
        if glob.fnmatch.fnmatch(relative, pattern) and (not around or re.search(around, line)):
            return True
    return False


def hand_written(path, text=None):
    """[(line number, figure, line)] of the figures of `path` outside measured blocks, and
    [(line number, problem)] of its blocks."""
    if text is None:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    inside = set()
    for start, end, _match, _body in measured.blocks(text):
        inside.update(range(start, end + 1))
    figures = []
    for number, line in enumerate(text.split("\n")):
        if number in inside or exempt(path, line):
            continue
        figures += [(number + 1, m.group(0), line.strip()) for m in FIGURE.finditer(line)]
    return figures, measured.problems(text)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


class Figures(unittest.TestCase):
    def test_every_figure_of_the_readmes_and_docs_is_measured(self):
        found = []
        for pattern in FILES:
            for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
                figures, problems = hand_written(path)
                name = os.path.relpath(path, ROOT)
                found += [f"{name}:{n}: `{figure}` is written by hand: {line[:120]}" for n, figure, line in figures]
                found += [f"{name}:{n}: {problem}" for n, problem in problems]
        if found:
            self.fail(
                "figures of time, memory or threads not written by the script that measured them "
                "(scripts/benchmarks/measured.py; scripts/engines/engine_run_stats.py --write ENGINE writes an adapter's run):\n" + "\n".join(found)
            )

    def scratch(self, text):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        path = os.path.join(folder.name, "README.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_a_figure_outside_a_block_is_found_with_its_line(self):
        path = self.scratch("# x\n\nThe run peaks at 79 MB and takes 11.6 s wall, 2.5 to 5 minutes.\nNo figure here: 3 passed.\n")
        figures, problems = hand_written(path)
        self.assertEqual([(n, f) for n, f, _ in figures], [(3, "79 MB"), (3, "11.6 s"), (3, "2.5 to 5 minutes")])
        self.assertEqual(problems, [])

    def test_the_script_s_block_passes_and_an_edit_by_hand_inside_it_fails(self):
        path = self.scratch("# x\n\n<!-- measured by scripts/engines/engine_run_stats.py -->\n<!-- end of measured -->\n\nafter\n")
        figures, problems = hand_written(path)
        self.assertEqual(len(problems), 1, "an empty marker is no measurement yet")
        measured.write_block(path, "scripts/engines/engine_run_stats.py", "python3 scripts/engines/engine_run_stats.py --write x", "Peak 1880 MB, 11.6 s.", when="2026-12-04", where="a CPU (2 cores, load average 1.0)")
        text = read(path)
        self.assertIn("<!-- measured by scripts/engines/engine_run_stats.py on 2026-12-04, a CPU (2 cores, load average 1.0): `python3 scripts/engines/engine_run_stats.py --write x`; digest ", text)
        self.assertTrue(text.endswith("<!-- end of measured -->\n\nafter\n"), text)
        self.assertEqual(hand_written(path), ([], []))
        # Written again, the block is replaced, not repeated.
        measured.write_block(path, "scripts/engines/engine_run_stats.py", "python3 scripts/engines/engine_run_stats.py --write x", "Peak 79 MB.", when="2026-12-05", where="m")
        text = read(path)
        self.assertEqual(text.count("measured by"), 1)
        self.assertEqual(hand_written(path), ([], []))
        figures, problems = hand_written(path, text.replace("Peak 79 MB.", "Peak 7 MB."))
        self.assertEqual(figures, [])
        self.assertEqual(len(problems), 1)
        self.assertIn("edited by hand", problems[0][1])

    def test_a_block_of_a_script_that_does_not_write_it_is_refused(self):
        path = self.scratch("x\n")
        with self.assertRaises(SystemExit) as refused:
            measured.write_block(path, "scripts/engines/engine_run_stats.py", "c", "t")
        self.assertIn("put `<!-- measured by scripts/engines/engine_run_stats.py -->`", str(refused.exception))

    def test_limits_and_package_sizes_are_no_measurements(self):
        self.assertTrue(exempt(os.path.join(ROOT, "runner/backends/mnn/README.md"), "MNN 3.6.1's wheel is 17.7 MB and needs numpy."))
        self.assertFalse(exempt(os.path.join(ROOT, "runner/backends/mnn/README.md"), "peak RSS 79 MB"))
        self.assertTrue(exempt(os.path.join(ROOT, "docs/protocol.md"), "10 s by default"))


if __name__ == "__main__":
    unittest.main()
