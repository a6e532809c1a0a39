"""Sandboxes as tools during rollouts: a code-interpreter environment for TRL's ``environment_factory``.

TRL's ``GRPOTrainer(environment_factory=...)`` (TRL >= 1.16) makes one environment per rollout, calls
``reset(**row)`` before each generation, exposes the environment's public methods as tools the model calls between
turns, and calls ``get_reward()`` when the rollout is over. :class:`CodeEnvironment` gives each rollout:

- ``python(code)``: a persistent Python session in a sandbox of its own (variables, imports and scratch files
  persist between calls), with the isolation of scoring (see ``docs/security.md``);
- ``submit(code)``: records the solution; a summary of the row's visible tests when it has some;
- ``get_reward()``: the last submission scored against all of the task's tests by :func:`trl_sandbox.code_reward`'s
  judge and reward mode.

Sessions live in sandboxes of the scoring pool's backend, created as rollouts need them (at most
``sandbox_max_sessions`` at once), kept for the next rollouts, and deleted with the pool: at the end of ``train()``,
on a crash or SIGTERM, or at the end of :meth:`CodeEnvironment.factory`'s ``with`` block. A rollout's session ends at
the next ``reset``, after ``get_reward``, or when the pool closes, whichever comes first.

TRL runs the tool calls of a turn one rollout after another. :class:`~trl_sandbox.trainer.SandboxGRPOTrainer` runs
them all at once (:meth:`CodeEnvironment.run_tool_calls`), so a turn of 64 rollouts costs about one call's latency.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from .config import SandboxConfig
from .errors import InfrastructureError, TaskFormatError
from .harness.archive import HARNESS_NAME
from .loading import decode_row
from .scoring import Scorer, ScoreResult, active_scorer, set_active_scorer
from .tasks import Task

__all__ = ["CodeEnvironment", "ToolStats", "environment_metrics", "rewards_of"]

logger = logging.getLogger("trl_sandbox")

#: Seconds a rollout waits for a session sandbox when every one is in use.
SESSION_WAIT_S = 120.0
#: Seconds past a cell's own timeout before its session is killed (a cell that ignores the interrupt).
SESSION_GRACE_S = 3.0
#: Longest life of a session process (seconds): a rollout that outlives it gets a new session.
SESSION_LIFETIME_S = 3600.0
#: Seconds a session process may take to start (a remote service's command API included).
SESSION_START_S = 60.0
#: Seconds a session asked to end has to end by itself (its remote supervisor then cleans up) before it is killed
#: and its sandbox deleted rather than reused.
SESSION_END_S = 15.0

_PREFETCH_HOOK: list[Callable[[], None] | None] = [None]


@dataclass
class ToolStats:
    """What one rollout did with its tools (reset at each ``reset``).

    Attributes:
        calls: Tool calls (``python`` and ``submit``).
        errors: ``python`` calls whose code raised, and tool calls that failed (a bad argument, a lost session).
        timeouts: ``python`` calls that ran past ``sandbox_tool_timeout``.
        seconds: Wall-clock seconds of each tool call.
        submissions: ``submit`` calls.
    """

    calls: int = 0
    errors: int = 0
    timeouts: int = 0
    seconds: list[float] = field(default_factory=list)
    submissions: int = 0


class _Session:
    """One rollout's interpreter: a ``harness.pyz session`` process in a sandbox of its own (see
    :func:`trl_sandbox.harness.session.session_main`)."""

    def __init__(self, scorer: Scorer, sandbox: Any, process: Any, isolated: bool) -> None:
        self.scorer, self.sandbox, self.process = scorer, sandbox, process
        #: Whether the next session in this sandbox starts clean; when not, the sandbox is not reused.
        self.isolated = isolated
        self.alive = True

    @classmethod
    async def open(cls, scorer: Scorer) -> _Session:
        pool = scorer.pool
        sandbox = await pool.acquire_session_sandbox(timeout_s=SESSION_WAIT_S)
        process = None
        try:
            argv = [*sandbox.python, f"{sandbox.workdir}/{HARNESS_NAME}", "session"]
            process = await pool.backend.open_process(sandbox, argv, timeout_s=SESSION_LIFETIME_S)
            with anyio.fail_after(SESSION_START_S):
                hello = json.loads(await process.receive_line(1 << 12))
            if not isinstance(hello, dict) or hello.get("ready") is not True:
                raise InfrastructureError(f"the session process did not start: {hello!r:.200}")
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                if process is not None:
                    with contextlib.suppress(Exception):
                        await process.kill()
                await pool.release_session_sandbox(sandbox, broken=True)
            if isinstance(exc, TimeoutError):
                raise InfrastructureError(f"the session process did not start within {SESSION_START_S:g} s") from None
            if isinstance(exc, ValueError):
                raise InfrastructureError(f"the session process did not start: {exc}") from None
            raise
        isolated = bool(hello.get("isolated"))
        if not isolated and not _WARNED_NOT_ISOLATED:
            _WARNED_NOT_ISOLATED.append(True)
            logger.warning(
                "%s: the sandbox's user is not root, so a session cannot clean up after itself there; each "
                "CodeEnvironment rollout gets a new sandbox (slower). Run the sandboxes as root for reuse (see "
                "docs/environment.md#remote-backends)", pool.backend.name)
        return cls(scorer, sandbox, process, isolated)

    async def run(self, code: str, timeout_s: float, limit: int) -> dict[str, Any]:
        """Run one cell; its reply (``out``, ``error``, ``timed_out``, ``truncated``), or ``{"lost": reason}`` when the
        session died or had to be killed (it is then closed)."""
        data = json.dumps({"code": code, "timeout": timeout_s, "limit": limit}).encode() + b"\n"
        try:
            with anyio.fail_after(timeout_s + SESSION_GRACE_S):
                await self.process.send(data)
                # a reply: at most 6 bytes per byte of output (JSON escapes), the error (as long), and the rest
                reply = json.loads(await self.process.receive_line(limit * 12 + (1 << 16)))
            if not isinstance(reply, dict) or not isinstance(reply.get("out"), str):
                raise InfrastructureError("the session sent a malformed reply")
            return reply
        except TimeoutError:
            await self.close(stuck=True)
            return {"lost": f"the code ran past {timeout_s:g} s and did not stop"}
        except (InfrastructureError, ValueError) as exc:
            await self.close()  # usually over already: its sandbox can serve again once that is confirmed
            return {"lost": f"the interpreter ended ({exc})"}

    async def close(self, *, stuck: bool = False) -> None:
        """End the session and give the sandbox back: kept for the next session when the session ended cleanly and
        the sandbox isolates sessions, else deleted. ``stuck``: the session does not answer (no polite ending).
        Idempotent."""
        if not self.alive:
            return
        self.alive = False
        with anyio.CancelScope(shield=True):
            if not stuck:  # a remote session process ends itself (its supervisor then cleans up)
                with contextlib.suppress(Exception), anyio.move_on_after(SESSION_GRACE_S):
                    await self.process.send(b'{"close": true}\n')
            try:
                await self.process.kill(wait_s=0.0 if stuck else SESSION_END_S)
                broken = not self.isolated
            except Exception:  # noqa: BLE001 - the sandbox is then deleted rather than reused
                broken = True
            await self.scorer.pool.release_session_sandbox(self.sandbox, broken=broken)


_WARNED_NOT_ISOLATED: list[bool] = []
_PROCESS_SCORERS: dict[str, Scorer] = {}


def _process_scorer(config: SandboxConfig | None) -> Scorer:
    """A started scorer of this process for ``config`` (one per distinct config), for environments used with no
    trainer pool and no :meth:`CodeEnvironment.factory` (``AsyncGRPOTrainer``'s spawned process). Its pool is deleted
    at interpreter exit (``atexit``), like :func:`trl_sandbox.code_reward`'s default pool."""
    config = config if config is not None else SandboxConfig()
    key = repr(config)
    scorer = _PROCESS_SCORERS.get(key)
    if scorer is None or not scorer.pool.started:
        logger.info("trl-sandbox: no sandbox pool active; CodeEnvironment starts one for this process")
        scorer = _PROCESS_SCORERS[key] = Scorer.from_config(config).start()
    return scorer


def _cut(text: str, limit: int) -> tuple[str, bool]:
    """``text`` at most ``limit`` characters: its head and tail around a note of what was cut."""
    if len(text) <= limit:
        return text, False
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n[... {len(text) - limit} characters cut ...]\n{text[-tail:]}", True


def _visible_row(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """The row with only the tests its dataset publishes as visible (code_contests ``public_tests``,
    LiveCodeBench ``public_test_cases``), else None."""
    public = row.get("public_tests")
    if isinstance(public, Mapping) and public.get("input"):
        empty = {"input": [], "output": []}
        return {**row, "private_tests": empty, "generated_tests": empty}
    cases = row.get("public_test_cases")
    if cases:
        return {**row, "private_test_cases": "[]"}
    return None


class CodeEnvironment:
    """A code-interpreter environment for TRL's ``environment_factory``: a persistent, sandboxed Python session
    per rollout, a ``submit`` tool, and a reward from the task's tests.

    Use it as ``SandboxGRPOTrainer(..., environment_factory=CodeEnvironment)`` (sessions come from the trainer's
    pool), or with a plain ``GRPOTrainer`` through :meth:`factory`. The dataset rows are task rows in any format
    :meth:`trl_sandbox.Task.from_row` reads; TRL passes each row to :meth:`reset`.

    Options come from the pool's config (:class:`~trl_sandbox.config.SandboxConfig`): ``sandbox_tool_timeout``
    (seconds per ``python`` call), ``sandbox_tool_output_chars`` (characters of output returned),
    ``sandbox_no_submission_reward``, ``sandbox_max_sessions``; the reward mode and judge are
    :func:`~trl_sandbox.code_reward`'s (``sandbox_reward``, ``sandbox_compare``...).

    Args:
        scorer: The :class:`~trl_sandbox.scoring.Scorer` whose pool holds the sessions. Default: the active one at
            :meth:`reset` (set by :class:`~trl_sandbox.trainer.SandboxGRPOTrainer` while it trains, and by
            :meth:`factory`), else a pool of this process built from ``config`` on first use and deleted when the
            process ends.
        config: The :class:`~trl_sandbox.config.SandboxConfig` of that last pool (default: the defaults). For
            ``AsyncGRPOTrainer`` (``trl.experimental.async_grpo``), whose environments live in a spawned process,
            pass ``functools.partial(CodeEnvironment, config=...)``: it pickles, and builds its pool there.

    Attributes:
        stats: This rollout's :class:`ToolStats`.
    """

    def __init__(self, scorer: Scorer | None = None, config: SandboxConfig | None = None) -> None:
        self._scorer = scorer
        self._config = config
        self._bound: Scorer | None = None
        self._task: Task | TaskFormatError | None = None
        self._visible: Task | None = None
        self._session: _Session | None = None
        self._submission: str | None = None
        self._prefetched: list[tuple[str, str, Any, BaseException | None]] = []
        self.stats = ToolStats()

    # -- lifecycle -------------------------------------------------------------------------------------------------

    @classmethod
    @contextlib.contextmanager
    def factory(cls, config: SandboxConfig | None = None, *, backend: Any = None) -> Iterator[Callable[[], Any]]:
        """A pool for sessions and scoring, for the length of a ``with`` block, and the zero-argument callable to
        pass as a plain ``GRPOTrainer``'s ``environment_factory``::

            with CodeEnvironment.factory(SandboxConfig(sandbox_max_sessions=32)) as make_env:
                GRPOTrainer(..., environment_factory=make_env).train()

        The sandboxes are deleted when the block ends, raises, or the process gets SIGINT/SIGTERM.

        Args:
            config: The sandbox options (default: :class:`~trl_sandbox.config.SandboxConfig`'s defaults).
            backend: A :class:`~trl_sandbox.backends.Backend` instance overriding ``config.sandbox_backend``.

        Raises:
            ConfigurationError, UnknownBackendError: from the options; IsolationUnavailableError: from the local
                backend's start.
        """
        scorer = Scorer.from_config(config or SandboxConfig(), backend=backend)
        with scorer:
            previous = set_active_scorer(scorer)
            try:
                yield functools.partial(cls, scorer)
            finally:
                set_active_scorer(previous)

    def reset(self, **row: Any) -> str | None:
        """Start a rollout on the task of ``row`` (TRL calls this with the dataset row's columns before each
        generation): the previous rollout's session ends, and the instructions for the tools are returned (TRL
        appends them to the prompt's last user message).

        A row that is not a valid task is kept: the rollout's reward is then None (not the model's fault).
        """
        self._release()
        self._bound = self._scorer or active_scorer() or _process_scorer(self._config)
        self._submission = None
        self._prefetched.clear()
        self.stats = ToolStats()
        try:
            row = decode_row(row)  # a task_dataset row: its fields, whole
            self._task = Task.from_row(row)
        except TaskFormatError as exc:
            self._task = exc
            self._visible = None
            return None
        visible = _visible_row(row)
        try:
            self._visible = Task.from_row(visible) if visible is not None else None
        except TaskFormatError:
            self._visible = None
        what = ("a program that reads standard input and prints to standard output"
                if self._task.format == "stdio" else "the function the task asks for")
        checks = " and the result of the visible tests" if self._visible is not None else ""
        return (
            "\n\nYou have two tools. `python(code)` runs Python code in your own persistent session (variables, "
            "imports and files persist between calls) and returns what it printed and any error. "
            f"`submit(code)` submits your final solution ({what}) and returns a confirmation{checks}; only the last "
            "submission counts, scored against hidden tests when you are done."
        )

    def _release(self) -> None:
        """End this rollout's session, if any, without waiting for it (TRL calls ``get_reward`` and ``reset`` of one
        rollout after another; a remote session takes round trips to end): its sandbox goes back to the pool when it
        has ended."""
        session, self._session = self._session, None
        if session is not None and session.alive and not session.scorer.pool.closed:
            session.scorer.pool.run_soon(session.close)

    # -- tools -----------------------------------------------------------------------------------------------------

    def python(self, code: str) -> str:
        """Run Python code in your persistent session and return what it printed.

        Variables, imports and files you write persist between calls. The value of a last expression is printed.

        Args:
            code: The Python code to run.

        Returns:
            What the code printed (standard output and standard error), then the error's last lines if it raised.
        """
        return self._call("python", {"code": code})

    def submit(self, code: str) -> str:
        """Submit your final solution. Only the last submission counts.

        Args:
            code: The complete solution (a program, or the function the task asks for).

        Returns:
            A confirmation, with the result of the visible tests when the task has some.
        """
        return self._call("submit", {"code": code})

    def get_reward(self) -> float | None:
        """The reward of this rollout: the last submission scored against all of the task's tests, with the
        scorer's reward mode and judge (as :func:`~trl_sandbox.code_reward` scores a completion);
        ``sandbox_no_submission_reward`` without a submission; None when the task row is invalid or the
        infrastructure failed (TRL leaves the rollout out). Ends the rollout's session."""
        scorer = self._bound
        if scorer is None:
            return None
        try:
            return scorer.pool.run(self._areward, timeout_s=scorer.deadline_s(1, [self._task]) + 30.0)
        except InfrastructureError as exc:
            logger.warning("trl-sandbox: CodeEnvironment reward failed: %s", exc)
            return None
        finally:
            self._release()

    # -- concurrent tool calls (SandboxGRPOTrainer) ----------------------------------------------------------------

    @classmethod
    def run_tool_calls(cls, calls: Sequence[tuple[CodeEnvironment, Sequence[tuple[str, Mapping[str, Any]]]]]) -> None:
        """Run the tool calls of many rollouts at once, each rollout's in order, and keep each result for the
        identical call TRL makes next (which then returns at once). Used by
        :class:`~trl_sandbox.trainer.SandboxGRPOTrainer` to run a whole turn of tool calls concurrently.

        Args:
            calls: ``(environment, [(tool name, arguments), ...])`` per rollout. Names other than ``python`` and
                ``submit`` are left to TRL.
        """
        by_pool: dict[int, tuple[Scorer, list]] = {}
        for env, env_calls in calls:
            scorer = env._bound or env._scorer or active_scorer()
            wanted = [(n, dict(a)) for n, a in env_calls if n in ("python", "submit") and isinstance(a, Mapping)]
            if scorer is not None and wanted:
                by_pool.setdefault(id(scorer), (scorer, []))[1].append((env, wanted))
        for scorer, jobs in by_pool.values():

            async def run_all(jobs: list = jobs) -> None:
                async with anyio.create_task_group() as tg:
                    for env, env_calls in jobs:
                        tg.start_soon(env._run_in_order, env_calls)

            timeout = (scorer.config.sandbox_tool_timeout if scorer.config else 10.0) + SESSION_GRACE_S
            longest = max(len(c) for _env, c in jobs)
            try:
                scorer.pool.run(run_all, timeout_s=longest * (timeout + scorer.deadline_s(1)) + 60.0)
            except InfrastructureError as exc:  # the calls not done are run by TRL's own loop
                logger.warning("trl-sandbox: concurrent tool calls failed: %s", exc)

    async def _run_in_order(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        for name, arguments in calls:
            key = json.dumps(arguments, sort_keys=True, default=str)
            try:
                result = await self._acall(name, arguments)
                self._prefetched.append((name, key, result, None))
            except Exception as exc:  # noqa: BLE001 - raised again when TRL makes the call
                self._prefetched.append((name, key, None, exc))

    def _take_prefetched(self, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
        key = json.dumps(arguments, sort_keys=True, default=str)
        while self._prefetched:
            got_name, got_key, result, error = self._prefetched.pop(0)
            if (got_name, got_key) == (name, key):
                if error is not None:
                    raise error
                return True, result
        return False, None

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        found, result = self._take_prefetched(name, arguments)
        if not found and _PREFETCH_HOOK[0] is not None:
            _PREFETCH_HOOK[0]()  # the trainer runs this turn's calls of every rollout at once
            found, result = self._take_prefetched(name, arguments)
        if found:
            return result
        scorer = self._scorer_or_raise()
        timeout = self._option("sandbox_tool_timeout", 10.0) + SESSION_GRACE_S + scorer.deadline_s(1)
        return scorer.pool.run(self._acall, name, arguments, timeout_s=timeout)

    # -- async core (on the pool's event loop) ---------------------------------------------------------------------

    def _scorer_or_raise(self) -> Scorer:
        scorer = self._bound or self._scorer or active_scorer()
        if scorer is None:
            raise InfrastructureError(
                "CodeEnvironment has no sandbox pool: use SandboxGRPOTrainer, or CodeEnvironment.factory(...)"
            )
        self._bound = scorer
        return scorer

    def _option(self, name: str, default: Any) -> Any:
        scorer = self._bound or self._scorer or active_scorer()
        config = scorer.config if scorer is not None else None
        return getattr(config, name, default) if config is not None else default

    async def _acall(self, name: str, arguments: dict[str, Any]) -> str:
        start = time.monotonic()
        self.stats.calls += 1
        try:
            if name == "python":
                return await self._apython(**arguments)
            return await self._asubmit(**arguments)
        except Exception:
            self.stats.errors += 1
            raise
        finally:
            self.stats.seconds.append(time.monotonic() - start)

    async def _apython(self, code: str) -> str:
        if not isinstance(code, str):
            raise TypeError(f"code must be a string, got {type(code).__name__}")
        scorer = self._scorer_or_raise()
        timeout = float(self._option("sandbox_tool_timeout", 10.0))
        chars = int(self._option("sandbox_tool_output_chars", 4000))
        if self._session is None or not self._session.alive:
            self._session = await _Session.open(scorer)
        reply = await self._session.run(code, timeout, chars * 4)
        if "lost" in reply:
            self.stats.timeouts += "ran past" in reply["lost"]
            self.stats.errors += "ran past" not in reply["lost"]
            self._session = None
            return f"[{reply['lost']}: the session was restarted; variables and files are lost]"
        text, cut = _cut(reply["out"], chars)
        notes = []
        if reply.get("error"):
            self.stats.errors += 1
            error, _ = _cut(reply["error"], max(200, chars // 2))
            text = (text + "\n" if text and not text.endswith("\n") else text) + error
        if reply.get("timed_out"):
            self.stats.timeouts += 1
            notes.append(f"stopped after the time limit of {timeout:g} s; the session and its variables remain")
        if cut or reply.get("truncated"):
            notes.append(f"output cut to {chars} characters")
        if notes:
            text = (text + "\n" if text and not text.endswith("\n") else text) + "[" + "; ".join(notes) + "]"
        return text if text.strip() else "[no output]"

    async def _asubmit(self, code: str) -> str:
        if not isinstance(code, str):
            raise TypeError(f"code must be a string, got {type(code).__name__}")
        self.stats.submissions += 1
        self._submission = code
        if self._visible is None or isinstance(self._task, TaskFormatError):
            return "Submitted. It is scored against the task's tests when you are done."
        scorer = self._scorer_or_raise()
        (result,) = await scorer.ascore([self._visible], [code], scorer.deadline_s(1, [self._visible]))
        return "Submitted. " + _summary(result)

    async def _areward(self) -> float | None:
        scorer = self._bound
        if scorer is None or self._task is None or isinstance(self._task, TaskFormatError):
            return None
        if self._submission is None:
            return float(self._option("sandbox_no_submission_reward", -1.0))
        (result,) = await scorer.ascore([self._task], [self._submission], scorer.deadline_s(1, [self._task]))
        return result.reward

    async def _aclose_session(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()


def _summary(result: ScoreResult) -> str:
    """One line on a submission's run against the visible tests."""
    if result.status in ("passed", "failed"):
        text = f"Visible tests: {result.tests_passed}/{result.tests_total} passed."
        if result.error and result.status == "failed":
            text += f" First failure: {result.error[:300]}"
        return text
    if result.reward is None:
        return "The visible tests could not be run (not your code's fault); it is still scored at the end."
    return f"It does not pass the visible tests ({result.status}): {(result.error or '')[:300]}"


async def rewards_of(environments: Sequence[Any]) -> list[float | None]:
    """The rewards of many rollouts at once (pool loop): every submission of ``environments`` (for those that are
    :class:`CodeEnvironment`) scored in one concurrent batch, then every session ended. None for other
    environments."""
    out: list[float | None] = [None] * len(environments)
    by_scorer: dict[int, tuple[Scorer, list[int]]] = {}
    for i, env in enumerate(environments):
        if not isinstance(env, CodeEnvironment) or env._bound is None:
            continue
        task = env._task
        if task is None or isinstance(task, TaskFormatError):
            continue
        if env._submission is None:
            out[i] = float(env._option("sandbox_no_submission_reward", -1.0))
            continue
        by_scorer.setdefault(id(env._bound), (env._bound, []))[1].append(i)
    for scorer, indices in by_scorer.values():
        tasks = [environments[i]._task for i in indices]
        results = await scorer.ascore(tasks, [environments[i]._submission for i in indices],
                                      scorer.deadline_s(len(indices), tasks))
        for i, result in zip(indices, results):
            out[i] = result.reward
    async with anyio.create_task_group() as tg:
        for env in environments:
            if isinstance(env, CodeEnvironment):
                tg.start_soon(env._aclose_session)
    return out


def environment_metrics(environments: Sequence[CodeEnvironment]) -> dict[str, float]:
    """The tool metrics of a batch of rollouts (logged by :class:`~trl_sandbox.trainer.SandboxGRPOTrainer` through
    TRL's ``log_metric``): ``sandbox/tool_calls_per_rollout``, ``sandbox/tool_errors``, ``sandbox/tool_timeouts``
    (calls in the batch), ``sandbox/tool_seconds_mean`` and ``sandbox/tool_seconds_p95`` (seconds per call),
    ``sandbox/submissions`` (submit calls in the batch) and ``sandbox/submitted`` (fraction of rollouts that
    submitted)."""
    from .rewards import percentile

    if not environments:
        return {}
    seconds = [s for env in environments for s in env.stats.seconds]
    n = len(environments)
    return {
        "sandbox/tool_calls_per_rollout": sum(env.stats.calls for env in environments) / n,
        "sandbox/tool_errors": float(sum(env.stats.errors for env in environments)),
        "sandbox/tool_timeouts": float(sum(env.stats.timeouts for env in environments)),
        "sandbox/tool_seconds_mean": sum(seconds) / len(seconds) if seconds else 0.0,
        "sandbox/tool_seconds_p95": percentile(seconds, 95),
        "sandbox/submissions": float(sum(env.stats.submissions for env in environments)),
        "sandbox/submitted": sum(env._submission is not None for env in environments) / n,
    }
