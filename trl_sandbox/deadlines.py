"""Batch deadlines that do not count a completion's waits for the host's cores: while a completion waits for a slot
of the host's admission limit (other runs' executions hold the cores, see ``backends/_admission.py``), its deadline
stands still, and afterwards it is later by the wait (:class:`Waits`); the scorer's guard on the whole batch follows
(:class:`Moved`)."""

from __future__ import annotations

import contextvars
import math
import time
from dataclasses import dataclass, field

import anyio

from .results import Timing

__all__ = ["WAITS", "Moved", "Waits"]


class Moved:
    """How far the deadlines of a batch's completions moved for their waits for host slots (seconds), ongoing waits
    included: :meth:`trl_sandbox.scoring.Scorer.score`'s guard waits as much longer."""

    def __init__(self) -> None:
        self.most = 0.0
        self.waiting: set[Waits] = set()

    def __call__(self) -> float:
        now = time.monotonic()
        ongoing = (w.admission_s + now - w.since for w in list(self.waiting) if w.since is not None)
        return max(self.most, *ongoing, 0.0)


@dataclass(eq=False)
class Waits:
    """One completion's waits for slots of the host's admission limit, as :meth:`trl_sandbox.scoring.Scorer.ascore`
    moves its deadline by them: ``scope`` (its batch deadline: none while it waits, then moved by the wait),
    ``moved`` (the batch's), ``timing`` (its accounting), ``followers`` (the completions waiting for its run: the
    same program)."""

    scope: anyio.CancelScope | None = None
    moved: Moved | None = None
    timing: Timing | None = None
    admission_s: float = 0.0
    followers: list[Waits] = field(default_factory=list)
    since: float | None = None  # monotonic seconds: when the ongoing wait began
    saved: float = math.inf  # the scope's deadline before the ongoing wait

    def __call__(self, seconds: float | None) -> None:
        """The admission's ``on_wait``: None when a wait begins, then its seconds when it ends."""
        if seconds is None:
            self.begin()
        else:
            self.end(seconds, own=True)

    def begin(self) -> None:
        if self.since is not None:
            return
        self.since = time.monotonic()
        if self.scope is not None:
            self.saved, self.scope.deadline = self.scope.deadline, math.inf
        if self.moved is not None:
            self.moved.waiting.add(self)
        for follower in self.followers:
            follower.begin()

    def end(self, seconds: float, own: bool = False) -> None:
        if own and self.timing is not None:
            self.timing.admission_s += seconds
        self.admission_s += seconds
        if self.scope is not None:
            self.scope.deadline = (self.saved if self.since is not None else self.scope.deadline) + seconds
        self.since = None
        if self.moved is not None:
            self.moved.waiting.discard(self)
            self.moved.most = max(self.moved.most, self.admission_s)
        for follower in self.followers:
            follower.end(seconds)


#: The :class:`Waits` of the completion the current task scores (set per completion by
#: :meth:`trl_sandbox.scoring.Scorer.ascore`).
WAITS: contextvars.ContextVar[Waits | None] = contextvars.ContextVar("trl_sandbox_waits", default=None)
