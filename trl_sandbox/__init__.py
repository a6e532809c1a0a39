"""trl-sandbox: run model-written code safely and fast during TRL GRPO training, and turn test results into rewards.

Importing this package does not import torch or trl: :class:`SandboxGRPOTrainer` and :class:`SandboxGRPOConfig`
are loaded on first access.

    from trl_sandbox import SandboxGRPOConfig, SandboxGRPOTrainer, code_reward
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import netguard as _netguard
from ._version import __version__
from .completions import extract_code
from .config import SandboxConfig
from .environment import CodeEnvironment
from .errors import (
    ConfigurationError,
    InfrastructureError,
    IsolationUnavailableError,
    SandboxCreationError,
    TaskFormatError,
    TrlSandboxError,
    UnknownBackendError,
)
from .loading import load_tasks, task_dataset
from .pool import SandboxPool
from .prompts import chat_rows
from .rewards import CodeReward, code_reward
from .scoring import Scorer, ScoreResult
from .tasks import Task

if TYPE_CHECKING:
    from .trainer import SandboxGRPOConfig, SandboxGRPOTrainer

__all__ = [
    "CodeEnvironment",
    "CodeReward",
    "ConfigurationError",
    "InfrastructureError",
    "IsolationUnavailableError",
    "SandboxConfig",
    "SandboxCreationError",
    "SandboxGRPOConfig",
    "SandboxGRPOTrainer",
    "SandboxPool",
    "ScoreResult",
    "Scorer",
    "Task",
    "TaskFormatError",
    "TrlSandboxError",
    "UnknownBackendError",
    "__version__",
    "chat_rows",
    "code_reward",
    "extract_code",
    "load_tasks",
    "task_dataset",
]

_netguard.install_if_asked()  # TRL_SANDBOX_LOCAL_NETWORK_ONLY: a test suite's child process (see netguard)

_LAZY = {"SandboxGRPOConfig", "SandboxGRPOTrainer"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import trainer

        return getattr(trainer, name)
    raise AttributeError(f"module 'trl_sandbox' has no attribute {name!r}")
