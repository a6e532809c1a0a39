"""Subtasks: a task's tests grouped with points, as olympiads score them (IOI, Polygon groups, Kattis test groups).

A :class:`Subtask` names some of the task's tests (by index; a test may belong to several subtasks, as IOI's do), its
points, how its tests' scores make its own (``policy``) and the subtasks it depends on. Each test scores in [0, 1]:
1 when it passes, a checker's partial score (testlib's ``points``, Kattis' ``score.txt``) else, 0 when it failed, was
not run or was skipped. Then:

- ``policy="min"``: ``points × min(test scores)``. open-r1's ``ioi_scoring.py`` (``SubtaskResult.weighted_score``,
  huggingface/open-r1 ``src/open_r1/utils/competitive_programming/ioi_scoring.py``), and with pass/fail tests
  Polygon's ``complete-group`` policy ("the points for the group will be added only if all tests from this group
  have been passed", Polygon's announcement of groups, codeforces.com/blog/entry/60217);
- ``policy="each"``: the sum of ``test_points[k] × score`` of its tests: Polygon's ``each-test`` policy ("points
  will be added for each passed test from this group");
- ``depends``: a subtask earns nothing unless every test of each subtask it depends on passed (Polygon: "if group A
  depends on group B, then regardless of which of the tests of group A were passed, you will get 0 points for all
  tests of group A if at least one of test of group B is not passed").

The task's score is the sum of its subtasks' points earned, over the sum of their maxima: the ``pass_rate`` reward
pays that fraction, ``all_or_nothing`` pays only the full score (see :func:`trl_sandbox.results.reward_of`).

**Early stop** (as open-r1 stops a subtask at its first test that scores 0): the harness skips a test once every
subtask it belongs to can earn nothing more from it: a ``min`` subtask with a test that scored 0, or a subtask one of
whose dependencies lost a test; and no subtask that can still earn depends on one it belongs to. A test that belongs to no subtask, or to one that can still earn, always runs, so the
score is the one running every test would give (:func:`harness_groups` is what the harness is told; the host
recomputes the score from the tests that ran, the skipped ones counting 0).

**Kattis scoring packages** keep their test data groups as a tree (:func:`read_score_tree`), scored by problemtools'
own rules (each group aggregated by its ``grader_flags``, ``on_reject: break`` judging no child after the first one
not accepted: those tests are not run, as problemtools does not run them), see
:func:`trl_sandbox.harness.groups.tree_outcome`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import TaskFormatError

__all__ = ["POLICIES", "Subtask", "harness_groups", "read_score_tree", "read_subtasks", "subtask_points", "tree_score"]

#: How a subtask's tests make its score (see the module docstring).
POLICIES = ("min", "each")


@dataclass(frozen=True)
class Subtask:
    """A group of a task's tests worth points (see the module docstring).

    Attributes:
        name: The subtask's name (the row's, else its position from 1 as a string).
        points: The most it earns: with ``policy="min"``, what it earns when every test passes; with ``"each"``, the
            sum of ``test_points``.
        tests: Indices (from 0, in the task's order of tests) of its tests; not empty.
        policy: ``"min"`` or ``"each"``.
        test_points: ``policy="each"``: the points of each test of ``tests``, in that order; else ``()``.
        depends: Names of the subtasks whose every test must pass for this one to earn anything.
        precision: ``policy="min"``: the decimals its tests' lowest score is rounded to before it is multiplied by
            ``points`` (open-r1's ``score_precision``: the reward it pays is ``round(min(scores), precision)``), else
            None (not rounded).
    """

    name: str
    points: float
    tests: tuple[int, ...]
    policy: str = "min"
    test_points: tuple[float, ...] = ()
    depends: tuple[str, ...] = ()
    precision: int | None = None


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise TaskFormatError(f"{what} must be a non-negative number, got {value!r}")
    return float(value)


def read_subtasks(value: Any, n_tests: int) -> tuple[Subtask, ...]:
    """A row's ``subtasks`` column: a list (or its JSON text) of ``{"name"?, "points" (or "score"), "tests": [test
    indices from 0], "policy"?: "min" | "each", "test_points"?: [numbers, one per test, for "each"], "depends"?:
    [names]}``, for a task of ``n_tests`` tests.

    Raises:
        TaskFormatError: not such a list; a subtask without tests, with a test index out of range, with an unknown
            policy or dependency (or a cycle of them); points that are negative or not numbers; subtasks worth no
            points in all.
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise TaskFormatError("task field 'subtasks' is not valid JSON") from None
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)) or not value:
        raise TaskFormatError("task field 'subtasks' must be a non-empty list of {name, points, tests, ...}")
    subtasks = []
    for position, item in enumerate(value, 1):
        if not isinstance(item, Mapping):
            raise TaskFormatError(f"subtask {position}: must be a mapping {{name, points, tests, ...}}")
        name = str(item.get("name") if item.get("name") is not None else position)
        what = f"subtask {name!r}"
        tests = item.get("tests")
        if not isinstance(tests, Sequence) or isinstance(tests, (str, bytes)) or not tests:
            raise TaskFormatError(f"{what}: 'tests' must be a non-empty list of test indices")
        indices = []
        for index in tests:
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < n_tests:
                raise TaskFormatError(f"{what}: test {index!r} is not a test of the task (0 to {n_tests - 1})")
            indices.append(index)
        policy = str(item.get("policy") or "min")
        if policy not in POLICIES:
            raise TaskFormatError(f"{what}: policy must be one of {', '.join(POLICIES)}, got {policy!r}")
        test_points: tuple[float, ...] = ()
        if policy == "each":
            raw = item.get("test_points")
            if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)) or len(raw) != len(indices):
                raise TaskFormatError(f"{what}: policy 'each' needs 'test_points', one number per test")
            test_points = tuple(_number(p, f"{what}: test_points") for p in raw)
            points = sum(test_points)
        else:
            points = _number(item.get("points", item.get("score")), f"{what}: points")
        depends = item.get("depends") or ()
        if isinstance(depends, (str, bytes)) or not isinstance(depends, Sequence):
            raise TaskFormatError(f"{what}: 'depends' must be a list of subtask names")
        subtasks.append(Subtask(name, points, tuple(indices), policy, test_points, tuple(str(d) for d in depends)))
    names = [s.name for s in subtasks]
    if len(set(names)) != len(names):
        raise TaskFormatError(f"subtask names repeat: {names}")
    for subtask in subtasks:
        unknown = [d for d in subtask.depends if d not in names]
        if unknown:
            raise TaskFormatError(f"subtask {subtask.name!r} depends on unknown subtask(s) {unknown}")
    _check_acyclic(subtasks)
    if sum(s.points for s in subtasks) <= 0:
        raise TaskFormatError("the subtasks are worth no points in all")
    return tuple(subtasks)


def _check_acyclic(subtasks: Sequence[Subtask]) -> None:
    by_name = {s.name: s for s in subtasks}
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            raise TaskFormatError(f"subtask dependencies form a cycle: {' -> '.join((*path, name))}")
        if name in done:
            return
        for dependency in by_name[name].depends:
            visit(dependency, (*path, name))
        done.add(name)

    for subtask in subtasks:
        visit(subtask.name, ())


def subtask_points(subtasks: Sequence[Subtask], scores: Sequence[float]) -> tuple[float, ...]:
    """The points each subtask earns for the tests' ``scores`` (one per test of the task, each in [0, 1]; a test not
    run counts 0), by the rules of the module docstring."""
    by_name = {s.name: s for s in subtasks}

    def all_passed(subtask: Subtask) -> bool:
        return all(scores[i] >= 1.0 for i in subtask.tests)

    earned = []
    for subtask in subtasks:
        if not all(all_passed(by_name[d]) for d in subtask.depends):
            earned.append(0.0)
        elif subtask.policy == "each":
            earned.append(sum(p * scores[i] for p, i in zip(subtask.test_points, subtask.tests)))
        else:
            lowest = min(scores[i] for i in subtask.tests)
            if subtask.precision is not None:
                lowest = round(lowest, subtask.precision)
            earned.append(subtask.points * lowest)
    return tuple(earned)


def harness_groups(subtasks: Sequence[Subtask]) -> list[dict[str, Any]]:
    """What the harness needs to skip tests that cannot change the score (the request's ``groups``): per subtask
    ``{"tests": [indices], "min": bool, "depends": [positions of the subtasks it depends on]}``, in the order of
    ``subtasks`` (see the harness's ``groups.TestSkipper``)."""
    position = {s.name: i for i, s in enumerate(subtasks)}
    return [{"tests": list(s.tests), "min": s.policy == "min", "depends": [position[d] for d in s.depends]}
            for s in subtasks]


# -- Kattis test data groups -------------------------------------------------------------------------------------


def read_score_tree(value: Any, n_tests: int) -> dict[str, Any]:
    """A row's ``score_tree``: a Kattis scoring package's test data groups as
    :func:`trl_sandbox.formats.package_dirs.read_kattis` writes them (a node: ``{"items": [test index | node],
    "flags": [grader flags], "break": bool, "accept": number, "reject": number}``), scored by
    :func:`trl_sandbox.harness.groups.tree_outcome` (problemtools' rules), for a task of ``n_tests`` tests.

    Raises:
        TaskFormatError: not such a tree; a test index out of range or used twice; no test; a maximum score (every
            test accepted) that is not above 0.
    """
    from .harness.groups import tree_outcome, tree_tests

    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise TaskFormatError("task field 'score_tree' is not valid JSON") from None

    def check(node: Any, depth: int) -> None:
        if not isinstance(node, Mapping) or not isinstance(node.get("items"), list) or depth > 50:
            raise TaskFormatError("task field 'score_tree': a group must be {items: [...], flags, break, accept, "
                                  "reject}")
        for key in ("accept", "reject"):
            _number_or_negative(node.get(key, 0.0), f"score_tree: {key}")
        if not isinstance(node.get("flags", []), list):
            raise TaskFormatError("task field 'score_tree': flags must be a list of grader flags")
        if not isinstance(node.get("break", True), bool):
            raise TaskFormatError("task field 'score_tree': break must be true or false")
        for item in node["items"]:
            if isinstance(item, Mapping):
                check(item, depth + 1)
            elif isinstance(item, bool) or not isinstance(item, int) or not 0 <= item < n_tests:
                raise TaskFormatError(f"task field 'score_tree': {item!r} is not a test of the task")

    check(value, 0)
    indices = tree_tests(value)
    if not indices or len(set(indices)) != len(indices):
        raise TaskFormatError("task field 'score_tree' must name each of its tests once, and at least one")
    best = tree_outcome(value, {i: True for i in indices})[1]
    if not best > 0:
        raise TaskFormatError(f"task field 'score_tree': every test accepted scores {best:g}: nothing to earn")
    return dict(value)


def _number_or_negative(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TaskFormatError(f"{what} must be a number, got {value!r}")
    return float(value)


def tree_score(tree: Mapping[str, Any], passed: Mapping[int, bool]) -> tuple[float, tuple[float, ...]]:
    """The fraction of the best score (every test accepted) that ``passed`` (test index -> accepted) earns, clipped
    to [0, 1], and the score of each group directly under the root (``data/``: sample, secret...)."""
    from .harness.groups import tree_outcome, tree_tests

    best = tree_outcome(tree, {i: True for i in tree_tests(tree)})[1]
    score = tree_outcome(tree, passed)[1]
    parts = tuple(tree_outcome(item, passed)[1] for item in tree.get("items") or () if isinstance(item, Mapping))
    return min(1.0, max(0.0, score / best)), parts
