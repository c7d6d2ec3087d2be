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


FAKE_FLAKY = """
import os
import unittest

MARK = {mark!r}

class T(unittest.TestCase):
    def test_second_time(self):
        first = not os.path.exists(MARK)
        open(MARK, "w").close()
        self.assertFalse(first, "first try fails")
"""

FAKE_SKIPS = "import unittest\nclass T(unittest.TestCase):\n    @unittest.skip('GPU only')\n" \
             "    def test_gpu(self):\n        pass\n"


def test_rerun_failed_keeps_first_try_and_report_marks_and_groups(tmp_path):
    unit = tmp_path / "tests" / "unittests"
    unit.mkdir(parents=True)
    (unit / "test_variable.py").write_text(FAKE_VARIABLE)
    (unit / "test_program.py").write_text(FAKE_FLAKY.format(mark=str(tmp_path / "tried")))
    (unit / "test_program_code.py").write_text(FAKE_SKIPS)
    out = tmp_path / "here.json"
    common = ["--tests", str(unit), "--python", sys.executable, "--select", "variable,program", "--out", str(out)]
    assert _run(common).returncode == 0
    first = json.loads(out.read_text())["files"]
    assert not first["test_program.py"]["ok"] and first["test_program_code.py"]["ok"]
    assert first["test_program_code.py"]["passed"] == 0 and first["test_program_code.py"]["skipped"] == 1

    p = _run(common + ["--rerun-failed"])
    assert p.returncode == 0, p.stderr
    files = json.loads(out.read_text())["files"]
    flaky = files["test_program.py"]
    assert flaky["ok"] and flaky["first_try"]["ok"] is False
    assert "first try fails" in flaky["first_try"]["first_error"]
    assert files["test_variable.py"]["first_try"]["errors"] == 1 and not files["test_variable.py"]["ok"]
    assert "first_try" not in files["test_program_code.py"]   # it passed: not run again
    p = _run(common + ["--rerun-failed"])   # each failed file gets one second try, not more
    assert "test_variable.py" not in p.stdout

    ref = json.loads(out.read_text())   # a reference side on which test_variable.py passes
    ref["files"]["test_variable.py"].update(ok=True, passed=2, errors=0, cases={})
    ref_path = tmp_path / "ref.json"
    ref_path.write_text(json.dumps(ref))
    md = tmp_path / "summary.md"
    p = _run(["--report", str(ref_path), str(out), "--md", str(md)])
    assert p.returncode == 0, p.stderr
    text = md.read_text()
    assert "| program | test_program.py | 1/1 (2nd try) | 1/1 (2nd try) |" in text
    assert "| program | test_program_code.py | 0/1 (all skipped) | 0/1 (all skipped) |" in text
    assert "| design: dygraph | 1: test_variable.py |" in text


def test_list_names_categories_and_exclusions():
    p = _run(["--list", "--select", "framework,dist_ops"])
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert "framework\ttest_operator.py" in lines and "dist_ops\ttest_listen_and_serv_op.py" in lines
    assert not any(line.startswith("fleet\t") for line in lines)
    assert any(line.startswith("excluded\ttest_dist_op.py\t") for line in lines)
