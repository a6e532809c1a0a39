"""Scoring: run completions against their tasks in a sandbox pool, concurrently, and turn results into rewards.

:class:`Scorer` is the engine behind :func:`trl_sandbox.code_reward` and ``trl-sandbox score``. Every completion of a
batch runs at once, bounded by the pool; each gets one execution (all of its tests in one round trip), an
infrastructure failure is retried once on another sandbox, and the whole batch has a deadline. Rewards (the
defaults; ``reward_values`` changes those of the scored statuses):

================== ===================================== ==========================================================
status             reward                                meaning
================== ===================================== ==========================================================
``passed``         1.0                                   every test passed
``failed``         ``pass_rate``: passed / total;        ran; some tests failed
                   ``all_or_nothing``: 0.0
``error``          -1.0                                  did not load (syntax error, exception at import), empty,
                                                         or ended the test run early (``sys.exit``, ``os._exit``,
                                                         crash)
``compile_error``  -1.0 (the ``error`` value)            did not compile (C, C++, Java, Rust) or, JavaScript, did
                                                         not pass ``node --check``
``timeout``        -1.0                                  a test or the whole run went past its time limit
``banned``         -1.0                                  uses a banned pattern (not run)
``infra_error``    None                                  the sandbox infrastructure failed (twice)
``invalid_task``   None                                  the task record is malformed or its reference fails
``cancelled``      None                                  still running (or waiting for a sandbox of its pool) at the
                                                         batch deadline (a wait for a host slot does not count)
``unserializable`` None                                  a value of the tests' own could not be sent to the
                                                         program (see ``trl_sandbox.harness``); the program's
                                                         own values that cannot cross fail their tests
================== ===================================== ==========================================================

None statuses are not the model's doing: TRL leaves those completions out of the advantage.

Completions in a compiled language (see :mod:`trl_sandbox.languages`) that are identical, for the same task, within
one batch are compiled and run once, and share the result: GRPO's ``num_generations`` completions of a prompt often
repeat.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import anyio

from .backends.base import ExecResult
from .banned import find_banned_pattern
from .completions import completion_text
from .config import reward_table
from . import judge_programs
from .errors import ConfigurationError, InfrastructureError, TaskFormatError
from .harness.archive import HARNESS_NAME
from .languages import LANGUAGES, completion_language, language_named
from .pool import SandboxPool
from .deadlines import WAITS, Moved, Waits
from .results import STATUSES, ScoreResult, Timing, output_tail, reward_of, unscored, verdict_result
from .repos import scoring as repo_scoring
from .repos.rows import RepoTask
from .tasks import Task, Verdict, harness_records

logger = logging.getLogger(__name__)

__all__ = ["STATUSES", "ScoreResult", "Scorer", "active_scorer", "set_active_scorer"]

class Scorer:
    """Scores completions against tasks in a started :class:`~trl_sandbox.pool.SandboxPool`.

    Args:
        pool: The pool to run in (started by the caller, or by :meth:`start`).
        test_timeout_s: Cap on each test's budget (and of loading the program), seconds; default None: each test
            gets what its dataset's official harness gives it (see :meth:`~trl_sandbox.tasks.Task.test_timeout_s`).
        completion_timeout_s: Cap on one completion's whole execution, seconds; default None: each completion gets
            its tests' own budget (:meth:`~trl_sandbox.tasks.Task.completion_budget_s`, LiveCodeBench's
            ``(t + 1) * n + 5``). A run the cap cuts keeps the tests it passed (``failed``, never ``timeout``).
        output_limit_bytes: Bytes of output kept per test (stdin/stdout tasks), raised per task to a margin over
            its largest expected output (:meth:`~trl_sandbox.tasks.Task.output_limit_bytes`).
        max_concurrency: Most executions at once; default and upper bound: the pool size.
        batch_deadline_s: Straggler deadline of a whole batch, seconds: completions still running (or waiting for a
            sandbox) then are cancelled, their sandboxes replaced, and they get ``cancelled`` (reward None).
            Default: derived from the batch size, the concurrency and the completions' budgets (a safety net only).
        reward_mode: ``"pass_rate"`` or ``"all_or_nothing"`` (see :data:`~trl_sandbox.config.REWARD_MODES`).
        reward_values: Rewards by status over the defaults (see :func:`~trl_sandbox.config.reward_table`).
        compare: The stdout judge of rows that name none (``sandbox_compare``, parsed by
            :func:`~trl_sandbox.formats.parse_compare`); default: each format's official judge.
        time_limit_factor: Multiplier of a row's statement time limit (``sandbox_time_limit_factor``); None: each
            format's own (open-r1 Codeforces 1, the others :data:`~trl_sandbox.tasks.DEFAULT_TIME_LIMIT_FACTOR`; see
            :meth:`~trl_sandbox.tasks.Task.test_timeout_s`).
        language: Language of completions whose row names none and whose code fence has no language tag
            (``sandbox_language``; see :func:`trl_sandbox.languages.completion_language`); None: the language of
            the row's published solutions when they are all in one (code_contests), else Python.
        compile_timeout_s: Seconds a compiler may run on one completion (``sandbox_compile_timeout``), on top of
            ``completion_timeout_s``.
        testlib_header: An official testlib.h for tasks' C++ checkers and interactors (``sandbox_testlib_header``);
            default: ``TRL_SANDBOX_TESTLIB_H``, else trl-sandbox's own (see :mod:`trl_sandbox.judge_programs`).

    Raises:
        ConfigurationError: an unknown reward mode or a bad reward value.

    Thread-safety: :meth:`score` may be called from any thread; it runs on the pool's event loop.
    """

    def __init__(
        self,
        pool: SandboxPool,
        *,
        test_timeout_s: float | None = None,
        completion_timeout_s: float | None = None,
        output_limit_bytes: int = 1 << 20,
        max_concurrency: int | None = None,
        batch_deadline_s: float | None = None,
        reward_mode: str = "pass_rate",
        reward_values: dict[str, float] | None = None,
        compare: dict[str, Any] | None = None,
        time_limit_factor: float | None = None,
        language: str | None = None,
        compile_timeout_s: float = 30.0,
        testlib_header: str | None = None,
    ) -> None:
        #: The config this scorer was built from (:meth:`from_config`), else None.
        self.config: Any = None
        self.language = language_named(language).name if language is not None else None
        self.compile_timeout_s = float(compile_timeout_s)
        self.testlib_header = testlib_header
        #: Tasks' checkers and interactors as requests carry them (compiled, self-tested), by :meth:`_judge` key.
        self._judges: dict[str, dict[str, Any] | TaskFormatError] = {}
        self._judge_locks: dict[str, anyio.Lock] = {}
        self.rewards = reward_table(reward_mode, reward_values)
        self.reward_mode = reward_mode
        self.pool = pool
        self.test_timeout_s = float(test_timeout_s) if test_timeout_s is not None else None
        self.completion_timeout_s = float(completion_timeout_s) if completion_timeout_s is not None else None
        self.output_limit_bytes = int(output_limit_bytes)
        self.max_concurrency = min(max_concurrency or pool.size, pool.size)
        self.batch_deadline_s = batch_deadline_s
        self.compare = compare
        self.time_limit_factor = float(time_limit_factor) if time_limit_factor is not None else None
        #: Completions scored over this scorer's life, by status (``Counter``; ``"completions"`` is the total).
        self.status_counts: Counter[str] = Counter()
        self._references: dict[str, tuple[tuple[str, ...], tuple[Any, ...]] | TaskFormatError] = {}
        self._reference_locks: dict[str, anyio.Lock] = {}

    @classmethod
    def from_config(cls, config: Any, *, labels: dict[str, str] | None = None, backend: Any = None) -> Scorer:
        """Build a pool and a scorer from a :class:`~trl_sandbox.config.SandboxConfig` (or any object with its
        ``sandbox_*`` fields, such as :class:`~trl_sandbox.trainer.SandboxGRPOConfig`). Nothing is started.

        Args:
            backend: A :class:`~trl_sandbox.backends.Backend` instance that overrides ``config.sandbox_backend``.
        """
        options = dict(config.sandbox_backend_options or {})
        chosen = backend if backend is not None else config.sandbox_backend
        if chosen == "local":
            options.setdefault("memory_limit_bytes", config.sandbox_memory_limit)
            options.setdefault("output_limit_bytes", config.sandbox_output_limit)
            options.setdefault("allow_weak_isolation", config.sandbox_allow_weak_isolation)
        elif chosen == "ray":  # the limits of the local sandbox in each actor
            local = dict(options.get("local_options") or {})
            local.setdefault("memory_limit_bytes", config.sandbox_memory_limit)
            local.setdefault("output_limit_bytes", config.sandbox_output_limit)
            local.setdefault("allow_weak_isolation", config.sandbox_allow_weak_isolation)
            options["local_options"] = local
            options.setdefault("create_timeout_s", config.sandbox_create_timeout)
        elif chosen in ("daytona", "cwsandbox", "hf", "e2b"):
            options.setdefault("output_limit_bytes", config.sandbox_output_limit)
        pool = SandboxPool(
            chosen,
            size=config.sandbox_pool_size,
            labels=labels,
            backend_options=options,
            create_timeout_s=config.sandbox_create_timeout,
            sweep_orphans=getattr(config, "sandbox_sweep_orphans", False),
            max_sessions=getattr(config, "sandbox_max_sessions", 64),
        )
        scorer = cls(
            pool,
            test_timeout_s=config.sandbox_test_timeout,
            completion_timeout_s=config.sandbox_completion_timeout,
            output_limit_bytes=config.sandbox_output_limit,
            max_concurrency=config.sandbox_max_concurrency,
            batch_deadline_s=config.sandbox_batch_deadline_s,
            reward_mode=getattr(config, "sandbox_reward", "pass_rate"),
            reward_values=getattr(config, "sandbox_reward_values", None),
            compare=getattr(config, "sandbox_compare", None),
            time_limit_factor=getattr(config, "sandbox_time_limit_factor", None),
            language=getattr(config, "sandbox_language", None),
            compile_timeout_s=getattr(config, "sandbox_compile_timeout", 30.0),
            testlib_header=getattr(config, "sandbox_testlib_header", None),
        )
        scorer.config = config  # the options of what uses this scorer's pool (CodeEnvironment)
        return scorer

    # -- lifecycle shortcuts -------------------------------------------------------------------------------------

    def start(self) -> Scorer:
        """Start the pool (see :meth:`SandboxPool.start`); return self."""
        self.pool.start()
        return self

    def close(self) -> None:
        """Close the pool (see :meth:`SandboxPool.close`)."""
        self.pool.close()

    def __enter__(self) -> Scorer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- scoring -------------------------------------------------------------------------------------------------

    def budget_s(self, task: Task | RepoTask | TaskFormatError | None = None) -> float:
        """Wall-clock seconds one completion of ``task`` may run: its tests' own budget
        (:meth:`~trl_sandbox.tasks.Task.completion_budget_s`), at most ``completion_timeout_s`` when set; without a
        task, ``completion_timeout_s``, else 30 s. A repository task's is its run's deadline (see
        :func:`trl_sandbox.repos.scoring.budget_s`)."""
        if isinstance(task, RepoTask):
            return repo_scoring.budget_s(task)
        if not isinstance(task, Task):
            return self.completion_timeout_s or 30.0
        budget = task.completion_budget_s(task.test_timeout_s(self.test_timeout_s, self.time_limit_factor))
        return min(budget, self.completion_timeout_s) if self.completion_timeout_s else budget

    def deadline_s(self, n: int, tasks: Sequence[Task | TaskFormatError] | None = None) -> float:
        """Deadline in seconds for scoring ``n`` completions of ``tasks`` (``batch_deadline_s`` when set): a safety
        net of twice the rounds the concurrency makes of them, each the longest completion budget."""
        if self.batch_deadline_s:
            return float(self.batch_deadline_s)
        per_round = max((self.budget_s(t) for t in tasks or ()), default=self.budget_s()) + 5.0
        return (rounds(n, self.max_concurrency) + 2) * per_round * 2 + 30.0

    def score(
        self,
        tasks: Sequence[Task | TaskFormatError],
        completions: Sequence[Any],
        on_result: Callable[[int, ScoreResult], None] | None = None,
    ) -> list[ScoreResult]:
        """Score ``completions[i]`` against ``tasks[i]`` for every i; blocks until done or the batch deadline.

        Args:
            tasks: One :class:`~trl_sandbox.tasks.Task` per completion; a :class:`TaskFormatError` in place of a
                task yields ``invalid_task`` for that completion.
            completions: Strings or conversational completions (lists of messages).
            on_result: Called as ``on_result(i, result)`` as each completion is scored (from the pool's thread;
                e.g. a progress bar's update). Its exceptions are logged, never raised.

        Returns:
            One :class:`ScoreResult` per completion, in order. Never raises for a failure of one completion or of
            the infrastructure: those are results (``infra_error``), so results already computed are never lost.
        """
        if len(tasks) != len(completions):
            raise ValueError(f"{len(tasks)} tasks for {len(completions)} completions")
        deadline = self.deadline_s(len(completions), tasks)
        partial: list[ScoreResult | None] = [None] * len(completions)
        moved = Moved()  # how far the completions' deadlines moved for their waits for host slots
        try:
            results = self.pool.run(
                self.ascore, tasks, completions, deadline, on_result, partial, moved, timeout_s=deadline + 30.0,
                extend=moved,
            )
        except InfrastructureError as exc:
            # The pool did not answer in time (or is closed): the completions already scored keep their results.
            logger.error("trl-sandbox: scoring failed: %s", exc)
            results = [r if r is not None else unscored(tasks[i], "infra_error", 0.0, str(exc))
                       for i, r in enumerate(list(partial))]
        self.status_counts.update(r.status for r in results)
        self.status_counts["completions"] += len(results)
        return results

    async def ascore(
        self,
        tasks: Sequence[Task | TaskFormatError],
        completions: Sequence[Any],
        deadline_s: float,
        on_result: Callable[[int, ScoreResult], None] | None = None,
        results: list[ScoreResult | None] | None = None,
        moved: Moved | None = None,
    ) -> list[ScoreResult]:
        """Async core of :meth:`score`; must run on the pool's event loop (use :meth:`SandboxPool.run`).

        Completions not scored within ``deadline_s`` seconds are cancelled (their sandboxes are replaced, in the
        background) and get ``cancelled``; a completion's deadline moves by the seconds it waited for a slot of the
        host's admission limit (other runs' executions on the host's cores are not its straggling). ``results``, when
        given, is filled as completions are scored, so that a caller that stops waiting keeps what was done;
        ``moved``, when given, follows how far the deadlines moved.
        """
        if results is None:
            results = [None] * len(completions)
        moved = moved if moved is not None else Moved()
        limiter = anyio.CapacityLimiter(self.max_concurrency)
        shared: dict[tuple, Any] = {}  # identical compiled programs of a task: compiled and run once per batch
        end = anyio.current_time() + deadline_s

        async def one(i: int) -> None:
            with anyio.CancelScope(deadline=end) as scope:
                WAITS.set(Waits(scope, moved))
                async with limiter:
                    results[i] = await self._score_one(tasks[i], completions[i], shared)
            if on_result is not None and results[i] is not None:
                try:
                    on_result(i, results[i])
                except Exception:  # noqa: BLE001 - a progress callback must not lose a result
                    logger.exception("trl-sandbox: on_result callback failed")

        async with anyio.create_task_group() as tg:
            for i in range(len(completions)):
                tg.start_soon(one, i)
        cancelled = sum(r is None for r in results)
        if cancelled:
            logger.warning("trl-sandbox: %d of %d completions were still running at the batch deadline of %.1fs; "
                           "cancelled (reward None)", cancelled, len(results), deadline_s)
        return [
            r
            if r is not None
            else unscored(tasks[i], "cancelled", deadline_s,
                           f"still running at the batch deadline of {deadline_s:.1f}s; cancelled")
            for i, r in enumerate(results)
        ]

    def _verdict(self, task: Task, verdict: Verdict, duration_s: float, **timing: Any) -> ScoreResult:
        reward = reward_of(verdict, self.reward_mode, self.rewards)
        return verdict_result(task.task_id, verdict, duration_s, reward, **timing)

    async def _score_one(self, task: Task | TaskFormatError, completion: Any,
                         shared: dict[tuple, Any] | None = None) -> ScoreResult:
        start = time.monotonic()
        if isinstance(task, TaskFormatError):
            return unscored(task, "invalid_task", 0.0, str(task))
        if isinstance(task, RepoTask):
            return await repo_scoring.score_repo(self, task, completion)
        try:
            text = completion_text(completion)
            language = completion_language(task.language, text, self.language, task.solutions_language) if (
                task.format == "stdio") else (task.language or "python")
            code = task.extract(completion, language)
        except TypeError as exc:
            return self._verdict(task, Verdict("error", 0, len(task.tests), str(exc)), 0.0)
        if not code.strip():
            return self._verdict(task, Verdict("error", 0, len(task.tests), "empty completion"), 0.0)
        banned = find_banned_pattern(task.scored_code(code), task.banned_patterns)
        if banned is not None:
            verdict = Verdict("banned", 0, len(task.tests), f"uses banned pattern {banned!r}")
            return self._verdict(task, verdict, time.monotonic() - start)
        if shared is None or not LANGUAGES[language].native:
            return await self._execute(task, code, language, start)
        key = (id(task), language, code)
        if key in shared:  # the same program for the same task, already compiled and run (or being) in this batch
            event, slot, runner = shared[key]
            waits = WAITS.get()
            if waits is not None:  # its deadline moves with the waits of the run it waits for
                runner.followers.append(waits)
                waits.end(runner.admission_s)
                if runner.since is not None:
                    waits.begin()
            await event.wait()
            if slot:
                return slot[0]
            return await self._execute(task, code, language, start)
        event, slot = anyio.Event(), []
        shared[key] = (event, slot, WAITS.get() or Waits())
        try:
            slot.append(await self._execute(task, code, language, start))
        finally:
            if not slot:  # cancelled: the others run it themselves
                del shared[key]
            event.set()
        return slot[0]

    async def _execute(self, task: Task, code: str, language: str, start: float) -> ScoreResult:
        """Run ``code`` (extracted, in ``language``) against ``task``'s tests in a sandbox; one retry on another
        sandbox after an infrastructure failure."""
        last_error: Exception | None = None
        timing = Timing()
        waits = WAITS.get()
        if waits is not None:
            waits.timing = timing  # the task's reference run and checker self-test wait in this completion's time
        for attempt in range(2):  # an infrastructure failure is retried once, on another sandbox
            timing.retries = attempt
            judge_key = None
            try:
                args: tuple[str, ...] = ()
                expected: tuple[Any, ...] = ()
                if task.format == "call":
                    args, expected = await self._reference(task)
                judge = await self._judge(task) if task.format == "stdio" else None
                judge_key = judge.pop("key") if judge else None
                request = task.request(
                    code,
                    test_timeout_s=task.test_timeout_s(self.test_timeout_s, self.time_limit_factor),
                    output_limit=task.output_limit_bytes(self.output_limit_bytes),
                    args=args,
                    expected=expected,
                    stop_on_failure=self.reward_mode == "all_or_nothing",
                    compare=self.compare,
                    language=language,
                    compile_timeout_s=self.compile_timeout_s,
                    judge=judge,
                )
                key = self._record_key()
                result = await self._run_harness(request, timing, self.budget_s(task), key=key)
                timing.output = output_tail(result, key)
                verdict = task.judge(
                    result.stdout, exit_code=result.exit_code, timed_out=result.timed_out, stderr=result.stderr,
                    key=key,
                )
                return self._verdict(task, verdict, time.monotonic() - start, **timing.fields())
            except TaskFormatError as exc:
                if judge_key is not None and _JUDGE_ERROR.search(str(exc)) and "ran past" not in str(exc):
                    # Its checker or interactor failed on this program's output after passing its self-test: the
                    # task is quarantined for the rest of the run, so that no program learns to void its reward so.
                    logger.warning("trl-sandbox: quarantined %s: %s", task.task_id, exc)
                    self._judges[judge_key] = TaskFormatError(f"quarantined after a judge error: {exc}")
                return unscored(task, "invalid_task", time.monotonic() - start, str(exc), **timing.fields())
            except InfrastructureError as exc:
                last_error = exc
                if self.pool.closed:  # closing (Ctrl-C, a signal, the end of training): no retry, no noise
                    break
                logger.warning("trl-sandbox: infrastructure error on %s: %s", task.task_id, exc)
        return unscored(task, "infra_error", time.monotonic() - start, str(last_error), **timing.fields())

    def _record_key(self) -> str | None:
        """A fresh secret for one request where the backend says the program may write into the command's output
        (``Backend.authenticate_records``): the judge signs its records with it, and only those count."""
        return secrets.token_hex(16) if self.pool.backend.authenticate_records else None

    async def _run_harness(self, request: dict, timing: Timing | None = None, budget_s: float | None = None,
                           key: str | None = None) -> ExecResult:
        waits = WAITS.get()
        timing = timing if timing is not None else (waits.timing if waits is not None and waits.timing else Timing())
        wait_s = self.deadline_s(1)
        queued = time.monotonic()
        on_wait = waits
        async with self.pool.lease(timeout_s=wait_s) as lease, self.pool.backend.admit(on_wait):  # the host's cores
            started = time.monotonic()
            timing.queue_s += started - queued
            sandbox = lease.sandbox
            argv = [*sandbox.python, f"{sandbox.workdir}/{HARNESS_NAME}"]
            budget_s = budget_s if budget_s is not None else self.budget_s()
            timeout_s = budget_s + (self.compile_timeout_s if request.get("build") else 0.0)
            # The judge gets the command's time limit too: on a remote sandbox it ends the program's processes
            # before the service kills the command (which would leave them running), see harness/server.py.
            # The command itself gets JUDGE_START_S more: the judge's interpreter starting on a loaded host is not
            # the program's time (the judge counts the budget from its own start).
            signed = {"key": key} if key is not None else {}
            payload = json.dumps({**request, "budget_s": timeout_s, **signed}).encode()
            try:
                with anyio.fail_after(timeout_s + JUDGE_START_S + 30.0):
                    result = await self.pool.backend.exec(sandbox, argv, stdin=payload,
                                                          timeout_s=timeout_s + JUDGE_START_S)
                if result.sandbox_spent:  # this execution's verdict stands; no later one may run there
                    logger.info("trl-sandbox: replacing sandbox %s: %s", sandbox.id, result.sandbox_spent)
                    lease.broken = True
                return result
            except anyio.get_cancelled_exc_class():
                # Cancelled (the batch deadline): the execution may still run there; replace the sandbox.
                lease.broken = True
                raise
            except TimeoutError:
                lease.broken = True
                raise InfrastructureError(f"sandbox {sandbox.id} did not answer in time") from None
            except InfrastructureError:
                lease.broken = not await self._healthy(sandbox)
                raise
            finally:
                timing.exec_s += time.monotonic() - started

    async def _healthy(self, sandbox: Any) -> bool:
        with anyio.move_on_after(15.0):
            return await self.pool.backend.health_check(sandbox, timeout_s=10.0)
        return False

    async def _judge(self, task: Task) -> dict[str, Any] | None:
        """The ``compare`` and ``interactor`` of ``task``'s requests when it has a checker or an interactor: C and C++
        ones compiled (once per build, see :mod:`trl_sandbox.judge_programs`), and its checker self-tested once,
        in a sandbox, before its first use; with the cache ``key``. Raises TaskFormatError (``invalid_task``) for a
        task whose checker or interactor does not compile, whose checker fails its self-test, or that failed on a
        program's output before (quarantined)."""
        compare, interactor = task.judge_spec(self.compare), task.interactor
        if "checker" not in compare and not interactor:
            return None
        key = hashlib.sha256(json.dumps([task.task_id, compare, interactor, task.tests[:2], task.outputs[:2]],
                                        sort_keys=True).encode()).hexdigest()
        cached = self._judges.get(key)
        if cached is None:
            async with self._judge_locks.setdefault(key, anyio.Lock()):
                cached = self._judges.get(key)
                if cached is None:
                    try:
                        cached = await self._prepare_judge(task, compare, interactor)
                    except TaskFormatError as exc:
                        cached = TaskFormatError(f"task {task.task_id}: {exc}")
                    self._judges[key] = cached
        if isinstance(cached, TaskFormatError):
            raise cached
        return {**cached, "key": key}

    async def _prepare_judge(self, task: Task, compare: dict[str, Any], interactor: dict[str, Any] | None
                             ) -> dict[str, Any]:
        static = not self.pool.backend.shares_host_libraries

        def build() -> dict[str, Any]:
            fields = {"compare": judge_programs.request_spec(compare, static=static, testlib=self.testlib_header)}
            if interactor:
                fields["interactor"] = judge_programs.request_spec(interactor, static=static,
                                                                   testlib=self.testlib_header)
            return fields

        try:
            fields = await anyio.to_thread.run_sync(build)
        except ConfigurationError as exc:  # no compiler here: the task cannot be judged, nor held against the model
            logger.error("trl-sandbox: %s", exc)
            raise TaskFormatError(str(exc)) from None
        request = judge_programs.selftest_request(task, fields["compare"], max(self.test_timeout_s or 0.0, 10.0))
        if request is not None:
            record_key = self._record_key()
            result = await self._run_harness(request, key=record_key)
            records = harness_records(result.stdout, record_key)
            if not any(r.get("done") is not None for r in records):
                raise InfrastructureError(f"the checker's self-test did not complete: {output_tail(result)}")
            problem = judge_programs.selftest_problem(records, compare.get("answer_is_output", True))
            if problem is not None:
                raise TaskFormatError(f"quarantined: {problem}")
        return fields

    async def _reference(self, task: Task) -> tuple[tuple[str, ...], tuple[Any, ...]]:
        """The (argument literals, expected outputs) of a ``call`` task, computed once per task in its own run."""
        key = task.reference_key
        cached = self._references.get(key)
        if cached is None:
            lock = self._reference_locks.setdefault(key, anyio.Lock())
            async with lock:
                cached = self._references.get(key)
                if cached is None:
                    request = task.reference_request(test_timeout_s=max(self.test_timeout_s or 0.0, 10.0))
                    record_key = self._record_key()
                    result = await self._run_harness(request, key=record_key)
                    if result.timed_out:
                        cached = TaskFormatError(f"task {task.task_id}: the reference timed out")
                    else:
                        try:
                            cached = task.expected_from_reference(result.stdout, key=record_key)
                        except TaskFormatError as exc:
                            cached = exc
                    self._references[key] = cached
        if isinstance(cached, TaskFormatError):
            raise cached
        return cached


#: Seconds a harness command gets beyond its completion's budget (``budget_s``, which the judge counts from its own
#: start and gives the program, see ``harness/server.py``): for the judge's interpreter and imports to start, which
#: take well over a second on a host whose cores are all busy. Without it, a judge that started late was killed by
#: the backend's limit before its first record (an infrastructure error), or before it had ended the program.
JUDGE_START_S = 10.0
#: A judge error of a task's checker or interactor (see ``trl_sandbox/harness/checkers.py``), not of the sandbox.
_JUDGE_ERROR = re.compile(r"the (checker|interactor|output validator|interactive validator) ")


# -- the scorer that code_reward uses when none is bound --------------------------------------------------------

_active: Scorer | None = None
_active_lock = threading.Lock()


def set_active_scorer(scorer: Scorer | None) -> Scorer | None:
    """Make ``scorer`` the one that unbound reward functions use (``SandboxGRPOTrainer`` does this while it
    trains); return the previous one."""
    global _active
    with _active_lock:
        previous, _active = _active, scorer
    return previous


def active_scorer() -> Scorer | None:
    """The scorer set by :func:`set_active_scorer`, if any."""
    return _active


def rounds(n: int, width: int) -> int:
    """Number of rounds needed to run ``n`` executions ``width`` at a time."""
    return max(1, math.ceil(n / max(1, width)))
