"""Typed errors of trl-sandbox.

Two families matter to callers:

- :class:`ConfigurationError` and :class:`TaskFormatError` are the user's to fix (a bad option, an unknown backend
  name, a malformed task record). They are raised early, with one actionable message.
- :class:`InfrastructureError` means the sandbox machinery failed (a sandbox died, the backend is unreachable, a
  deadline on the backend passed). It is never the model's fault: the scorer turns it into a ``None`` reward with
  status ``infra_error``, never into a wrong answer.

A completion's own failures (syntax errors, exceptions, timeouts) are not exceptions at all: they are data in
:class:`trl_sandbox.backends.base.ExecResult` and :class:`trl_sandbox.scoring.ScoreResult`.
"""

from __future__ import annotations


class TrlSandboxError(Exception):
    """Base class of every error raised by trl-sandbox."""


class ConfigurationError(TrlSandboxError, ValueError):
    """An option is invalid or inconsistent; the message says which one and what to use instead."""


class UnknownBackendError(ConfigurationError):
    """``sandbox_backend`` names no registered backend; the message lists the available ones."""


class IsolationUnavailableError(ConfigurationError):
    """The local backend cannot isolate code on this machine (no namespaces, or no unprivileged user).

    Raised at pool start, before any model code runs, instead of silently running code unsandboxed.
    """


class TaskFormatError(TrlSandboxError, ValueError):
    """A task record (dataset row) cannot be turned into tests: missing, ill-typed or malformed fields.

    Attributes:
        task_id: The row's id when known (its results carry it), else None.
    """

    task_id: str | None = None


class InfrastructureError(TrlSandboxError):
    """The sandbox infrastructure failed: not the code's fault, so never scored as a wrong answer."""


class SandboxCreationError(InfrastructureError):
    """Creating the pool's sandboxes failed; whatever had been created was deleted before raising."""
