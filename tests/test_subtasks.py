"""Subtasks (issue 48): tests grouped with points, scored as open-r1's ``ioi_scoring.py`` (a subtask earns its points
times the lowest of its tests' scores) and Polygon's groups (``complete-group``, ``each-test``, dependencies) score
them; the early stop that skips what cannot change the score; rows with a ``subtasks`` column and Polygon packages
through the reward as TRL calls it, locally and through the remote harness (the mock backend), an interactive
problem included."""

from __future__ import annotations

import shutil

import pytest

from tests._official import local_or_remote_harness, trl_rewards
from trl_sandbox import SandboxConfig, Scorer, Task, load_tasks
from trl_sandbox.errors import TaskFormatError
from trl_sandbox.subtasks import read_subtasks, subtask_points

# n -> n * n; the small inputs first, as olympiad subtasks are
SQUARES = {"task_id": "squares", "inputs": ["1\n", "2\n", "3\n", "30\n", "40\n", "500\n"],
           "outputs": ["1\n", "4\n", "9\n", "900\n", "1600\n", "250000\n"],
           "subtasks": [{"name": "1", "points": 20, "tests": [0, 1]},
                        {"name": "2", "points": 30, "tests": [1, 2, 3]},  # shares test 1 with subtask 1, as IOI's do
                        {"name": "3", "points": 50, "tests": [4, 5], "depends": ["1"]}]}
GOOD = "n = int(input())\nprint(n * n)\n"
SMALL_ONLY = "n = int(input())\nprint(n * n if n < 10 else 0)\n"  # subtask 1 only: 20 of 100
NOT_TWO = "n = int(input())\nprint(0 if n == 2 else n * n)\n"  # test 1 fails: subtasks 1 and 2 lost, 3 depends on 1
BIG_SLOW = "n = int(input())\nwhile n == 30:\n    pass\nprint(n * n)\n"  # past the time limit in subtask 2


def test_a_subtask_earns_its_points_times_its_lowest_test_score():
    subtasks = read_subtasks(SQUARES["subtasks"], 6)
    assert subtask_points(subtasks, [1, 1, 1, 1, 1, 1]) == (20, 30, 50)
    assert subtask_points(subtasks, [1, 1, 0.5, 1, 1, 1]) == (20, 15, 50)  # a checker's partial score: the min
    assert subtask_points(subtasks, [1, 0.9, 1, 1, 1, 1]) == (18, 27, 0)  # a dependency must pass every test
    each = read_subtasks([{"policy": "each", "tests": [0, 2], "test_points": [3, 7]}], 3)
    assert each[0].points == 10 and subtask_points(each, [1, 1, 0]) == (3,)


def test_the_early_stop_never_changes_the_score():
    """Random subtasks (shared tests, both policies, dependencies, chains of them) and random test scores: what the
    harness's skipper leaves unrun (counted 0) never changes the points running every test gives. A chain C -> B -> A
    is the case a skipper that dropped B's tests once A lost one got wrong (Polygon's dependencies are not
    transitive: C needs B's tests even when B earns nothing)."""
    import random

    from trl_sandbox.harness.groups import TestSkipper
    from trl_sandbox.subtasks import harness_groups

    rng = random.Random(48)
    chain = [{"name": "a", "policy": "each", "tests": [0], "test_points": [5]},
             {"name": "b", "points": 20, "tests": [1], "depends": ["a"]},
             {"name": "c", "points": 65, "tests": [2], "depends": ["b"]}]
    cases = [(chain, 3, [0.0, 1.0, 1.0])]
    for _ in range(3000):
        n = rng.randint(1, 7)
        value = []
        for k in range(rng.randint(1, 4)):
            tests = rng.sample(range(n), rng.randint(1, n))
            item = {"name": str(k), "tests": tests, "depends": [str(d) for d in range(k) if rng.random() < 0.4]}
            if rng.random() < 0.3:
                item.update(policy="each", test_points=[rng.randint(0, 5) for _ in tests])
            else:
                item["points"] = rng.randint(0, 30)
            value.append(item)
        scores = [rng.choice([0.0, 1.0, 1.0, 0.5]) for _ in range(n)]
        cases.append((value, n, scores))
    checked = 0
    for value, n, scores in cases:
        try:
            subtasks = read_subtasks(value, n)
        except TaskFormatError:  # no points in all
            continue
        skipper = TestSkipper(harness_groups(subtasks), n)
        seen = []
        for i in range(n):
            if skipper.needed(i):
                skipper.ran(i, {"ok": True} if scores[i] >= 1 else {"ok": False, "score": scores[i]})
                seen.append(scores[i])
            else:
                seen.append(0.0)
        assert subtask_points(subtasks, seen) == subtask_points(subtasks, scores), (value, scores)
        checked += 1
    assert checked > 2000


@pytest.mark.parametrize("value, message", [
    ([{"points": 10, "tests": [3]}], "not a test of the task"),
    ([{"points": 10, "tests": []}], "non-empty list of test indices"),
    ([{"points": -1, "tests": [0]}], "non-negative number"),
    ([{"points": 0, "tests": [0]}], "worth no points"),
    ([{"points": 1, "tests": [0], "policy": "max"}], "policy must be one of min, each"),
    ([{"policy": "each", "tests": [0, 1], "test_points": [1]}], "one number per test"),
    ([{"name": "a", "points": 1, "tests": [0], "depends": ["b"]}], "unknown subtask"),
    ([{"name": "a", "points": 1, "tests": [0], "depends": ["b"]},
      {"name": "b", "points": 1, "tests": [1], "depends": ["a"]}], "cycle: a -> b -> a"),
    ("{not json", "not valid JSON"),
])
def test_a_bad_subtasks_column_is_one_clear_error(value, message):
    with pytest.raises(TaskFormatError, match=message):
        Task.from_row({**SQUARES, "inputs": SQUARES["inputs"][:3], "outputs": SQUARES["outputs"][:3],
                       "subtasks": value})


@pytest.fixture(scope="module", params=["local", "remote-harness"])
def subtask_scorer(request, sandbox_root):
    """A local-backend scorer, and one running the harness as remote backends do (the mock backend)."""
    local = request.param == "local"
    with local_or_remote_harness(local, sandbox_root) as scorer:
        yield scorer


def test_rows_with_subtasks_score_their_points_in_both_reward_modes(subtask_scorer):
    completions = [GOOD, SMALL_ONLY, NOT_TWO, BIG_SLOW]
    assert trl_rewards(subtask_scorer, SQUARES, completions) == [1.0, 0.2, 0.0, 0.7]
    task = Task.from_row(SQUARES)
    good, small, not_two, slow = subtask_scorer.score([task] * 4, completions)
    assert (good.status, good.score, good.subtask_points, good.tests_skipped) == ("passed", 1.0, (20, 30, 50), 0)
    # tests 3 and 4 failed: subtasks 2 and 3 can earn nothing more, test 5 is skipped
    assert (small.status, small.subtask_points, small.tests_skipped) == ("failed", (20, 0, 0), 1)
    # test 1 failed: subtasks 1 and 2 are lost, 3 depends on 1: tests 2 to 5 are skipped, the score unchanged
    assert (not_two.status, not_two.subtask_points, not_two.tests_skipped, not_two.tests_passed) == (
        "failed", (0, 0, 0), 4, 1)
    # a timeout ends that test only: the later subtask still earns
    assert (slow.status, slow.subtask_points) == ("failed", (20, 0, 50)) and "time limit" in slow.error


def test_all_or_nothing_pays_the_full_score_only(sandbox_root):
    config = SandboxConfig(sandbox_pool_size=2, sandbox_test_timeout=1.0, sandbox_reward="all_or_nothing",
                           sandbox_backend_options={"root_dir": str(sandbox_root)})
    with Scorer.from_config(config) as scorer:
        assert trl_rewards(scorer, SQUARES, [GOOD, SMALL_ONLY]) == [1.0, 0.0]


def test_a_test_worth_nothing_that_fails_still_leaves_full_marks(subtask_scorer):
    row = {**SQUARES, "inputs": ["0\n", *SQUARES["inputs"]], "outputs": ["sample\n", *SQUARES["outputs"]],
           "subtasks": [{"name": "sample", "points": 0, "tests": [0]},
                        {"name": "all", "points": 100, "tests": [1, 2, 3, 4, 5, 6]}]}
    (result,) = subtask_scorer.score([Task.from_row(row)], [GOOD])
    assert (result.status, result.reward, result.tests_passed) == ("passed", 1.0, 6)


INTERACTOR = """
import sys
n = int(open(sys.argv[1]).read())
print(n, flush=True)
reply = sys.stdin.readline().split()
if reply != [str(n * n)]:
    open(sys.argv[3] + "judgemessage.txt", "w").write("expected %d, got %r" % (n * n, reply))
    sys.exit(43)
sys.exit(42)
"""


def test_an_interactive_problem_with_subtasks(subtask_scorer):
    row = {"task_id": "squares-interactive", "inputs": ["2\n", "3\n", "40\n"], "outputs": ["", "", ""],
           "interactor": {"interactor": INTERACTOR, "language": "python", "convention": "kattis"},
           "subtasks": [{"name": "small", "points": 40, "tests": [0, 1]}, {"name": "big", "points": 60, "tests": [2]}]}
    small = "n = int(input())\nprint(n * n if n < 10 else -1, flush=True)\n"
    assert trl_rewards(subtask_scorer, row, [GOOD.replace("print(n * n)", "print(n * n, flush=True)"), small]) == [
        1.0, 0.4]


def test_a_compiled_program_past_the_time_limit_leaves_the_later_groups_earning(subtask_scorer):
    """An interactive test past its time limit ends the worker of a compiled program: the next test runs in a fresh
    one, the program compiled again (the group that lost the test earns nothing, the later one its points)."""
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    row = {"task_id": "squares-interactive-cpp", "inputs": ["2\n", "3\n", "40\n"], "outputs": ["", "", ""],
           "language": "cpp", "interactor": {"interactor": INTERACTOR, "language": "python", "convention": "kattis"},
           "subtasks": [{"name": "small", "points": 40, "tests": [0, 1]}, {"name": "big", "points": 60, "tests": [2]}]}
    hangs_on_three = ("#include <cstdio>\nint main() {\n  long long n;\n  if (scanf(\"%lld\", &n) != 1) return 1;\n"
                      "  volatile long long x = 0;\n  while (n == 3) x++;\n  printf(\"%lld\\n\", n * n);\n"
                      "  fflush(stdout);\n}\n")
    waits_on_three = hangs_on_three.replace("volatile long long x = 0;\n  while (n == 3) x++;",
                                            "if (n == 3) scanf(\"%lld\", &n);")  # the wall-clock limit
    results = subtask_scorer.score([Task.from_row(row)] * 2, [hangs_on_three, waits_on_three])
    for result in results:
        assert (result.subtask_points, result.tests_passed) == ((0.0, 60.0), 2), result


def _polygon(root, tests, groups, solution=None):
    """A Polygon package of ``tests`` (``(input, answer, group, points)``), ``groups`` (``<group>`` elements) and its
    main ``solution`` (Python), if any."""
    (root / "tests").mkdir(parents=True)
    assets = ""
    if solution is not None:
        (root / "solutions").mkdir()
        (root / "solutions" / "main.py").write_text(solution)
        assets = ('<assets><solutions><solution tag="main"><source path="solutions/main.py" type="python.3"/>'
                  '</solution></solutions></assets>')
    rows = []
    for i, (given, answer, group, points) in enumerate(tests, 1):
        (root / "tests" / f"{i:02d}").write_text(given)
        (root / "tests" / f"{i:02d}.a").write_text(answer)
        rows.append(f'<test method="manual" group="{group}" points="{points}"/>')
    (root / "problem.xml").write_text(f"""<?xml version="1.0" encoding="utf-8"?>
<problem revision="1" short-name="{root.name}">
  <judging input-file="" output-file="">
    <testset name="tests">
      <time-limit>1000</time-limit><memory-limit>268435456</memory-limit><test-count>{len(tests)}</test-count>
      <input-path-pattern>tests/%02d</input-path-pattern><answer-path-pattern>tests/%02d.a</answer-path-pattern>
      <tests>{''.join(rows)}</tests>
      <groups>{groups}</groups>
    </testset>
  </judging>
  {assets}
</problem>
""")


def test_polygon_groups_are_read_and_scored_as_polygon_scores_them(subtask_scorer, tmp_path):
    """``complete-group`` pays the group's points when all its tests pass, ``each-test`` each passed test's points,
    and a group whose dependency lost a test pays nothing (Polygon's groups, codeforces.com/blog/entry/60217)."""
    tests = [("1\n", "1\n", "0", "0"), ("2\n", "4\n", "1", "10"), ("3\n", "9\n", "1", "10"),
             ("30\n", "900\n", "2", "15"), ("40\n", "1600\n", "2", "25"), ("500\n", "250000\n", "3", "40")]
    groups = ('<group name="0" points="0" points-policy="complete-group"/>'
              '<group name="1" points="20" points-policy="complete-group"/>'
              '<group name="2" points-policy="each-test"><dependencies><dependency group="1"/></dependencies></group>'
              '<group name="3" points="40" points-policy="complete-group"/>')
    _polygon(tmp_path / "squares", tests, groups)
    (row,) = load_tasks(tmp_path / "squares")
    assert row["subtasks"] == [
        {"name": "0", "policy": "min", "points": 0.0, "tests": [0], "depends": []},
        {"name": "1", "policy": "min", "points": 20.0, "tests": [1, 2], "depends": []},
        {"name": "2", "policy": "each", "tests": [3, 4], "test_points": [15.0, 25.0], "depends": ["1"]},
        {"name": "3", "policy": "min", "points": 40.0, "tests": [5], "depends": []}]
    not_forty = "n = int(input())\nprint(0 if n == 40 else n * n)\n"
    not_three = "n = int(input())\nprint(0 if n == 3 else n * n)\n"
    # GOOD: 100; SMALL_ONLY: group 1 (20) and the sample; not_forty: 20 + 15 + 40; not_three: group 2 depends on 1
    assert trl_rewards(subtask_scorer, row, [GOOD, SMALL_ONLY, not_forty, not_three]) == [1.0, 0.2, 0.75, 0.4]


def test_polygon_tests_with_points_outside_every_group_earn_them_each(tmp_path):
    tests = [("1\n", "1\n", "1", "0"), ("2\n", "4\n", "1", "0"), ("3\n", "9\n", "", "10")]
    _polygon(tmp_path / "loose", tests, '<group name="1" points="40"/>')
    (row,) = load_tasks(tmp_path / "loose")
    assert row["subtasks"][-1] == {"name": "tests", "policy": "each", "tests": [2], "test_points": [10.0], "depends": []}


def test_a_polygon_package_without_points_stays_pass_fail(tmp_path):
    tests = [("1\n", "1\n", "0", "0"), ("2\n", "4\n", "1", "0")]
    _polygon(tmp_path / "plain", tests, '<group name="0"/><group name="1"/>')
    (row,) = load_tasks(tmp_path / "plain")
    assert "subtasks" not in row and Task.from_row(row).subtasks == ()


def test_the_audit_vouches_for_subtask_packages_and_catches_a_group_a_constant_earns(subtask_scorer, tmp_path):
    """``trl-sandbox audit`` on packages with groups: the main solution must earn the full score, and a trivial
    program must earn no point of any group (here a group whose every answer is 0)."""
    from trl_sandbox.audit import audit_tasks

    tests = [("1\n", "1\n", "1", "0"), ("2\n", "4\n", "1", "0"), ("3\n", "9\n", "2", "0")]
    groups = '<group name="1" points="40"/><group name="2" points="60"/>'
    _polygon(tmp_path / "a-sound", tests, groups, solution=GOOD)
    _polygon(tmp_path / "b-zeros", [*tests, ("0\n", "0\n", "3", "0")], groups + '<group name="3" points="10"/>',
             solution=GOOD)
    report = audit_tasks(load_tasks(tmp_path), subtask_scorer)
    sound, zeros = report.rows
    assert sound.verdict == "ok", sound.findings
    assert zeros.verdict == "trivial_paid" and any("constant" in f for f in zeros.findings), zeros.findings


def _kattis_scoring(root, interactive=False):
    """A Kattis ``type: scoring`` package laid out as problemtools' ``examples/oddecho`` is: ``data/`` ignores the
    sample in its score, the sample scores 0, ``secret`` accepts if any subtask is accepted, and two subtasks of 50
    points each (``grader_flags: min``, ``on_reject: break``)."""
    files = {
        "problem.yaml": "problem_format_version: 2023-07-draft\ntype: scoring\nname: Squares\n",
        "data/testdata.yaml": "on_reject: continue\nrange: 0 100\ngrader_flags: ignore_sample\n",
        "data/sample/testdata.yaml": "on_reject: continue\naccept_score: 0\ngrader_flags: first_error\n",
        "data/sample/1.in": "0\n", "data/sample/1.ans": "sample\n",  # no program prints this: a failed sample
        "data/secret/testdata.yaml": "on_reject: continue\ngrader_flags: first_error accept_if_any_accepted\n",
        "data/secret/subtask1/testdata.yaml": "on_reject: break\naccept_score: 50\ngrader_flags: min\n",
        "data/secret/subtask2/testdata.yaml": "on_reject: break\naccept_score: 50\ngrader_flags: min\n",
    }
    for i, n in enumerate((1, 2, 3), 1):
        files[f"data/secret/subtask1/{i}.in"], files[f"data/secret/subtask1/{i}.ans"] = f"{n}\n", f"{n * n}\n"
    for i, n in enumerate((30, 40, 50, 60), 1):
        files[f"data/secret/subtask2/{i:02d}.in"], files[f"data/secret/subtask2/{i:02d}.ans"] = f"{n}\n", f"{n * n}\n"
    if interactive:  # the 2023-07 format's type, and the interactor as its output validator
        files["problem.yaml"] = files["problem.yaml"].replace("type: scoring", "type: scoring interactive")
        files["output_validator/interact.py"] = INTERACTOR
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_kattis_scoring_package_scores_as_problemtools_grades_it(subtask_scorer, tmp_path):
    """problemtools' groups (a185fe9: ``verifyproblem.py`` ``TestCaseGroup``, ``judge/submission_judge.py``,
    ``support/default_grader``); ``tree_outcome`` agreed with that code, run from a scratch copy, on 2,000 random
    trees and verdicts (verdict, score and the tests judged)."""
    _kattis_scoring(tmp_path / "squares")
    (row,) = load_tasks(tmp_path / "squares")
    assert [t["name"] for t in row["package_tests"]][:2] == ["sample/1", "secret/subtask1/1"]
    tree = row["score_tree"]
    assert tree["flags"] == ["ignore_sample"] and not tree["break"]
    subtask1 = tree["items"][1]["items"][0]
    assert subtask1 == {"items": [1, 2, 3], "flags": ["min"], "break": True, "accept": 50.0, "reject": 0.0}
    not_two = "n = int(input())\nprint(0 if n == 2 else n * n)\n"
    rewards = trl_rewards(subtask_scorer, row, [GOOD, SMALL_ONLY, not_two, "print(-1)"])
    assert rewards == [1.0, 0.5, 0.5, 0.0]
    task = Task.from_row(row)
    good, small, two, wrong = subtask_scorer.score([task] * 4, [GOOD, SMALL_ONLY, not_two, "print(-1)"])
    assert good.status == "passed" and good.tests_passed == 7  # the failed sample is ignored, as problemtools does
    assert (small.subtask_points, small.tests_skipped) == ((0.0, 50.0), 3)  # subtask 2 stops at its first reject
    assert two.tests_skipped == 1 and wrong.tests_skipped == 2 + 3


@pytest.mark.parametrize("change, message", [
    ({"data/secret/subtask1/testdata.yaml": "output_validator_flags: 5\n"}, "flags must be a string or a list"),
    ({"data/secret/subtask1/testdata.yaml": "grading:\n  score: 50\n  aggregation: min\n"}, "2023-07"),
])
def test_what_a_kattis_scoring_package_would_be_judged_wrongly_by_is_refused(tmp_path, change, message):
    _kattis_scoring(tmp_path / "squares")
    for name, text in change.items():
        (tmp_path / "squares" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "squares" / name).write_text(text)
    with pytest.raises(TaskFormatError, match=message):
        load_tasks(tmp_path / "squares")


def test_grader_flags_as_a_yaml_list_are_read(tmp_path):
    _kattis_scoring(tmp_path / "squares")
    (tmp_path / "squares" / "data/secret/subtask1/testdata.yaml").write_text(
        "on_reject: break\naccept_score: 50\ngrader_flags: [min]\n")
    (row,) = load_tasks(tmp_path / "squares")
    assert row["score_tree"]["items"][1]["items"][0]["flags"] == ["min"]


def test_an_interactive_kattis_scoring_package(subtask_scorer, tmp_path):
    _kattis_scoring(tmp_path / "squares", interactive=True)
    (row,) = load_tasks(tmp_path / "squares")
    assert row["interactor"]["convention"] == "kattis" and row["score_tree"]
    flushed = [GOOD.replace("print(n * n)", "print(n * n, flush=True)"),
               SMALL_ONLY.replace("print(n * n if n < 10 else 0)", "print(n * n if n < 10 else 0, flush=True)")]
    assert trl_rewards(subtask_scorer, row, flushed) == [1.0, 0.5]
