"""Test helpers: drive trl-sandbox's scoring and trainer from pytest with no sandbox at all.

This module is a pytest plugin (registered under the ``pytest11`` entry point), so installing trl-sandbox gives
every test suite the :func:`mock_sandbox_backend` fixture::

    def test_my_reward(mock_sandbox_backend):
        mock_sandbox_backend.handler = lambda req: harness_reply(req, passed=True)
        config = SandboxGRPOConfig(..., sandbox_backend="mock")

Handlers receive a :class:`~trl_sandbox.backends.mock.ExecRequest`; :func:`harness_reply` builds the harness's
answer for it, and :func:`run_unsandboxed` really runs it (trusted code only: no isolation).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from .backends.base import ExecResult
from .backends.mock import ExecRequest, MockBackend, install, uninstall
from .harness.archive import HARNESS_NAME, harness_files
from .harness.compare import same_stdout, same_value
from .harness.values import decode, encode

__all__ = ["ExecRequest", "MockBackend", "harness_reply", "mock_sandbox_backend", "run_unsandboxed"]


def harness_reply(
    request: ExecRequest,
    *,
    passed: bool | Sequence[bool] | None = None,
    outputs: Sequence[Any] | None = None,
    load_error: str | None = None,
    timed_out: bool = False,
    duration_s: float = 0.001,
) -> ExecResult:
    """The :class:`ExecResult` the real harness would give for ``request``.

    Args:
        request: The handler's request (must run the harness).
        passed: ``assert`` tasks (HumanEval, MBPP): whether each test passed (one bool for all tests).
        outputs: ``call`` tasks: the function's return value per test; ``stdio`` tasks: the stdout text per test
            (compared with the request's expected values as the real harness compares them).
        load_error: The program fails to load with this message.
        timed_out: The whole run went past its timeout (nothing else is reported).
        duration_s: Reported duration, seconds.

    Raises:
        ValueError: ``request`` does not run the harness, or the arguments do not fit its mode.
    """
    harness = request.harness
    if harness is None:
        raise ValueError("this request does not run the trl-sandbox harness")
    if timed_out:
        return ExecResult(None, b'{"ready": true}\n', b"", duration_s, timed_out=True)
    records: list[dict[str, Any]] = [{"ready": True}]
    n = len(harness["tests"])
    if load_error is not None:
        records.append({"load": "error", "error": load_error})
    elif harness["mode"] == "assert":
        flags = [passed] * n if isinstance(passed, bool) or passed is None else list(passed)
        if len(flags) != n:
            raise ValueError(f"{len(flags)} pass flags for {n} tests")
        records += [{"i": i, "ok": bool(ok)} for i, ok in enumerate(flags)]
    elif harness["mode"] in ("call", "stdio"):
        if outputs is None or len(outputs) != n:
            raise ValueError(f"{harness['mode']} mode needs `outputs` with one value per test ({n})")
        expected = harness.get("expected") or []
        for i, out in enumerate(outputs):
            if harness["mode"] == "call":
                ok = i < len(expected) and same_value(decode(encode(out)), decode(expected[i]))
            else:
                ok = i < len(expected) and same_stdout(str(out), expected[i])
            records.append({"i": i, "ok": ok} if ok else {"i": i, "ok": False, "error": "wrong output"})
    else:
        raise ValueError(f"harness_reply does not answer {harness['mode']!r} requests; use run_unsandboxed")
    if load_error is None:
        records.append({"done": n})
    stdout = "".join(json.dumps(r) + "\n" for r in records).encode()
    return ExecResult(0, stdout, b"", duration_s)


def run_unsandboxed(request: ExecRequest) -> ExecResult:
    """Run the harness request for real in a plain subprocess of this interpreter, WITHOUT any isolation.

    For tests whose completions are trusted (known solutions); it lets a mock-backed test exercise the real
    harness and judging. Honours ``request.timeout_s`` (the result is ``timed_out``).
    """
    with tempfile.TemporaryDirectory() as tmp:
        harness = Path(tmp) / HARNESS_NAME
        harness.write_bytes(harness_files()[HARNESS_NAME])
        try:
            proc = subprocess.run(
                [sys.executable, "-I", "-S", str(harness)],
                input=request.stdin,
                capture_output=True,
                cwd=tmp,
                timeout=request.timeout_s,
                env={"PATH": "/usr/bin:/bin"},
            )
        except subprocess.TimeoutExpired as exc:
            return ExecResult(None, exc.stdout or b"", exc.stderr or b"", request.timeout_s, timed_out=True)
    return ExecResult(proc.returncode, proc.stdout, proc.stderr, 0.0)


@pytest.fixture
def mock_sandbox_backend() -> Iterator[MockBackend]:
    """A fresh :class:`MockBackend`, installed as the ``"mock"`` backend for the test's duration.

    Set ``.handler`` in the test. After the test, ``.live`` lists the sandboxes not deleted.
    """
    backend = MockBackend()
    install(backend)
    try:
        yield backend
    finally:
        uninstall(backend)
