"""Helpers for the official-verdict tests (``tests/test_official_*.py``): the reward called exactly as TRL calls it.

Each of those tests writes its dataset rows field for field as the dataset publishes them, gives a correct and a wrong
program as an instruct model answers (an assistant message with a fenced block), and states the official harness's
verdict, computed by reading that harness's source (named in the test), never by trl-sandbox.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from trl_sandbox import Scorer, code_reward


def as_assistant(program: str) -> list[dict[str, str]]:
    """A conversational completion: the program in a fenced block of an assistant message, with prose around it."""
    return [{"role": "assistant", "content": f"Here is my solution.\n\n```python\n{program.strip()}\n```\n\nDone."}]


def trl_rewards(scorer: Any, row: dict[str, Any], programs: list[str], **reward_kwargs: Any) -> list[float | None]:
    """Score ``programs`` against one published ``row`` through ``code_reward`` as TRL's ``GRPOTrainer`` calls a
    reward function: ``prompts`` (conversational), ``completions`` (assistant messages), ``completion_ids`` and every
    other dataset column as a keyword list, one entry per completion."""
    n = len(programs)
    columns = {k: [v] * n for k, v in row.items() if k != "prompt"}
    prompts = [[{"role": "user", "content": str(row.get("prompt") or row.get("question") or "Solve the task.")}]] * n
    metrics: dict[str, Any] = {}
    reward = code_reward.bind(scorer)
    return reward(prompts=prompts, completions=[as_assistant(p) for p in programs], completion_ids=[[1]] * n,
                  log_metric=metrics.__setitem__, **columns, **reward_kwargs)


def computing_echo(seconds: float) -> str:
    """A stdin program that computes for ``seconds`` of its own CPU time, then echoes its input line. Limits are on
    CPU time, which the official harnesses' wall clock measures on an idle machine; a program that sleeps is cut only by
    the wall-clock backstop (docs/datasets.md, "Time per test")."""
    return (f"import time\nn = input()\nt = time.process_time()\nwhile time.process_time() - t < {seconds}:\n"
            f"    pass\nprint(n)")


@contextlib.contextmanager
def local_or_remote_harness(local: bool, sandbox_root: Any) -> Iterator[Scorer]:
    """A started scorer (2 sandboxes, 1 s a test): the local backend's (in ``sandbox_root``), or one that runs the
    harness as remote backends do (the mock backend, unsandboxed)."""
    from trl_sandbox import SandboxConfig
    from trl_sandbox.backends.mock import MockBackend
    from trl_sandbox.testing import run_unsandboxed

    config = SandboxConfig(sandbox_pool_size=2, sandbox_test_timeout=1.0,
                           sandbox_backend_options={"root_dir": str(sandbox_root)} if local else None)
    with Scorer.from_config(config, backend=None if local else MockBackend(handler=run_unsandboxed)) as scorer:
        yield scorer
