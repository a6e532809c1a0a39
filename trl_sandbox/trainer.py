"""``SandboxGRPOTrainer``: ``trl.GRPOTrainer`` with a sandbox pool whose lifecycle follows training.

This is the only module of trl-sandbox that imports torch and trl.

Lifecycle, on every process: the pool is created (concurrently) by a trainer callback at ``on_train_begin``, and
deleted at ``on_train_end`` and, because TRL does not call ``on_train_end`` when training raises, also in a
``finally`` around :meth:`SandboxGRPOTrainer.train`. Nothing is left running after ``train()`` returns or raises.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
import time
import uuid
import warnings
from dataclasses import dataclass
from typing import Any

from transformers import ProgressCallback, TrainerCallback
from trl import GRPOConfig, GRPOTrainer

from . import environment as _environment
from .backends import Backend
from .config import SandboxConfig
from .environment import CodeEnvironment, environment_metrics, rewards_of
from .errors import ConfigurationError
from .lifecycle import default_labels
from .rewards import CodeReward
from .scoring import Scorer, set_active_scorer

__all__ = ["MetricsJsonlCallback", "RewardProgressCallback", "SandboxGRPOConfig", "SandboxGRPOTrainer",
           "SandboxPoolCallback"]


@dataclass
class SandboxGRPOConfig(GRPOConfig, SandboxConfig):
    r"""Configuration of :class:`SandboxGRPOTrainer`: every field of ``trl.GRPOConfig`` plus the ``sandbox_*``
    fields of :class:`trl_sandbox.config.SandboxConfig` (backend and options, pool size, per-test and
    per-completion timeouts in seconds, memory limit and output cap in bytes, concurrency).

    Parses from the command line and YAML with ``trl.TrlParser`` like any TRL config; the ``sandbox_*`` fields also
    by their short names (``--backend``, ``--pool-size``). Defaults that differ from TRL's:

    - on a machine without a GPU, an unset ``bf16`` is False (TRL's ``GRPOConfig`` sets it to True, which fails
      there), so the same config runs on a CPU and on a GPU; ``dataloader_pin_memory`` is False there too (pinned
      memory only serves copies to a GPU, and torch warns of it);
    - TRL's ``gradient_checkpointing=True`` is carried as ``activation_checkpointing`` where transformers (>= 5.24)
      renamed it, which would warn at every config otherwise.

    Raises:
        ConfigurationError: a ``sandbox_*`` value is invalid (see
            :meth:`~trl_sandbox.config.SandboxConfig.validate_sandbox_options`).
    """

    def __post_init__(self) -> None:
        accelerator = _has_accelerator()
        if self.bf16 is None and not self.fp16 and not accelerator:
            # TRL turns an unset bf16 on, which a machine without a GPU refuses ("Your setup doesn't support
            # bf16/gpu"): the same config then runs on a laptop and on a GPU node. Set bf16 to choose.
            self.bf16 = False
        if not accelerator:  # pinned memory is for copies to a GPU; torch warns of it at every epoch without one
            self.dataloader_pin_memory = False
        if getattr(self, "activation_checkpointing", False) is None and self.gradient_checkpointing is not None:
            # transformers >= 5.24 renamed gradient_checkpointing to activation_checkpointing and warns on the old
            # name, which GRPOConfig sets by default (True): the same setting under its new name, without the warning.
            self.activation_checkpointing, self.gradient_checkpointing = self.gradient_checkpointing, None
            if self.gradient_checkpointing_kwargs is not None and self.activation_checkpointing_kwargs is None:
                self.activation_checkpointing_kwargs, self.gradient_checkpointing_kwargs = (
                    self.gradient_checkpointing_kwargs, None)
        GRPOConfig.__post_init__(self)  # TrainingArguments does not chain __post_init__ to our mixin
        self.validate_sandbox_options()


#: The deprecation warnings of transformers (>= 5.24) that TRL's own calls raise at every step: see
#: :meth:`SandboxGRPOTrainer.train`.
_TRL_DEPRECATED_CALLS = r"`(gradient_checkpointing_enable|gradient_checkpointing_disable|is_gradient_checkpointing)` is"


def _has_accelerator() -> bool:
    """Whether torch sees a device that trains in bf16 (CUDA, XPU or Apple's MPS)."""
    import torch

    return bool(torch.cuda.is_available() or getattr(torch, "xpu", None) and torch.xpu.is_available()
                or getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())


def _label_value(text: str) -> str:
    """``text`` reduced to a label-safe value: letters, digits, ``.``, ``_``, ``-``; at most 63 characters."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", text)[:63]


class SandboxPoolCallback(TrainerCallback):
    """Starts the trainer's sandbox pool at ``on_train_begin`` and deletes it at ``on_train_end``; keeps the
    ``trl-sandbox-step`` label of new sandboxes at the current step.

    While the pool is up, its scorer is the active one (:func:`trl_sandbox.scoring.set_active_scorer`), so reward
    functions that call :data:`~trl_sandbox.code_reward` without being bound to a pool use it too.
    """

    def __init__(self, trainer: SandboxGRPOTrainer) -> None:
        self.trainer = trainer

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.trainer._start_sandboxes()

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.trainer._close_sandboxes()

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        pool = self.trainer.scorer.pool
        if pool.started:  # sandboxes created from now on (replacements) carry the step they were made at
            pool.labels = {**pool.labels, "trl-sandbox-step": str(state.global_step)}


class MetricsJsonlCallback(TrainerCallback):
    """Appends one JSON object per logging step to ``path`` (main process only): ``step``, ``epoch``,
    ``num_processes`` (the training processes whose metrics TRL averaged into the record), and every
    logged value (TRL's ``reward``, ``rewards/*``, and the ``sandbox/*`` metrics of the code reward), plus the
    pool counters ``sandbox/pool_created``, ``sandbox/pool_replaced``, and the backend's own counters when it keeps
    some (Daytona: ``sandbox/backend_retries``, ``sandbox/backend_rate_limited``, ``sandbox/backend_orphans_deleted``).

    Args:
        path: Output file (created, parent directories included; truncated at ``on_train_begin``).
        trainer: Optional trainer whose pool counters are added.
    """

    def __init__(self, path: str | os.PathLike[str], trainer: SandboxGRPOTrainer | None = None) -> None:
        self.path = os.fspath(path)
        self.trainer = trainer

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.is_world_process_zero:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            open(self.path, "w").close()

    def on_log(self, args: Any, state: Any, control: Any, logs: dict | None = None, **kwargs: Any) -> None:
        if not state.is_world_process_zero or not logs:
            return
        record: dict[str, Any] = {"step": state.global_step, "epoch": state.epoch, "num_processes": args.world_size}
        record.update({k: v for k, v in logs.items() if isinstance(v, (int, float, str, bool)) or v is None})
        scorer = self.trainer.scorer if self.trainer is not None else None
        if scorer is not None:
            record["sandbox/pool_created"] = scorer.pool.stats.created
            record["sandbox/pool_replaced"] = scorer.pool.stats.replaced
            backend_stats = getattr(scorer.pool.backend, "stats", None)
            if isinstance(backend_stats, dict):  # remote backends: retries, rate_limited...
                record.update({f"sandbox/backend_{k}": v for k, v in backend_stats.items()})
        with open(self.path, "a") as f:
            f.write(json.dumps(record) + "\n")


class RewardProgressCallback(ProgressCallback):
    """transformers' training progress bar with the figures one watches as its postfix (``reward``, ``pass rate``,
    ``step`` time in seconds, and ``infra`` errors when there are some), instead of the one printed dict per logging
    step of ``ProgressCallback.on_log``; every value stays in ``metrics.jsonl`` and TRL's loggers (``report_to``).

    ``trl-sandbox train`` uses it. With a trainer of your own: ``trainer.remove_callback(ProgressCallback)`` then
    ``trainer.add_callback(RewardProgressCallback())``.

    Args:
        bar: Draw the bar (tqdm, on stderr). False (``disable_tqdm=True``): print the same figures as one line at
            about every tenth of the run's steps, and at its last.
    """

    #: ``(label, logged key, format)`` of the figures shown.
    FIGURES = (("reward", "reward", "{:.3f}"), ("pass rate", "sandbox/pass_rate", "{:.3f}"),
               ("step", "step_time", "{:.2f} s"), ("infra", "sandbox/infra_errors", "{:.0f}"))

    def __init__(self, bar: bool = True) -> None:
        super().__init__()
        self.bar = bar
        self._last_line = 0.0

    def figures(self, logs: dict[str, Any]) -> dict[str, str]:
        """The shown figures of one step's ``logs``: ``{label: formatted value}`` (``infra`` only when non-zero)."""
        shown = {}
        for label, key, fmt in self.FIGURES:
            value = logs.get(key)
            if isinstance(value, (int, float)) and not (label == "infra" and not value):
                shown[label] = fmt.format(value)
        return shown

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.bar:
            super().on_train_begin(args, state, control, **kwargs)
        else:
            self.training_bar, self.current_step = None, 0

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.bar:
            super().on_step_end(args, state, control, **kwargs)

    def on_log(self, args: Any, state: Any, control: Any, logs: dict | None = None, **kwargs: Any) -> None:
        if not state.is_world_process_zero or not logs:
            return
        shown = self.figures(logs)
        if not shown:  # e.g. the final train_runtime record: trl-sandbox train prints its own summary
            return
        if self.training_bar is not None:
            self.training_bar.set_postfix(shown, refresh=False)
            return
        every = max(1, state.max_steps // 10)
        if not self.bar and (state.global_step % every == 0 or state.global_step >= state.max_steps
                             or time.monotonic() - self._last_line > 60):
            self._last_line = time.monotonic()
            figures = "  ".join(f"{label} {value}" for label, value in shown.items())
            print(f"step {state.global_step}/{state.max_steps}  {figures}", file=sys.stderr, flush=True)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.bar:
            super().on_train_end(args, state, control, **kwargs)


class SandboxGRPOTrainer(GRPOTrainer):
    """Drop-in subclass of ``trl.GRPOTrainer`` that owns a pool of sandboxes for scoring code.

    Takes every argument ``GRPOTrainer`` takes, in the same order, plus:

    Args:
        model: As in ``GRPOTrainer`` (model id or model).
        reward_funcs: As in ``GRPOTrainer``; defaults to ``[code_reward]`` (to none with an ``environment_factory``,
            such as :class:`~trl_sandbox.environment.CodeEnvironment`, whose ``get_reward`` is the reward). Every
            :class:`~trl_sandbox.rewards.CodeReward` among them is bound to this trainer's pool.
        args: A :class:`SandboxGRPOConfig` (a plain ``GRPOConfig`` works too, with default sandbox options).
        sandbox_backend: A :class:`~trl_sandbox.backends.Backend` instance to use instead of
            ``args.sandbox_backend`` (for instance a configured ``MockBackend`` in tests).
        *trainer_args, **trainer_kwargs: Passed to ``GRPOTrainer`` unchanged.

    Attributes:
        scorer: The :class:`~trl_sandbox.scoring.Scorer` (and through ``scorer.pool``, the pool) of the current
            or last ``train()`` call.

    Under ``accelerate launch`` every process owns a pool for its own completions, labelled with its rank
    (``trl-sandbox-rank``) and with one run id for all ranks (``$TRL_SANDBOX_RUN_ID``, else rank 0's random id,
    broadcast when training begins). Only the first process of each machine shows the creation progress bar.

    Raises:
        ConfigurationError, UnknownBackendError: from the sandbox options, at construction.
    """

    def __init__(
        self,
        model: Any,
        reward_funcs: Any = None,
        args: GRPOConfig | None = None,
        *trainer_args: Any,
        sandbox_backend: Backend | None = None,
        **trainer_kwargs: Any,
    ) -> None:
        if args is None:
            name = model if isinstance(model, str) else getattr(getattr(model, "config", None), "_name_or_path", "")
            args = SandboxGRPOConfig(f"{str(name).split('/')[-1] or 'model'}-SandboxGRPO")
        if reward_funcs is None:  # an environment that owns the reward (CodeEnvironment) needs no other
            reward_funcs = [] if trainer_kwargs.get("environment_factory") is not None else [CodeReward()]
        funcs = reward_funcs if isinstance(reward_funcs, list) else [reward_funcs]
        self._sandbox_config = args if isinstance(args, SandboxConfig) else SandboxConfig()
        self._sandbox_backend = sandbox_backend
        self._run_id = os.environ.get("TRL_SANDBOX_RUN_ID") or uuid.uuid4().hex[:12]
        self.scorer: Scorer = Scorer.from_config(self._sandbox_config, backend=sandbox_backend)
        self._bound_rewards = [f.bind(self.scorer) if isinstance(f, CodeReward) and f.scorer is None else f for f in funcs]
        self._previous_scorer: Scorer | None = None
        super().__init__(model, self._bound_rewards, args, *trainer_args, **trainer_kwargs)
        # First among the callbacks, so that the pool is up (and its readiness line logged) before transformers'
        # ProgressCallback draws the training bar: a line logged under a drawn bar is glued to it.
        self.callback_handler.callbacks.insert(0, SandboxPoolCallback(self))
        self._pending_completions: list | None = None
        self._prefetched_messages: list = []
        self._batch_environment_rewards()
        self.add_callback(MetricsJsonlCallback(os.path.join(self.args.output_dir, "metrics.jsonl"), self))

    def train(self, *args: Any, **kwargs: Any) -> Any:
        """Run ``GRPOTrainer.train`` (same arguments) and delete the sandbox pool however it ends.

        The pool is started by :class:`SandboxPoolCallback` once training begins; if ``train()`` raises (TRL then
        skips ``on_train_end``), the pool is deleted before the exception propagates.
        """
        if self.scorer.pool.started or self.scorer.pool.closed:  # a second train(): a fresh pool
            self._new_scorer()
        try:
            with warnings.catch_warnings():
                # TRL (1.16) toggles checkpointing around each generation through transformers' old names, which
                # transformers >= 5.24 deprecates: TRL's calls, nothing the user wrote or can change.
                warnings.filterwarnings("ignore", _TRL_DEPRECATED_CALLS, FutureWarning)
                return super().train(*args, **kwargs)
        finally:
            self._close_sandboxes()

    # -- CodeEnvironment: a turn's tool calls at once, a batch's rewards at once -----------------------------------

    def _batch_environment_rewards(self) -> None:
        """Replace the reward TRL derived from each :class:`~trl_sandbox.environment.CodeEnvironment` class's
        ``get_reward`` (one call per rollout, one after another) with one that scores the batch's submissions
        concurrently and logs the tool metrics (``sandbox/tool_*``, ``sandbox/submissions``)."""
        factories = getattr(self, "environment_factories", None) or {}
        pool = getattr(self, "_environment_pool", {}) or {}
        env_types = {type(instances[0]) for instances in pool.values() if instances}
        code_types = {t for t in env_types if issubclass(t, CodeEnvironment)}
        if not factories or not code_types:
            return
        rollouts = int(getattr(self.args, "generation_batch_size", 0) or 0)
        if rollouts > self._sandbox_config.sandbox_max_sessions:
            # Sessions are held until the batch's rewards: rollouts past the maximum would wait for a sandbox
            # that frees only after them.
            raise ConfigurationError(
                f"environment_factory=CodeEnvironment: a generation batch has {rollouts} rollouts per process "
                f"(generation_batch_size), each with its own session sandbox, but sandbox_max_sessions="
                f"{self._sandbox_config.sandbox_max_sessions}; raise sandbox_max_sessions to at least {rollouts}"
            )
        for i, name in enumerate(list(self.reward_func_names)):
            env_type = next((t for t in code_types if t.__name__ == name), None)
            if env_type is not None and getattr(self.reward_funcs[i], "__name__", "") == "get_reward":
                self.reward_funcs[i] = functools.partial(self._environment_rewards, env_type)

    def _environment_rewards(self, env_type: type, environments: list | None = None,
                             log_metric: Any = None, **_kwargs: Any) -> list[float | None]:
        environments = environments or []
        mine = [e if type(e) is env_type else None for e in environments]
        if not any(mine):
            return [None] * len(environments)
        scorer = next(e._bound for e in mine if e is not None and e._bound is not None) if any(
            e is not None and e._bound is not None for e in mine) else self.scorer
        tasks = [e._task for e in mine if e is not None]
        rewards = scorer.pool.run(rewards_of, mine, timeout_s=scorer.deadline_s(len(mine), tasks) + 60.0)
        if log_metric is not None:
            for key, value in environment_metrics([e for e in mine if e is not None]).items():
                log_metric(key, value)
        return rewards

    def _tool_call_loop(self, prompts: Any, prompt_ids: Any, completion_ids: Any, completions: Any, *args: Any,
                        **kwargs: Any) -> Any:
        """``GRPOTrainer._tool_call_loop``, with the tool calls of each turn run concurrently: the first
        :class:`~trl_sandbox.environment.CodeEnvironment` tool TRL calls in a turn runs every rollout's pending
        calls at once (:meth:`CodeEnvironment.run_tool_calls`); TRL's own loop then gets their results at once."""
        self._pending_completions, self._prefetched_messages = completions, []
        previous, _environment._PREFETCH_HOOK[0] = _environment._PREFETCH_HOOK[0], self._prefetch_tool_calls
        try:
            return super()._tool_call_loop(prompts, prompt_ids, completion_ids, completions, *args, **kwargs)
        finally:
            _environment._PREFETCH_HOOK[0] = previous
            self._pending_completions, self._prefetched_messages = None, []

    def _prefetch_tool_calls(self) -> None:
        """Run the tool calls that every rollout's last assistant message makes and that were not run yet."""
        completions = self._pending_completions
        environments = getattr(self, "environments", None) or []
        if completions is None or len(environments) != len(completions):
            return
        jobs = []
        for env, messages in zip(environments, completions):
            if not isinstance(env, CodeEnvironment) or not messages:
                continue
            last = messages[-1]
            if last.get("role") != "assistant" or not last.get("tool_calls"):
                continue
            if any(last is seen for seen in self._prefetched_messages):
                continue
            self._prefetched_messages.append(last)
            calls = [(c["function"]["name"], c["function"].get("arguments") or {}) for c in last["tool_calls"]
                     if c.get("type") == "function" and isinstance(c.get("function"), dict)]
            jobs.append((env, calls))
        if jobs:
            CodeEnvironment.run_tool_calls(jobs)

    # -- pool lifecycle ------------------------------------------------------------------------------------------

    def _new_scorer(self) -> None:
        self.scorer = Scorer.from_config(self._sandbox_config, backend=self._sandbox_backend)
        for func in self._bound_rewards:
            if isinstance(func, CodeReward):
                func.scorer = self.scorer

    def _start_sandboxes(self) -> None:
        pool = self.scorer.pool
        if pool.started:
            return
        if self.accelerator.num_processes > 1 and not os.environ.get("TRL_SANDBOX_RUN_ID"):
            from accelerate.utils import broadcast_object_list

            self._run_id = broadcast_object_list([self._run_id], from_process=0)[0]  # one run id for all ranks
        model_name = str(getattr(getattr(self.model, "config", None), "_name_or_path", "") or "")
        pool.labels = {
            **default_labels(self._run_id, rank=self.accelerator.process_index),
            "trl-sandbox-model": _label_value(model_name.rstrip("/").split("/")[-1] or "unknown"),
            "trl-sandbox-step": str(self.state.global_step),
            **(self._sandbox_config.sandbox_labels or {}),
        }
        if pool.progress is None and not self.accelerator.is_local_main_process:
            pool.progress = False  # one progress bar per machine
        pool.start()
        self._previous_scorer = set_active_scorer(self.scorer)

    def _close_sandboxes(self) -> None:
        pool = self.scorer.pool
        if pool.started:
            set_active_scorer(self._previous_scorer)
        pool.close()
