"""The sandbox pool: a fixed number of sandboxes of one backend, whose lifecycle follows a training run.

:class:`SandboxPool` creates its sandboxes concurrently (:meth:`SandboxPool.start`), lends each to one execution at
a time (:meth:`SandboxPool.lease`), replaces a sandbox that broke, and deletes them all at :meth:`SandboxPool.close`
(also registered with :mod:`atexit` while the pool is open).

Threading: TRL calls reward functions synchronously on the main thread, while backends are async (anyio). The pool
owns an event loop in a thread of its own (an anyio blocking portal); the sync methods (``start``, ``close``,
``run``) submit work to it and wait with a deadline, so a hung backend cannot hang the trainer.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import logging
import math
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal

from . import lifecycle
from .lifecycle import default_labels  # noqa: F401 - re-exported (its home before)
from .backends import Backend, Sandbox, get_backend
from .backends._admission import default_size
from .errors import ConfigurationError, InfrastructureError, SandboxCreationError
from .harness.archive import harness_files
from .progress import progress_bar

logger = logging.getLogger(__name__)
T = TypeVar("T")

#: Label naming the pool a sandbox belongs to (one per :class:`SandboxPool`, random): a pool's closing sweep deletes
#: what carries it, sandboxes whose creation it gave up on included.
POOL_LABEL = "trl-sandbox-pool"
#: Label naming one creation (random): when a creation is cut short (a deadline, Ctrl-C) after the backend may have
#: made the sandbox, the sandboxes carrying it are found and deleted.
CREATION_LABEL = "trl-sandbox-creation"
#: Seconds a closing pool keeps looking for the sandboxes of creations it cut short on a backend whose service may
#: finish them later (a cloud service registers a sandbox seconds after the request): long enough for that, short
#: enough that Ctrl-C during a start is not a minute's wait; what shows later ends at the service's lifetime limit.
CUT_SHORT_WAIT_S = 30.0


@dataclass
class PoolStats:
    """Counters of a pool's life (all integers). ``replaced``: sandboxes deleted and re-created after breaking;
    ``orphans_deleted``: sandboxes of dead earlier runs deleted at start (``sweep_orphans``)."""

    created: int = 0
    deleted: int = 0
    replaced: int = 0
    delete_failures: int = 0
    orphans_deleted: int = 0
    sessions_created: int = 0


@dataclass
class Lease:
    """One sandbox lent to one execution. Set :attr:`broken` when the sandbox failed: it is then replaced."""

    sandbox: Sandbox
    broken: bool = field(default=False)


class SandboxPool(AbstractContextManager["SandboxPool"]):
    """A pool of ``size`` sandboxes of one backend.

    Args:
        backend: A registry name (``"local"``, ``"mock"``...) or a :class:`~trl_sandbox.backends.Backend`.
        size: Number of sandboxes (and so of concurrent executions). Default: for ``local``, the cores of this
            process's affinity divided among the node's ranks (``LOCAL_WORLD_SIZE``: see
            :func:`~trl_sandbox.backends._admission.default_size`); 8 otherwise.
        labels: Labels for every sandbox (``str -> str``); :func:`default_labels` when None.
        backend_options: Keyword arguments for the backend's constructor (when ``backend`` is a name).
        create_timeout_s: Deadline for creating the whole pool, in seconds.
        delete_timeout_s: Deadline for deleting the whole pool, in seconds.
        sweep_orphans: At start, delete this backend's sandboxes left by dead runs of this host (see
            :func:`trl_sandbox.lifecycle.orphan_reason`); never a live run's.
        handle_signals: At start (from the main thread), make SIGINT/SIGTERM delete the pool first
            (:func:`trl_sandbox.lifecycle.install_signal_handlers`).
        progress: Show a progress bar (tqdm, on stderr) while the sandboxes are created. None: only when stderr
            is a terminal.
        max_sessions: Most sandboxes held at once for interpreter sessions (one per rollout of a
            :class:`~trl_sandbox.environment.CodeEnvironment`), on top of the ``size`` scoring ones. They are created
            as rollouts need them, kept for the next rollouts, and deleted with the pool.

    Use as a context manager, or call :meth:`start` and :meth:`close`. ``close`` is idempotent.

    Raises:
        UnknownBackendError, ConfigurationError: from :func:`~trl_sandbox.backends.get_backend`.
    """

    def __init__(
        self,
        backend: Backend | str = "local",
        *,
        size: int | None = None,
        labels: Mapping[str, str] | None = None,
        backend_options: Mapping[str, Any] | None = None,
        create_timeout_s: float = 120.0,
        delete_timeout_s: float = 60.0,
        sweep_orphans: bool = False,
        handle_signals: bool = True,
        progress: bool | None = None,
        max_sessions: int = 64,
    ) -> None:
        self.backend = get_backend(backend, **dict(backend_options or {}))
        if not isinstance(max_sessions, int) or max_sessions < 1:
            raise ConfigurationError(f"sandbox_max_sessions must be a positive integer, got {max_sessions!r}")
        self.max_sessions = max_sessions
        self._session_slots: anyio.Semaphore | None = None
        self._session_idle: list[Sandbox] = []
        self._background: set[anyio.CancelScope] = set()  # the work of run_soon in progress
        #: Where :attr:`size` comes from, as the readiness line says it.
        self.size_origin = "sandbox_pool_size"
        if size is None:
            size, self.size_origin = default_size() if self.backend.name == "local" else (8, "the default")
        if not isinstance(size, int) or size < 1:
            raise ConfigurationError(f"sandbox pool size must be a positive integer, got {size!r}")
        self.size = size
        self.labels = dict(labels) if labels is not None else default_labels()
        self.create_timeout_s = create_timeout_s
        self.delete_timeout_s = delete_timeout_s
        self.sweep_orphans = sweep_orphans
        self.handle_signals = handle_signals
        self.progress = progress
        self.stats = PoolStats()
        #: This pool's id (label :data:`POOL_LABEL` of its sandboxes).
        self.pool_id = uuid.uuid4().hex[:12]
        self._live: dict[str, Sandbox] = {}
        self._deleting: set[str] = set()
        self._gone: set[str] = set()  # ids this pool deleted (a listing may still show them for a while)
        #: Creation labels (:data:`CREATION_LABEL`) of creations cut short whose sandbox no sweep has found yet.
        self._cut_short: set[str] = set()
        self._creating = 0  # creations in flight (close waits for them before it sweeps and closes the backend)
        self._work: set[concurrent.futures.Future] = set()  # what run() runs now: close() cancels it first
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = None
        self._portal: BlockingPortal | None = None
        self._idle_send: Any = None
        self._idle_receive: Any = None
        self._doomed_send: Any = None  # broken sandboxes, deleted in the background by _reaper
        self._doomed_receive: Any = None
        self._reaper_done: anyio.Event | None = None
        self._start_scope: anyio.CancelScope | None = None
        self._start_done: anyio.Event | None = None
        self._lock = threading.RLock()  # re-entered when a signal arrives during start/close
        self._closed = False
        self._ready = False

    # -- sync lifecycle ------------------------------------------------------------------------------------------

    @property
    def started(self) -> bool:
        """True between a successful :meth:`start` and :meth:`close`."""
        return self._ready and self._portal is not None and not self._closed

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called (or :meth:`start` failed); a closed pool cannot be started again."""
        return self._closed

    def start(self) -> SandboxPool:
        """Start the backend and create all sandboxes concurrently; return self. Idempotent.

        Interrupted (Ctrl-C, a signal, an error), it deletes what it created before raising, with or without the
        signal handlers; :meth:`close` may also be called meanwhile, from another thread or a signal handler.

        Raises:
            ConfigurationError: the backend refused its configuration (missing credentials, no isolation).
            SandboxCreationError: a sandbox could not be created within ``create_timeout_s``; the ones that were
                created have been deleted.
            InfrastructureError: the pool was closed (before or while it started).
        """
        with self._lock:
            if self._closed:
                raise InfrastructureError("this sandbox pool was closed; create a new one")
            if self._portal is not None:
                return self
            self._portal_cm = start_blocking_portal("asyncio", name="trl-sandbox-pool")
            self._portal = self._portal_cm.__enter__()
            # Tracked before the first creation: a SIGTERM during creation deletes what exists by then.
            lifecycle.track(self)
            atexit.register(self.close)
            if self.handle_signals:
                lifecycle.install_signal_handlers()
            future = self._portal.start_task_soon(self._astart)
        try:
            future.result()  # waited for without the lock: close() may run meanwhile (another thread, a signal)
        except BaseException:
            self._abort_start()
            raise
        with self._lock:
            if self._closed or self._portal is None:
                raise InfrastructureError("the sandbox pool was closed while it started")
            self._portal.start_task_soon(self._reaper)
            self._ready = True
        logger.info("trl-sandbox: pool of %d sandboxes (%s) ready; %s", self.size, self.size_origin,
                    self.backend.describe())
        return self

    def _abort_start(self) -> None:
        """After a failed or interrupted start: stop the creations, delete what exists, close the backend."""
        with self._lock:
            already_closed = self._closed
            self._closed = True
            atexit.unregister(self.close)
            lifecycle.untrack(self)
            portal = self._portal
        if portal is None or already_closed:
            return  # close() (a signal handler, another thread) did it all
        try:
            portal.call(self._aclose)
        except BaseException:  # noqa: BLE001 - the start's own error is the one to report
            logger.exception("trl-sandbox: error while deleting the sandboxes of a pool that did not start")
        finally:
            with self._lock:
                if self._portal is portal:
                    self._shutdown_portal()

    def close(self) -> None:
        """Cancel the work running on the pool (:meth:`run`), delete every sandbox (concurrently, within
        ``delete_timeout_s``) and stop its thread; a start in progress is stopped first. Creations cut short are swept
        by their labels; on a backend whose service may finish one later (``Backend.creations_outlive_cancel``),
        close looks for it until it shows, :data:`CUT_SHORT_WAIT_S` at most. Safe to call more than once, from any
        thread, a signal handler and :mod:`atexit`; never raises for a sandbox that cannot be deleted (it is logged
        and counted in ``stats.delete_failures``).
        """
        with self._lock:
            if self._closed and self._portal is None:
                return
            self._closed = True
            atexit.unregister(self.close)
            lifecycle.untrack(self)
            portal = self._portal
            if portal is None:
                return
            # First the work running on the pool (a signal's batch): it would report its sandboxes' deletion as errors.
            for future in list(self._work):
                future.cancel()
            try:
                portal.call(self._aclose)
            except Exception:  # noqa: BLE001 - closing must not raise over the error that made us close
                logger.exception("trl-sandbox: error while deleting the sandbox pool")
            finally:
                self._shutdown_portal()

    def __enter__(self) -> SandboxPool:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _shutdown_portal(self) -> None:
        portal = self._portal
        cm, self._portal_cm, self._portal = self._portal_cm, None, None
        self._ready = False
        if portal is not None:
            # Work still running on the loop has no sandbox left: cancelled, not waited for until it fails.
            try:
                portal.call(portal.stop, True)
            except RuntimeError:  # the loop is already gone
                pass
        if cm is not None:
            cm.__exit__(None, None, None)

    def run(self, fn: Callable[..., Awaitable[T]], *args: Any, timeout_s: float,
            extend: Callable[[], float] | None = None) -> T:
        """Run ``await fn(*args)`` on the pool's event loop and wait at most ``timeout_s`` seconds for it, plus the
        seconds ``extend()`` gives when the time is up (the scorer's waits for host slots, which move its deadline).

        Raises:
            InfrastructureError: the pool is not started, or ``fn`` did not finish in time (it is then cancelled).
        """
        portal = self._portal
        if not self.started or portal is None:
            raise InfrastructureError("the sandbox pool is not started (call start() or use it as a context manager)")
        future = portal.start_task_soon(fn, *args)
        self._work.add(future)
        future.add_done_callback(self._work.discard)
        start, limit = time.monotonic(), timeout_s
        try:
            while True:
                try:
                    return future.result(timeout=max(0.0, start + limit - time.monotonic()))
                except concurrent.futures.TimeoutError:
                    moved = timeout_s + (extend() if extend is not None else 0.0)
                    if moved <= limit:
                        raise
                    limit = moved  # the work's own deadline moved meanwhile: wait for it as far
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise InfrastructureError(f"the sandbox pool did not answer within {limit:.0f}s") from None
        except concurrent.futures.CancelledError:
            raise InfrastructureError("the sandbox pool was closed while it ran this work") from None
        except BaseException:  # Ctrl-C (KeyboardInterrupt) in the caller: stop the work now, not after it ends
            future.cancel()
            raise

    def run_soon(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Start ``await fn(*args)`` on the pool's event loop and return at once (work whose result nobody waits for,
        such as ending a session). Its error, if any, is logged. Closing the pool waits for it (at most
        ``delete_timeout_s`` seconds, then cancels it) before it deletes the sandboxes and closes the backend.
        Nothing happens when the pool is not started or is closed."""
        portal = self._portal
        if not self.started or portal is None:
            return

        async def job() -> None:
            with anyio.CancelScope() as scope:
                self._background.add(scope)
                try:
                    await fn(*args)
                except Exception as exc:  # noqa: BLE001 - nobody waits for it: said, not raised
                    logger.warning("trl-sandbox: background work on the pool failed: %s", exc)
                finally:
                    self._background.discard(scope)

        try:
            portal.start_task_soon(job)
        except RuntimeError:  # the loop is closing
            pass

    # -- async internals (pool loop) -----------------------------------------------------------------------------

    async def _create_one(self) -> Sandbox:
        """Create one sandbox and write the harness into it. However it ends, no sandbox is left unaccounted for: a
        creation cut short is swept by its :data:`CREATION_LABEL`, a sandbox whose setup failed is deleted."""
        if self._closed:  # a lease that found an empty slot while the pool closes: no new sandbox
            raise InfrastructureError("the sandbox pool is closed")
        self._creating += 1
        try:
            return await self._create_labelled()
        finally:
            self._creating -= 1

    async def _create_labelled(self) -> Sandbox:
        token = uuid.uuid4().hex[:12]
        labels = {**self.labels, POOL_LABEL: self.pool_id, CREATION_LABEL: token}
        try:
            sandbox = await self.backend.create(labels)
        except BaseException as exc:
            if self.backend.creations_outlive_cancel and isinstance(exc, (anyio.get_cancelled_exc_class(),
                                                                          TimeoutError)):
                self._cut_short.add(token)  # the service may still make it: looked for again at close
            with anyio.CancelScope(shield=True):
                await self._sweep_labels({CREATION_LABEL: token})
            raise
        self._live[sandbox.id] = sandbox
        self.stats.created += 1
        try:
            if self._closed:  # closed (e.g. by a signal) while this creation was in flight
                raise InfrastructureError("the sandbox pool was closed during its creation")
            await self.backend.write_files(sandbox, harness_files())
        except BaseException:
            with anyio.CancelScope(shield=True), anyio.move_on_after(self.delete_timeout_s):
                await self._delete_one(sandbox)
            raise
        return sandbox

    async def _sweep_labels(self, labels: dict[str, str]) -> None:
        """Delete the backend's sandboxes carrying ``labels`` that this pool does not hold (best effort, within
        ``delete_timeout_s``)."""
        try:
            with anyio.fail_after(self.delete_timeout_s):
                for sandbox in await self.backend.list(labels):
                    if sandbox.id not in self._live and sandbox.id not in self._gone:
                        await self.backend.delete(sandbox)
                        self._gone.add(sandbox.id)
                        self.stats.deleted += 1
                    self._cut_short.discard(sandbox.labels.get(CREATION_LABEL, ""))
        except Exception as exc:  # noqa: BLE001 - reported, never raised from cleanup
            logger.warning("trl-sandbox: sweeping sandboxes labelled %s failed: %r", labels, exc)

    async def _astart(self) -> None:
        self._start_done = anyio.Event()
        try:
            with anyio.CancelScope() as scope:
                self._start_scope = scope
                await self._create_all()
            if scope.cancelled_caught:
                raise InfrastructureError("the sandbox pool was closed while its sandboxes were being created")
        finally:
            self._start_done.set()

    async def _create_all(self) -> None:
        self._idle_send, self._idle_receive = anyio.create_memory_object_stream[Sandbox | None](self.size)
        self._doomed_send, self._doomed_receive = anyio.create_memory_object_stream[Sandbox](math.inf)
        await self.backend.start()
        if self.sweep_orphans:
            await self._sweep()
        created: list[Sandbox] = []
        errors: list[BaseException] = []
        bar = progress_bar(self.progress, total=self.size, desc=f"creating {self.backend.name} sandboxes",
                           unit="sandbox")

        async def create() -> None:
            try:
                created.append(await self._create_one())
                bar.update(1)
            except Exception as exc:  # noqa: BLE001 - gathered and reported below
                errors.append(exc)

        try:
            with anyio.move_on_after(self.create_timeout_s) as scope:
                async with anyio.create_task_group() as tg:
                    for _ in range(self.size):
                        tg.start_soon(create)
        finally:
            bar.close()
        if scope.cancelled_caught or errors:
            await self._delete_all()
            reason = f"timed out after {self.create_timeout_s}s" if scope.cancelled_caught else repr(errors[0])
            raise SandboxCreationError(
                f"creating {self.size} {self.backend.name} sandboxes failed ({len(created)} created, "
                f"then deleted): {reason}"
            )
        for sandbox in created:
            self._idle_send.send_nowait(sandbox)

    async def _sweep(self) -> None:
        try:
            with anyio.fail_after(self.delete_timeout_s):
                orphans = await lifecycle.find_orphans(self.backend, current_run=self.labels.get("trl-sandbox-run"))
                for orphan in orphans:
                    await self.backend.delete(orphan.sandbox)
                    self.stats.orphans_deleted += 1
        except Exception as exc:  # noqa: BLE001 - a failed sweep must not stop training
            logger.warning("trl-sandbox: sweeping orphaned sandboxes failed: %r", exc)
        if self.stats.orphans_deleted:
            logger.warning("trl-sandbox: deleted %d orphaned sandboxes of earlier runs", self.stats.orphans_deleted)

    async def _delete_one(self, sandbox: Sandbox) -> None:
        if sandbox.id in self._deleting:  # the reaper and close() never delete one sandbox twice at once
            return
        self._deleting.add(sandbox.id)
        try:
            await self.backend.delete(sandbox)
        except Exception as exc:  # noqa: BLE001 - reported, never raised from cleanup
            self.stats.delete_failures += 1
            logger.warning("trl-sandbox: deleting sandbox %s failed: %r", sandbox.id, exc)
            return
        finally:
            self._deleting.discard(sandbox.id)
        self.stats.deleted += 1
        self._gone.add(sandbox.id)
        # Forgotten only once deleted: one whose deletion a deadline cancelled stays listed (close() tries again).
        self._live.pop(sandbox.id, None)

    async def _delete_all(self) -> None:
        with anyio.move_on_after(self.delete_timeout_s, shield=True):
            async with anyio.create_task_group() as tg:
                for sandbox in list(self._live.values()):
                    tg.start_soon(self._delete_one, sandbox)
        if self._live:
            logger.warning("trl-sandbox: %d sandboxes could not be deleted in time: %s", len(self._live),
                           ", ".join(self._live))

    async def _reaper(self) -> None:
        """Delete the broken sandboxes leases give back, in the background: a batch never waits for a deletion.
        Ends when :meth:`_aclose` closes its stream, once the deletions it started are over."""
        self._reaper_done = anyio.Event()
        try:
            async with anyio.create_task_group() as tg:
                async for sandbox in self._doomed_receive:
                    tg.start_soon(self._delete_within_deadline, sandbox)
        finally:
            self._reaper_done.set()

    async def _delete_within_deadline(self, sandbox: Sandbox) -> None:
        with anyio.move_on_after(self.delete_timeout_s):
            await self._delete_one(sandbox)

    async def _aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            if self._start_done is not None and not self._start_done.is_set():
                if self._start_scope is not None:
                    self._start_scope.cancel()  # a start in progress: stop its creations first
                with anyio.move_on_after(self.delete_timeout_s):
                    await self._start_done.wait()
            if self._doomed_send is not None:
                self._doomed_send.close()
            if self._reaper_done is not None:
                with anyio.move_on_after(self.delete_timeout_s):
                    await self._reaper_done.wait()
            await self._finish_background()
            with anyio.move_on_after(self.delete_timeout_s):  # a creation in flight deletes what it made itself
                while self._creating:
                    await anyio.sleep(0.02)
            await self._delete_all()
            # Sandboxes the backend made while the pool was giving up on their creation.
            await self._sweep_labels({POOL_LABEL: self.pool_id})
            await self._sweep_cut_short()
            if self._idle_send is not None:
                self._idle_send.close()
            for stream in (self._idle_receive, self._doomed_receive):
                if stream is not None:  # closed here: one left to the garbage collector warns at interpreter exit
                    stream.close()
            await self.backend.aclose()

    async def _sweep_cut_short(self) -> None:
        """Look again for the sandboxes of creations cut short on a backend whose service may finish them later
        (``creations_outlive_cancel``), until they appear (:data:`CUT_SHORT_WAIT_S` at most, never past
        ``delete_timeout_s``): one registered after the first sweep would run, billed, to its lifetime limit."""
        if not self._cut_short:
            return
        wait_s = min(CUT_SHORT_WAIT_S, self.delete_timeout_s)
        logger.info("trl-sandbox: %d sandbox creation(s) were cut short; waiting up to %gs for the %s service to "
                    "show them, to delete them", len(self._cut_short), wait_s, self.backend.name)
        delay = 0.25
        with anyio.move_on_after(wait_s):
            while self._cut_short:
                await anyio.sleep(delay)
                delay = min(2 * delay, 4.0)
                await self._sweep_labels({POOL_LABEL: self.pool_id})
        if self._cut_short:
            logger.warning("trl-sandbox: %d sandbox creation(s) cut short never showed on the %s service within %gs "
                           "(the request may not have reached it); if it made them, its lifetime limit ends them",
                           len(self._cut_short), self.backend.name, wait_s)

    async def _finish_background(self) -> None:
        """Let the work of :meth:`run_soon` end (it may still use the backend): ``delete_timeout_s`` seconds at most,
        then cancel what is left and give it a few seconds to unwind."""
        with anyio.move_on_after(self.delete_timeout_s):
            while self._background:
                await anyio.sleep(0.02)
        for scope in list(self._background):
            scope.cancel()
        with anyio.move_on_after(5.0):
            while self._background:
                await anyio.sleep(0.02)

    @asynccontextmanager
    async def lease(self, *, timeout_s: float) -> AsyncIterator[Lease]:
        """Borrow an idle sandbox for one execution (pool loop only), waiting at most ``timeout_s`` seconds.

        A sandbox returned with ``lease.broken`` set is deleted at once; its replacement is created by the next
        lease that needs it (so a straggler's cancellation never waits for a creation).

        Raises:
            InfrastructureError: no sandbox became idle in time, a replacement could not be created, or the pool
                is closed.
        """
        try:
            with anyio.fail_after(timeout_s):
                sandbox = await self._idle_receive.receive()
                if sandbox is None:  # the slot of a broken sandbox: create its replacement now
                    sandbox = await self._replace()
        except TimeoutError:
            raise InfrastructureError(f"no sandbox became free within {timeout_s:.1f}s") from None
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise InfrastructureError("the sandbox pool is closed") from None
        lease = Lease(sandbox)
        try:
            yield lease
        finally:
            with anyio.CancelScope(shield=True):
                await self._give_back(lease)

    async def _replace(self) -> Sandbox:
        """Create the replacement of a broken sandbox (its slot was an empty marker in the idle queue).

        Raises:
            InfrastructureError: the creation failed or took longer than ``create_timeout_s``; the slot stays
                empty for a later lease to try again.
        """
        try:
            with anyio.fail_after(self.create_timeout_s):
                sandbox = await self._create_one()
        except BaseException as exc:
            self._put_idle(None)
            if isinstance(exc, Exception):
                logger.warning("trl-sandbox: creating a replacement sandbox failed: %r", exc)
                raise InfrastructureError(f"creating a replacement sandbox failed: {exc!r}") from exc
            raise
        self.stats.replaced += 1
        return sandbox

    async def _give_back(self, lease: Lease) -> None:
        if lease.broken and not self._closed:
            try:
                self._doomed_send.send_nowait(lease.sandbox)  # deleted in the background (_reaper)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass  # closing: _aclose deletes what is left
            self._put_idle(None)  # replaced by the next lease
        else:
            self._put_idle(lease.sandbox)

    def _put_idle(self, sandbox: Sandbox | None) -> None:
        try:
            self._idle_send.send_nowait(sandbox)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def acquire_session_sandbox(self, *, timeout_s: float) -> Sandbox:
        """A sandbox for one interpreter session, held until :meth:`release_session_sandbox` (pool loop only): a
        kept one, else a new one, at most :attr:`max_sessions` at once; waits at most ``timeout_s`` seconds for one.

        Raises:
            InfrastructureError: the pool is closed, every session sandbox is in use past ``timeout_s``, or the
                creation failed.
        """
        if self._closed or not self._ready:
            raise InfrastructureError("the sandbox pool is closed")
        if self._session_slots is None:
            self._session_slots = anyio.Semaphore(self.max_sessions)
        try:
            with anyio.fail_after(timeout_s):
                await self._session_slots.acquire()
        except TimeoutError:
            raise InfrastructureError(
                f"all {self.max_sessions} session sandboxes stayed in use for {timeout_s:.0f}s (sandbox_max_sessions)"
            ) from None
        try:
            if self._session_idle:
                return self._session_idle.pop()
            with anyio.fail_after(self.create_timeout_s):
                sandbox = await self._create_one()
        except BaseException as exc:
            self._session_slots.release()
            if isinstance(exc, TimeoutError):
                raise InfrastructureError("creating a session sandbox took too long") from None
            raise
        self.stats.sessions_created += 1
        return sandbox

    async def release_session_sandbox(self, sandbox: Sandbox, *, broken: bool = False) -> None:
        """Give back a session's sandbox (pool loop only): kept for the next session, or deleted in the background
        when ``broken`` (its process could not be stopped cleanly) or the pool is closing."""
        if self._session_slots is not None:
            self._session_slots.release()
        if broken or self._closed:
            try:
                self._doomed_send.send_nowait(sandbox)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, AttributeError):
                pass  # closing: _aclose deletes what is left
            return
        self._session_idle.append(sandbox)

    def live_sandboxes(self) -> list[Sandbox]:
        """The sandboxes this pool created and has not deleted (a snapshot)."""
        return list(self._live.values())

