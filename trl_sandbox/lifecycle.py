"""What makes sandboxes go away however a run ends, and what finds the ones an earlier run could not delete.

Deletion paths of a pool (:class:`~trl_sandbox.pool.SandboxPool`), for every backend:

- normal end and exceptions: ``SandboxPool.close`` (the trainer calls it at ``on_train_end`` and in a ``finally``
  around ``train()``);
- interpreter exit: ``atexit`` (registered by ``SandboxPool.start``);
- SIGINT and SIGTERM: :func:`install_signal_handlers` closes every open pool, then lets the signal do what it did
  before (the previous Python handler runs, e.g. ``KeyboardInterrupt``; or, for the default action, the signal is
  raised again so the process ends with that signal);
- SIGKILL, power loss: nothing in the process can run. Remote backends carry a server-side backstop (Daytona:
  auto-stop when idle, then auto-delete), and :func:`find_orphans` / ``trl-sandbox cleanup`` find what is left.

An *orphan* is a sandbox this package created (label :data:`MANAGED_LABEL`) whose run is over: from this host and
its process (label ``trl-sandbox-pid``) is gone, or (only when asked, for sandboxes of other hosts whose processes
cannot be checked from here) older than a given age. A sandbox of a live run, a sibling training on the same
account included, is never an orphan. What a backend made on this host outside a sandbox that is gone (the local
backend's cgroups of a killed run) is found by :meth:`~trl_sandbox.backends.Backend.leftovers`; ``trl-sandbox
cleanup`` lists both.
"""

from __future__ import annotations

import calendar
import logging
import os
import signal
import socket
import threading
import time
import uuid
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ._version import __version__
from .backends._host import process_alive

if TYPE_CHECKING:  # pragma: no cover
    from .backends import Backend, Sandbox

logger = logging.getLogger(__name__)

__all__ = ["CREATED_FORMAT", "MANAGED_LABEL", "Orphan", "find_orphans", "install_signal_handlers", "parse_age"]

#: Label (value ``"true"``) on every sandbox trl-sandbox creates; the others (``trl-sandbox-run``, ``-rank``,
#: ``-host``, ``-pid``, ``-created``, ``-version``) say which run owns it.
MANAGED_LABEL = "trl-sandbox"
#: ``time.strftime`` format (UTC) of the ``trl-sandbox-created`` label.
CREATED_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


class Closable(Protocol):
    """What the signal handlers close: a sandbox pool (``SandboxPool``), or anything with an idempotent
    ``close()``."""

    def close(self) -> None: ...


_open_pools: weakref.WeakSet[Closable] = weakref.WeakSet()
#: Per signal: what it did when trl-sandbox last installed its handler (run after the pools are closed).
_previous: dict[int, Any] = {}
#: Per signal: what it did before trl-sandbox first installed its handler (see _on_signal's re-entry rule).
_original: dict[int, Any] = {}
_handling: set[int] = set()
_install_lock = threading.Lock()


def track(pool: Closable) -> None:
    """Remember an open pool, for the signal handlers (called by ``SandboxPool.start``)."""
    _open_pools.add(pool)


def untrack(pool: Closable) -> None:
    """Forget a closed pool (called by ``SandboxPool.close``)."""
    _open_pools.discard(pool)


def open_pools() -> list[Closable]:
    """The pools started and not closed yet (those the signal handlers would close now)."""
    return list(_open_pools)


def install_signal_handlers(signals: Iterable[int] = (signal.SIGINT, signal.SIGTERM)) -> bool:
    """Make SIGINT and SIGTERM delete every open pool's sandboxes first, then act as before. Idempotent.

    Only the main thread may install signal handlers (a Python rule); elsewhere this does nothing and returns False.
    Handlers installed later by other code replace ours (and usually chain to it); installed earlier, they are
    chained. An ignored signal (``SIG_IGN``: SIGINT of a background job started by a non-interactive shell) stays
    ignored: ignoring it is the process's decision, and deleting the pool on it would only break the run.
    """
    if threading.current_thread() is not threading.main_thread():
        return False
    with _install_lock:
        for signum in signals:
            current = signal.getsignal(signum)
            if current is _on_signal or current == signal.SIG_IGN:
                continue
            _previous[signum] = current
            _original.setdefault(signum, current)
            signal.signal(signum, _on_signal)
    return True


def _on_signal(signum: int, frame: Any) -> None:
    if signum in _handling:
        # Re-entered: a handler installed after ours chained back to it, and ours (installed again by a later pool)
        # chained to that handler. Act as the signal did before trl-sandbox, instead of going round forever.
        _act_as(_original.get(signum, signal.SIG_DFL), signum, frame)
        return
    _handling.add(signum)
    try:
        pools = list(_open_pools)
        if pools:
            logger.warning("trl-sandbox: %s received, deleting %d sandbox pool(s)", signal.Signals(signum).name,
                           len(pools))
        for pool in pools:
            try:
                pool.close()
            except Exception:  # noqa: BLE001 - cleanup must not replace the signal's own effect
                logger.exception("trl-sandbox: error while deleting a sandbox pool on a signal")
        _act_as(_previous.get(signum, signal.SIG_DFL), signum, frame)
    finally:
        _handling.discard(signum)


def _act_as(handler: Any, signum: int, frame: Any) -> None:
    """Do what ``handler`` (a signal disposition) does for ``signum``."""
    if callable(handler):
        handler(signum, frame)
    elif handler == signal.SIG_IGN:
        return
    else:  # the default action (end the process), or a handler installed outside Python: end with the signal
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


# -- orphans ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Orphan:
    """A sandbox judged an orphan, and why (``reason``: a short sentence)."""

    sandbox: Sandbox
    reason: str


def parse_age(text: str) -> float:
    """Seconds in an age such as ``"90s"``, ``"30m"``, ``"24h"``, ``"7d"``. The unit is required: ``--older-than 3``
    could mean 3 seconds or 3 days, and on a remote backend selects other hosts' sandboxes.

    Raises:
        ValueError: the text is not a number with an ``s``/``m``/``h``/``d`` suffix.
    """
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    text = text.strip().lower()
    scale = units.get(text[-1:], None)
    try:
        if scale is None:
            raise ValueError
        value = float(text[:-1]) * scale
    except ValueError:
        raise ValueError(f"not an age: {text!r} (a number and a unit: 90s, 30m, 24h, 7d)") from None
    if value < 0:
        raise ValueError(f"an age cannot be negative: {text!r}")
    return value


def _created_at(labels: dict[str, str]) -> float | None:
    try:
        return calendar.timegm(time.strptime(labels["trl-sandbox-created"], CREATED_FORMAT))
    except (KeyError, ValueError):
        return None


def orphan_reason(labels: dict[str, str], *, run_id: str | None = None, older_than_s: float | None = None,
                  current_run: str | None = None, now: float | None = None) -> str | None:
    """Why a sandbox with ``labels`` is an orphan, or None when it is not (or not ours).

    Args:
        labels: The sandbox's labels.
        run_id: Select this run's sandboxes, whether its processes live or not (an explicit request).
        older_than_s: Also select sandboxes created more than this many seconds ago, on any host.
        current_run: The caller's own run id: never selected.
        now: The time (``time.time()``) for ages.
    """
    if labels.get(MANAGED_LABEL) != "true":
        return None
    run = labels.get("trl-sandbox-run")
    if current_run is not None and run == current_run:
        return None
    if run_id is not None:
        return f"run {run}" if run == run_id else None
    pid = labels.get("trl-sandbox-pid", "")
    if labels.get("trl-sandbox-host") == socket.gethostname() and pid.isdigit() and not process_alive(int(pid)):
        return f"its process {pid} on this host is gone"
    created = _created_at(labels)
    now = time.time() if now is None else now
    if older_than_s is not None and created is not None and now - created > older_than_s:
        return f"created {(now - created) / 3600:.1f} h ago"
    return None


async def find_orphans(backend: Backend, *, run_id: str | None = None, older_than_s: float | None = None,
                       current_run: str | None = None) -> list[Orphan]:
    """The backend's orphaned sandboxes (see the module docstring and :func:`orphan_reason`).

    Raises:
        InfrastructureError: the backend could not list its sandboxes.
    """
    found = []
    for sandbox in await backend.list({MANAGED_LABEL: "true"}):
        reason = orphan_reason(sandbox.labels, run_id=run_id, older_than_s=older_than_s, current_run=current_run)
        if reason is not None:
            found.append(Orphan(sandbox, reason))
    return found


def default_labels(run_id: str | None = None, rank: int | None = None) -> dict[str, str]:
    """Ownership labels for a pool's sandboxes (all ``str -> str``): ``trl-sandbox: "true"``, the package version,
    run id, process rank, host, process id, creation time (UTC, :data:`CREATED_FORMAT`). The orphan sweep reads them
    (:func:`find_orphans`)."""
    if rank is None:
        rank = int(os.environ.get("RANK", os.environ.get("LOCAL_RANK", "0")) or 0)
    return {
        MANAGED_LABEL: "true",
        "trl-sandbox-version": __version__,
        "trl-sandbox-run": run_id or uuid.uuid4().hex[:12],
        "trl-sandbox-rank": str(rank),
        "trl-sandbox-host": socket.gethostname(),
        "trl-sandbox-created": time.strftime(CREATED_FORMAT, time.gmtime()),
        "trl-sandbox-pid": str(os.getpid()),
    }
