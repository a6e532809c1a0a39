"""Problem package directories read as rows: Kattis (problemtools), Codeforces Polygon, Frontier-CS algorithmic
problems and InteractBench's unpacked problems. :func:`read_problem_dirs` is what ``load_tasks(DIRECTORY)`` calls.

**Kattis** (problemtools' problem package format, https://www.kattis.com/problem-package-format/ legacy version, and
github ``Kattis/problemtools`` ``problemtools/verifyproblem.py``): ``problem.yaml`` (``validation: default | custom
| custom interactive | custom score``, ``validator_flags``, ``limits: {memory (MB), time_multiplier,
time_safety_margin, time_limit}``), ``output_validators/<name>/`` (or ``output_validator/``, the 2023-07 version,
or ``output_validator/<name>/``) with C, C++ or Python sources and headers, ``data/sample`` and ``data/secret``
with ``*.in`` and ``*.ans``, in nested groups, ``submissions/<verdict>/``; a ``type: scoring`` problem's test data
groups (``testdata.yaml``) as its row's ``score_tree`` (see :func:`_kattis_groups`); ``include/cpp/`` and
``include/c/`` as its row's ``include_files`` (see :func:`.kattis_includes.include_files`). A custom validator runs as ``validator
input judge_answer feedback_dir [validator_flags] < output`` (42 accepts, 43 rejects): the ``kattis`` convention;
``custom interactive`` makes it the interactor. The default validator is the ``kattis`` judge, problemtools'
``default_validator.cc`` with the flags (tokens, case-insensitive unless ``case_sensitive``, any number within
``float_tolerance`` / ``float_relative_tolerance`` / ``float_absolute_tolerance`` when given, white space exact with
``space_change_sensitive``); a test group's own ``output_validator_flags`` follow the problem's for its tests. Time: problemtools
sets the limit from the accepted submissions' time × ``time_multiplier`` (the package does not store it); it is read
from ``limits.time_limit``, the ``.timelimit`` file Kattis installs, or DOMjudge's ``domjudge-problem.ini``
``timelimit`` (seconds), else the package has none here. Tests: the
samples, then the secret groups in name order (problemtools judges both).

**Polygon** (Codeforces' package ``problem.xml``): ``judging/testset[@name="tests"]`` with ``time-limit`` (ms),
``memory-limit`` (bytes), ``input-path-pattern`` (``tests/%02d``) and ``answer-path-pattern`` (``tests/%02d.a``),
``test-count``; ``assets/checker/source`` (testlib: ``check input output answer``), ``assets/interactor/source``
(testlib: ``interactor input tout answer``, then the checker on ``tout``), ``files/resources`` (``testlib.h`` and
other headers the sources include), ``assets/solutions/solution[@tag]`` (``main``, ``accepted``, ``wrong-answer``...),
and the testset's groups with points (``tests/test[@group @points]``, ``groups/group[@name @points @points-policy]``
with ``dependencies``) as the row's ``subtasks`` (see :func:`_polygon_groups`).
Codeforces gives each test the time limit as it is: factor 1. Tests a package does not hold (a standard package keeps
generated tests as generator scripts: run its ``doall.sh``) are refused by name.

**Frontier-CS** (github ``FrontierCS/Frontier-CS`` ``algorithmic/problems/<id>/`` and its judge
``algorithmic/judge/src/problem_manager.js`` and ``judge_engine.js`` at commit
4d508c1954766e0dda0347e1f14946978ef6b761): ``config.yaml`` (``type: default | interactive``, ``time: 2s``,
``memory: 256m``, ``checker`` (default ``chk.cc``), ``interactor`` (default ``interactor.cc``), ``subtasks`` of
``n_cases``), ``testdata/<i>.in`` and ``<i>.ans`` numbered from 1 across subtasks. go-judge gives the program the
CPU time limit and twice it of wall time (factor 1), the checker 10 s and 256 MB, the interactor 4 × both. The
checker (testlib, ``chk in.txt out.txt ans.txt``) or interactor prints ``Ratio: x``: the test's score; a problem's
score is their mean. ``examples/reference.cpp`` is a reference solution.

**InteractBench** (see :mod:`.interactbench`): a folder written by its ``scripts/import_from_jsonl.py`` with the test
shards unpacked: ``<id>/meta.json``, ``<id>/interactor/non_adaptive.cpp`` and ``adaptive.cpp``, ``<id>/cases/*.in``.
"""

from __future__ import annotations

import json
import logging
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from ..errors import TaskFormatError
from ._common import limit_seconds
from ._contest import JUDGE_SOURCE_LANGUAGES, checker_spec, interactor_spec, language_of
from .kattis_includes import include_files

logger = logging.getLogger(__name__)
__all__ = ["read_problem_dirs", "read_kattis", "read_polygon", "read_frontier_cs", "read_interactbench_dir"]

#: Headers a judge program's source may include, carried as its extra files.
HEADER_SUFFIXES = (".h", ".hpp", ".hh")


def _text(path: Path) -> str:
    """A file's text (UTF-8, bad bytes replaced), its line ends as they are (``\r\n`` stays: the judges read raw
    files)."""
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        return f.read()


def _yaml(path: Path) -> dict[str, Any]:
    """A YAML file as a mapping (``{}`` when empty).

    Raises:
        TaskFormatError: not YAML, or not a mapping.
    """
    import yaml

    try:
        value = yaml.safe_load(_text(path).lstrip("\ufeff")) or {}
    except yaml.YAMLError as exc:
        raise TaskFormatError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(value, dict):
        raise TaskFormatError(f"{path}: expected a mapping")
    return value


def _solutions(paths: list[tuple[Path, str]], root: Path) -> list[dict[str, Any]]:
    """Reference solutions: ``{path, language, tag, source}`` for each source file of ``paths`` (path, tag)."""
    found = []
    for path, tag in paths:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            language = language_of(file.name)
            if language is not None and file.is_file():
                found.append({"path": file.relative_to(root).as_posix(), "language": language, "tag": tag,
                              "source": _text(file)})
    return found


def _judge_program(directory: Path, what: str) -> tuple[str, str, dict[str, str]]:
    """The main source of a judge program directory (the one source file with ``main``), its language and the other
    files (headers, further sources) by name.

    Raises:
        TaskFormatError: no source file in a supported language, or several with ``main``.
    """
    files = sorted(p for p in directory.iterdir() if p.is_file())
    sources = [p for p in files if language_of(p.name) in JUDGE_SOURCE_LANGUAGES]
    if not sources:
        raise TaskFormatError(f"{directory}: no {what} source in C, C++ or Python")
    mains = [p for p in sources if re.search(r"\bmain\s*\(", _text(p)) or p.suffix == ".py"]
    if len(mains) != 1:
        raise TaskFormatError(f"{directory}: expected one {what} source with main(), found "
                              f"{', '.join(p.name for p in mains) or 'none'}")
    main = mains[0]
    extra = {p.name: _text(p) for p in files if p != main and (p.suffix in HEADER_SUFFIXES or p in sources)}
    return _text(main), str(language_of(main.name)), extra


# -- Kattis ---------------------------------------------------------------------------------------------------------


def _kattis_tests(root: Path) -> list[dict[str, str]]:
    """``data/sample`` then ``data/secret``: every ``*.in`` with its ``*.ans``, groups in name order.

    Raises:
        TaskFormatError: an input without its answer file.
    """
    tests = []
    for part in ("sample", "secret"):
        base = root / "data" / part
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.in")):
            answer = path.with_suffix(".ans")
            if not answer.is_file():
                raise TaskFormatError(f"{answer}: missing (every Kattis test input needs its .ans)")
            tests.append({"name": path.relative_to(root / "data").with_suffix("").as_posix(), "input": _text(path),
                          "answer": _text(answer)})
    return tests


#: problemtools' ``config/testdata.yaml``: a group's settings where neither it nor a group above it sets them.
_TESTDATA_DEFAULTS = {"on_reject": "break", "grader_flags": "", "accept_score": 1.0, "reject_score": 0.0,
                      "grading": "default"}


def _kattis_groups(root: Path, grading: dict[str, Any]) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """A scoring package's tests and test data groups, as problemtools judges them (``verifyproblem.py``
    ``TestCaseGroup``, ``judge/submission_judge.py``, ``support/default_grader``; problemtools a185fe9): ``data/`` is
    the root group, each directory below it a group, its items the subdirectories and the ``.ans`` files with their
    ``.in``, in sorted name order; each group's ``testdata.yaml`` keys, missing ones inherited from the group above
    (``problem.yaml``'s legacy ``grading`` ``accept_score``, ``reject_score``, ``on_reject: first_error | grade``
    over them), else problemtools' defaults. Returns the tests in that (depth-first) order and the tree
    ``{"items", "flags", "break", "accept", "reject"}`` (see ``trl_sandbox.harness.groups``).

    Raises:
        TaskFormatError: a custom grader (``grading: custom``), a score that is not a number, no test.
    """
    tests: list[dict[str, str]] = []

    def group(directory: Path, inherited: dict[str, Any]) -> dict[str, Any]:
        config = dict(inherited)
        if (directory / "testdata.yaml").is_file():
            config.update(_yaml(directory / "testdata.yaml"))
        for key in ("accept_score", "reject_score"):
            if grading.get(key) is not None:
                config[key] = grading[key]
        if grading.get("on_reject") in ("first_error", "grade"):
            config["on_reject"] = "break" if grading["on_reject"] == "first_error" else "continue"
        merged = {**_TESTDATA_DEFAULTS, **config}
        where = directory.relative_to(root).as_posix()
        if merged.get("grading") == "custom":
            raise TaskFormatError(f"{root}: {where} uses a custom grader (grading: custom): not supported")
        try:
            accept, reject = float(merged["accept_score"]), float(merged["reject_score"])
        except (TypeError, ValueError):
            raise TaskFormatError(f"{root}: {where}/testdata.yaml: accept_score and reject_score must be "
                                  "numbers") from None
        items: list[Any] = []
        for path in sorted(directory.iterdir(), key=lambda p: p.name):
            if path.is_dir():
                items.append(group(path, config))
            elif path.suffix == ".ans" and path.with_suffix(".in").is_file():
                items.append(len(tests))
                tests.append({"name": path.relative_to(root / "data").with_suffix("").as_posix(),
                              "input": _text(path.with_suffix(".in")), "answer": _text(path)})
        return {"items": items, "flags": _flag_list(merged.get("grader_flags"), f"{root}: {where}/testdata.yaml"),
                "break": merged.get("on_reject") != "continue", "accept": accept, "reject": reject}

    tree = group(root / "data", {})
    if not tests:
        raise TaskFormatError(f"{root}: no test data (data/**/NAME.in with NAME.ans)")
    return tests, tree


def _default_validator(flags: list[str]) -> dict[str, Any]:
    """Kattis' default output validator with ``validator_flags`` as a stdout judge (the ``kattis`` judge of
    :func:`trl_sandbox.harness.compare.same_output`: problemtools' ``default_validator.cc``, its flags as they are).

    Raises:
        TaskFormatError: a flag the validator does not know, or a tolerance that is not a number.
    """
    from ..harness.compare import kattis_flags

    try:
        kattis_flags(flags)
    except ValueError as exc:
        raise TaskFormatError(f"validator_flags {' '.join(flags)!r}: {exc} (Kattis' default validator)") from None
    return {"mode": "kattis", "flags": list(flags)}


def _validator_folder(root: Path) -> Path | None:
    """The output validator's directory of a Kattis package: ``output_validator/`` (the 2023-07 version), or its one
    subdirectory when it holds no file itself (``output_validator/<name>/``, as problemtools' ``examples/guess``
    ships it), else ``output_validators/<name>/`` (the legacy version; ``output_validators/`` itself when it holds
    several or none), else None."""
    for name in ("output_validator", "output_validators"):
        folder = root / name
        if not folder.is_dir():
            continue
        subdirs = sorted(p for p in folder.iterdir() if p.is_dir())
        if len(subdirs) == 1 and (name == "output_validators" or not any(p.is_file() for p in folder.iterdir())):
            return subdirs[0]
        return folder
    return None


def _domjudge_ini(path: Path) -> dict[str, str]:
    """``domjudge-problem.ini`` (DOMjudge's ``doc/manual/problem-format.rst``): ``key = value`` lines, the ``=``
    optionally surrounded by whitespace, the value optionally quoted."""
    values = {}
    for match in re.finditer(r"""^\s*([A-Za-z_][\w-]*)\s*=\s*(?:'([^']*)'|"([^"]*)"|([^\n]*?))\s*$""", _text(path),
                             re.M):
        key, *value = match.groups()
        values[key] = next(v for v in value if v is not None)
    return values


def _flag_list(value: Any, where: str) -> list[str]:
    """Flags as a package writes them, a string (split on white space) or a list; ``[]`` for none.

    Raises:
        TaskFormatError: anything else (a number, a mapping), naming ``where``.
    """
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list) and all(isinstance(f, (str, int, float)) and not isinstance(f, bool) for f in value):
        return [str(f) for f in value]
    raise TaskFormatError(f"{where}: flags must be a string or a list of them, got {value!r:.80}")


def _refuse_unsupported(root: Path) -> None:
    """Refuse a group's scoring given as a mapping (the 2023-07 format's: judged wrongly here).

    Raises:
        TaskFormatError: naming what and where; a group's ``output_validator_flags`` that are not flags.
    """
    data = root / "data"
    for path in sorted(data.rglob("testdata.yaml")) if data.is_dir() else []:
        settings = _yaml(path)
        _flag_list(settings.get("output_validator_flags"), f"{root}: {path.relative_to(root)}")
        if isinstance(settings.get("grading"), dict) or "scoring" in settings:
            raise TaskFormatError(f"{root}: {path.relative_to(root)} gives its group's scoring as a mapping (the "
                                  "2023-07 format's score, max_score and aggregation): not supported yet")


def _test_flags(root: Path, names: list[str], flags: list[str]) -> list[list[str] | None]:
    """Each test's output validator flags where its group adds some, else None: ``flags`` (``problem.yaml``'s) then
    the nearest ``output_validator_flags`` at or above its group (problemtools a185fe9 ``TestCase
    .output_validator_flags``; a group inherits them). ``names``: the tests' paths below ``data/``, no suffix."""
    found: dict[str, list[str]] = {}

    def group_flags(folder: Path) -> list[str]:
        key = folder.as_posix()
        if key not in found:
            own = None
            if (folder / "testdata.yaml").is_file():
                settings = _yaml(folder / "testdata.yaml")
                if "output_validator_flags" in settings:
                    own = _flag_list(settings["output_validator_flags"], f"{root}: {folder}/testdata.yaml")
            above = group_flags(folder.parent) if folder != root / "data" else []
            found[key] = own if own is not None else above
        return found[key]

    result: list[list[str] | None] = []
    for name in names:
        extra = group_flags((root / "data" / name).parent)
        result.append([*flags, *extra] if extra else None)
    return result


def read_kattis(root: Path) -> dict[str, Any]:
    """A Kattis problem package directory as a ``kattis_package`` row (see :mod:`.packages`).

    Raises:
        TaskFormatError: a bad ``problem.yaml``, a custom validation without a validator, a test input without its
            answer, no tests.
    """
    config = _yaml(root / "problem.yaml") if (root / "problem.yaml").is_file() else {}
    validation = str(config.get("validation") or "default").split()
    kind = str(config.get("type") or "")  # the 2023-07 version: pass-fail | scoring | interactive | multi-pass
    interactive = "interactive" in validation or "interactive" in kind.split()
    flags = _flag_list(config.get("validator_flags"), f"{root}: problem.yaml validator_flags")
    limits = config.get("limits") if isinstance(config.get("limits"), dict) else {}
    _refuse_unsupported(root)
    if "score" in validation:
        # each test's score.txt, aggregated by the groups against their maximum: not read yet (paying a test's
        # score.txt as a fraction of 1 would pay any score as full marks)
        raise TaskFormatError(f"{root}: a Kattis problem whose output validator gives each test a score "
                              f"(validation {' '.join(validation)!r}): not supported yet; test groups with "
                              "accept_score are")
    row: dict[str, Any] = {"task_format": "kattis_package", "task_id": root.name,
                           "package_tests": _kattis_tests(root), "interactor": None, "time_limit_factor": 1.0}
    includes = include_files(root)
    if includes:
        row["include_files"] = includes
    if "scoring" in kind.split() or "score" in validation:
        tests, tree = _kattis_groups(root, config.get("grading") if isinstance(config.get("grading"), dict) else {})
        row.update(package_tests=tests, score_tree=tree)
    if validation[0] == "custom" or interactive or (root / "output_validator").is_dir():
        folder = _validator_folder(root)
        if folder is None:
            raise TaskFormatError(f"{root}: validation is {' '.join(validation)!r} but there is no output_validators/")
        source, language, files = _judge_program(folder, "output validator")
        if interactive:
            row["interactor"] = interactor_spec(source, language=language, convention="kattis", files=files,
                                                flags=flags)
        else:
            # problemtools' judge answer may be anything the validator reads (an optimum, a hint), not an output
            row["checker"] = checker_spec(source, language=language, convention="kattis", files=files, flags=flags,
                                          answer_is_output=False)
    else:
        row["judge"] = _default_validator(flags)
    per_test = _test_flags(root, [t["name"] for t in row["package_tests"]], flags)
    if any(f is not None for f in per_test):  # a group's own output_validator_flags
        if interactive:
            raise TaskFormatError(f"{root}: a test group sets output_validator_flags of its own for the interactive "
                                  "validator: per-group flags of an interactor are not supported yet")
        row["test_compares"] = [None if f is None else {"flags": f} if "checker" in row else _default_validator(f)
                                for f in per_test]
    seconds = limits.get("time_limit")
    if seconds is None and (root / ".timelimit").is_file():
        seconds = _text(root / ".timelimit").strip()
    if seconds is None and (root / "domjudge-problem.ini").is_file():
        seconds = _domjudge_ini(root / "domjudge-problem.ini").get("timelimit")
    row["time_limit_s"] = limit_seconds(seconds)
    memory = limits.get("memory")
    row["memory_limit_bytes"] = int(float(memory) * (1 << 20)) if memory else None
    verdicts = root / "submissions"
    row["reference_solutions"] = _solutions(
        [(p, p.name) for p in sorted(verdicts.iterdir()) if p.is_dir()] if verdicts.is_dir() else [], root)
    return row


# -- Polygon --------------------------------------------------------------------------------------------------------


def _polygon_source(root: Path, element: ET.Element | None, what: str) -> tuple[str, str] | None:
    """The text and language of an asset's ``<source path type>``, else None when the asset is absent.

    Raises:
        TaskFormatError: the source file is missing or not C, C++ or Python.
    """
    source = element.find("source") if element is not None else None
    if source is None:
        return None
    path = root / str(source.get("path"))
    if not path.is_file():
        raise TaskFormatError(f"{root}: the {what} {source.get('path')!r} is not in the package")
    language = language_of(path.name)
    if language not in JUDGE_SOURCE_LANGUAGES:
        raise TaskFormatError(f"{root}: the {what} {path.name} is not in C, C++ or Python")
    return _text(path), str(language)


def _points(value: str | None, where: str) -> float:
    try:
        return float(value) if value not in (None, "") else 0.0
    except ValueError:
        raise TaskFormatError(f"{where}: points {value!r} is not a number") from None


def _polygon_groups(testset: ET.Element, count: int) -> list[dict[str, Any]]:
    """The testset's groups as ``subtasks`` rows (see :mod:`trl_sandbox.subtasks`), or ``[]`` when it gives no points:
    ``<tests><test group="g" points="p"/>`` and ``<groups><group name points points-policy><dependencies>
    <dependency group/>``. ``complete-group``: the group's points (its ``points``, else the sum of its tests'), earned
    only when all its tests pass (``policy "min"``); ``each-test``: each passed test's points (``"each"``). Tests
    with points and no group (or one ``<groups>`` does not declare) earn their points each."""
    tests = testset.findall("tests/test")[:count]
    points = [_points(t.get("points"), f"test {i + 1}") for i, t in enumerate(tests)]
    groups = testset.findall("groups/group")
    if not groups:
        scored = [i for i, p in enumerate(points) if p > 0]
        return [{"name": "tests", "policy": "each", "tests": scored, "test_points": [points[i] for i in scored]}] \
            if scored else []
    members: dict[str, list[int]] = {}
    for i, test in enumerate(tests):
        if test.get("group") is not None:
            members.setdefault(str(test.get("group")), []).append(i)
    subtasks = []
    for group in groups:
        if group.get("name") is None:
            continue  # a group without a name: no test can be in it
        name = str(group.get("name"))
        indices = members.get(name, [])
        if not indices:
            continue  # a group without tests: nothing to earn
        depends = [str(d.get("group")) for d in group.findall("dependencies/dependency")]
        if group.get("points-policy", "complete-group") == "each-test":
            subtasks.append({"name": name, "policy": "each", "tests": indices,
                             "test_points": [points[i] for i in indices], "depends": depends})
        else:
            total = _points(group.get("points"), f"group {name}") if group.get("points") else sum(
                points[i] for i in indices)
            subtasks.append({"name": name, "policy": "min", "points": total, "tests": indices, "depends": depends})
    declared = {str(group.get("name")) for group in groups if group.get("name") is not None}
    loose = [i for i, test in enumerate(tests) if points[i] > 0 and str(test.get("group")) not in declared]
    if loose:  # tests with points outside every declared group: their points each, never dropped
        name = "tests"
        while name in declared:
            name += "_"
        subtasks.append({"name": name, "policy": "each", "tests": loose, "test_points": [points[i] for i in loose],
                         "depends": []})
    named = {s["name"] for s in subtasks}
    for subtask in subtasks:  # a dependency on a group without tests asks nothing
        subtask["depends"] = [d for d in subtask["depends"] if d in named]
    if sum(s.get("points", 0) or sum(s.get("test_points", ())) for s in subtasks) <= 0:
        return []
    return subtasks


def read_polygon(root: Path) -> dict[str, Any]:
    """A Polygon package directory (``problem.xml``) as a ``polygon_package`` row (see :mod:`.packages`).

    Raises:
        TaskFormatError: ``problem.xml`` is not XML or has no ``tests`` testset, a test or the checker is missing.
    """
    try:
        xml = ET.parse(root / "problem.xml").getroot()
    except ET.ParseError as exc:
        raise TaskFormatError(f"{root / 'problem.xml'}: not valid XML: {exc}") from None
    testset = xml.find("judging/testset[@name='tests']")
    if testset is None:
        raise TaskFormatError(f"{root / 'problem.xml'}: no <judging><testset name=\"tests\">")
    count = int(testset.findtext("test-count") or len(testset.findall("tests/test")))
    input_pattern = testset.findtext("input-path-pattern") or "tests/%02d"
    answer_pattern = testset.findtext("answer-path-pattern") or "tests/%02d.a"
    tests = []
    for i in range(1, count + 1):
        test_input, answer = root / (input_pattern % i), root / (answer_pattern % i)
        if not test_input.is_file():
            raise TaskFormatError(f"{test_input}: missing (a package that keeps generated tests as scripts needs "
                                  "them generated first: run its doall.sh)")
        tests.append({"name": input_pattern % i, "input": _text(test_input),
                      "answer": _text(answer) if answer.is_file() else ""})
    files = {}
    for resource in xml.findall("files/resources/file"):
        path = root / str(resource.get("path"))
        if path.suffix in HEADER_SUFFIXES and path.is_file():
            files[path.name] = _text(path)
    row: dict[str, Any] = {"task_format": "polygon_package", "task_id": xml.get("short-name") or root.name,
                           "package_tests": tests, "time_limit_factor": 1.0, "interactor": None}
    checker = _polygon_source(root, xml.find("assets/checker"), "checker")
    if checker is not None:
        row["checker"] = checker_spec(checker[0], language=checker[1], convention="testlib", files=files)
    interactor = _polygon_source(root, xml.find("assets/interactor"), "interactor")
    if interactor is not None:
        row["interactor"] = interactor_spec(interactor[0], language=interactor[1], convention="testlib", files=files)
    time_ms = testset.findtext("time-limit")
    memory = testset.findtext("memory-limit")
    row["time_limit_s"] = int(time_ms) / 1000.0 if time_ms else None
    row["memory_limit_bytes"] = int(memory) if memory else None
    subtasks = _polygon_groups(testset, count)
    if subtasks:
        row["subtasks"] = subtasks
    solutions = [(root / str(s.get("path")), str(sol.get("tag") or ""))
                 for sol in xml.findall("assets/solutions/solution") for s in sol.findall("source")]
    row["reference_solutions"] = _solutions([(p, tag) for p, tag in solutions if p.is_file()], root)
    return row


# -- Frontier-CS ----------------------------------------------------------------------------------------------------


def _size_bytes(value: Any) -> int | None:
    """Frontier-CS' ``memory: 256m`` (``k``, ``m``, ``g``; a bare number is megabytes) as bytes."""
    match = re.fullmatch(r"\s*([\d.]+)\s*([kmg]?)b?\s*", str(value).lower()) if value is not None else None
    if match is None:
        return None
    return int(float(match.group(1)) * {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "": 1 << 20}[match.group(2)])


def read_frontier_cs(root: Path) -> dict[str, Any]:
    """A Frontier-CS algorithmic problem directory (``config.yaml``, ``testdata/``) as a ``frontier_cs`` row.

    Raises:
        TaskFormatError: a bad ``config.yaml``, a missing test, checker or interactor.
    """
    config = _yaml(root / "config.yaml")
    kind = str(config.get("type") or "default")
    names: list[tuple[str, str]] = []
    number = 1
    suffix_in, suffix_ans = config.get("input_suffix") or ".in", config.get("output_suffix") or ".ans"
    for subtask in config.get("subtasks") or []:
        if isinstance(subtask, dict) and subtask.get("n_cases") is not None:
            for i in range(int(subtask["n_cases"])):
                names.append((f"{number + i}{suffix_in}", f"{number + i}{suffix_ans}"))
            number += int(subtask["n_cases"])
        elif isinstance(subtask, dict) and isinstance(subtask.get("cases"), list):
            names += [(str(c["input"]), str(c["output"])) for c in subtask["cases"]]
        else:
            raise TaskFormatError(f"{root / 'config.yaml'}: a subtask needs n_cases or cases")
    tests = []
    for input_name, answer_name in names:
        test_input = root / "testdata" / input_name
        answer = root / "testdata" / re.sub(r"\.out$", ".ans", answer_name)
        if not answer.is_file():
            answer = root / "testdata" / answer_name
        if not test_input.is_file() or not answer.is_file():
            raise TaskFormatError(f"{root}: test {input_name} or its answer {answer_name} is missing from testdata/")
        tests.append({"name": input_name, "input": _text(test_input), "answer": _text(answer)})
    row: dict[str, Any] = {"task_format": "frontier_cs", "task_id": root.name, "package_tests": tests,
                           "time_limit_s": limit_seconds(str(config.get("time_limit") or config.get("time") or "1s")),
                           "time_limit_factor": 1.0,
                           "memory_limit_bytes": _size_bytes(config.get("memory_limit") or config.get("memory")
                                                             or "256m"),
                           "interactor": None}
    if kind == "interactive":
        path = root / str(config.get("interactor") or "interactor.cc")
        if not path.is_file():
            raise TaskFormatError(f"{root}: interactive problem without its interactor {path.name}")
        row["interactor"] = interactor_spec(_text(path), language=str(language_of(path.name)), convention="testlib")
    else:
        path = root / str(config.get("checker") or "chk.cc")
        if not path.is_file():
            raise TaskFormatError(f"{root}: no checker {path.name}")
        # Frontier-CS' .ans files hold what the checker scores against (a best value, a placeholder), not an output:
        # the self-test checks only that an empty output is not paid.
        row["checker"] = checker_spec(_text(path), language=str(language_of(path.name)), convention="testlib",
                                      answer_is_output=False)
    row["reference_solutions"] = _solutions([(root / "examples" / "reference.cpp", "reference")]
                                            if (root / "examples" / "reference.cpp").is_file() else [], root)
    return row


# -- InteractBench --------------------------------------------------------------------------------------------------


def read_interactbench_dir(root: Path) -> dict[str, Any]:
    """An InteractBench problem directory (``meta.json``, ``interactor/``, ``cases/``) as the dataset's row with
    its ``cases`` (read by :mod:`.interactbench`).

    Raises:
        TaskFormatError: ``meta.json`` is not a JSON object.
    """
    try:
        meta = json.loads(_text(root / "meta.json"))
    except ValueError as exc:
        raise TaskFormatError(f"{root / 'meta.json'}: not valid JSON: {exc}") from None
    if not isinstance(meta, dict):
        raise TaskFormatError(f"{root / 'meta.json'}: expected a JSON object")
    row = {"task_format": "interactbench", "problem_id": root.name, **meta}
    for kind in ("non_adaptive", "adaptive"):
        path = root / "interactor" / f"{kind}.cpp"
        if path.is_file():
            row[f"interactor_{kind}"] = _text(path)
    cases = root / "cases"
    row["cases"] = {p.stem: _text(p) for p in sorted(cases.glob("*.in"))} if cases.is_dir() else {}
    return row


#: Each package kind: how a directory is recognised, and its reader.
_KINDS = (
    (lambda d: (d / "problem.xml").is_file(), read_polygon),
    (lambda d: (d / "config.yaml").is_file() and (d / "testdata").is_dir(), read_frontier_cs),
    (lambda d: (d / "meta.json").is_file() and (d / "interactor").is_dir(), read_interactbench_dir),
    (lambda d: (d / "problem.yaml").is_file() or (d / "data" / "secret").is_dir(), read_kattis),
)


def read_problem_dirs(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of a problem package directory, or of each package directly inside ``path`` (in name order): Kattis
    (``problem.yaml`` or ``data/secret``), Polygon (``problem.xml``), Frontier-CS (``config.yaml`` and
    ``testdata/``), InteractBench (``meta.json`` and ``interactor/``). In a directory of packages (a contest), a
    package that is refused is left out with one warning that names it and says why; the others are read.

    Raises:
        TaskFormatError: ``path`` is a package and is malformed (the message says why), or holds no package it can
            read (the message gives each refused one's reason).
    """
    root = Path(path)
    for recognise, reader in _KINDS:
        if recognise(root):
            return [reader(root)]
    rows, refused = [], []
    for child in sorted(p for p in root.iterdir() if p.is_dir()):
        for recognise, reader in _KINDS:
            if recognise(child):
                try:
                    rows.append(reader(child))
                except TaskFormatError as exc:
                    refused.append(str(exc))
                    logger.warning("trl-sandbox: problem package %s left out: %s", child.name, exc)
                break
    if not rows and refused:
        raise TaskFormatError(f"{root}: no problem package could be read: " + "; ".join(refused))
    if not rows:
        raise TaskFormatError(f"{root}: not a problem package (Kattis problem.yaml, Polygon problem.xml, Frontier-CS "
                              "config.yaml with testdata/, InteractBench meta.json) and holds none")
    return rows
