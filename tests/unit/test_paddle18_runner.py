"""tools/paddle18_tests.py on a stand-in test directory: per-file subprocess, counts, timeout, report."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "paddle18_tests.py")

FAKE_VARIABLE = """
import unittest
import paddle.fluid as fluid

class T(unittest.TestCase):
    def test_ok(self):
        self.assertTrue(hasattr(fluid, "Program"))
    def test_fails(self):
        raise KeyError("missing thing")
"""

FAKE_BACKWARD = "import time\nimport unittest\nclass T(unittest.TestCase):\n    def test_slow(self):\n" \
                "        time.sleep(60)\n"


def _run(args, **kw):
    return subprocess.run([sys.executable, TOOL] + args, capture_output=True, text=True, timeout=120, **kw)


def test_runner_counts_cases_times_out_and_reports(tmp_path):
    unit = tmp_path / "tests" / "unittests"
    unit.mkdir(parents=True)
    (unit / "test_variable.py").write_text(FAKE_VARIABLE)
    (unit / "test_backward.py").write_text(FAKE_BACKWARD)
    out = tmp_path / "here.json"
    p = _run(["--tests", str(unit), "--python", sys.executable, "--select", "variable,backward,program",
              "--timeout", "5", "--out", str(out)])
    assert p.returncode == 0, p.stderr
    files = json.loads(out.read_text())["files"]
    v = files["test_variable.py"]
    assert (v["run"], v["passed"], v["errors"], v["ok"]) == (2, 1, 1, False)
    assert "KeyError" in v["cases"]["test_variable.T.test_fails"]
    b = files["test_backward.py"]
    assert b["timed_out"] and not b["ok"] and "timed out" in b["cases"]["<process>"]
    assert files["test_program.py"]["missing"]

    md = tmp_path / "summary.md"
    table = tmp_path / "table.json"
    p = _run(["--report", str(out), str(out), "--md", str(md), "--table", str(table)])
    assert p.returncode == 0, p.stderr
    text = md.read_text()
    assert "| variable | test_variable.py | 1/2 (fails) | 1/2 (fails) | test_fails: KeyError" in text
    assert json.loads(table.read_text())["rows"][0]["file"] == "test_variable.py"
