"""Agreement with the official harnesses: real model completions scored by trl-sandbox and by each dataset's official
procedure, with string prompts and with conversational prompts.

The official verdict of a completion is its dataset's own check program, run as the official harness runs it (``exec``
in an empty namespace, output swallowed, ``exit``/``quit`` disabled as human-eval's ``reliability_guard`` does, 3 s):

- HumanEval (``openai/human-eval``, ``human_eval/execution.py``): ``prompt + completion + "\\n" + test + "\\n" +
  "check(entry_point)"``;
- MultiPL-E rows (its ``test`` calls ``test_check()`` itself): ``prompt + completion + "\\n" + test``;
- sanitized MBPP (HF ``code_eval``, as bigcode-evaluation-harness uses it): ``completion + "\\n" + test_imports +
  test_list``, one line each.

The completion given to the official procedure is the code trl-sandbox extracts (so the table measures judging, not
extraction); the official program runs in a local sandbox like any untrusted code. trl-sandbox scores the raw
completion twice: with the rows as published (string prompts), and as an instruct model is trained (a conversational
``prompt`` with the code in ``starter_code``, the completion an assistant message).

Samples are JSON lines ``{"task_id", "completion"}`` (raw model output), or MapCoder's result files (``responses``,
and for MultiPL-E MBPP its own rows); ``--mbpp`` is ``sanitized-mbpp.json`` from google-research/mbpp. docs/performance.md's
figures come from the raw responses published by MapCoder-Reproduction (Qwen2.5 Coder models, five prompting
strategies):

    git clone https://github.com/zaiyichen0411/MapCoder-Reproduction
    cat MapCoder-Reproduction/results/HumanEval/*-1-merged.jsonl > humaneval_samples.jsonl   # 1,664 completions
    cat MapCoder-Reproduction/results/MBPP/*-1-merged.jsonl > mbpp_samples.jsonl             # 3,759 completions
    curl -O https://raw.githubusercontent.com/google-research/google-research/master/mbpp/sanitized-mbpp.json
    python benchmarks/agreement.py --humaneval humaneval_samples.jsonl --mbpp sanitized-mbpp.json \
        --mbpp-samples mbpp_samples.jsonl                                                        # about 4 minutes

APPS, TACO, LiveCodeBench and KodCode (``--datasets apps,taco,lcb,kodcode``, or ``--contests`` for all four): the
rows and completion variants of ``benchmarks/agreement_rows.py`` (hand-written rows, field for field as each dataset
publishes them; completions as a model writes them, chosen where the harnesses differ), each scored by trl-sandbox
(``Task.from_row(row)``, the default config, the local backend) and by the official harness's verdict rule, restated
below in this file's own code (each function names its source file):

- APPS (``hendrycks/apps`` ``eval/testing_util.py``): the program wrapped into ``code()``, stdin a ``StringIO``,
  ``SystemExit`` swallowed, ``exit`` disabled, 4 s a test, 11 s in all; stdout through APPS's sequence of attempts
  (stripped text, line lists, ``np.allclose``, sets of token sets); calls: tuple as list, ``[expected]`` unwrapped;
- TACO (``FlagOpen/TACO`` ``metrics/testing_util.py``): ``python program.py`` per test, exit status 0 required,
  4 s; stdout compared as one string (its ``compare_std_results``); calls as APPS's;
- LiveCodeBench (``lcb_runner/evaluation/testing_util.py``): ``grade_stdio`` (``wrapped_function()``, its stdin
  mock, ``SystemExit`` swallowed, stripped lines, ``Decimal`` per token) and ``grade_call_based``, 6 s a test;
- KodCode (``KodCode-AI/kodcode`` ``pipeline/run_test.sh``): real pytest on ``solution.py`` + ``test_solution.py``
  in a temporary directory, passed when its exit status is 0, 30 s.

The official side is given the code trl-sandbox extracts (the table measures judging, not extraction); the APPS,
TACO and LiveCodeBench oracles run in sandboxes of the scorer's pool, KodCode's pytest in a subprocess in a temporary
directory. A table per dataset, then every disagreement (about a minute and a half on two cores)::

    python benchmarks/agreement.py --datasets apps,taco,lcb,kodcode

KodCode's own verdicts (``--kodcode-demo``): the 1,648 (solution, test file) pairs whose test directories
KodCode-AI/kodcode publishes under ``demo/``, each with the verdict its pipeline recorded (``test_result.txt``),
scored by trl-sandbox as KodCode-V1 rows; the official harness (``kodcode_official``) runs again here on every
disagreement, which tells an environment difference (the re-run gives our verdict) from a departure of ours (it gives
the recorded one). A table (agreement where the environments match; pairs we pass that the re-run fails), then every
disagreement; ``--json`` keeps every pair's results (four to six minutes on two cores). Nothing of KodCode's is kept in
this repository: the pairs are read from a checkout or from its git directory::

    git clone https://github.com/KodCode-AI/kodcode
    python benchmarks/agreement.py --kodcode-demo kodcode --pool-size 2 --json kodcode_demo.json
"""

from __future__ import annotations

import argparse
import base64
import inspect
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).parent))
from _common import table  # noqa: E402

from trl_sandbox import SandboxConfig, Scorer, Task, load_tasks  # noqa: E402
from trl_sandbox.completions import extract_code  # noqa: E402
from trl_sandbox.errors import TaskFormatError  # noqa: E402
from trl_sandbox.loading import read_jsonl  # noqa: E402

ORACLE = r"""
import builtins, contextlib, io, json, os, signal, sys
# The packages the sandbox offers (sympy...), as trl-sandbox's own harness adds them: the same environment on both
# sides, so that a completion importing one is judged on its code, not on the environment.
sys.path += [p for p in os.environ.get("TRL_SANDBOX_PACKAGES", "").split(os.pathsep) if p]
req = json.loads(sys.stdin.read())
class TimeoutException(Exception):
    pass
def on_alarm(signum, frame):
    raise TimeoutException("Timed out!")
signal.signal(signal.SIGALRM, on_alarm)
builtins.exit = builtins.quit = None
out = io.StringIO()
try:
    signal.setitimer(signal.ITIMER_REAL, req["timeout"])
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        exec(req["program"], {})
    result = "passed"
except TimeoutException:
    result = "timed out"
except BaseException as e:
    result = "failed: %s: %s" % (type(e).__name__, str(e)[:200])
signal.setitimer(signal.ITIMER_REAL, 0)
sys.__stdout__.write(json.dumps(result))
sys.__stdout__.flush()
"""
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


def read_samples(path: str) -> list[dict[str, Any]]:
    """Samples as dicts with ``task_id``, ``completion`` and, for MultiPL-E rows, ``row`` (the row itself)."""
    samples = []
    for row in read_jsonl(path):
        if "responses" in row:
            completion = row["responses"][-1] if row["responses"] else ""
            sample = {"task_id": str(row["task_id"]), "completion": completion}
            if "entry_point" in row and "test" in row:
                sample["row"] = {k: row[k] for k in ("task_id", "prompt", "entry_point", "test")}
            samples.append(sample)
        else:
            samples.append({"task_id": str(row["task_id"]), "completion": row["completion"], "row": row.get("row")})
    return samples


def chat_form(row: dict[str, Any]) -> dict[str, Any]:
    """The row as an instruct model is trained on it: a conversational prompt, the code kept in ``starter_code``."""
    chat = dict(row)
    if isinstance(row.get("prompt"), str) and row.get("test_list") is None:
        chat["starter_code"] = row["prompt"]
    chat["prompt"] = [{"role": "user", "content": "Solve this task."}]
    return chat


def official_program(row: dict[str, Any], code: str) -> str:
    if row.get("test_list") is not None:  # sanitized MBPP through HF code_eval
        return code + "\n" + "\n".join([*row.get("test_imports", []), *row["test_list"]])
    if "test_check()" in row["test"]:  # MultiPL-E: the test calls check itself
        return row["prompt"] + code + "\n" + row["test"]
    return row["prompt"] + code + "\n" + row["test"] + "\n" + f"check({row['entry_point']})"


def run_official(scorer: Scorer, programs: list[str], timeout: float = 3.0) -> list[str]:
    """The official verdicts of ``programs``, each run in a sandbox of the scorer's pool."""
    results: list[str] = [""] * len(programs)

    async def all_of_them() -> None:
        limiter = anyio.CapacityLimiter(scorer.pool.size)

        async def one(i: int) -> None:
            async with limiter, scorer.pool.lease(timeout_s=600) as lease:
                sandbox = lease.sandbox
                request = json.dumps({"program": programs[i], "timeout": timeout}).encode()
                result = await scorer.pool.backend.exec(sandbox, [*sandbox.python, "-c", ORACLE], stdin=request,
                                                        timeout_s=timeout + 10)
                try:
                    results[i] = json.loads(result.stdout)
                except ValueError:
                    results[i] = "failed: crashed (exit %s)" % result.exit_code

        async with anyio.create_task_group() as tg:
            for i in range(len(programs)):
                tg.start_soon(one, i)

    scorer.pool.run(all_of_them, timeout_s=3600)
    return results


def compare(scorer: Scorer, name: str, rows: list[dict[str, Any]], samples: list[dict[str, Any]],
            show: int) -> list[dict[str, Any]]:
    """Score the samples both ways and against the official procedure; return the table rows."""
    tasks = [Task.from_row(r) for r in rows]
    codes = [extract_code(s["completion"], t.entry_points) for s, t in zip(samples, tasks)]
    official = run_official(scorer, [official_program(r, c) for r, c in zip(rows, codes)])
    official_passed = [o == "passed" for o in official]
    out = []
    for style in ("string prompts", "chat prompts"):
        styled = tasks if style == "string prompts" else [Task.from_row(chat_form(r)) for r in rows]
        completions = [s["completion"] if style == "string prompts"
                       else [{"role": "assistant", "content": s["completion"]}] for s in samples]
        start = time.perf_counter()
        results = scorer.score(styled, completions)
        elapsed = time.perf_counter() - start
        ours = [r.passed for r in results]
        agree = sum(a == b for a, b in zip(ours, official_passed))
        out.append({"set": name, "prompts": style, "completions": len(samples), "official passed":
                    sum(official_passed), "trl-sandbox passed": sum(ours), "agree": agree,
                    "agreement %": round(100 * agree / max(1, len(samples)), 2),
                    "statuses": dict(Counter(r.status for r in results)), "seconds": round(elapsed, 1)})
        disagreements = [(s["task_id"], o, r) for s, o, r, p in zip(samples, official, results, ours)
                         if p != (o == "passed")]
        for task_id, o, r in disagreements[:show]:
            print(f"  [{name}, {style}] {task_id}: official {o[:100]!r}; trl-sandbox {r.status}: {str(r.error)[:150]}",
                  file=sys.stderr)
    return out


def block_evidence(scorer: Scorer, rows: list[dict[str, Any]], samples: list[dict[str, Any]]) -> dict[str, Any]:
    """For completions with two or more Python blocks: official pass counts of the first block, the last block and the
    block trl-sandbox takes."""
    chosen = []
    for row, sample in zip(rows, samples):
        blocks = [code for tag, code in _FENCE.findall(sample["completion"].rsplit("</think>", 1)[-1])
                  if tag.lower() in ("python", "py", "python3", "")]
        if len(blocks) >= 2:
            ours = extract_code(sample["completion"], Task.from_row(row).entry_points)
            chosen.append((row, blocks[0], blocks[-1], ours))
    programs = [official_program(row, code) for row, *codes in chosen for code in codes]
    verdicts = run_official(scorer, programs)
    passed = [v == "passed" for v in verdicts]
    return {"multi-block completions": len(chosen), "first block passes": sum(passed[0::3]),
            "last block passes": sum(passed[1::3]), "trl-sandbox's block passes": sum(passed[2::3])}


# -- APPS, TACO, LiveCodeBench, KodCode: the official verdict rules, restated ------------------------------------------
#
# Each function below restates one harness's rule in this project's own code; the comments name the source file.
# The rule functions are pure (tested by tests/test_agreement_bench.py); the runners (``*_run``) execute the program
# and are shipped, with the rules, into a sandbox of the scorer's pool as the ``CONTEST_ORACLE`` program: the
# programs they run are untrusted.

#: The imports APPS puts before every program (hendrycks/apps ``eval/testing_util.py``, ``run_test``: ``sol``);
#: TACO's ``synthesize_cb_code``/``synthesize_std_code`` use the same list. numpy is imported when it can be: the
#: sandbox's interpreter has none, and no program here uses it.
CONTEST_PRELUDE = "\n".join([
    "import sys", "import time", "import itertools",
    "from itertools import accumulate, product, permutations, combinations", "import collections",
    "from collections import Counter, OrderedDict, deque, defaultdict, ChainMap", "from functools import lru_cache",
    "import math", "from math import sqrt, sin, cos, tan, ceil, fabs, floor, gcd, exp, log, log2", "import fractions",
    "from typing import List, Tuple", "try:\n    import numpy as np\nexcept ImportError:\n    pass", "import random",
    "import heapq", "from heapq import *", ""])

#: LiveCodeBench's ``import_string`` (``lcb_runner/evaluation/testing_util.py``): a star import of each module, in
#: this order (``from sys import *`` binds ``exit`` and ``stdin``; ``from builtins import *`` binds the real ``open``
#: before any patching), then each module by name, then a recursion limit of 50000.
LCB_MODULES = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random", "statistics",
               "itertools", "functools", "operator", "io", "sys", "json", "builtins", "typing")
LCB_PRELUDE = ("".join(f"from {m} import *\n" for m in LCB_MODULES)
               + "".join(f"import {m}\n" for m in LCB_MODULES if m not in ("builtins", "typing"))
               + "sys.setrecursionlimit(50000)\n")


def allclose(got, want, rtol=1e-05, atol=1e-08):
    """``numpy.allclose`` with its defaults, on two lists of floats: every |a - b| <= atol + rtol * |b| (b the
    expected value), a one-element list broadcast against the other, NaN never close, infinities only to themselves."""
    import math

    if len(got) != len(want) and 1 not in (len(got), len(want)):
        raise ValueError("operands could not be broadcast together")
    n = max(len(got), len(want))
    for i in range(n):
        a = got[0] if len(got) == 1 else got[i]
        b = want[0] if len(want) == 1 else want[i]
        if a == b:
            continue
        if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
            return False
        if not abs(a - b) <= atol + rtol * abs(b):
            return False
    return True


def apps_stdout_ok(lines, expected):
    """APPS's stdout verdict (hendrycks/apps ``eval/testing_util.py``, ``run_test``, standard-input branch, and
    ``custom_compare_``). ``lines``: the captured stdout split into lines (``str.splitlines``); ``expected``: the
    test's output (a list is joined with newlines). The attempts, in order, any one passing the test:

    1. the lines joined, stripped, equal the stripped expected text; or the same with every line stripped;
    2. the lines equal the expected text's non-empty lines, each stripped; then the same after dropping empty lines;
    3. as many lines as expected lines, each one number, ``np.allclose`` (relative 1e-5, absolute 1e-8);
    4. each line taken as the set of its tokens: the set of those sets equals the expected one (order of lines and of
       tokens ignored, repeats merged); then the same with every token rounded to 3 decimals as a float.
    """
    if isinstance(expected, list):
        expected = "\n".join(expected)
    want_text = expected.strip()
    if "\n".join(lines).strip() == want_text or "\n".join(x.strip() for x in lines).strip() == want_text:
        return True
    if lines == [expected]:
        return True
    want = [x.strip() for x in expected.split("\n") if x]
    if lines == want:
        return True
    got = [x for x in lines if x]
    if got == want:
        return True
    try:
        numbers = [float(x) for x in got]
        if len(numbers) == len(want) and allclose(numbers, [float(x) for x in want]):
            return True
    except (ValueError, OverflowError):
        pass
    got_sets = [set(x.split()) for x in got if x.split()]
    want_sets = [set(x.split()) for x in want]
    if {frozenset(s) for s in got_sets} == {frozenset(s) for s in want_sets}:
        return True
    try:
        def rounded(sets):
            return {frozenset(round(float(t), 3) for t in s) for s in sets}
        return rounded(got_sets) == rounded(want_sets)
    except (ValueError, OverflowError):
        return False


def taco_stdout_ok(stdout, expected):
    """TACO's stdout verdict (FlagOpen/TACO ``metrics/testing_util.py``, ``compare_std_results``). It keeps APPS's
    attempts but receives the program's stdout as one string, not as lines, so those meant for lines work on its
    characters instead:

    1. stripped stdout equals the stripped expected text (a list is joined with newlines first);
    2. the number attempt reads each *character* of stdout as a float: it can pass only for an output without any
       whitespace, one character per expected line;
    3. the set attempt compares the set of stdout's tokens, each as the set of its *characters*, with the set of the
       expected lines, each as the set of its tokens: "1 2" passes for "1\\n2" (one-character tokens), "10 20" does
       not pass for "10\\n20"; then the same with every character / token as a float rounded to 3 decimals.
    """
    if isinstance(expected, list):
        expected = "\n".join(expected)
    if stdout.strip() == expected.strip():
        return True
    want = [x.strip() for x in expected.split("\n") if x]
    try:
        chars = [float(c) for c in stdout]
        if len(chars) == len(want) and allclose(chars, [float(x) for x in want]):
            return True
    except (ValueError, OverflowError):
        pass
    tokens = set(stdout.split())
    want_sets = [set(x.split()) for x in want]
    if {frozenset(t) for t in tokens} == {frozenset(s) for s in want_sets}:
        return True
    try:
        return ({frozenset(round(float(c), 3) for c in t) for t in tokens}
                == {frozenset(round(float(x), 3) for x in s) for s in want_sets})
    except (ValueError, OverflowError):
        return False


def lcb_stdout_ok(stdout, expected):
    """LiveCodeBench's stdout verdict (``lcb_runner/evaluation/testing_util.py``, ``grade_stdio``): both texts
    stripped, split on newlines, each line stripped; the line counts must be equal; each pair of lines must be equal,
    or both be whitespace-separated numbers equal as ``Decimal`` (so ``1.0`` matches ``1``, ``0.000495`` does not
    match ``0.0005``); a line that is not all numbers fails."""
    from decimal import Decimal, InvalidOperation

    got = [x.strip() for x in stdout.strip().split("\n")]
    want = [x.strip() for x in expected.strip().split("\n")]
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        if g == w:
            continue
        try:
            if [Decimal(t) for t in g.split()] != [Decimal(t) for t in w.split()]:
                return False
        except (InvalidOperation, ValueError, TypeError):
            return False
    return True


def contest_call_ok(result, expected):
    """APPS's (and TACO's, same rule) verdict of one call (hendrycks/apps ``eval/testing_util.py``, ``run_test``,
    call-based branch; FlagOpen/TACO ``metrics/testing_util.py``, ``execute_cb_code``): a tuple result counts as a
    list; it passes when equal (``==``, no tolerance) to the expected value or, the expected value being a non-empty
    list, to its first element (the datasets wrap outputs in a list); a result whose first element is a tuple also
    passes when its elements as lists equal that first element."""
    if isinstance(result, tuple):
        result = list(result)
    ok = result == expected
    if isinstance(expected, list) and expected:
        ok = ok or result == expected[0]
    try:
        if isinstance(result[0], tuple):
            ok = ok or [list(x) for x in result] == expected[0]
    except Exception:
        pass
    return bool(ok)


def lcb_call_ok(result, expected):
    """LiveCodeBench's verdict of one call (``grade_call_based``): a tuple result counts as a list, then ``==`` with
    the expected value (parsed from JSON); no unwrapping, no tolerance."""
    if isinstance(result, tuple):
        result = list(result)
    return bool(result == expected)


def apps_program(program):
    """The program APPS runs for a standard-input problem (``run_test``): the prelude, then the program's
    unindented ``import``/``from`` lines kept at module level until its first other line, before which
    ``stdin = sys.stdin``, ``stdout = sys.stdout`` and ``def code():`` are inserted; from there every line is
    indented by a tab (imports included) into ``code``, the function called once per test."""
    out = CONTEST_PRELUDE
    started = False
    for line in program.split("\n"):
        if line.startswith(("from ", "import ")):
            out += ("\t" if started else "") + line + "\n"
            continue
        if not started:
            out += "stdin = sys.stdin\nstdout = sys.stdout\ndef code():\n"
            started = True
        out += "\t" + line + "\n"
    return out


def taco_programs(program):
    """TACO's two versions of a standard-input program (``synthesize_std_code``): (``plain``, ``wrapped``).
    ``plain`` is the program with the prelude and ``stdin = sys.stdin``/``stdout = sys.stdout`` inserted before its
    first line that is neither an unindented import nor contains ``import *``; ``wrapped`` is APPS's ``code()``
    form, the ``import *`` lines moved (unindented) above ``def code():``."""
    lines = program.split("\n")
    kinds = [2 if "import *" in x else 1 if x.startswith(("from ", "import ")) else 0 for x in lines]
    star = "\n".join(x.lstrip("\t") for x, k in zip(lines, kinds) if k == 2)
    plain = wrapped = ""
    started = False
    for line, kind in zip(lines, kinds):
        if kind == 0 and not started:
            plain += CONTEST_PRELUDE + "\nstdin = sys.stdin\nstdout = sys.stdout\n" + line + "\n"
            wrapped += CONTEST_PRELUDE + star + "\nstdin = sys.stdin\nstdout = sys.stdout\ndef code():\n\t" + line + "\n"
            started = True
            continue
        plain += line + "\n"
        if kind < 2:
            wrapped += ("\t" if started else "") + line + "\n"
    return plain, wrapped


def lcb_program(program):
    """The program LiveCodeBench runs for a standard-input problem (``clean_if_name`` then ``make_function``): a
    last top-level ``if __name__ == '__main__':`` is replaced by its body; the top-level import statements are kept
    at module level after the prelude, every other top-level statement goes into ``def wrapped_function():``, called
    once per test. A program that does not parse is left as it is (and then fails to load)."""
    import ast

    try:
        tree = ast.parse(program)
        last = tree.body[-1]
        if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
            program = (ast.unparse(ast.Module(body=tree.body[:-1], type_ignores=[])) + "\n"
                       + ast.unparse(ast.Module(body=last.body, type_ignores=[])))
    except Exception:
        pass
    try:
        tree = ast.parse(program)
        imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        others = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
        function = ast.FunctionDef(name="wrapped_function", args=ast.arguments(
            posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]), body=others, decorator_list=[],
            lineno=-1)
        return (LCB_PRELUDE + "\n" + ast.unparse(ast.Module(body=imports, type_ignores=[])) + "\n"
                + ast.unparse(function))
    except Exception:
        return program


def int_keys(args, expected):
    """APPS's and TACO's repair of JSON dictionaries (``run_test``, ``process_input_output``): a dict as the first
    argument, the expected value, or the first element of the expected value gets integer keys (when they all are)."""
    try:
        if isinstance(args[0], dict):
            args = [{int(k): v for k, v in args[0].items()}]
    except Exception:
        pass
    try:
        if isinstance(expected, dict):
            expected = [{int(k): v for k, v in expected.items()}]
    except Exception:
        pass
    try:
        if isinstance(expected[0], dict):
            expected = [{int(k): v for k, v in expected[0].items()}]
    except Exception:
        pass
    return args, expected


# The runners below run inside the oracle process only (see CONTEST_ORACLE).

class HarnessTimeout(Exception):
    """The harnesses' ``TimeoutException``: an ``Exception`` raised by SIGALRM (so a program's ``except Exception``
    can swallow it, as in the official harnesses)."""


def set_alarm(seconds):
    import signal

    def ring(signum, frame):
        raise HarnessTimeout("Timed out!")

    signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)


class LcbStdin:
    """LiveCodeBench's ``sys.stdin`` during a test (``MockStdinWithBuffer``): ``read()`` returns the whole input,
    ``readline()`` reads a line of it, ``readlines()`` returns it split on newlines (no line ends), ``buffer``
    gives bytes (its ``readline()`` always the first line); other attributes come from a ``StringIO`` of the input;
    no ``__iter__`` of its own, so ``for line in sys.stdin`` raises TypeError."""

    def __init__(self, text):
        import io

        self.text = text
        self.lines = io.StringIO(text)
        self.buffer = LcbBuffer(text)

    def read(self, *args):
        return self.text

    def readline(self, *args):
        return self.lines.readline(*args)

    def readlines(self, *args):
        return self.text.split("\n")

    def __getattr__(self, name):
        return getattr(self.lines, name)


class LcbBuffer:
    def __init__(self, text):
        self.data = text.encode("utf-8")

    def read(self, *args):
        return self.data

    def readline(self, *args):
        return self.data.split(b"\n")[0] + b"\n"


def call_with_input(function, text, stdin, timeout):
    """Call ``function()`` as APPS's and LiveCodeBench's ``call_method`` do: the real ``sys.stdin`` object gets
    ``read`` (the input), ``readline`` (the next line, no line end) and ``readlines`` (the lines) patched, then
    ``sys.stdin`` becomes ``stdin`` (APPS: a ``StringIO``; LiveCodeBench: :class:`LcbStdin`); ``builtins.open``
    opens the input (``mock_open``); stdout is captured; ``SystemExit`` is swallowed (the output so far counts);
    ``timeout`` seconds by SIGALRM. Returns (exception or None, captured stdout)."""
    import builtins
    import io
    import signal
    import sys

    real_stdin, real_stdout, real_open = sys.stdin, sys.stdout, builtins.open
    pending = iter(text.split("\n"))
    patches = {"read": lambda *a: text, "readline": lambda *a: next(pending), "readlines": lambda *a: text.split("\n")}
    for name, value in patches.items():
        setattr(real_stdin, name, value)
    captured = io.StringIO()
    error = None
    try:
        builtins.open = lambda *a, **k: io.StringIO(text)
        sys.stdin = stdin
        sys.stdout = captured
        set_alarm(timeout)
        try:
            function()
        except SystemExit:
            pass
    except Exception as e:  # noqa: BLE001 - the program's error (or the timeout) is the verdict
        error = e
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdin, sys.stdout, builtins.open = real_stdin, real_stdout, real_open
        for name in patches:
            real_stdin.__dict__.pop(name, None)
    return error, captured.getvalue()


def load_program(source, module_name, timeout):
    """Execute ``source`` as a new module's body within ``timeout`` seconds: APPS and TACO use ``pyext``'s
    ``RuntimeModule.from_string`` (a plain dict namespace: ``__name__`` resolves to the builtins module's name);
    LiveCodeBench a ``types.ModuleType('tmp_sol')``. Returns (namespace or None, error text)."""
    import signal
    import types

    namespace = {} if module_name is None else types.ModuleType(module_name).__dict__
    try:
        set_alarm(timeout)
        exec(compile(source, "<program>", "exec"), namespace)
    except Exception as e:  # noqa: BLE001
        return None, f"load error: {type(e).__name__}: {str(e)[:200]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return namespace, ""


def verdict(results, error=""):
    """All tests passed (APPS, TACO, LiveCodeBench: every result ``> 0``, i.e. True)."""
    passed = bool(results) and all(r is True for r in results)
    return {"passed": passed, "results": results, "error": "" if passed else error or "a test failed"}


def contest_call_run(rule, program, spec, timeout):
    """APPS/TACO call-based (``run_test`` / ``execute_cb_code``): prelude + program loaded as a module (APPS disables
    ``exit``/``quit`` before loading, TACO after); ``Solution()`` when the program text has ``class Solution``; each
    test calls the function with the input list as arguments, ``timeout`` s each; an ``Exception`` fails the test, a
    ``SystemExit`` escapes and ends the harness process (no result: every test failed)."""
    import builtins
    import signal

    if rule == "apps":
        builtins.exit = builtins.quit = None
    namespace, error = load_program(CONTEST_PRELUDE + program, None, timeout)
    if namespace is None:
        return verdict([-2], error)
    if rule == "taco":
        builtins.exit = builtins.quit = None
    try:
        if "class Solution" in program:
            method = getattr(namespace["Solution"](), spec["fn_name"])
        else:
            method = namespace[spec["fn_name"]]
    except Exception as e:  # noqa: BLE001
        return verdict([-2], f"no function {spec['fn_name']!r}: {e}")
    results, error = [], ""
    for args, expected in zip(spec["inputs"], spec["outputs"]):
        args, expected = int_keys(args, expected)
        try:
            set_alarm(timeout)
            got = method(*args)
            ok = contest_call_ok(got, expected)
            results.append(ok)
            if not ok and not error:
                error = f"wrong result {got!r} for {expected!r}"
        except Exception as e:  # noqa: BLE001
            results.append(-1)
            error = error or f"{type(e).__name__}: {str(e)[:200]}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return verdict(results, error)


def apps_stdio_run(program, spec, timeout):
    """APPS standard input (``run_test``): ``exit``/``quit`` set to None, :func:`apps_program` loaded, ``code()``
    called per test through :func:`call_with_input` with a ``StringIO`` as ``sys.stdin`` (no ``.buffer``); an
    exception or timeout fails the test; else :func:`apps_stdout_ok` on the captured lines."""
    import builtins
    import io

    builtins.exit = builtins.quit = None
    namespace, error = load_program(apps_program(program), None, timeout)
    if namespace is None or "code" not in namespace:
        return verdict([-2], error or "no code() (the program has no statement)")
    results, error = [], ""
    for text, expected in zip(spec["inputs"], spec["outputs"]):
        text = "\n".join(text) if isinstance(text, list) else text
        failure, out = call_with_input(namespace["code"], text, io.StringIO(text), timeout)
        if failure is not None:
            results.append(-1)
            error = error or f"{type(failure).__name__}: {str(failure)[:200]}"
            continue
        ok = apps_stdout_ok(out.splitlines(), expected)
        results.append(ok)
        if not ok and not error:
            error = f"wrong output {out[:200]!r}"
    return verdict(results, error)


def taco_stdio_run(program, spec, timeout):
    """TACO standard input (``run_test`` / ``execute_std_code``): the ``plain`` program of :func:`taco_programs`
    run as ``python program.py`` per test (a fresh interpreter, no ``reliability_guard``), input on stdin,
    ``timeout`` s; exit status 0 is required (else it is run again with stdin from a file, then with the input in
    ``input.txt`` and the answer read from ``output.txt``; a status still non-zero fails the test); then
    :func:`taco_stdout_ok`. When every test ended with status 1, the ``wrapped`` form is run the same way (with
    ``code()`` called at its end) and decides. Before any of that the ``wrapped`` form is loaded in the harness's
    process (``compile_and_get_func``): when it does not load (a ``from __future__`` import after the prelude, an
    import that fails...) every test fails."""
    import os
    import subprocess
    import sys

    def run_all(source):
        with open("taco_program.py", "w") as f:
            f.write(source)
        results, error = [], ""
        for text, expected in zip(spec["inputs"], spec["outputs"]):
            for name in ("input.txt", "output.txt"):
                if os.path.exists(name):
                    os.unlink(name)
            text = "\n".join(text) if isinstance(text, list) else text
            expected = "\n".join(expected) if isinstance(expected, list) else expected
            argv = [sys.executable, "taco_program.py"]
            try:
                run = subprocess.run(argv, check=False, input=text, text=True, capture_output=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                results.append(("timeout", None))
                error = error or f"timed out ({timeout} s)"
                continue
            outcome = None
            if run.returncode == 0:
                outcome = taco_stdout_ok(run.stdout, expected)
            else:
                try:
                    with open("taco_input.txt", "w") as f:
                        f.write(text)
                    with open("taco_input.txt") as f:
                        again = subprocess.run(argv, check=False, stdin=f, text=True, capture_output=True, timeout=timeout)
                    run = again
                    if again.returncode == 0:
                        outcome = taco_stdout_ok(again.stdout, expected)
                except subprocess.TimeoutExpired:
                    pass
                if outcome is None:
                    try:
                        with open("input.txt", "w") as f:
                            f.write(text)
                        again = subprocess.run(argv, check=False, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL, timeout=timeout)
                        run = again
                        if again.returncode == 0 and os.path.exists("output.txt"):
                            with open("output.txt") as f:
                                outcome = taco_stdout_ok(f.read(), expected)
                    except subprocess.TimeoutExpired:
                        pass
            if outcome is None:
                results.append(("returncode", run.returncode))
                error = error or f"exit status {run.returncode}: {(run.stderr or '')[-200:]}"
            else:
                results.append(outcome)
                if not outcome and not error:
                    error = f"wrong output {run.stdout[:200]!r}"
        return results, error

    plain, wrapped = taco_programs(program)
    # run_test first loads the wrapped form in-process (compile_and_get_func): no code() there fails every test.
    namespace, error = load_program(wrapped, None, timeout)
    if namespace is None or "code" not in namespace:
        return verdict([-2], error or "no code() (the program has no statement)")
    results, error = run_all(plain)
    if results and all(r == ("returncode", 1) for r in results):
        results, error = run_all(wrapped + "\ncode()\n")
    return verdict([r if isinstance(r, bool) else -3 for r in results], error)


def lcb_stdio_run(program, spec, timeout):
    """LiveCodeBench standard input (``grade_stdio``): ``quit`` set to None (``exit`` kept), :func:`lcb_program`
    loaded as module ``tmp_sol``, ``wrapped_function()`` called per test through :func:`call_with_input` with
    :class:`LcbStdin`; the first exception, timeout or wrong output (:func:`lcb_stdout_ok`) ends the run."""
    import builtins

    builtins.quit = None
    namespace, error = load_program(lcb_program(program), "tmp_sol", timeout)
    if namespace is None or not callable(namespace.get("wrapped_function")):
        return verdict([-4], error or "no wrapped_function")
    results = []
    for text, expected in zip(spec["inputs"], spec["outputs"]):
        failure, out = call_with_input(namespace["wrapped_function"], text, LcbStdin(text), timeout)
        if failure is not None:
            return verdict(results + [-4], f"{type(failure).__name__}: {str(failure)[:200]}")
        if not lcb_stdout_ok(out, expected):
            return verdict(results + [-2], f"wrong output {out[:200]!r}")
        results.append(True)
    return verdict(results)


def lcb_call_run(program, spec, timeout):
    """LiveCodeBench call-based (``grade_call_based``): the prelude and the program loaded as module ``tmp_sol``;
    ``Solution()`` when ``class Solution`` is in the text; each input line parsed as JSON is one argument, the
    output parsed as JSON; :func:`lcb_call_ok`; the first exception (``Exception``; a ``SystemExit`` ends the
    process), timeout or wrong result ends the run."""
    import builtins
    import json
    import signal

    builtins.quit = None
    source = LCB_PRELUDE + "\n\n" + program
    namespace, error = load_program(source, "tmp_sol", timeout)
    if namespace is None:
        return verdict([-4], error)
    try:
        target = namespace["Solution"]() if "class Solution" in source else None
        method = getattr(target, spec["fn_name"]) if target is not None else namespace[spec["fn_name"]]
        calls = [[json.loads(line) for line in text.split("\n")] for text in spec["inputs"]]
        wanted = [json.loads(text) for text in spec["outputs"]]
    except Exception as e:  # noqa: BLE001
        return verdict([-4], f"{type(e).__name__}: {e}")
    results = []
    for args, expected in zip(calls, wanted):
        try:
            set_alarm(timeout)
            got = method(*args)
            signal.setitimer(signal.ITIMER_REAL, 0)
            if not lcb_call_ok(got, expected):
                return verdict(results + [-2], f"wrong result {got!r} for {expected!r}")
        except Exception as e:  # noqa: BLE001
            return verdict(results + [-4], f"{type(e).__name__}: {str(e)[:200]}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        results.append(True)
    return verdict(results)


def oracle_main():
    """The oracle process: read the request (JSON on stdin), then, as in the harnesses' worker processes, leave
    /dev/null as file descriptor 0 and ``sys.stdin``; the verdict goes out on a copy of the original stdout, the
    program's own writes to descriptor 1 go to /dev/null."""
    import json
    import os
    import sys

    request = json.loads(sys.stdin.read())
    null = os.open(os.devnull, os.O_RDWR)
    verdict_fd = os.dup(1)
    os.dup2(null, 0)
    os.dup2(null, 1)
    sys.stdin = open(os.devnull)
    rule, program, spec, timeout = request["rule"], request["program"], request["spec"], request["timeout"]
    try:
        if rule == "livecodebench":
            result = lcb_call_run(program, spec, timeout) if spec.get("fn_name") else lcb_stdio_run(
                program, spec, timeout)
        elif spec.get("fn_name"):
            result = contest_call_run(rule, program, spec, timeout)
        elif rule == "apps":
            result = apps_stdio_run(program, spec, timeout)
        else:
            result = taco_stdio_run(program, spec, timeout)
    except BaseException as e:  # noqa: BLE001 - SystemExit & co. end the official harness's process: no result
        result = {"passed": False, "results": [], "error": f"harness process ended: {type(e).__name__}: {str(e)[:200]}"}
    os.write(verdict_fd, json.dumps(result, default=repr).encode())
    os._exit(0)


_ORACLE_PARTS = (allclose, apps_stdout_ok, taco_stdout_ok, lcb_stdout_ok, contest_call_ok, lcb_call_ok,
                 apps_program, taco_programs, lcb_program, int_keys, HarnessTimeout, set_alarm, LcbStdin, LcbBuffer,
                 call_with_input, load_program, verdict, contest_call_run, apps_stdio_run, taco_stdio_run,
                 lcb_stdio_run, lcb_call_run, oracle_main)


def contest_oracle() -> str:
    """The oracle program: the preludes and the functions above, then ``oracle_main()``."""
    parts = [f"CONTEST_PRELUDE = {CONTEST_PRELUDE!r}", f"LCB_PRELUDE = {LCB_PRELUDE!r}"]
    parts += [inspect.getsource(part) for part in _ORACLE_PARTS]
    return "\n\n".join(parts) + "\n\noracle_main()\n"


#: Per-test timeouts (seconds) of the harnesses: APPS ``timeout = 4``, TACO ``TIMEOUT = 4``, LiveCodeBench
#: ``--timeout`` default 6; KodCode's ``run_test.sh`` ``TIME_LIMIT=30`` for the whole pytest run.
TEST_TIMEOUT = {"apps": 4, "taco": 4, "livecodebench": 6}
KODCODE_TIMEOUT = 30


def process_limit(dataset: str, n_tests: int) -> float:
    """The harness process's own limit: APPS ``check_correctness`` joins for ``TIMEOUT + 1`` = 11 s; LiveCodeBench
    for ``(timeout + 1) * n_tests + 5``; TACO's ``p.join()`` has none (here: every test's three runs, plus 10 s)."""
    if dataset == "apps":
        return 11.0
    if dataset == "livecodebench":
        return (TEST_TIMEOUT[dataset] + 1) * n_tests + 5.0
    return 3 * TEST_TIMEOUT[dataset] * n_tests + 10.0


def lcb_spec(row: dict[str, Any]) -> dict[str, Any]:
    """LiveCodeBench's evaluation sample (``lcb_runner/benchmarks/code_generation.py``, ``get_evaluation_sample``):
    public then private tests (private: JSON, else base64 of zlib of a pickled JSON string), ``fn_name`` from the
    ``metadata`` JSON's ``func_name``."""
    try:
        private = json.loads(row["private_test_cases"])
    except ValueError:
        private = json.loads(pickle.loads(zlib.decompress(base64.b64decode(row["private_test_cases"].encode()))))
    tests = json.loads(row["public_test_cases"]) + private
    return {"inputs": [t["input"] for t in tests], "outputs": [t["output"] for t in tests],
            "fn_name": json.loads(row["metadata"]).get("func_name")}


def official_spec(dataset: str, row: dict[str, Any]) -> dict[str, Any]:
    if dataset == "livecodebench":
        return lcb_spec(row)
    spec = json.loads(row["input_output"])
    return {"inputs": spec["inputs"], "outputs": spec["outputs"], "fn_name": spec.get("fn_name")}


def kodcode_official(code: str, test: str, timeout: float = KODCODE_TIMEOUT) -> dict[str, Any]:
    """KodCode's verdict (KodCode-AI/kodcode ``pipeline/run_test.sh``, files written by
    ``pipeline/step2.2_gen_unit_tests.py``): ``solution.py`` is the code, ``test_solution.py`` is
    ``"from solution import *\\n\\n" + test``; ``pytest --rootdir=.`` runs in that directory under a 30 s
    ``timeout``; passed exactly when pytest's exit status is 0 (skipped and xfailed tests do not fail it; an error at
    collection, no test collected or the timeout do). Real pytest, in a subprocess, in a temporary directory outside
    the repository removed afterwards; third-party plugins off (the official environment adds only pytest-cov, whose
    coverage report does not change the status)."""
    with tempfile.TemporaryDirectory(prefix="trl-sandbox-agreement-") as tmp:
        Path(tmp, "solution.py").write_text(code)
        Path(tmp, "test_solution.py").write_text("from solution import *\n\n" + test)
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
               "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8"}
        try:
            run = subprocess.run([sys.executable, "-m", "pytest", "--rootdir=.", "-q", "-p", "no:cacheprovider"],
                                 check=False, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout,
                                 stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return {"passed": False, "error": f"pytest timed out ({timeout} s)"}
    if run.returncode == 0:
        return {"passed": True, "error": ""}
    tail = [x for x in run.stdout.splitlines() if x.strip()]
    return {"passed": False, "error": f"pytest exit status {run.returncode}: {tail[-1] if tail else ''}"[:240],
            "detail": pytest_reason(run.stdout), "output": run.stdout[-3000:]}


def pytest_reason(stdout: str) -> str:
    """The first reason pytest's ``-q`` report gives for a failure: the first line of its short summary
    (``FAILED test_solution.py::test_x - AssertionError: ...``), with the first ``E   `` line where that line gives
    no reason (``ERROR test_solution.py``: an error at collection); else its last line."""
    lines = [x for x in stdout.splitlines() if x.strip()]
    summary = [x for x in lines if x.startswith(("FAILED ", "ERROR "))]
    if summary and " - " in summary[0]:
        return summary[0][:300]
    reasons = [x[1:].strip() for x in lines if x.startswith("E ") and x[1:].strip()]
    if reasons:
        return (f"{summary[0]} - " if summary else "") + reasons[0][:300]
    return (summary or lines[-1:] or [""])[0][:300]


def run_contest_oracles(scorer: Scorer, jobs: list[dict[str, Any]], progress: Any) -> list[dict[str, Any]]:
    """The official verdicts of ``jobs`` (``{"rule", "program", "spec", "timeout", "limit"}``), each job's oracle
    run in a sandbox of the scorer's pool (the program is untrusted); no verdict back (killed, crashed, past the
    harness process's limit) is a failure, as a harness process that returns nothing is."""
    oracle = contest_oracle()
    results: list[dict[str, Any]] = [{}] * len(jobs)

    async def all_of_them() -> None:
        limiter = anyio.CapacityLimiter(scorer.pool.size)

        async def one(i: int) -> None:
            job = jobs[i]
            request = json.dumps({k: job[k] for k in ("rule", "program", "spec", "timeout")}).encode()
            async with limiter, scorer.pool.lease(timeout_s=600) as lease:
                sandbox = lease.sandbox
                run = await scorer.pool.backend.exec(sandbox, [*sandbox.python, "-c", oracle], stdin=request,
                                                     timeout_s=job["limit"] + 2.0)
            try:
                results[i] = json.loads(run.stdout)
            except ValueError:
                reason = "past the harness process's limit" if run.timed_out else f"exit {run.exit_code}"
                results[i] = {"passed": False, "error": f"no verdict ({reason}): {run.stderr[-200:]!r}"}
            progress()

        async with anyio.create_task_group() as tg:
            for i in range(len(jobs)):
                tg.start_soon(one, i)

    if jobs:
        scorer.pool.run(all_of_them, timeout_s=3600)
    return results


def row_id(dataset: str, row: dict[str, Any]) -> str:
    if dataset == "apps":
        return str(row["problem_id"])
    if dataset == "taco":
        return row["url"].rstrip("/").rsplit("/", 2)[-2] + "/" + row["url"].rstrip("/").rsplit("/", 1)[-1]
    return str(row["question_id"])


class Progress:
    """Progress lines on stderr: ``label done/total`` every ``step`` items and at the end."""

    def __init__(self, label: str, total: int, step: int = 20) -> None:
        self.label, self.total, self.step, self.done = label, total, step, 0
        self.start = time.perf_counter()

    def __call__(self, *_: Any) -> None:
        self.done += 1
        if self.done % self.step == 0 or self.done == self.total:
            print(f"  {self.label}: {self.done}/{self.total} ({time.perf_counter() - self.start:.0f} s)",
                  file=sys.stderr, flush=True)


def contests(names: list[str], pool_size: int | None, list_all: bool = False) -> None:
    """``--datasets``: every (row, variant) of :mod:`agreement_rows` scored by trl-sandbox (``Task.from_row(row)``,
    the default config, the local backend) and by the restated official rule; a table per dataset, then every
    disagreement."""
    import agreement_rows

    start = time.perf_counter()
    entries = agreement_rows.entries(tuple(names))
    samples = [(entry, variant) for entry in entries for variant in entry["variants"]]
    print(f"{len(entries)} rows, {len(samples)} completions ({', '.join(names)})", file=sys.stderr, flush=True)
    tasks: list[Any] = []
    for entry in entries:
        try:
            task: Any = Task.from_row(entry["row"])
        except TaskFormatError as e:
            task = e
        except Exception as e:  # noqa: BLE001 - a row trl-sandbox cannot read is a result too
            task = TaskFormatError(f"{type(e).__name__}: {e}")
        tasks += [task] * len(entry["variants"])
    codes = [extract_code(variant["completion"], task.entry_points if isinstance(task, Task) else ())
             for (entry, variant), task in zip(samples, tasks)]
    config = SandboxConfig() if pool_size is None else SandboxConfig(sandbox_pool_size=pool_size)
    official: list[dict[str, Any]] = [{}] * len(samples)
    with Scorer.from_config(config) as scorer:
        jobs, where = [], []
        kodcode = []
        for i, ((entry, _), code) in enumerate(zip(samples, codes)):
            dataset = entry["dataset"]
            if dataset == "kodcode":
                kodcode.append(i)
                continue
            spec = official_spec(dataset, entry["row"])
            jobs.append({"rule": dataset, "program": code, "spec": spec, "timeout": TEST_TIMEOUT[dataset],
                         "limit": process_limit(dataset, len(spec["inputs"]))})
            where.append(i)
        progress = Progress("official (sandboxed oracles)", len(jobs))
        for i, result in zip(where, run_contest_oracles(scorer, jobs, progress)):
            official[i] = result
        progress = Progress("official (KodCode pytest)", len(kodcode), step=10)
        with ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1))) as threads:
            futures = {threads.submit(kodcode_official, codes[i], samples[i][0]["row"]["test"]): i for i in kodcode}
            for future, i in futures.items():
                official[i] = future.result()
                progress()
        progress = Progress("trl-sandbox", len(samples))
        ours = scorer.score(tasks, [variant["completion"] for _, variant in samples], on_result=progress)
    table_rows, disagreements = [], []
    for name in names:
        picked = [i for i, (entry, _) in enumerate(samples) if entry["dataset"] == name]
        agree = sum(official[i]["passed"] == ours[i].passed for i in picked)
        table_rows.append({
            "dataset": name, "rows": sum(e["dataset"] == name for e in entries), "completions": len(picked),
            "official passed": sum(official[i]["passed"] for i in picked),
            "trl-sandbox passed": sum(ours[i].passed for i in picked), "agree": agree,
            "agreement %": round(100 * agree / max(1, len(picked)), 1),
            "statuses": dict(Counter(ours[i].status for i in picked))})
        for i in picked:
            if official[i]["passed"] != ours[i].passed:
                entry, variant = samples[i]
                disagreements.append({
                    "dataset": name, "row": row_id(name, entry["row"]), "variant": variant["name"],
                    "official": "passed" if official[i]["passed"] else "failed: " + str(official[i].get("error")),
                    "trl-sandbox": f"{ours[i].status} (reward {ours[i].reward})",
                    "trl-sandbox error": str(ours[i].error or "")})
    if list_all:
        listing = [{"dataset": entry["dataset"], "row": row_id(entry["dataset"], entry["row"]),
                    "variant": variant["name"], "official": "passed" if official[i]["passed"] else "failed",
                    "trl-sandbox": ours[i].status, "agree": "" if official[i]["passed"] == ours[i].passed else "NO"}
                   for i, (entry, variant) in enumerate(samples)]
        print(table(listing, ["dataset", "row", "variant", "official", "trl-sandbox", "agree"]))
        print()
    print(table(table_rows, ["dataset", "rows", "completions", "official passed", "trl-sandbox passed", "agree",
                             "agreement %"]))
    print()
    print(table(table_rows, ["dataset", "statuses"]))
    print()
    print(f"{len(disagreements)} disagreements")
    if disagreements:
        for d in disagreements:
            for key in ("official", "trl-sandbox error"):
                d[key] = " ".join(d[key].split()).replace("|", "\\|")[:160]
        print(table(disagreements, ["dataset", "row", "variant", "official", "trl-sandbox", "trl-sandbox error"]))
    print(f"\n{time.perf_counter() - start:.0f} s", file=sys.stderr)


# -- KodCode's demo pairs: trl-sandbox against the verdicts KodCode recorded ---------------------------------------
#
# KodCode-AI/kodcode publishes, under ``demo/``, the test directories its pipeline ran: one directory per (solution,
# test file) pair, ``<experiment>/<verification>_<experiment>/<problem>/trial_<model>_<n>/``, holding ``solution.py``,
# ``test_solution.py`` (``"from solution import *\n\n" + test_code``), ``run_test.sh``, ``data.json`` (what the
# pair was made from) and ``test_result.txt``, the recorded verdict: ``Pass``, ``Fail`` or ``Fail - Timed Out`` on
# its first line (pytest's exit status 0, non-zero, or ``timeout 30`` firing), then ``Coverage: N%``
# (``pytest --cov=solution``). Two kinds of pairs:
#
# - ``self_verification_*`` (``pipeline/step2.2_gen_unit_tests.py``): a question's solution and test file written
#   together by the generating model (``data.json``: ``instruction``, ``solution_code``, ``test_code``,
#   ``metadata``); the pairs that pass make the dataset's rows (``step2.4_gen_verified_triplets.py``,
#   ``step3.2_combine_kodcode.py``);
# - ``cross_verification_*`` (``step3.3.3_gen_unit_tests_sft.py``): a published row (``data.json``: ``question``,
#   ``solution``, ``test_code``, ``test_info``, ``gpt_pass_*``, ``metadata``...) and a reasoning model's answer
#   (``r1_solution``: the first fenced block after ``</think>``, its one function renamed to the row's
#   ``test_info`` name), run against the row's test file.
#
# Each pair becomes a KodCode-V1 row as the dataset publishes it (``test`` is ``test_code``; a self-verification
# pair's ``test_info`` is computed as ``step3.2_combine_kodcode.py`` computes it, its ``gpt_pass_*`` from its
# problem's recorded trials; fields the pair's files do not hold are None), and its program is scored by trl-sandbox
# (``Task.from_row(row)``, the default config, the local backend). Where our verdict is not the recorded one, the
# official harness (:func:`kodcode_official`) runs the pair again here: if it now gives our verdict, the recorded
# run's environment differed (packages, their versions, the machine's speed); if it gives the recorded one, the
# disagreement is trl-sandbox's departure.

KODCODE_DEMO_FILES = ("data.json", "test_result.txt")
KODCODE_SUBSETS = (("prefill", "Prefill"), ("package", "Package"), ("evol", "Evol"), ("codeforces", "Codeforces"),
                   ("leetcode", "Leetcode"), ("apps", "Apps"), ("taco", "Taco"), ("code_contests", "Code_Contests"),
                   ("algorithm", "Algorithm"), ("data_structure", "Data_Structure"), ("docs", "Docs"))
#: The fields of a KodCode-V1 row (huggingface.co/datasets/KodCode/KodCode-V1).
KODCODE_FIELDS = ("style", "subset", "question_id", "question", "solution", "test", "test_info", "gpt_pass_sequence",
                  "gpt_pass_trial_num", "gpt_difficulty", "gpt_pass_percentage", "trials", "chosen_trial", "metadata",
                  "benchmark_similarity", "benchmark_instruction", "benchmark_task_id", "filter_reason")


def kodcode_subset(mode: str) -> str:
    """The row's ``subset`` for a generation ``mode`` (KodCode ``pipeline/utils.py``, ``get_mode``)."""
    for key, name in KODCODE_SUBSETS:
        if key in mode.lower():
            return name
    return mode


def kodcode_test_info(solution: str) -> list[dict[str, Any]] | None:
    """A row's ``test_info`` (KodCode ``step3.2_combine_kodcode.py`` and ``pipeline/utils.py``,
    ``extract_function_info_from_ast``): None when the solution holds ``"class "`` or ``"__init__"``; else every
    ``def`` of the solution's syntax tree (``ast.walk``, nested ones and methods included) as its name, its
    parameter list as written (defaults unparsed, ``*args``, keyword-only, ``**kwargs``; annotations dropped), its
    declaration and its docstring; ``[]`` when the solution does not parse."""
    import ast

    if "class " in solution or "__init__" in solution:
        return None
    try:
        tree = ast.parse(solution)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        a = node.args
        params, offset = [], len(a.args) - len(a.defaults)
        for i, arg in enumerate(a.args):
            params.append(f"{arg.arg}={ast.unparse(a.defaults[i - offset])}" if i >= offset else arg.arg)
        if a.vararg:
            params.append(f"*{a.vararg.arg}")
        for i, arg in enumerate(a.kwonlyargs):
            default = a.kw_defaults[i] if i < len(a.kw_defaults) else None
            params.append(f"{arg.arg}={ast.unparse(default)}" if default is not None else arg.arg)
        if a.kwarg:
            params.append(f"**{a.kwarg.arg}")
        signature = f"({', '.join(params)})"
        out.append({"function_name": node.name, "parameter_list": signature,
                    "function_declaration": f"def {node.name}{signature}:", "docstring": ast.get_docstring(node)})
    return out


def kodcode_demo_files(source: str) -> dict[str, dict[str, str]]:
    """The ``data.json`` and ``test_result.txt`` of every test directory under ``source``: a checkout of
    KodCode-AI/kodcode (or any folder holding its test directories), or its git directory (read at ``HEAD``, as
    ``git show`` would). Returns ``{directory path: {file name: text}}``, the paths relative to ``source``."""
    root = Path(source)
    found: dict[str, dict[str, str]] = {}
    if (root / "objects").is_dir() and (root / "HEAD").is_file():  # a git directory: read HEAD's tree
        git = ["git", f"--git-dir={root}"]
        listing = subprocess.run([*git, "ls-tree", "-r", "-z", "HEAD"], check=True, capture_output=True).stdout
        wanted = []
        for entry in listing.decode().split("\0"):
            if not entry:
                continue
            meta, path = entry.split("\t", 1)
            parent, _, name = path.rpartition("/")
            if name in KODCODE_DEMO_FILES and meta.split()[1] == "blob" and "/trial_" in "/" + parent:
                wanted.append((parent, name, meta.split()[2]))
        blobs = subprocess.run([*git, "cat-file", "--batch"], check=True, capture_output=True,
                               input="".join(sha + "\n" for *_, sha in wanted).encode()).stdout
        at = 0
        for parent, name, sha in wanted:
            header_end = blobs.index(b"\n", at)
            got_sha, _, size = blobs[at:header_end].decode().split()
            assert got_sha == sha, (got_sha, sha)
            start = header_end + 1
            found.setdefault(parent, {})[name] = blobs[start:start + int(size)].decode("utf-8", "replace")
            at = start + int(size) + 1
    else:
        for result in sorted(root.rglob("test_result.txt")):
            folder = result.parent
            if not folder.name.startswith("trial_"):
                continue
            files = {name: (folder / name).read_text(encoding="utf-8", errors="replace")
                     for name in KODCODE_DEMO_FILES if (folder / name).is_file()}
            found[folder.relative_to(root).as_posix()] = files
    return {k: v for k, v in found.items() if set(v) == set(KODCODE_DEMO_FILES)}


def recorded_verdict(text: str) -> str:
    """The first line of ``test_result.txt`` (``Pass``, ``Fail``, ``Fail - Timed Out``), as
    ``step2.4_gen_verified_triplets.py`` reads it; a pair passed exactly when it is ``Pass``."""
    lines = text.strip().split("\n")
    return lines[0].strip() if lines else ""


def kodcode_demo_pairs(source: str) -> list[dict[str, Any]]:
    """The (row, program, recorded verdict) of every test directory under ``source`` (see
    :func:`kodcode_demo_files`), sorted by id: ``self/<experiment>/<problem>/<trial>`` or
    ``cross/<experiment>/<question_id>/<trial>`` (the experiment without ``KodCode_`` and its time stamp)."""
    files = kodcode_demo_files(source)
    by_problem: dict[str, list[str]] = {}
    for path in files:
        by_problem.setdefault(path.rsplit("/", 1)[0], []).append(path)
    pairs = []
    for path, got in files.items():
        data = json.loads(got["data.json"])
        recorded = recorded_verdict(got["test_result.txt"])
        parts = path.split("/")
        problem, trial = parts[-2], parts[-1]
        cross = "r1_solution" in data
        experiment = re.sub(r"^(self|cross)_verification_", "", parts[-3] if len(parts) >= 3 else "")
        experiment = re.sub(r"_\d{9,}$", "", experiment.replace("SFT_", "").replace("KodCode_", ""))
        pair_id = f"{'cross' if cross else 'self'}/{experiment}/{problem}/{trial}"
        if cross:
            row: dict[str, Any] = {field: data.get(field) for field in KODCODE_FIELDS}
            row["test"] = data["test_code"]
            program = data["r1_solution"]
        else:
            metadata = data.get("metadata") or {}
            subset = kodcode_subset(str(metadata.get("mode", "")))
            sequence = [int(recorded_verdict(files[p]["test_result.txt"]) == "Pass")
                        for p in sorted(by_problem[path.rsplit("/", 1)[0]])]
            share = sum(sequence) / len(sequence)
            row = {field: None for field in KODCODE_FIELDS}
            row.update({"style": "instruct", "subset": subset,
                        "question_id": f"{subset}_{metadata.get('prompt_id', problem)}_I",
                        "question": data["instruction"], "solution": data["solution_code"], "test": data["test_code"],
                        "test_info": kodcode_test_info(data["solution_code"]), "gpt_pass_sequence": sequence,
                        "gpt_pass_trial_num": sum(sequence),
                        "gpt_difficulty": "easy" if share >= 2 / 3 else "hard" if share < 1 / 3 else "medium",
                        "gpt_pass_percentage": round(share, 3), "metadata": metadata})
            program = data["solution_code"]
        pairs.append({"id": pair_id, "path": path, "kind": "cross" if cross else "self", "row": row,
                      "program": program, "recorded": recorded, "recorded_passed": recorded == "Pass"})
    return sorted(pairs, key=lambda p: p["id"])


def first_line(text: Any) -> str:
    lines = [x.strip() for x in str(text or "").splitlines() if x.strip()]
    return lines[0] if lines else ""


def kodcode_demo_compare(scorer: Scorer, pairs: list[dict[str, Any]], rerun_all: bool = False,
                         workers: int = 2) -> list[dict[str, Any]]:
    """Score every pair's program with ``scorer`` and compare with the recorded verdict; re-run the official harness
    (``workers`` at a time) on every disagreement, or on every pair with ``rerun_all``. One result per pair: our
    verdict, the re-run's (None where not re-run), its ``class`` (``agree``; ``environment``: the re-run gives our
    verdict; ``departure``: it gives the recorded one) and ``environment_differs`` (re-run, not the recorded
    verdict)."""
    tasks: list[Any] = []
    for pair in pairs:
        try:
            tasks.append(Task.from_row(pair["row"]))
        except TaskFormatError as e:
            tasks.append(e)
        except Exception as e:  # noqa: BLE001 - a row trl-sandbox cannot read is a result too
            tasks.append(TaskFormatError(f"{type(e).__name__}: {e}"))
    changed = sum(extract_code(p["program"], t.entry_points if isinstance(t, Task) else ()) != p["program"]
                  for p, t in zip(pairs, tasks))
    if changed:
        print(f"  warning: for {changed} pairs trl-sandbox's extraction changes the program", file=sys.stderr)
    ours = scorer.score(tasks, [p["program"] for p in pairs], on_result=Progress("trl-sandbox", len(pairs), step=50))
    rerun = [i for i, p in enumerate(pairs) if rerun_all or ours[i].passed != p["recorded_passed"]]
    official: dict[int, dict[str, Any]] = {}
    progress = Progress("official (KodCode pytest, re-run)", len(rerun), step=10)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as threads:
        futures = {threads.submit(kodcode_official, pairs[i]["program"], pairs[i]["row"]["test"]): i for i in rerun}
        for future, i in futures.items():
            official[i] = future.result()
            progress()
    results = []
    for i, (pair, result) in enumerate(zip(pairs, ours)):
        again = official.get(i)
        if result.passed == pair["recorded_passed"]:
            verdict = "agree"
        else:
            verdict = "environment" if again is not None and again["passed"] == result.passed else "departure"
        results.append({
            "id": pair["id"], "path": pair["path"], "kind": pair["kind"], "question_id": pair["row"]["question_id"],
            "recorded": pair["recorded"], "recorded_passed": pair["recorded_passed"], "passed": result.passed,
            "status": result.status, "tests_passed": result.tests_passed, "tests_total": result.tests_total,
            "error": result.error, "output": result.output[-2000:], "seconds": round(result.duration_s, 2),
            "official": again, "class": verdict,
            "environment_differs": again is not None and again["passed"] != pair["recorded_passed"]})
    return results


def kodcode_demo_summary(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The table's rows: self-verification pairs, cross-verification pairs, all. "Environments match" leaves out
    the pairs whose official re-run does not give the recorded verdict; "paid, official re-run fails" counts the
    pairs trl-sandbox passes that the re-run fails."""
    summary = []
    for kind in ("self", "cross", "all"):
        picked = [r for r in results if kind in ("all", r["kind"])]
        if not picked:
            continue
        agree = sum(r["class"] == "agree" for r in picked)
        same_env = [r for r in picked if not r["environment_differs"]]
        agree_same = sum(r["class"] == "agree" for r in same_env)
        summary.append({
            "pairs": {"self": "self-verification", "cross": "cross-verification", "all": "all"}[kind],
            "count": len(picked), "recorded passed": sum(r["recorded_passed"] for r in picked),
            "trl-sandbox passed": sum(r["passed"] for r in picked), "agree": agree,
            "disagree: environment": sum(r["class"] == "environment" for r in picked),
            "disagree: trl-sandbox's departure": sum(r["class"] == "departure" for r in picked),
            "paid, official re-run fails": sum(r["passed"] and r["official"] is not None
                                                and not r["official"]["passed"] for r in picked),
            "environments match": len(same_env),
            "agreement % (environments match)": f"{100 * agree_same / max(1, len(same_env)):.2f}",
            "agreement % (all)": f"{100 * agree / len(picked):.2f}"})
    return summary


def kodcode_demo(source: str, pool_size: int | None, limit: int | None, match: str | None, rerun_all: bool,
                 json_path: str | None) -> None:
    """``--kodcode-demo``: KodCode's recorded verdicts against trl-sandbox's (the default config, the local
    backend), the official harness re-run on every disagreement (on every pair with ``rerun_all``); a table by kind
    of pair, then every disagreement."""
    start = time.perf_counter()
    pairs = kodcode_demo_pairs(source)
    if match:
        pairs = [p for p in pairs if re.search(match, p["id"])]
    if limit is not None:
        pairs = pairs[:limit]
    if not pairs:
        raise SystemExit(f"no KodCode test directory (data.json + test_result.txt) under {source}")
    print(f"{len(pairs)} KodCode demo pairs from {source}", file=sys.stderr, flush=True)
    config = SandboxConfig() if pool_size is None else SandboxConfig(sandbox_pool_size=pool_size)
    with Scorer.from_config(config) as scorer:
        results = kodcode_demo_compare(scorer, pairs, rerun_all,
                                       workers=min(2, pool_size or 2, os.cpu_count() or 1))
    summary = kodcode_demo_summary(results)
    print(table(summary, ["pairs", "count", "recorded passed", "trl-sandbox passed", "agree", "disagree: environment",
                          "disagree: trl-sandbox's departure", "paid, official re-run fails", "environments match",
                          "agreement % (environments match)", "agreement % (all)"]))
    print()
    print(table([{"pairs": "all", "statuses": dict(Counter(r["status"] for r in results))}], ["pairs", "statuses"]))
    if rerun_all:
        drift = sum(r["environment_differs"] for r in results)
        print(f"\nofficial harness re-run on all {len(results)} pairs: {drift} differ from the recorded verdict")
    disagreements = [r for r in results if r["class"] != "agree"]
    print(f"\n{len(disagreements)} disagreements")
    if disagreements:
        listing = [{"pair": r["id"], "class": r["class"], "recorded": r["recorded"],
                    "official re-run": ("passed" if r["official"]["passed"] else
                                        "failed: " + first_line(r["official"].get("detail") or r["official"]["error"])),
                    "trl-sandbox": f"{r['status']} {r['tests_passed']}/{r['tests_total']}: {first_line(r['error'])}"}
                   for r in disagreements]
        for d in listing:
            for key in ("official re-run", "trl-sandbox"):
                d[key] = " ".join(d[key].split()).replace("|", "\\|")[:180]
        print(table(listing, ["pair", "class", "recorded", "official re-run", "trl-sandbox"]))
    if json_path:
        Path(json_path).write_text(json.dumps({"source": str(source), "summary": summary, "pairs": results},
                                              indent=1, default=str))
        print(f"per-pair results: {json_path}", file=sys.stderr)
    print(f"\n{time.perf_counter() - start:.0f} s", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--humaneval", action="append", default=[], help="HumanEval samples (repeatable).")
    parser.add_argument("--mbpp", help="sanitized-mbpp.json (google-research/mbpp): its references are scored too.")
    parser.add_argument("--mbpp-samples", action="append", default=[],
                        help="MBPP samples (repeatable): task ids 'N' or 'mbpp_N_name'; MultiPL-E rows if present.")
    parser.add_argument("--pool-size", type=int, default=None)
    parser.add_argument("--show", type=int, default=10, help="Disagreements to print per set (stderr).")
    parser.add_argument("--datasets", help="Comma-separated among apps, taco, lcb (livecodebench), kodcode: the "
                        "hand-written rows of agreement_rows.py against the restated official rules.")
    parser.add_argument("--contests", action="store_true", help="Same as --datasets apps,taco,lcb,kodcode.")
    parser.add_argument("--list", action="store_true", help="With --datasets: list every completion's verdicts.")
    parser.add_argument("--kodcode-demo", metavar="PATH", help="KodCode's demo pairs (KodCode-AI/kodcode: a "
                        "checkout, its demo/ folder or its git directory) against the verdicts KodCode recorded.")
    parser.add_argument("--limit", type=int, default=None, help="With --kodcode-demo: the first N pairs (by id).")
    parser.add_argument("--match", help="With --kodcode-demo: only the pairs whose id matches this regex.")
    parser.add_argument("--rerun-all", action="store_true",
                        help="With --kodcode-demo: re-run the official harness on every pair, not only disagreements.")
    parser.add_argument("--json", help="With --kodcode-demo: write every pair's results to this file.")
    args = parser.parse_args()

    if args.kodcode_demo:
        kodcode_demo(args.kodcode_demo, args.pool_size, args.limit, args.match, args.rerun_all, args.json)
        if not (args.contests or args.datasets or args.humaneval or args.mbpp or args.mbpp_samples):
            return

    if args.contests or args.datasets:
        import agreement_rows

        names = [x.strip().lower() for x in (args.datasets or "apps,taco,lcb,kodcode").split(",") if x.strip()]
        unknown = [x for x in names if x not in agreement_rows.ALIASES]
        if unknown:
            parser.error(f"unknown dataset(s) {unknown}; known: apps, taco, lcb, kodcode")
        contests(list(dict.fromkeys(agreement_rows.ALIASES[x] for x in names)), args.pool_size, args.list)
        if not (args.humaneval or args.mbpp or args.mbpp_samples):
            return

    config = SandboxConfig(sandbox_pool_size=args.pool_size, sandbox_test_timeout=5.0,
                           sandbox_completion_timeout=30.0)
    rows_out: list[dict[str, Any]] = []
    evidence: list[dict[str, Any]] = []
    with Scorer.from_config(config) as scorer:
        humaneval = {r["task_id"]: r for r in load_tasks("humaneval")}
        he_samples = [s for path in args.humaneval for s in read_samples(path) if s["task_id"] in humaneval]
        if he_samples:
            he_rows = [humaneval[s["task_id"]] for s in he_samples]
            rows_out += compare(scorer, "HumanEval", he_rows, he_samples, args.show)
            evidence.append({"set": "HumanEval", **block_evidence(scorer, he_rows, he_samples)})
        mbpp: dict[str, dict[str, Any]] = {}
        if args.mbpp:
            text = Path(args.mbpp).read_text()
            records = json.loads(text) if text.lstrip().startswith("[") else [json.loads(x) for x in text.splitlines()]
            mbpp = {str(r["task_id"]): r for r in records}
            references = scorer.score([Task.from_row(r) for r in mbpp.values()], [r["code"] for r in mbpp.values()])
            failing = [r.task_id for r in references if not r.passed]
            rows_out.append({"set": "sanitized MBPP references", "prompts": "-", "completions": len(references),
                             "trl-sandbox passed": len(references) - len(failing),
                             "statuses": dict(Counter(r.status for r in references))})
            if failing:
                print(f"  MBPP references failing: {failing}", file=sys.stderr)
        mbpp_samples = [s for path in args.mbpp_samples for s in read_samples(path)]
        multipl = [s for s in mbpp_samples if s.get("row")]
        if multipl:
            rows = [s["row"] for s in multipl]
            rows_out += compare(scorer, "MBPP (MultiPL-E rows)", rows, multipl, args.show)
            evidence.append({"set": "MBPP (MultiPL-E rows)", **block_evidence(scorer, rows, multipl)})
        if mbpp and mbpp_samples:
            numbered = []
            for s in mbpp_samples:
                match = re.match(r"(?:mbpp_)?(\d+)", s["task_id"])
                if match and match.group(1) in mbpp:
                    numbered.append({**s, "task_id": match.group(1)})
            if numbered:
                rows = [mbpp[s["task_id"]] for s in numbered]
                rows_out += compare(scorer, "sanitized MBPP", rows, numbered, args.show)
    print(table(rows_out, ["set", "prompts", "completions", "official passed", "trl-sandbox passed", "agree",
                           "agreement %", "seconds"]))
    print()
    print(table(rows_out, ["set", "prompts", "statuses"]))
    if evidence:
        print()
        print(table(evidence, ["set", "multi-block completions", "first block passes", "last block passes",
                               "trl-sandbox's block passes"]))


if __name__ == "__main__":
    main()
