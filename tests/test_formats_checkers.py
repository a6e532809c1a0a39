"""Reading contest datasets with C/C++ checkers and interactors, as they publish their rows (Code-Contests-Plus,
AetherCode, InteractBench) and as problem package directories (Kattis, Polygon, Frontier-CS, InteractBench's unpacked
folder). Reading only: the problems here are our own, small, and nothing is judged."""

from __future__ import annotations

import json
import shutil

import pytest

from trl_sandbox import load_tasks
from trl_sandbox.errors import TaskFormatError
from trl_sandbox.formats import detect_format
from trl_sandbox.formats.interactbench import add_cases
from trl_sandbox.tasks import Task

CHECKER = '#include "testlib.h"\nint main(int argc, char* argv[]) {\n  registerTestlibCmd(argc, argv);\n'\
          '  int a = ouf.readInt(), b = ans.readInt();\n  if (a != b) quitf(_wa, "no");\n  quitf(_ok, "yes");\n}\n'
INTERACTOR = '#include "testlib.h"\nint main(int argc, char* argv[]) {\n  registerInteraction(argc, argv);\n'\
             '  int x = inf.readInt();\n  std::cout << x << std::endl;\n  if (ouf.readInt() != x) quitf(_wa, "no");\n'\
             '  quitf(_ok, "yes");\n}\n'


def test_code_contests_plus_row():
    row = {"id": "2000Z", "title": "Echo", "description": "Print n.", "time_limit": 2000, "memory_limit": 256,
           "checker": CHECKER, "validator": "", "generator": "", "generator_cmd": "",
           "correct_submissions": [{"code": "print(input())", "language": "py3"}],
           "incorrect_submissions": [{"code": "print(0)", "language": "py3"}],
           "test_cases": [{"input": "1\n", "output": "1\n"}, {"input": "5\n", "output": "5\n"}]}
    assert detect_format(row) == "ccplus"
    task = Task.from_row(row)
    assert task.task_id == "2000Z" and task.dataset == "ccplus"
    assert task.tests == ("1\n", "5\n") and task.outputs == ("1\n", "5\n")
    assert task.default_compare == {"checker": CHECKER, "language": "cpp", "convention": "testlib"}
    assert task.time_limit_s == 2.0 and task.memory_limit_bytes == 256 << 20
    assert Task.from_row({**row, "checker": ""}).default_compare == {"mode": "tokens"}
    with pytest.raises(TaskFormatError, match="test_cases"):
        Task.from_row({**row, "test_cases": None})


def test_aethercode_row():
    row = {"id": 60001, "description": "Time limit: 1 second", "time_limit": 1500, "memory_limit": 1024,
           "checker": "", "test_cases": [{"input": "2 3\n", "output": "5\n"}], "year": 2024, "date": "2024/11/17",
           "difficulty": "Easy", "contest_category": "ICPC", "contest_name": "Our own contest"}
    assert detect_format(row) == "aethercode"
    task = Task.from_row(row)
    assert task.task_id == "60001" and task.tests == ("2 3\n",) and task.outputs == ("5\n",)
    assert task.default_compare == {"mode": "tokens"}
    assert task.time_limit_s == 1.5 and task.memory_limit_bytes == 1024 << 20
    judged = Task.from_row({**row, "checker": CHECKER})
    assert judged.default_compare["convention"] == "testlib" and judged.default_compare["language"] == "cpp"


def test_interactbench_row_with_its_cases(tmp_path):
    row = {"problem_id": "ib_guess", "description": "Guess x.", "difficulty": "easy", "cate": ["binary search"],
           "cpu_time_limit_ms": 1000, "memory_limit_mb": 256, "interactor_mode": "both",
           "interactor_non_adaptive": INTERACTOR, "interactor_adaptive": INTERACTOR.replace("x", "y"),
           "generator": "int main() {}"}
    assert detect_format(row) == "interactbench"
    with pytest.raises(TaskFormatError, match="add_cases"):
        Task.from_row(row)
    cases = tmp_path / "ib_guess" / "cases"
    cases.mkdir(parents=True)
    for n in (1, 2, 101):
        (cases / f"{n:03d}.in").write_text(f"{n}\n")
    task = Task.from_row(add_cases(row, tmp_path))
    assert task.tests == ("1\n", "2\n") and task.outputs == ("", "")  # both: the non-adaptive pool (001-100)
    assert task.interactor == {"interactor": INTERACTOR, "language": "cpp", "convention": "testlib"}
    assert task.time_limit_s == 1.0 and task.time_limit_factor == 1.0 and task.memory_limit_bytes == 256 << 20
    adaptive = Task.from_row(add_cases({**row, "interactor_mode": "adaptive"}, tmp_path))
    assert adaptive.tests == ("101\n",) and adaptive.interactor["interactor"] == INTERACTOR.replace("x", "y")


def test_interactbench_folder(tmp_path):
    problem = tmp_path / "ib_one"
    (problem / "interactor").mkdir(parents=True)
    (problem / "cases").mkdir()
    (problem / "meta.json").write_text(json.dumps({"difficulty": "easy", "cate": [], "cpu_time_limit_ms": 2000,
                                                   "memory_limit_mb": 512, "interactor_mode": "non_adaptive"}))
    (problem / "interactor" / "non_adaptive.cpp").write_text(INTERACTOR)
    (problem / "cases" / "001.in").write_text("7\n")
    [row] = load_tasks(tmp_path)
    task = Task.from_row(row)
    assert task.task_id == "ib_one" and task.dataset == "interactbench" and task.tests == ("7\n",)
    assert task.interactor["convention"] == "testlib" and task.time_limit_s == 2.0


def _kattis(root, validation="default", flags=None):
    (root / "data" / "sample").mkdir(parents=True)
    (root / "data" / "secret" / "group1").mkdir(parents=True)
    yaml_text = f"name: Sum\nvalidation: {validation}\nlimits:\n  memory: 512\n  time_limit: 2\n"
    if flags:
        yaml_text += f"validator_flags: {flags}\n"
    (root / "problem.yaml").write_text(yaml_text)
    (root / "data" / "sample" / "1.in").write_text("1 2\n")
    (root / "data" / "sample" / "1.ans").write_text("3\n")
    (root / "data" / "secret" / "group1" / "a.in").write_text("2 2\n")
    (root / "data" / "secret" / "group1" / "a.ans").write_text("4\n")
    (root / "submissions" / "accepted").mkdir(parents=True)
    (root / "submissions" / "accepted" / "sol.py").write_text("print(sum(map(int, input().split())))\n")
    (root / "submissions" / "wrong_answer").mkdir()
    (root / "submissions" / "wrong_answer" / "bad.cpp").write_text("int main() {}\n")


def test_kattis_package_default_validator(tmp_path):
    _kattis(tmp_path / "sum", flags="float_tolerance 1e-6")
    [row] = load_tasks(tmp_path / "sum")
    assert row["task_format"] == "kattis_package"
    assert [t["name"] for t in row["package_tests"]] == ["sample/1", "secret/group1/a"]
    assert {(s["path"], s["language"], s["tag"]) for s in row["reference_solutions"]} == {
        ("submissions/accepted/sol.py", "python", "accepted"), ("submissions/wrong_answer/bad.cpp", "cpp",
                                                                "wrong_answer")}
    task = Task.from_row(row)
    assert task.task_id == "sum" and task.tests == ("1 2\n", "2 2\n") and task.outputs == ("3\n", "4\n")
    assert task.default_compare == {"mode": "kattis", "flags": ["float_tolerance", "1e-6"]}
    assert task.time_limit_s == 2.0 and task.time_limit_factor == 1.0 and task.memory_limit_bytes == 512 << 20
    assert json.loads(json.dumps(row)) == row  # rows can be kept as JSONL


def test_kattis_package_custom_validator_and_interactive(tmp_path):
    _kattis(tmp_path / "custom", validation="custom", flags="case_sensitive")
    folder = tmp_path / "custom" / "output_validators" / "checker"
    folder.mkdir(parents=True)
    (folder / "validate.cpp").write_text('#include "validate.h"\nint main(int argc, char** argv) { return 42; }\n')
    (folder / "validate.h").write_text("#pragma once\n")
    _kattis(tmp_path / "inter", validation="custom interactive")
    (tmp_path / "inter" / "output_validators" / "interactor").mkdir(parents=True)
    (tmp_path / "inter" / "output_validators" / "interactor" / "interact.py").write_text("import sys\nsys.exit(42)\n")
    rows = load_tasks(tmp_path)  # a directory of packages
    custom, inter = (Task.from_row(r) for r in rows)
    assert custom.default_compare == {"checker": (folder / "validate.cpp").read_text(), "language": "cpp",
                                      "convention": "kattis", "files": {"validate.h": "#pragma once\n"},
                                      "flags": ["case_sensitive"], "answer_is_output": False}
    assert inter.interactor == {"interactor": "import sys\nsys.exit(42)\n", "language": "python",
                                "convention": "kattis"}


def test_kattis_validator_one_folder_down_and_domjudge_time_limits(tmp_path):
    """Issue 48, items 4 and 5: problemtools' ``examples/guess`` keeps its validator in ``output_validator/<name>/``
    (read like ``output_validators/<name>/``); DOMjudge's ``domjudge-problem.ini`` ``timelimit`` (``key = value``,
    quoted or not) is the limit when ``problem.yaml`` and ``.timelimit`` give none."""
    _kattis(tmp_path / "guess", validation="custom interactive")
    folder = tmp_path / "guess" / "output_validator" / "guess_validator"
    folder.mkdir(parents=True)
    (folder / "validate.cc").write_text('#include "validate.h"\nint main(int argc, char** argv) { return 42; }\n')
    (folder / "validate.h").write_text("#pragma once\n")
    for name, ini, seconds in (("quoted", "probid = A\ntimelimit='1'\n", 1.0), ("plain", "timelimit = 2.5\n", 2.5)):
        _kattis(tmp_path / name)
        yaml_path = tmp_path / name / "problem.yaml"
        yaml_path.write_text(yaml_path.read_text().replace("  time_limit: 2\n", ""))
        (tmp_path / name / "domjudge-problem.ini").write_text(ini)
    guess, plain, quoted = (Task.from_row(r) for r in load_tasks(tmp_path))
    assert guess.interactor["interactor"] == (folder / "validate.cc").read_text()
    assert guess.interactor["files"] == {"validate.h": "#pragma once\n"} and guess.interactor["convention"] == "kattis"
    assert (quoted.time_limit_s, plain.time_limit_s) == (1.0, 2.5)
    (tmp_path / "plain" / ".timelimit").write_text("3\n")  # Kattis' installed limit comes first
    assert Task.from_row(load_tasks(tmp_path / "plain")[0]).time_limit_s == 3.0


def test_a_contest_directory_leaves_out_the_packages_it_refuses_with_one_warning_each(tmp_path, caplog):
    _kattis(tmp_path / "a-sum")
    _kattis(tmp_path / "b-custom", validation="custom")  # no validator: refused
    _kattis(tmp_path / "c-sum")
    with caplog.at_level("WARNING", logger="trl_sandbox.formats.package_dirs"):
        rows = load_tasks(tmp_path)
    assert [r["task_id"] for r in rows] == ["a-sum", "c-sum"]
    (record,) = [r for r in caplog.records if "left out" in r.getMessage()]
    assert "b-custom" in record.getMessage() and "no output_validators/" in record.getMessage()
    for name in ("a-sum", "c-sum"):
        shutil.rmtree(tmp_path / name)
    with pytest.raises(TaskFormatError, match="no problem package could be read: .*b-custom.*no output_validators"):
        load_tasks(tmp_path)
    with pytest.raises(TaskFormatError, match="no output_validators"):  # one package named: its error, as before
        load_tasks(tmp_path / "b-custom")


def _polygon(root, interactive=False):
    (root / "tests").mkdir(parents=True)
    (root / "files").mkdir()
    (root / "solutions").mkdir()
    for i, (given, answer) in enumerate([("1\n", "1\n"), ("9\n", "9\n")], 1):
        (root / "tests" / f"{i:02d}").write_text(given)
        (root / "tests" / f"{i:02d}.a").write_text(answer)
    (root / "files" / "check.cpp").write_text(CHECKER)
    (root / "files" / "testlib.h").write_text("// our stand-in\n")
    (root / "files" / "interactor.cpp").write_text(INTERACTOR)
    (root / "solutions" / "main.cpp").write_text("int main() {}\n")
    (root / "solutions" / "wa.py").write_text("print(0)\n")
    interactor = ('<interactor><source path="files/interactor.cpp" type="cpp.g++17"/></interactor>'
                  if interactive else "")
    (root / "problem.xml").write_text(f"""<?xml version="1.0" encoding="utf-8"?>
<problem revision="3" short-name="echo">
  <judging input-file="" output-file="">
    <testset name="tests">
      <time-limit>1500</time-limit><memory-limit>268435456</memory-limit><test-count>2</test-count>
      <input-path-pattern>tests/%02d</input-path-pattern><answer-path-pattern>tests/%02d.a</answer-path-pattern>
      <tests><test method="manual" sample="true"/><test method="manual"/></tests>
    </testset>
  </judging>
  <files><resources><file path="files/testlib.h" type="h.g++"/></resources></files>
  <assets>
    <checker name="check.cpp" type="testlib"><source path="files/check.cpp" type="cpp.g++17"/></checker>
    {interactor}
    <solutions>
      <solution tag="main"><source path="solutions/main.cpp" type="cpp.g++17"/></solution>
      <solution tag="wrong-answer"><source path="solutions/wa.py" type="python.3"/></solution>
    </solutions>
  </assets>
</problem>
""")


def test_polygon_package(tmp_path):
    _polygon(tmp_path / "p1")
    _polygon(tmp_path / "p2", interactive=True)
    plain, inter = load_tasks(tmp_path)
    assert plain["task_format"] == "polygon_package" and plain["task_id"] == "echo"
    assert [t["name"] for t in plain["package_tests"]] == ["tests/01", "tests/02"]
    assert [(s["path"], s["tag"]) for s in plain["reference_solutions"]] == [("solutions/main.cpp", "main"),
                                                                             ("solutions/wa.py", "wrong-answer")]
    task = Task.from_row(plain)
    assert task.tests == ("1\n", "9\n") and task.outputs == ("1\n", "9\n") and task.interactor is None
    assert task.default_compare == {"checker": CHECKER, "language": "cpp", "convention": "testlib",
                                    "files": {"testlib.h": "// our stand-in\n"}}
    assert task.time_limit_s == 1.5 and task.time_limit_factor == 1.0 and task.memory_limit_bytes == 256 << 20
    task = Task.from_row(inter)  # the interactor, and the checker run after it on tout
    assert task.interactor["interactor"] == INTERACTOR and task.interactor["convention"] == "testlib"
    assert task.default_compare["checker"] == CHECKER
    (tmp_path / "p1" / "tests" / "02").unlink()
    with pytest.raises(TaskFormatError, match="doall.sh"):
        load_tasks(tmp_path / "p1")


def test_frontier_cs_problems(tmp_path):
    scored = tmp_path / "algorithmic" / "problems" / "7"
    (scored / "testdata").mkdir(parents=True)
    (scored / "examples").mkdir()
    (scored / "config.yaml").write_text("\ufefftype: default\nchecker: chk.cc\ntime: 2s\nmemory: 512m\n"
                                        "subtasks:\n  - score: 100\n    n_cases: 2\n")
    (scored / "chk.cc").write_text(CHECKER.replace('quitf(_ok, "yes")', 'quitp(0.5, "Ratio: 0.5")'))
    (scored / "examples" / "reference.cpp").write_text("int main() {}\n")
    for i in (1, 2):
        (scored / "testdata" / f"{i}.in").write_text(f"{i}\n")
        (scored / "testdata" / f"{i}.ans").write_text(f"{i * 10}\n")
    inter = tmp_path / "algorithmic" / "problems" / "8"
    (inter / "testdata").mkdir(parents=True)
    (inter / "config.yaml").write_text("type: interactive\ninteractor: interactor.cpp\ntime: 1s\nmemory: 256m\n"
                                       "subtasks:\n  - score: 100\n    n_cases: 1\n")
    (inter / "interactor.cpp").write_text(INTERACTOR)
    (inter / "testdata" / "1.in").write_text("3\n")
    (inter / "testdata" / "1.ans").write_text("3\n")
    first, second = load_tasks(tmp_path / "algorithmic" / "problems")
    assert first["reference_solutions"][0]["path"] == "examples/reference.cpp"
    task = Task.from_row(first)
    assert task.dataset == "frontier_cs" and task.task_id == "7"
    assert task.tests == ("1\n", "2\n") and task.outputs == ("10\n", "20\n")
    assert task.default_compare["convention"] == "testlib" and "Ratio" in task.default_compare["checker"]
    assert task.time_limit_s == 2.0 and task.time_limit_factor == 1.0 and task.memory_limit_bytes == 512 << 20
    task = Task.from_row(second)
    assert task.interactor["interactor"] == INTERACTOR and task.tests == ("3\n",) and task.time_limit_s == 1.0


def test_not_a_package(tmp_path):
    (tmp_path / "notes").mkdir()
    with pytest.raises(TaskFormatError, match="not a problem package"):
        load_tasks(tmp_path)


def test_new_formats_take_no_other_rows():
    assert detect_format({"public_tests": {"input": ["1"], "output": ["1"]}, "name": "x"}) == "code_contests"
    assert detect_format({"official_tests": [{"input": "1", "output": "1"}]}) == "codeforces"
    assert detect_format({"inputs": ["1"], "outputs": ["1"]}) == "stdio"


def test_kattis_include_files_are_compiled_with_c_and_cpp_submissions(scorer, tmp_path):
    """Issue 48, item 5: ``include/<language>/`` files were ignored, so every submission of such a problem failed.
    C and C++ ones are added beside the submission and compiled with it, as problemtools does (``run/source.py``:
    copied into the submission's directory, every source file of the language compiled together); a Python
    submission gets none (they are another language's)."""
    if shutil.which("g++") is None or shutil.which("gcc") is None:
        pytest.skip("needs g++ and gcc")
    _kattis(tmp_path / "graded")
    for folder, suffix in (("cpp", "cpp"), ("c", "c")):
        (tmp_path / "graded" / "include" / folder / "lib").mkdir(parents=True)
        (tmp_path / "graded" / "include" / folder / "lib" / "add.h").write_text(
            "#ifdef __cplusplus\nextern \"C\"\n#endif\nlong long add(long long a, long long b);\n")
        (tmp_path / "graded" / "include" / folder / f"grader.{suffix}").write_text(
            '#include <stdio.h>\n#include "lib/add.h"\nint main(void) {\n  long long a, b;\n'
            '  if (scanf("%lld %lld", &a, &b) != 2) return 1;\n  printf("%lld\\n", add(a, b));\n  return 0;\n}\n')
    (row,) = load_tasks(tmp_path / "graded")
    assert sorted(row["include_files"]) == ["c", "cpp"]
    task = Task.from_row(row)
    cpp = 'extern "C" long long add(long long a, long long b) { return a + b; }'
    c = "long long add(long long a, long long b) { return a + b; }"
    wrong = cpp.replace("return a + b;", "return a;")
    results = scorer.score([task] * 4, [f"```cpp\n{cpp}\n```", f"```c\n{c}\n```", f"```cpp\n{wrong}\n```",
                                        "```python\nprint(sum(map(int, input().split())))\n```"])
    assert [(r.status, r.reward) for r in results] == [("passed", 1.0), ("passed", 1.0), ("failed", 0.0),
                                                       ("passed", 1.0)], results


def test_kattis_packages_whose_submissions_would_be_judged_wrongly_here_are_refused_with_why(tmp_path):
    """Issue 48, item 5: include files of other languages than C and C++, and a group's own
    ``output_validator_flags`` (judged with the problem's flags before), are refused with why."""
    _kattis(tmp_path / "included")
    (tmp_path / "included" / "include" / "python3").mkdir(parents=True)
    (tmp_path / "included" / "include" / "python3" / "grader.py").write_text("import solution\n")
    with pytest.raises(TaskFormatError, match="include/python3/ files .* not supported yet"):
        load_tasks(tmp_path / "included")
    (tmp_path / "included" / "include" / "python3" / "grader.py").unlink()
    (tmp_path / "included" / "include" / "cpp").mkdir()
    (tmp_path / "included" / "include" / "cpp" / "main.cpp").write_text("int main() {}\n")
    with pytest.raises(TaskFormatError, match="a name the submission's own files take"):
        load_tasks(tmp_path / "included")
    _kattis(tmp_path / "flagged", flags="float_tolerance 1e-6")
    (tmp_path / "flagged" / "data" / "secret" / "group1" / "testdata.yaml").write_text(
        "output_validator_flags: float_tolerance x\n")
    with pytest.raises(TaskFormatError, match="float_tolerance needs a number"):
        load_tasks(tmp_path / "flagged")


def test_kattis_files_keep_their_line_ends_and_hand_written_group_flags_keep_the_default_validator(tmp_path):
    """The judges read raw files: an answer's ``\r\n`` stays (``space_change_sensitive`` compares it); a row's
    ``test_compares`` entry of flags alone is the default validator with those flags (or the checker's)."""
    _kattis(tmp_path / "crlf")
    (tmp_path / "crlf" / "data" / "secret" / "group1" / "a.ans").write_bytes(b"4\r\n")
    (row,) = load_tasks(tmp_path / "crlf")
    assert row["package_tests"][1]["answer"] == "4\r\n"
    flags = ["float_tolerance", "1e-6"]
    task = Task.from_row({**row, "test_compares": [None, {"flags": flags}]})
    assert task.test_compares == (None, {"mode": "kattis", "flags": flags})


@pytest.mark.parametrize("validator", ["default", "custom"])
def test_a_kattis_groups_own_output_validator_flags_judge_its_tests(scorer, tmp_path, validator):
    """Issue 48, item 5: a group's ``testdata.yaml`` ``output_validator_flags`` follow the problem's
    ``validator_flags`` for the tests at and below it (problemtools a185fe9, ``TestCase.output_validator_flags``; a
    group inherits the key from the group above it); they were ignored. Here the sample is judged with 1e-6 and the
    secret group with 1e-3: 0.0005 off passes the group only."""
    _kattis(tmp_path / "flagged", validation=validator, flags="float_tolerance 1e-6")
    (tmp_path / "flagged" / "data" / "secret" / "group1" / "testdata.yaml").write_text(
        "output_validator_flags: float_tolerance 1e-3\n")
    if validator == "custom":  # Kattis' own convention, its tolerance from the flags it is given
        (tmp_path / "flagged" / "output_validators" / "tol").mkdir(parents=True)
        (tmp_path / "flagged" / "output_validators" / "tol" / "validate.py").write_text(
            "import sys\nwant = float(open(sys.argv[2]).read())\ntry:\n    got = float(sys.stdin.read())\n"
            "except ValueError:\n    sys.exit(43)\n"
            "sys.exit(42 if abs(got - want) <= float(sys.argv[-1]) else 43)\n")  # the last flag given: the group's
    (row,) = load_tasks(tmp_path / "flagged")
    task = Task.from_row(row)
    off = "a, b = map(int, input().split())\nprint(a + b + 0.0005)"
    exact = "a, b = map(int, input().split())\nprint(a + b)"
    got = [(r.status, r.tests_passed) for r in scorer.score([task] * 2, [exact, off])]
    assert got == [("passed", 2), ("failed", 1)], got
