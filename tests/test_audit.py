"""``trl-sandbox audit``: rows in their datasets' published schemas audited against their own reference solutions and
trivial programs on the local backend, the verdict of each, the table, the report and the cleaned task file."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from trl_sandbox import SandboxConfig, Scorer, load_tasks
from trl_sandbox.audit import audit_tasks, reference_solutions, trivial_programs
from trl_sandbox.scoring import ScoreResult
from trl_sandbox.tasks import Task
from test_checkers import EMPTY_OK  # FrontierCS issue 106's kind: quarantined by its self-test

GXX = shutil.which("g++")
if GXX is None and os.environ.get("CI") == "true":  # CI installs g++ (.ci/run): its absence is a failure there
    raise RuntimeError("g++ is missing: .ci/run installs it; the audit's C++ cases need it")
needs_gxx = pytest.mark.skipif(GXX is None, reason="g++ is not installed (apt-get install g++)")

HE = load_tasks("humaneval")
PY_SUM = "a, b = map(int, input().split())\nprint(a + b)\n"
CPP_SUM = ("#include <cstdio>\nint main() { long long a, b; scanf(\"%lld %lld\", &a, &b); "
           "printf(\"%lld\\n\", a + b); }\n")


def ccplus_row(task_id, tests, correct, incorrect):
    """A Code-Contests-Plus row (ByteDance-Seed/Code-Contests-Plus, a ``1x`` config) without a checker."""
    return {"id": task_id, "title": "A + B", "description": "Print a + b.", "time_limit": 1000, "memory_limit": 256,
            "checker": None, "validator": None, "generator": None, "generator_cmd": None,
            "test_cases": [{"input": i, "output": o} for i, o in tests],
            "correct_submissions": correct, "incorrect_submissions": incorrect}


SQUARE = {"task_id": "audit/square", "prompt": 'def square(x):\n    """x squared."""\n',
          "canonical_solution": "    return x * x\n", "entry_point": "square",
          "test": "def check(candidate):\n    assert candidate(0) == 0\n    assert candidate(3) == 9\n"}
MBPP_WRONG = {"task_id": 9001, "text": "Write a function to add two numbers.",
              "code": "def add(a, b):\n    return a - b",
              "test_list": ["assert add(1, 2) == 3", "assert add(2, 5) == 7"], "test_setup_code": "",
              "challenge_test_list": []}
CCPLUS_OK = ccplus_row("CCP-1", [("1 2\n", "3\n"), ("5 7\n", "12\n")],
                       [{"code": PY_SUM, "language": "py3"}, {"code": "print 3", "language": "py2"}]
                       + ([{"code": CPP_SUM, "language": "cpp"}] if GXX else []),
                       [{"code": "print(3)\n", "language": "py3"}])
CCPLUS_WEAK = ccplus_row("CCP-2", [("2 2\n", "4\n")], [{"code": PY_SUM, "language": "py3"}],
                         [{"code": "a, b = map(int, input().split())\nprint(a * b)\n", "language": "py3"}])
DOUBLE = {"task_id": "audit/double", "inputs": ["2\n", "5\n"], "outputs": ["4\n", "10\n"]}
ECHO = {"task_id": "audit/echo", "inputs": ["7\n", "8\n"], "outputs": ["7\n", "9\n"]}
EMPTY_OK_ROW = {"task_id": "audit/empty-ok", "inputs": ["1 2\n"], "outputs": ["3\n"],
                "compare": {"checker": EMPTY_OK, "language": "cpp"}}
BROKEN = {"task_id": "audit/broken", "question": "no tests here"}


def rows():
    return [HE[1], HE[2], SQUARE, MBPP_WRONG, CCPLUS_OK, CCPLUS_WEAK, DOUBLE, ECHO, BROKEN,
            *([EMPTY_OK_ROW] if GXX else [])]


EXPECTED = {"HumanEval/1": "ok", "HumanEval/2": "ok", "audit/square": "trivial_paid", "9001": "reference_fails",
            "CCP-1": "ok", "CCP-2": "rejected_reference_passes", "audit/double": "no_reference",
            "audit/echo": "trivial_paid", "audit/broken": "invalid", "audit/empty-ok": "invalid"}


@pytest.fixture(scope="module")
def audit_scorer(judge_cache, sandbox_root):
    config = SandboxConfig(sandbox_pool_size=2, sandbox_test_timeout=2.0,
                           sandbox_backend_options={"root_dir": str(sandbox_root)})
    with Scorer.from_config(config) as scorer:
        yield scorer


def test_each_row_gets_its_verdict(audit_scorer):
    report = audit_tasks(rows(), audit_scorer)
    got = {r.task_id: r.verdict for r in report.rows}
    assert got == {k: v for k, v in EXPECTED.items() if k in got} and len(got) == len(rows()), got
    by_id = {r.task_id: r for r in report.rows}
    assert any("constant python" in f and "1/2 tests" in f for f in by_id["audit/square"].findings)
    assert any(f.startswith("echo python") for f in by_id["audit/echo"].findings)
    assert any("accepted reference python: failed 0/2" in f for f in by_id["9001"].findings)
    assert any("rejected reference python: passed" in f for f in by_id["CCP-2"].findings)
    assert "does not parse" in by_id["audit/broken"].findings[0]
    if GXX:
        assert "quarantined" in by_id["audit/empty-ok"].findings[0]
        languages = [p["language"] for p in by_id["CCP-1"].programs if p["kind"] == "reference"]
        assert languages == ["python", "cpp"]  # the py2 submission is left out
    kinds = [p["kind"] for p in by_id["audit/double"].programs]
    assert kinds == ["empty", "constant", "echo"]
    table = report.markdown()
    assert table.startswith(f"Audit: {len(rows())} rows") and "| 3 | 9001 | reference_fails |" in table
    assert "HumanEval/1" not in table and "audit/double" not in table


def test_the_command_writes_the_table_the_report_and_the_clean_file(tmp_path, judge_cache, sandbox_root, capsys):
    from trl_sandbox.cli import main

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(r) + "\n" for r in rows()))
    report, clean = tmp_path / "report.jsonl", tmp_path / "clean.jsonl"
    code = main(["audit", "--tasks", str(tasks), "--report", str(report), "--clean", str(clean), "--pool-size", "2",
                 "--test-timeout", "2", "--backend-options", json.dumps({"root_dir": str(sandbox_root)})])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "| 2 | audit/square | trivial_paid |" in out and "| 5 | CCP-2 | rejected_reference_passes |" in out
    assert f"trl-sandbox audit: {len(rows())} rows, 4 pass the audit" in err
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert [line["task_id"] for line in lines] == [str(r.get("task_id", r.get("id"))) for r in rows()]
    assert {line["task_id"]: line["verdict"] for line in lines} == {k: v for k, v in EXPECTED.items()
                                                                    if GXX or k != "audit/empty-ok"}
    kept = [json.loads(line) for line in clean.read_text().splitlines()]
    assert kept == [HE[1], HE[2], CCPLUS_OK, DOUBLE]  # unchanged, as load_tasks reads them
    # load_tasks adds task_fields to rows that differ in fields (trl_sandbox.loading.ROW_FIELDS); the rest as written
    assert [{k: v for k, v in r.items() if k != "task_fields"} for r in load_tasks(str(clean))] == kept


def test_a_limit_and_bad_options(tmp_path, sandbox_root, capsys):
    from trl_sandbox.cli import main

    opts = json.dumps({"root_dir": str(sandbox_root)})
    assert main(["audit", "--tasks", "daytona", "--limit", "1", "--pool-size", "1", "--backend-options", opts]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("Audit: 1 rows, 1 pass the audit (no_reference 1)") and "no_reference 1" in err
    assert main(["audit", "--tasks", "daytona", "--max-trivial", "1"]) == 2
    assert main(["audit", "--tasks", str(tmp_path / "none.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "trl-sandbox audit: error: --max-trivial must be within [0, 1)" in err and "no such file" in err


def test_reference_solutions_per_format():
    contest = {"solutions": {"language": [1, 2, 3, 4],
                             "solution": ["print 1", "int main(){}", "print(1)", "class A{}"]},
               "incorrect_solutions": {"language": [3, 3], "solution": ["print(2)", "print(3)"]}}
    assert reference_solutions(contest) == [("cpp", "int main(){}", "accepted"), ("python", "print(1)", "accepted"),
                                            ("java", "class A{}", "accepted"), ("python", "print(2)", "rejected")]
    assert reference_solutions(contest, accepted=1, rejected=0) == [("cpp", "int main(){}", "accepted")]
    apps = {"solutions": json.dumps(["print(1)", "print(2)"])}
    assert [c for _, c, _ in reference_solutions(apps)] == ["print(1)", "print(2)"]
    package = {"reference_solutions": [
        {"path": "submissions/accepted/a.py", "language": "python", "tag": "accepted", "source": "A"},
        {"path": "submissions/time_limit_exceeded/t.py", "language": "python", "tag": "time_limit_exceeded",
         "source": "T"},
        {"path": "submissions/wrong_answer/w.cpp", "language": "cpp", "tag": "wrong_answer", "source": "W"},
        {"path": "solutions/main.cpp", "language": "cpp", "tag": "main", "source": "M"}]}
    assert reference_solutions(package) == [("python", "A", "accepted"), ("cpp", "M", "accepted"),
                                            ("cpp", "W", "rejected")]
    assert reference_solutions(HE[0]) == [("python", HE[0]["prompt"] + HE[0]["canonical_solution"], "accepted")]
    assert reference_solutions({"solution": "def f(): pass"}) == [("python", "def f(): pass", "accepted")]
    assert reference_solutions({"tests": ["[]"], "func_name": "f", "reference": "sorted"}) == []


def test_trivial_programs_fit_the_format():
    he = [name for name, _, _ in trivial_programs(Task.from_row(HE[0]))]
    assert he == ["empty", "constant"]
    (_, _, constant), = [p for p in trivial_programs(Task.from_row(MBPP_WRONG)) if p[0] == "constant"]
    assert constant.startswith("def add(*args, **kwargs):\n    return 0")
    cpp = trivial_programs(Task.from_row({**DOUBLE, "language": "cpp"}))
    assert [(name, language) for name, language, _ in cpp] == [("empty", "cpp"), ("constant", "cpp"), ("echo", "cpp")]


class _FlakyScorer:
    """A scorer whose first batch fails on the infrastructure for every program of one row."""

    reward_mode, rewards = "pass_rate", {"passed": 1.0}

    def __init__(self, failing):
        self.failing, self.calls = set(failing), 0

    def score(self, tasks, completions):
        self.calls += 1
        out = []
        for task, code in zip(tasks, completions):
            if task.task_id in self.failing and (self.calls == 1 or task.task_id == "audit/double"):
                out.append(ScoreResult(task.task_id, None, False, 0, 2, "infra_error", 0.0, "sandbox gone"))
            else:
                passed = "return a + b" in code or "a * b" in code
                out.append(ScoreResult(task.task_id, 1.0 if passed else 0.0, passed, 2 * passed, 2,
                                       "passed" if passed else "failed", 0.0))
        return out


def test_an_infrastructure_failure_is_retried_once_and_never_the_rows_fault():
    fixed = dict(MBPP_WRONG, code="def add(a, b):\n    return a + b")
    scorer = _FlakyScorer({"9001", "audit/double"})
    report = audit_tasks([fixed, DOUBLE], scorer)
    assert scorer.calls == 2
    assert [r.verdict for r in report.rows] == ["ok", "infra_error"]
    assert "infra_error" in report.rows[1].findings[0] and report.kept() == [0]



def test_a_reference_that_cannot_run_as_the_tasks_format_leaves_the_row_without_one():
    row = {k: v for k, v in MBPP_WRONG.items() if k != "code"}
    row["reference_solutions"] = [{"path": "a.cpp", "language": "cpp", "tag": "accepted", "source": "int main(){}"}]
    report = audit_tasks([row], _FlakyScorer(()))
    assert report.rows[0].verdict == "no_reference"
    assert report.rows[0].findings == ["reference cpp: not run (mbpp tasks run Python)"]
