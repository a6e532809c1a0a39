"""Repository task rows as the datasets publish them, read into :class:`RepoTask`.

SWE-bench 5.0 instances (``swebench/types.py`` and ``make_test_spec`` in ``swebench/harness/utils.py``, release
5.0.2): self-contained since 2026-02, an instance carries its ``image``, its ``eval_script`` (which checks out the
test files at ``base_commit``, applies ``test_patch`` and runs the tests between the output markers), its
``log_parser`` and ``eval_type``, and ``FAIL_TO_PASS`` / ``PASS_TO_PASS`` (JSON strings of test ids, or lists).

SWE-smith instances (:func:`read_swesmith`): the repository's image, the bug as a patch, the tests named. Readers
of R2E-Gym rows and Harbor task directories come next (docs/repositories.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import TaskFormatError
from .grading import END_TEST_OUTPUT, EVAL_TYPES, START_TEST_OUTPUT, TEST_EXIT_CODE
from .log_parsers import PARSERS

#: The shell variable the eval script keeps the test command's exit status in (SWE-bench's ``TEST_EXIT_CODE_VAR``).
EXIT_CODE_VAR = "SWEBENCH_TEST_EXIT_CODE"
#: The fields a SWE-bench 5.0 instance must have to be scored.
SWEBENCH_FIELDS = ("instance_id", "image", "eval_script", "log_parser", "FAIL_TO_PASS", "PASS_TO_PASS")
_SCRIPT_HEADER = ("#!/bin/bash", "set -uxo pipefail")
#: What the log says when processes the tests left could not be ended before the exit status was written (a
#: harness failure marker of SWE-bench's: the log then gives no results, whatever was printed after it).
ENDING_FAILED = ">>>>> Tests Errored: trl-sandbox could not end the processes the tests left"
#: Bash that ends every process the tests left before the exit status is written (one that printed a status of its
#: own later would otherwise be the last word). Where the script is its tree's PID 1 (the local backend's runner),
#: ``kill -KILL -1``. Elsewhere (a remote sandbox made from the image, where the service's own processes run too):
#: every process started after this shell, in a later clock tick (``/proc/PID/stat`` field 22, the start time: the
#: service's own processes of the same tick are spared), that is neither this shell nor one of its ancestors nor a
#: zombie, killed until none is left (20 passes at most, then
#: :data:`ENDING_FAILED`; also when its own start time cannot be read: then nothing is killed). Builtins only
#: (``read``, ``kill``), and no trace of its own under ``set -x``.
END_OTHERS = f"""_trl_sandbox_end_others() {{
  {{ _trl_sandbox_x=$-; set +x; }} 2>/dev/null
  if [ "$$" = 1 ]; then kill -KILL -1 2>/dev/null
  else
    local s= f= me=0 keep= p= d= pass= left=1
    read -r s 2>/dev/null < /proc/$$/stat && {{ f=(${{s##*) }}); me=${{f[19]:-0}}; keep=" $$ "; p=${{f[1]:-1}}; }}
    [ "$me" -gt 0 ] 2>/dev/null || p=1 pass=0  # its own start time unknown: nothing is killed, the run errors
    while [ "${{p:-1}}" -gt 1 ]; do
      keep="$keep$p "
      read -r s 2>/dev/null < "/proc/$p/stat" || break
      f=(${{s##*) }}); p=${{f[1]:-1}}
    done
    [ "$pass" = 0 ] || for pass in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
      left=0
      for d in /proc/[0-9]*; do
        p=${{d#/proc/}}
        case $keep in *" $p "*) continue ;; esac
        read -r s 2>/dev/null < "$d/stat" || continue
        f=(${{s##*) }})
        case ${{f[0]:-}} in Z|X) continue ;; esac
        [ "${{f[19]:-0}}" -gt "$me" ] || continue  # later than this shell: never a sibling of its own tick
        kill -KILL "$p" 2>/dev/null && left=1
      done
      [ "$left" = 0 ] && break
      [ "$pass" -gt 3 ] && sleep 0.1
    done
    [ "$left" = 0 ] || echo "{ENDING_FAILED}"
  fi
  case $_trl_sandbox_x in *x*) set -x ;; esac
}}
_trl_sandbox_end_others"""


@dataclass
class RepoTask:
    """A repository task: what the runner needs to score a patch, and what the model may be shown.

    Attributes:
        instance_id: The row's id.
        image: The image name the row gives (looked up in :class:`trl_sandbox.images.ImageCache`).
        eval_script: The eval script as the runner runs it (``bash``), recording the test command's exit status
            after the end marker (see :func:`eval_script_of`).
        log_parser: A :data:`~trl_sandbox.repos.log_parsers.PARSERS` name.
        eval_type: ``pass_and_fail`` or ``fail_only``.
        fail_to_pass, pass_to_pass: Test ids.
        problem_statement: The issue text (the prompt's substance).
        base_commit: The commit the repository is at (``""`` where the row does not say).
        source: The dataset family (``swebench``, ``swesmith``, ``r2e``, ``harbor``).
        repo_dir: Where the repository is in the image (SWE-bench's ``/testbed``; ``""``: the image's
            ``WorkingDir``, Harbor's).
        timeout_s: Seconds a run may take (None: the runner's default, SWE-bench's 1800 s).
        bug_patch: A patch the runner applies before the model's and commits as the repository's only commit
            (SWE-smith's ``patch``: it makes the bug), ``""`` for none.
        reset_files: Files the runner checks out again after the model's patch (the tests the verdict reads: a
            patch's edits to them are dropped, as SWE-bench's eval scripts drop them).
        verifier_tests: A Harbor task's ``tests/`` directory (an uncompressed tar), put at ``/tests`` only when the
            verifier runs; ``b""`` for the other sources (see :mod:`.harbor`).
        verifier_env, verifier_timeout_s: A Harbor task's ``[verifier]`` ``env`` and ``timeout_sec``.
        expected: An R2E-Gym row's ``expected_output_json`` (test id -> status), which the run's must equal.
        extra: The row's other fields, kept as published.
    """

    instance_id: str
    image: str
    eval_script: str
    log_parser: str
    eval_type: str
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    problem_statement: str = ""
    base_commit: str = ""
    source: str = "swebench"
    repo_dir: str = "/testbed"
    timeout_s: float | None = None
    bug_patch: str = ""
    reset_files: list[str] = field(default_factory=list)
    verifier_tests: bytes = b""
    verifier_env: dict[str, str] = field(default_factory=dict)
    verifier_timeout_s: float | None = None
    expected: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def task_id(self) -> str:
        """The id results and metrics name it by (the row's ``instance_id``)."""
        return self.instance_id


def _ids(row: Mapping[str, Any], name: str, where: str) -> list[str]:
    value = row[name]
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise TaskFormatError(f"{where}: {name} is not a JSON list of test ids") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TaskFormatError(f"{where}: {name} must be a list of test ids (strings)")
    return value


def eval_script_of(script: str) -> str:
    """The eval script as it runs: SWE-bench's shebang and ``set -uxo pipefail``, the instance's commands, and the
    test command's exit status kept just before the end marker and echoed after it (SWE-bench 5.0's
    ``record_test_exit_code``), outside the parsed region. Between the two, where the script is its tree's PID 1
    (:mod:`.runner`), ``kill -KILL -1``: every process the tests left behind ends there, before the status is
    written (one that printed a status of its own later would otherwise be the last word).

    Raises:
        TaskFormatError: the script has no end-of-output marker (nothing would tell its test output apart).
    """
    lines = [line for line in script.strip().split("\n") if line not in _SCRIPT_HEADER]
    for i, line in enumerate(lines):
        if END_TEST_OUTPUT in line:
            lines[i:i + 1] = [f"{EXIT_CODE_VAR}=$?", END_OTHERS, line,
                              f'echo "{TEST_EXIT_CODE}: ${EXIT_CODE_VAR}"']
            return "\n".join([*_SCRIPT_HEADER, *lines]) + "\n"
    raise TaskFormatError(f"the eval_script has no {END_TEST_OUTPUT!r} line: its test output cannot be told apart")


def read_swebench(row: Mapping[str, Any]) -> RepoTask:
    """A SWE-bench 5.0 instance (see the module docstring).

    Raises:
        TaskFormatError: a missing field (one line naming it), ids that are not a list of strings, an unsupported
            ``log_parser`` or ``eval_type``, an eval script without its markers, or ``image_assets`` (binary test
            files the harness downloads by URL: no network in a sandbox).
    """
    where = f"SWE-bench instance {row.get('instance_id', '?')!r}"
    missing = [name for name in SWEBENCH_FIELDS if name not in row or row[name] in (None, "")]
    if missing:
        raise TaskFormatError(f"{where}: missing {', '.join(missing)} (SWE-bench 5.0 rows carry "
                              f"{', '.join(SWEBENCH_FIELDS)}); a row of an older release needs its eval script")
    if row["log_parser"] not in PARSERS:
        raise TaskFormatError(f"{where}: log_parser {row['log_parser']!r} is not supported; use one of "
                              f"{', '.join(sorted(PARSERS))}")
    eval_type = row.get("eval_type") or "pass_and_fail"
    if eval_type not in EVAL_TYPES:
        raise TaskFormatError(f"{where}: eval_type {eval_type!r} is not supported; use one of {', '.join(EVAL_TYPES)}")
    if row.get("image_assets") not in (None, "", "{}", {}):
        raise TaskFormatError(f"{where}: its image_assets are downloaded by URL at scoring time, which a sandbox "
                              "without network cannot do; such instances (SWE-bench Multimodal) are not supported")
    try:
        script = eval_script_of(str(row["eval_script"]))
    except TaskFormatError as exc:
        raise TaskFormatError(f"{where}: {exc}") from None
    known = {*SWEBENCH_FIELDS, "eval_type", "problem_statement", "base_commit"}
    return RepoTask(
        instance_id=str(row["instance_id"]), image=str(row["image"]), eval_script=script,
        log_parser=str(row["log_parser"]), eval_type=eval_type,
        fail_to_pass=_ids(row, "FAIL_TO_PASS", where), pass_to_pass=_ids(row, "PASS_TO_PASS", where),
        problem_statement=str(row.get("problem_statement") or ""), base_commit=str(row.get("base_commit") or ""),
        extra={k: v for k, v in row.items() if k not in known},
    )


#: SWE-smith's test command for its Python repositories (``TEST_PYTEST`` in ``swesmith/constants.py``).
SWESMITH_TEST_CMD = "pytest --disable-warnings --color=no --tb=no --verbose"
#: Seconds a SWE-smith run may take: its harness's ``TIMEOUT``.
SWESMITH_TIMEOUT_S = 120.0
#: The fields a SWE-smith instance must have.
SWESMITH_FIELDS = ("instance_id", "image_name", "patch", "FAIL_TO_PASS", "PASS_TO_PASS")


def swesmith_eval_script(test_cmd: str, test_files: list[str], repo_dir: str = "/testbed") -> str:
    """SWE-smith's eval script (``run_patch_in_container`` in ``swesmith/harness/utils.py``): the conda
    environment ``testbed`` where the image has one, the test command with the FAIL_TO_PASS tests' files
    (``get_test_command``) between the output markers."""
    command = " ".join([test_cmd, *test_files])
    return "\n".join([
        "#!/bin/bash", "set -uxo pipefail",
        "if [ -f /opt/miniconda3/bin/activate ]; then source /opt/miniconda3/bin/activate; conda activate testbed; fi",
        f"cd {repo_dir}", f": '{START_TEST_OUTPUT}'", command, f": '{END_TEST_OUTPUT}'"]) + "\n"


def read_swesmith(row: Mapping[str, Any]) -> RepoTask:
    """A SWE-smith instance as the dataset publishes it (``SWE-bench/SWE-smith``: ``instance_id``, ``repo``,
    ``patch``, ``FAIL_TO_PASS``, ``PASS_TO_PASS``, ``image_name``, ``problem_statement``), scored as SWE-smith's
    harness does (``swesmith/harness/eval.py``): in the repository's image, the instance's bug (its ``patch``; the
    harness checks out the instance's branch, which holds that patch as a commit, and needs the network to fetch it)
    is applied, then the model's patch, then the test command runs on the FAIL_TO_PASS tests' files and is graded by
    SWE-smith's rules (``eval_type`` ``swesmith``, see :mod:`.grading`).

    Here the bug's commit is the repository's only commit (the history holds no parent with the fixed code), and
    the files of the FAIL_TO_PASS and PASS_TO_PASS tests are checked out again after the model's patch (SWE-smith's
    harness does not reset them, so a patch could edit the tests it is judged by). The test command is SWE-smith's
    default for Python repositories, or the row's ``test_cmd`` (a repository profile of SWE-smith's with another
    one: give it there); the log parser is SWE-smith's (``log_parser`` overrides); the deadline its harness's 120 s.

    Raises:
        TaskFormatError: a missing field (one line naming it), ids that are not a list of strings, an unknown
            ``log_parser``.
    """
    where = f"SWE-smith instance {row.get('instance_id', '?')!r}"
    missing = [name for name in SWESMITH_FIELDS if name not in row or row[name] in (None, "")]
    if missing:
        raise TaskFormatError(f"{where}: missing {', '.join(missing)} (SWE-smith rows carry "
                              f"{', '.join(SWESMITH_FIELDS)})")
    parser = str(row.get("log_parser") or "swesmith_parse_log_pytest")
    if parser not in PARSERS:
        raise TaskFormatError(f"{where}: log_parser {parser!r} is not supported; use one of "
                              f"{', '.join(sorted(PARSERS))}")
    f2p, p2p = _ids(row, "FAIL_TO_PASS", where), _ids(row, "PASS_TO_PASS", where)
    files = sorted({test.split("::", 1)[0] for test in f2p})
    reset = sorted({test.split("::", 1)[0] for test in [*f2p, *p2p] if "::" in test})
    script = eval_script_of(swesmith_eval_script(str(row.get("test_cmd") or SWESMITH_TEST_CMD), files))
    known = {*SWESMITH_FIELDS, "problem_statement", "log_parser", "test_cmd"}
    return RepoTask(
        instance_id=str(row["instance_id"]), image=str(row["image_name"]), eval_script=script, log_parser=parser,
        eval_type="swesmith", fail_to_pass=f2p, pass_to_pass=p2p,
        problem_statement=str(row.get("problem_statement") or ""), source="swesmith", bug_patch=str(row["patch"]),
        reset_files=reset, timeout_s=SWESMITH_TIMEOUT_S, extra={k: v for k, v in row.items() if k not in known},
    )


#: Seconds an R2E-Gym run may take: its runtime's ``run_tests`` default.
R2E_TIMEOUT_S = 300.0
#: The fields an R2E-Gym row must have.
R2E_FIELDS = ("docker_image", "expected_output_json")


def read_r2e(row: Mapping[str, Any]) -> RepoTask:
    """An R2E-Gym row as ``R2E-Gym/R2E-Gym-Subset`` (and ``-Lite``, ``-V1``) publish it: ``repo_name``,
    ``docker_image``, ``commit_hash``, ``problem_statement``, ``expected_output_json`` (a JSON object, test id ->
    status), ``parsed_commit_content``..., scored as R2E-Gym's runtime scores a patch on an R2E image
    (``DockerRuntime`` in ``r2egym/agenthub/runtime/docker.py``: ``setup_env``, ``apply_patch``,
    ``_calculate_reward_r2e``): the repository's ``run_tests.sh`` and ``r2e_tests/`` moved out of ``/testbed`` to
    ``/root`` before the patch (the held-out tests in ``/r2e_tests`` too), the patch applied with ``git apply
    --whitespace=fix``, the tests linked back into the repository for the run only, ``bash /root/run_tests.sh``
    under its 300 s, and the log's status map (R2E-Gym's ``parse_log_pytest``) compared with the expected one
    (``eval_type`` ``r2e``, see :mod:`.grading`). The instance id is ``instance_id``, else ``repo_name`` and
    ``commit_hash``.

    Rows whose ``docker_image`` is one of SWE-bench's or SWE-smith's (R2E-Gym scores those as their harnesses do)
    are refused with the reader to use instead.

    Raises:
        TaskFormatError: a missing field, an ``expected_output_json`` that is not a JSON object of test ids to
            statuses, or a SWE-bench or SWE-smith image.
    """
    where = f"R2E-Gym row {row.get('instance_id') or row.get('commit_hash') or '?'!r}"
    missing = [name for name in R2E_FIELDS if not row.get(name)]
    if missing:
        raise TaskFormatError(f"{where}: missing {', '.join(missing)} (R2E-Gym rows carry {', '.join(R2E_FIELDS)})")
    image = str(row["docker_image"])
    for family, reader in (("swebench", "SWE-bench 5.0"), ("swesmith", "SWE-smith")):
        if family in image:
            raise TaskFormatError(f"{where}: its image {image} is {reader}'s; score the instance from its "
                                  f"{reader} row")
    expected = row["expected_output_json"]
    if isinstance(expected, str):
        try:
            expected = json.loads(expected)
        except ValueError:
            raise TaskFormatError(f"{where}: expected_output_json is not JSON") from None
    if not isinstance(expected, Mapping) or not all(isinstance(v, str) for v in expected.values()):
        raise TaskFormatError(f"{where}: expected_output_json must be an object of test ids to statuses")
    instance = row.get("instance_id") or f"{row.get('repo_name', 'r2e')}-{str(row.get('commit_hash', ''))[:12]}"
    known = {*R2E_FIELDS, "problem_statement", "instance_id"}
    return RepoTask(
        instance_id=str(instance), image=image, eval_script="", log_parser="r2e_parse_log_pytest", eval_type="r2e",
        fail_to_pass=[], pass_to_pass=[], problem_statement=str(row.get("problem_statement") or ""), source="r2e",
        timeout_s=R2E_TIMEOUT_S + 60.0, expected={str(k): str(v) for k, v in expected.items()},
        extra={k: v for k, v in row.items() if k not in known},
    )
