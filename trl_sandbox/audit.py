"""Auditing a task set before a run: ``trl-sandbox audit``.

Each row is parsed (:meth:`~trl_sandbox.tasks.Task.from_row`), then its own reference solutions
(:func:`reference_solutions`, where its dataset publishes them) and trivial programs (:func:`trivial_programs`:
one that does nothing, one that prints or returns a constant, for stdin/stdout tasks one that echoes the first line of
its input, and for those with a checker or an interactor three that print a score as text: ``Ratio:1``, ``Ratio: 5``,
``points 1``) are scored through a :class:`~trl_sandbox.scoring.Scorer`, all in one batch. Scoring a row with a
checker self-tests the checker first (:meth:`Scorer._judge`): a checker that pays an empty output or rejects the
jury's answer is quarantined, and every program of its row gets ``invalid_task``.

Each row gets one verdict (:data:`VERDICTS`, the first that applies in this order):

============================== ======================================================================================
verdict                        meaning
============================== ======================================================================================
``invalid``                    the row does not parse, or scoring it gives ``invalid_task``/``unserializable`` (a
                               quarantined checker, a checker that does not compile, a ``call`` reference that fails)
``reference_fails``            an accepted reference solution of the row's own does not pass its tests
``rejected_reference_passes``  a wrong-answer reference of the row's own passes: the tests do not tell it apart
``trivial_paid``               a trivial program earns a reward above ``max_trivial`` (0: any) under ``pass_rate``
``infra_error``                a program could not be scored (infrastructure failure or batch deadline, after one
                               retry): not the row's fault, and not vouched for either
``no_reference``               none of the above, and the row publishes no accepted reference that runs (a function
                               task's runs only in Python) to check its tests with
``ok``                         its accepted references pass, its rejected ones fail, no trivial program is paid
============================== ======================================================================================

The cleaned task file keeps the rows that are ``ok`` or ``no_reference``, unchanged (as :func:`load_tasks` read them).

No torch or trl import.
"""

from __future__ import annotations

import argparse
import builtins
import dataclasses
import json
import logging
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._cli_parsing import add_fields, apply_yaml, one_line_errors
from .config import SandboxConfig
from .errors import ConfigurationError, TaskFormatError
from .languages import CODE_CONTESTS_LANGUAGES, language_named
from .tasks import Task

__all__ = ["AuditReport", "RowAudit", "VERDICTS", "audit_main", "audit_tasks", "reference_solutions",
           "trivial_programs"]

logger = logging.getLogger(__name__)

#: Row verdicts, in order of precedence (see the module docstring).
VERDICTS = ("invalid", "reference_fails", "rejected_reference_passes", "trivial_paid", "infra_error", "no_reference",
            "ok")
#: Verdicts whose rows go to the cleaned task file.
KEPT = ("ok", "no_reference")
#: Statuses that are the infrastructure's, never the program's or the row's: retried once.
_INFRA = ("infra_error", "cancelled")
#: Statuses that say the row itself cannot be judged.
_INVALID = ("invalid_task", "unserializable")
#: Package tags (Kattis ``submissions/<verdict>``, Polygon ``<solution tag>``, Frontier-CS) of accepted references.
ACCEPTED_TAGS = frozenset({"accepted", "main", "reference", "correct"})
#: Package tags of references that must fail: wrong answers only (a time-limit one may pass under a looser limit).
REJECTED_TAGS = frozenset({"wrong_answer", "wrong-answer", "rejected", "presentation-error", "incorrect"})


# -- reference solutions -------------------------------------------------------------------------------------------


def _language(name: Any) -> str | None:
    """A published language name as one of :data:`~trl_sandbox.languages.LANGUAGES`, else None (Python 2 too:
    its code does not run as Python 3, so it would fail for the wrong reason)."""
    text = str(name or "").strip().lower()
    if text in ("py2", "python2", "python 2", "pypy2"):
        return None
    try:
        return language_named(text).name
    except ConfigurationError:
        return None


def _json_list(value: Any) -> list[Any]:
    """A list, or the list a JSON string holds (APPS's and TACO's ``solutions``), else ``[]``."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return list(value) if isinstance(value, (list, tuple)) else []


def _code_contests(value: Any) -> list[tuple[str, str]]:
    """(language, code) of a code_contests ``{language: [ints], solution: [str]}`` column (Python 2 left out)."""
    if not isinstance(value, Mapping):
        return []
    found = []
    for number, code in zip(value.get("language") or [], value.get("solution") or []):
        if number == 1:  # PYTHON: Python 2
            continue
        language = CODE_CONTESTS_LANGUAGES.get(number)
        if language is not None and isinstance(code, str) and code.strip():
            found.append((language, code))
    return found


def _submissions(value: Any) -> list[tuple[str, str]]:
    """(language, code) of a Code-Contests-Plus ``[{code, language}]`` column (``py2`` left out)."""
    found = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, Mapping) and isinstance(item.get("code"), str) and item["code"].strip():
            language = _language(item.get("language"))
            if language is not None:
                found.append((language, item["code"]))
    return found


def reference_solutions(row: Mapping[str, Any], *, accepted: int = 3, rejected: int = 1
                        ) -> list[tuple[str, str, str]]:
    """A row's own reference solutions as ``(language, code, expected)``, ``expected`` ``"accepted"`` (must pass)
    or ``"rejected"`` (must not), at most ``accepted`` and ``rejected`` of each, in the order the row gives them.

    Where each dataset keeps them:

    - HumanEval (and the bundled ``quickstart``): ``canonical_solution``, a body: ``prompt + canonical_solution`` is
      the program;
    - MBPP: ``code``; KodCode: ``solution``; PrimeIntellect: ``gold_standard_solution`` (code fences allowed);
    - APPS, TACO, DeepCoder: ``solutions`` (a JSON list of Python programs, or the list itself);
    - code_contests: ``solutions`` and ``incorrect_solutions`` (``{language: [ints], solution: [str]}``,
      :data:`~trl_sandbox.languages.CODE_CONTESTS_LANGUAGES`; 1, Python 2, left out);
    - Code-Contests-Plus: ``correct_submissions`` and ``incorrect_submissions`` (``[{code, language}]``, language
      ``cpp|py2|py3|java``; ``py2`` left out);
    - Kattis, Polygon and Frontier-CS packages (:func:`~trl_sandbox.load_tasks` of a directory):
      ``reference_solutions`` (``[{path, language, tag, source}]``), accepted for the tags of
      :data:`ACCEPTED_TAGS` (Kattis ``accepted``, Polygon ``main``/``accepted``, Frontier-CS ``reference``),
      rejected for :data:`REJECTED_TAGS` (wrong answers; time-limit ones are left out);
    - anything else (the ``call`` rows of the Daytona set, LiveCodeBench, rStar-Coder, open-r1 Codeforces,
      AetherCode, InteractBench): none.

    Args:
        row: The row as its dataset publishes it.
        accepted: Most accepted references kept (>= 0).
        rejected: Most rejected references kept (>= 0).

    Raises:
        Nothing: a malformed solutions field gives no reference.
    """
    good: list[tuple[str, str]] = []
    bad: list[tuple[str, str]] = []
    if isinstance(row.get("canonical_solution"), str):
        prompt = row.get("prompt") if isinstance(row.get("prompt"), str) else ""
        good.append(("python", prompt + row["canonical_solution"]))
    for key in ("code", "solution", "gold_standard_solution"):
        if isinstance(row.get(key), str) and row[key].strip() and not good:
            good.append(("python", row[key]))
    solutions = row.get("solutions")
    if isinstance(solutions, Mapping):
        good += _code_contests(solutions)
        bad += _code_contests(row.get("incorrect_solutions"))
    else:
        good += [("python", s) for s in _json_list(solutions) if isinstance(s, str) and s.strip()]
    good += _submissions(row.get("correct_submissions"))
    bad += _submissions(row.get("incorrect_submissions"))
    for item in row.get("reference_solutions") or []:
        if not isinstance(item, Mapping) or not isinstance(item.get("source"), str):
            continue
        language, tag = _language(item.get("language")), str(item.get("tag") or "").lower()
        if language is not None and tag in ACCEPTED_TAGS:
            good.append((language, item["source"]))
        elif language is not None and tag in REJECTED_TAGS:
            bad.append((language, item["source"]))
    return ([(lang, code, "accepted") for lang, code in good[:max(0, accepted)]]
            + [(lang, code, "rejected") for lang, code in bad[:max(0, rejected)]])


# -- trivial programs ----------------------------------------------------------------------------------------------

#: Trivial stdin/stdout programs per language: (does nothing, prints 0, prints the first line of its input).
_STDIO_TRIVIAL: dict[str, tuple[str, str, str]] = {
    "python": ("pass\n", "print(0)\n", "import sys\nsys.stdout.write(sys.stdin.readline())\n"),
    "cpp": ("int main() { return 0; }\n", "#include <cstdio>\nint main() { std::puts(\"0\"); return 0; }\n",
            "#include <iostream>\n#include <string>\nint main() { std::string s; std::getline(std::cin, s); "
            "std::cout << s << std::endl; return 0; }\n"),
    "c": ("int main(void) { return 0; }\n", "#include <stdio.h>\nint main(void) { puts(\"0\"); return 0; }\n",
          "#include <stdio.h>\nint main(void) { char s[1 << 16]; if (fgets(s, sizeof s, stdin)) fputs(s, stdout); "
          "return 0; }\n"),
    "java": ("public class Main { public static void main(String[] a) { } }\n",
             "public class Main { public static void main(String[] a) { System.out.println(0); } }\n",
             "import java.io.*;\npublic class Main { public static void main(String[] a) throws IOException { "
             "String s = new BufferedReader(new InputStreamReader(System.in)).readLine(); "
             "System.out.println(s == null ? \"\" : s); } }\n"),
    "javascript": ("\n".join(["// nothing", ""]), "console.log(0);\n",
                   "const s = require('fs').readFileSync(0, 'utf8').split('\\n')[0];\nconsole.log(s);\n"),
    "rust": ("fn main() {}\n", "fn main() { println!(\"0\"); }\n",
             "use std::io::BufRead;\nfn main() { let mut s = String::new(); "
             "std::io::stdin().lock().read_line(&mut s).ok(); print!(\"{}\", s); }\n"),
}


#: What a program might print to be paid by a checker that reads a score from text (testlib's ``points``, Frontier-CS's
#: ``Ratio:``) and quotes the program's output in its message: none may earn anything, nor make the task invalid.
_SCORE_FORGERIES = (("ratio-1", "Ratio:1"), ("ratio-5", "Ratio: 5"), ("points-1", "points 1"))
#: A program printing one line, per language (``%s``: the line, a C string literal's contents).
_PRINT_LINE = {
    "python": "print(%r)\n",
    "cpp": "#include <cstdio>\nint main() { std::puts(\"%s\"); return 0; }\n",
    "c": "#include <stdio.h>\nint main(void) { puts(\"%s\"); return 0; }\n",
    "java": "public class Main { public static void main(String[] a) { System.out.println(\"%s\"); } }\n",
    "javascript": "console.log(\"%s\");\n",
    "rust": "fn main() { println!(\"%s\"); }\n",
}


def _stub_names(task: Task) -> list[str]:
    """The names a function-format task's tests call, to define as stubs (builtins left alone but for the function
    under test)."""
    names = [task.func_name] if task.func_name else []
    names += [n for n in task.entry_points if n != "Solution" and not hasattr(builtins, n)]
    return [n for n in dict.fromkeys(names) if n and n.isidentifier()]


def trivial_programs(task: Task) -> list[tuple[str, str, str]]:
    """The trivial programs a task must not pay, as ``(name, language, code)``:

    - stdin/stdout tasks (``stdio``), in the row's language when it names one, else Python: ``empty`` (runs and
      prints nothing), ``constant`` (prints ``0``), ``echo`` (prints the first line of its input, a common hack of
      tasks whose answer repeats the input); with a checker or an interactor, also ``ratio-1``, ``ratio-5`` and
      ``points-1``, which print ``Ratio:1``, ``Ratio: 5`` and ``points 1`` (a score a checker could read from text
      it quotes);
    - function tasks (``humaneval``, ``mbpp``, ``call``, ``function``, ``pytest``): the function(s) the tests call
      defined as ``def name(*args, **kwargs)`` returning ``None`` (``empty``) or ``0`` (``constant``); a task
      whose tests name no function gets ``empty`` only (``pass``).

    Args:
        task: The parsed task.

    Raises:
        Nothing.
    """
    if task.format == "stdio":
        language = task.language or "python"
        empty, constant, echo = _STDIO_TRIVIAL.get(language, _STDIO_TRIVIAL["python"])
        language = language if language in _STDIO_TRIVIAL else "python"
        programs = [("empty", language, empty), ("constant", language, constant), ("echo", language, echo)]
        if "checker" in task.judge_spec() or task.interactor:
            programs += [(name, language, _PRINT_LINE[language] % line) for name, line in _SCORE_FORGERIES]
        return programs
    names = _stub_names(task)
    if not names:
        return [("empty", "python", "pass\n")]

    def stubs(value: str) -> str:
        return "".join(f"def {name}(*args, **kwargs):\n    return {value}\n\n\n" for name in names)

    return [("empty", "python", stubs("None")), ("constant", "python", stubs("0"))]


# -- the audit -----------------------------------------------------------------------------------------------------


@dataclass
class RowAudit:
    """The audit of one row.

    Attributes:
        index: The row's position in the task file (0-based).
        task_id: The task's id (the row's own, else :func:`~trl_sandbox.loading.task_id_of`, else ``"row N"``).
        verdict: One of :data:`VERDICTS`.
        findings: One short line per problem found (which program, its status, tests passed, error).
        programs: One dict per program scored: ``kind`` (``reference``, ``rejected``, ``empty``, ``constant``,
            ``echo``), ``language``, ``status``, ``reward``, ``tests_passed``, ``tests_total``, ``error``, ``paid`` (the
            fraction of full marks it earns under ``pass_rate``, see :func:`_paid`).
    """

    index: int
    task_id: str
    verdict: str = "ok"
    findings: list[str] = field(default_factory=list)
    programs: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (a line of ``--report``)."""
        return dataclasses.asdict(self)


@dataclass
class AuditReport:
    """The audit of a task set: :attr:`rows` in file order.

    Attributes:
        rows: One :class:`RowAudit` per row.
    """

    rows: list[RowAudit]

    def counts(self) -> Counter[str]:
        """Rows per verdict."""
        return Counter(r.verdict for r in self.rows)

    def kept(self) -> list[int]:
        """Indexes of the rows the cleaned file keeps (verdict in :data:`KEPT`)."""
        return [r.index for r in self.rows if r.verdict in KEPT]

    def summary(self) -> str:
        """One line: rows, kept, and rows per verdict (in :data:`VERDICTS` order)."""
        counts = self.counts()
        per = ", ".join(f"{v} {counts[v]}" for v in VERDICTS if counts[v])
        return f"{len(self.rows)} rows, {len(self.kept())} pass the audit ({per or 'none'})"

    def markdown(self) -> str:
        """The summary and a Markdown table of the rows that do not pass (task id, verdict, findings)."""
        lines = [f"Audit: {self.summary()}", ""]
        bad = [r for r in self.rows if r.verdict not in KEPT]
        if bad:
            lines += ["| row | task_id | verdict | findings |", "|---|---|---|---|"]
            for r in bad:
                text = "; ".join(r.findings).replace("|", "\\|").replace("\n", " ")
                lines.append(f"| {r.index} | {r.task_id} | {r.verdict} | {text[:400]} |")
        return "\n".join(lines) + "\n"


def _paid(result: Any, scorer: Any) -> float:
    """The fraction of full marks ``result`` earns under ``pass_rate``: 1 for ``passed``; for ``failed``, its reward
    over the ``passed`` reward when the scorer pays ``pass_rate`` (a checker's partial scores included), else tests
    passed over tests; else 0."""
    if result.status == "passed":
        return 1.0
    if result.status != "failed" or not result.tests_total:
        return 0.0
    full = getattr(scorer, "rewards", {}).get("passed") or 0.0
    if getattr(scorer, "reward_mode", "") == "pass_rate" and result.reward is not None and full > 0:
        return max(0.0, result.reward / full)
    return result.tests_passed / result.tests_total


def _describe(kind: str, program: Mapping[str, Any]) -> str:
    """One line for a scored program (a :attr:`RowAudit.programs` entry): ``accepted reference cpp: failed 3/10
    tests: <error>``."""
    text = (f"{kind} {program['language']}: {program['status']} {program['tests_passed']}/{program['tests_total']}"
            " tests")
    if program.get("error"):
        text += ": " + " ".join(str(program["error"]).split())[:200]
    return text


def _score(scorer: Any, tasks: list[Any], completions: list[str]) -> list[Any]:
    """Score in one batch; the infrastructure failures and cancellations scored again once, in a second batch."""
    results = scorer.score(tasks, completions) if tasks else []
    again = [i for i, r in enumerate(results) if r.status in _INFRA]
    if again:
        logger.warning("trl-sandbox audit: scoring %d program(s) again after an infrastructure failure", len(again))
        for i, result in zip(again, scorer.score([tasks[i] for i in again], [completions[i] for i in again])):
            results[i] = result
    return results


def _row_id(row: Any, index: int) -> str:
    from .loading import task_id_of

    try:
        found = task_id_of(row) if isinstance(row, Mapping) else None
    except TaskFormatError:
        found = None
    return found if found is not None else f"row {index}"


def audit_tasks(rows: Sequence[Mapping[str, Any]], scorer: Any, *, task_format: str | None = None,
                accepted: int = 3, rejected: int = 1, max_trivial: float = 0.0) -> AuditReport:
    """Audit ``rows`` with ``scorer`` (started by the caller): see the module docstring for the verdicts.

    Every program of every row is scored in one :meth:`~trl_sandbox.scoring.Scorer.score` call (the pool runs them
    concurrently); those that come back ``infra_error`` or ``cancelled`` are scored once more, in a second call.
    References in another language than the row asks for run as their own language (a C++ submission of a row
    whose completions are Python); a function task's references run only when they are Python.

    Args:
        rows: Dataset rows (as :func:`~trl_sandbox.load_tasks` returns them); not changed.
        scorer: A started :class:`~trl_sandbox.scoring.Scorer`; give it ``reward_mode="pass_rate"`` for
            ``max_trivial`` to count a checker's partial scores.
        task_format: The format of every row (see :mod:`trl_sandbox.formats`); default: detected per row.
        accepted: Most accepted references scored per row (see :func:`reference_solutions`).
        rejected: Most rejected (wrong-answer) references scored per row.
        max_trivial: A trivial program paid more than this fraction of full marks (0 to 1) makes the row
            ``trivial_paid``; default 0: any reward.

    Returns:
        An :class:`AuditReport`, one :class:`RowAudit` per row in order.

    Raises:
        ValueError: ``max_trivial`` is not within [0, 1).
    """
    if not 0.0 <= max_trivial < 1.0:
        raise ValueError(f"max_trivial must be within [0, 1), got {max_trivial}")
    audits: list[RowAudit] = []
    jobs: list[tuple[RowAudit, str, str]] = []  # (row audit, kind, language) per program
    tasks: list[Any] = []
    completions: list[str] = []
    for index, row in enumerate(rows):
        audit = RowAudit(index, _row_id(row, index))
        audits.append(audit)
        try:
            task = Task.from_row(row, task_format)
        except TaskFormatError as exc:
            audit.verdict, audit.findings = "invalid", [f"does not parse: {exc}"]
            continue
        audit.task_id = task.task_id
        programs = [("reference" if expected == "accepted" else "rejected", language, code)
                    for language, code, expected in reference_solutions(row, accepted=accepted, rejected=rejected)]
        references = 0
        for kind, language, code in programs + trivial_programs(task):
            if task.format == "stdio":
                runs_as = dataclasses.replace(task, language=language) if task.language != language else task
            elif language == "python":
                runs_as = task
            else:
                audit.findings.append(f"{kind} {language}: not run ({task.format} tasks run Python)")
                continue
            references += kind == "reference"
            jobs.append((audit, kind, language))
            tasks.append(runs_as)
            completions.append(code)
        if not references:  # nothing tells whether the tests accept a right answer
            audit.verdict = "no_reference"
    results = _score(scorer, tasks, completions)
    for (audit, kind, language), result in zip(jobs, results):
        audit.programs.append({"kind": kind, "language": language, "status": result.status, "reward": result.reward,
                               "tests_passed": result.tests_passed, "tests_total": result.tests_total,
                               "error": result.error, "paid": _paid(result, scorer)})
    for audit in audits:
        if audit.verdict != "invalid":
            _classify(audit, max_trivial)
    return AuditReport(audits)


def _classify(audit: RowAudit, max_trivial: float) -> None:
    """Set ``audit.verdict`` and its findings from its programs' results (see :data:`VERDICTS` for the order)."""
    found: dict[str, list[str]] = {v: [] for v in VERDICTS}
    for program in audit.programs:
        kind, status = program["kind"], program["status"]
        line = _describe({"reference": "accepted reference", "rejected": "rejected reference"}.get(kind, kind),
                         program)
        if status in _INVALID:
            found["invalid"].append(line)
        elif status in _INFRA:
            found["infra_error"].append(line)
        elif kind == "reference" and status != "passed":
            found["reference_fails"].append(line)
        elif kind == "rejected" and status == "passed":
            found["rejected_reference_passes"].append(line)
        elif kind not in ("reference", "rejected") and program["paid"] > max_trivial:
            found["trivial_paid"].append(f"{kind} {program['language']}: {program['status']}, paid "
                                         f"{program['paid']:.2f} of full marks ({program['tests_passed']}/"
                                         f"{program['tests_total']} tests)")
    for verdict in VERDICTS[:5]:
        if found[verdict]:
            audit.verdict = verdict
            break
    audit.findings = [line for v in VERDICTS[:5] for line in found[v]] + audit.findings


def write_jsonl(path: str, lines: Sequence[Mapping[str, Any]]) -> None:
    """Write one JSON object per line to ``path``.

    Raises:
        ConfigurationError: the file cannot be written.
    """
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(line, default=str) + "\n" for line in lines)
    except OSError as exc:
        raise ConfigurationError(f"cannot write {path}: {exc.strerror or exc}") from None


# -- trl-sandbox audit ---------------------------------------------------------------------------------------------


def audit_main(argv: list[str]) -> int:
    """``trl-sandbox audit --tasks FILE_OR_SET [--report OUT.jsonl] [--clean OUT.jsonl] [--limit N] [--references N]
    [--rejected-references N] [--max-trivial F] [--task-format F]`` plus the sandbox options of ``trl-sandbox score``
    (the :class:`~trl_sandbox.config.SandboxConfig` fields with or without their ``sandbox_`` prefix, ``--config
    FILE.yaml``; parsed as ``score_main`` parses them). The reward mode is always ``pass_rate``.

    Prints the Markdown table (:meth:`AuditReport.markdown`) on standard output and the summary on standard error;
    ``--report`` gets one JSON line per row (:meth:`RowAudit.to_dict`), ``--clean`` the rows that pass, unchanged.

    Returns:
        0 when the audit ran (whatever it found).

    Raises:
        TaskFormatError: the task file cannot be read or holds no rows.
        ConfigurationError: a bad option, or an output file that cannot be written.
    """
    from .loading import ROW_FIELDS, load_tasks
    from .scoring import Scorer

    parser = one_line_errors(argparse.ArgumentParser(
        prog="trl-sandbox audit",
        description="Score each row's own reference solutions and trivial programs (empty, constant, echo), "
        "self-test its checker, and list the rows that fail their reference or pay a trivial program.",
    ))
    parser.add_argument("--config", help="YAML file with any of these options (command line wins).")
    parser.add_argument("--tasks", required=True, help="Task file (.jsonl[.gz], .parquet), package directory or "
                        "bundled set (humaneval, daytona, quickstart).")
    parser.add_argument("--report", default=None, help="Per-row findings as JSON lines (.jsonl).")
    parser.add_argument("--clean", default=None, help="The rows that pass (ok, no_reference), unchanged (.jsonl).")
    parser.add_argument("--limit", type=int, default=None, help="Audit the first N rows only.")
    parser.add_argument("--references", type=int, default=3, help="Accepted references per row (default 3).")
    parser.add_argument("--rejected-references", "--rejected_references", dest="rejected_references", type=int,
                        default=1, help="Wrong-answer references per row (default 1).")
    parser.add_argument("--max-trivial", "--max_trivial", dest="max_trivial", type=float, default=0.0,
                        help="Fraction of full marks a trivial program may earn (default 0: none).")
    parser.add_argument("--task-format", "--task_format", dest="task_format", default=None,
                        help="Format of every row; default: detected per row.")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="Progress bars on stderr (default: when stderr is a terminal).")
    add_fields(parser, SandboxConfig, prefix="sandbox_")
    pre = one_line_errors(argparse.ArgumentParser(prog="trl-sandbox audit", add_help=False))
    pre.add_argument("--config")
    config_path = pre.parse_known_args(argv)[0].config
    if config_path:
        apply_yaml(parser, config_path, "sandbox_")
    ns = parser.parse_args(argv)
    if ns.limit is not None and ns.limit < 1:
        raise ConfigurationError("--limit must be at least 1")
    if ns.references < 0 or ns.rejected_references < 0:
        raise ConfigurationError("--references and --rejected-references must be at least 0")
    if not 0.0 <= ns.max_trivial < 1.0:
        raise ConfigurationError("--max-trivial must be within [0, 1)")
    sandbox_fields = {f.name for f in dataclasses.fields(SandboxConfig)}
    options = {k: v for k, v in vars(ns).items() if k in sandbox_fields}
    options["sandbox_reward"] = "pass_rate"
    config = SandboxConfig(**options)

    rows = load_tasks(ns.tasks)
    if ns.limit is not None:
        rows = rows[: ns.limit]
    if not rows:
        raise TaskFormatError(f"{ns.tasks} holds no task rows")
    for path in (ns.report, ns.clean):
        if path is not None:
            try:
                open(path, "a", encoding="utf-8").close()
            except OSError as exc:
                raise ConfigurationError(f"cannot write {path}: {exc.strerror or exc}") from None
    scorer = Scorer.from_config(config)
    scorer.pool.progress = ns.progress
    with scorer:
        report = audit_tasks(rows, scorer, task_format=ns.task_format, accepted=ns.references,
                             rejected=ns.rejected_references, max_trivial=ns.max_trivial)
    sys.stdout.write(report.markdown())
    sys.stdout.flush()
    if ns.report is not None:
        write_jsonl(ns.report, [r.to_dict() for r in report.rows])
    if ns.clean is not None:
        # as the file gives them: without the field load_tasks adds to rows that differ (see loading.ROW_FIELDS)
        write_jsonl(ns.clean, [{k: v for k, v in rows[i].items() if k != ROW_FIELDS} for i in report.kept()])
    where = "".join(f"; {what} in {path}" for what, path in (("report", ns.report), ("clean rows", ns.clean))
                    if path is not None)
    print(f"trl-sandbox audit: {report.summary()}{where}", file=sys.stderr)
    return 0
