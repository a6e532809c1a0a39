"""Sandbox options as a dataclass, in TRL's style (fields with ``metadata={"help": ...}``).

:class:`SandboxConfig` holds the ``sandbox_*`` fields and imports nothing heavy, so ``trl-sandbox score`` can use
it without torch or trl. :class:`trl_sandbox.trainer.SandboxGRPOConfig` combines it with ``trl.GRPOConfig``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import ConfigurationError, TaskFormatError, UnknownBackendError
from .formats import parse_compare
from .languages import language_named

#: Reward modes (``sandbox_reward``): ``pass_rate`` pays the fraction of tests passed (the TRL Daytona example's
#: reward); ``all_or_nothing`` pays only a completion that passes every test (DeepSeek-R1's and DeepCoder's code
#: reward), and stops running a completion's tests at its first failure.
REWARD_MODES = ("pass_rate", "all_or_nothing")
#: Default reward of each status that gets one (``failed``: the fraction of tests passed times the ``passed``
#: reward in ``pass_rate`` mode; this value in ``all_or_nothing`` mode).
DEFAULT_REWARD_VALUES = {"passed": 1.0, "failed": 0.0, "error": -1.0, "timeout": -1.0, "banned": -1.0,
                         "compile_error": -1.0}
#: Statuses whose reward is always None (TRL leaves the completion out): not the model's doing.
UNSCORED_STATUSES = ("infra_error", "invalid_task", "cancelled", "unserializable")


def reward_table(mode: str, values: Mapping[str, Any] | None = None) -> dict[str, float]:
    """The reward of each scored status for reward ``mode``, with ``values`` overriding the defaults
    (:data:`DEFAULT_REWARD_VALUES`).

    Raises:
        ConfigurationError: an unknown mode or status, a status that is never scored (infrastructure failures,
            malformed tasks, cancellations and values that cannot cross are not the model's doing: their reward is
            always None), a value that is not a finite number, or ``failed`` in ``pass_rate`` mode (there it is the
            fraction of tests passed).
    """
    if mode not in REWARD_MODES:
        raise ConfigurationError(f"sandbox_reward must be one of {', '.join(REWARD_MODES)}, got {mode!r}")
    table = dict(DEFAULT_REWARD_VALUES)
    for status, value in (values or {}).items():
        if status in UNSCORED_STATUSES:
            raise ConfigurationError(
                f"sandbox_reward_values: {status!r} always gets a None reward (not the model's doing); "
                f"set values for {', '.join(DEFAULT_REWARD_VALUES)}"
            )
        if status not in DEFAULT_REWARD_VALUES:
            raise ConfigurationError(
                f"sandbox_reward_values: unknown status {status!r}; use {', '.join(DEFAULT_REWARD_VALUES)}"
            )
        if status == "failed" and mode == "pass_rate":
            raise ConfigurationError(
                "sandbox_reward_values: 'failed' is the fraction of tests passed in pass_rate mode; set it with "
                "sandbox_reward='all_or_nothing'"
            )
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ConfigurationError(f"sandbox_reward_values: {status!r} must be a number, got {value!r}")
        table[status] = float(value)
    if "compile_error" not in (values or {}):  # a compile error is an error unless given its own value
        table["compile_error"] = table["error"]
    return table


#: The fields that are sizes in bytes (they also take text with a unit: see :func:`parse_size`).
SIZE_FIELDS = ("sandbox_memory_limit", "sandbox_output_limit")
_SIZE_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
               "ki": 1 << 10, "kib": 1 << 10, "mi": 1 << 20, "mib": 1 << 20, "gi": 1 << 30, "gib": 1 << 30}


def parse_size(value: Any) -> int:
    """Bytes in a size: an integer, or text such as ``"1GiB"``, ``"512MiB"``, ``"2GB"``, ``"64M"``. Binary units
    (``KiB``, ``MiB``, ``GiB``, or ``Ki``/``Mi``/``Gi``) are powers of 1024; decimal ones (``KB``, ``MB``, ``GB``,
    or ``K``/``M``/``G``) powers of 1000, as in Kubernetes.

    Raises:
        ValueError: not a positive size.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a size in bytes, got {value!r}")
    if isinstance(value, int):
        size = value
    elif isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", value)
        unit = match.group(2).lower() if match else None
        if match is None or unit not in _SIZE_UNITS:
            raise ValueError(f"not a size: {value!r} (bytes, or a number and a unit: 512MiB, 1GiB, 2GB)")
        size = int(float(match.group(1)) * _SIZE_UNITS[unit])
    else:
        raise ValueError(f"expected a size in bytes, got {value!r}")
    if size <= 0:
        raise ValueError(f"a size must be positive, got {value!r}")
    return size


@dataclass
class SandboxConfig:
    r"""Options of the sandbox pool and of scoring.

    Parameters:
        sandbox_backend (`str`, *optional*, defaults to `"local"`):
            Backend that runs the code: `"local"` (isolated processes on this machine), `"daytona"` (remote
            sandboxes; `pip install 'trl-sandbox[daytona]'` and `DAYTONA_API_KEY`), `"e2b"` (remote, on E2B;
            `pip install 'trl-sandbox[e2b]'` and `E2B_API_KEY`), `"cwsandbox"` (remote, on CoreWeave;
            `pip install 'trl-sandbox[cwsandbox]'` and `CWSANDBOX_API_KEY`), `"ray"` (local sandboxes as Ray
            actors on a Ray cluster's nodes; `pip install 'trl-sandbox[ray]'` and `RAY_ADDRESS`) or `"mock"` (tests).
        sandbox_backend_options (`dict` or `str`, *optional*):
            Extra keyword arguments of the backend's constructor, as a dict or a JSON string. For `"local"`:
            `python`, `packages`, `site_packages`, `root_dir`, `file_size_limit_bytes`, `max_processes`, `max_open_files`.
            For `"daytona"`: see `trl_sandbox.backends.daytona.DaytonaBackend` (`snapshot`, `image`,
            `network_allow_list`, `auto_stop_interval_min`...). For `"cwsandbox"`: see
            `trl_sandbox.backends.cwsandbox.CWSandboxBackend` (`container_image`, `max_lifetime_seconds`...). For
            `"e2b"`: see `trl_sandbox.backends.e2b.E2BBackend` (`template`, `timeout_s`, `allow_internet_access`...).
            For `"ray"`: see `trl_sandbox.backends.ray.RayBackend` (`address`, `num_cpus`, `resources`,
            `placement`...).
        sandbox_pool_size (`int`, *optional*):
            Number of sandboxes per training process. Defaults, for `"local"`, to the cores this process may run on
            (its affinity) divided among the node's ranks (`LOCAL_WORLD_SIZE`), else 8. Every local pool of a host
            also shares one admission limit: at most `os.cpu_count()` executions at once on the host
            (`sandbox_backend_options={"max_host_executions": N}`; 0: none).
        sandbox_max_concurrency (`int`, *optional*):
            Most executions at once per process. Defaults to (and is capped by) `sandbox_pool_size`.
        sandbox_test_timeout (`float`, *optional*):
            Cap in seconds on each test (and on loading the completion's program). Default: each test gets what its
            dataset's official harness gives it (LiveCodeBench 6 s, TACO and APPS their fixed timeouts, an open-r1
            Codeforces row its statement limit, a code_contests row its statement limit times 3 and at most its
            tester's 10 s), 5 s where neither the row nor its format gives one (see `Task.test_timeout_s`).
        sandbox_completion_timeout (`float`, *optional*):
            Cap in wall-clock seconds on one completion's whole run (all its tests). Default: each completion gets
            its tests' own budget, `(t + 1) * n + 5` for n tests of t seconds (LiveCodeBench's global timeout), so
            no budget cuts a program whose every test is within its limit. A run the cap cuts keeps the tests it
            passed (`failed` with their pass rate, never `timeout`).
        sandbox_memory_limit (`int` or `str`, *optional*, defaults to `1073741824`):
            Address-space limit of one execution, in bytes, or a size with a unit (see `parse_size`: `"1GiB"`).
        sandbox_output_limit (`int` or `str`, *optional*, defaults to `1048576`):
            Bytes of stdout/stderr kept per execution (and of output per stdin/stdout test), or a size with a unit;
            the rest is cut. A task whose expected outputs are larger gets twice its largest one plus 64 KiB per
            test, so that no correct output is cut.
        sandbox_create_timeout (`float`, *optional*, defaults to `120.0`):
            Seconds allowed to create the whole pool.
        sandbox_batch_deadline_s (`float`, *optional*):
            Straggler deadline in seconds for scoring one batch (per process): completions still running then are
            cancelled, counted in `sandbox/cancelled`, and get a `None` reward, so one pathological completion
            cannot stall every process at TRL's gather. Defaults to a generous value derived from the batch size,
            the concurrency and the completions' budgets (a safety net; set it to bound step time).
        sandbox_allow_weak_isolation (`bool`, *optional*, defaults to `False`):
            Let the local backend run without namespaces when the kernel refuses them, instead of failing.
        sandbox_labels (`dict` or `str`, *optional*):
            Extra labels for every sandbox (dict or JSON string), added to the ownership labels.
        sandbox_sweep_orphans (`bool`, *optional*, defaults to `False`):
            At pool start, delete the backend's sandboxes left by dead runs of this host (their process is gone).
            Never touches a live run's sandboxes; see `trl-sandbox cleanup` for other hosts.
        sandbox_reward (`str`, *optional*, defaults to `"pass_rate"`):
            `"pass_rate"`: the fraction of tests passed (1.0 when all pass). `"all_or_nothing"`: 1.0 only when every
            test passes, else 0.0, and a completion's tests stop at its first failure. Errors, timeouts and banned
            patterns get -1.0 in both (see `sandbox_reward_values`).
        sandbox_reward_values (`dict` or `str`, *optional*):
            Rewards by status, overriding the defaults `{"passed": 1.0, "failed": 0.0, "error": -1.0, "timeout":
            -1.0, "banned": -1.0}` (`failed` only in `all_or_nothing` mode). Infrastructure failures, malformed
            tasks, cancelled completions and values that cannot cross always get None.
        sandbox_compare (`str` or `dict`, *optional*):
            The stdout judge of stdin/stdout tasks whose row names none (a row's `compare` field wins): `"exact"`,
            `"lines"`, `"tokens"`, `"float"`, `"decimal"`, `"apps"`, `"taco"`, `"codeforces"`, a dict such as
            `{"mode": "float", "tolerance": 1e-6}`, or a checker `{"checker": SOURCE, "convention": "testlib"}` (JSON
            text accepted). Default: each dataset format's official judge (see `trl_sandbox.formats`).
        sandbox_time_limit_factor (`float`, *optional*):
            When set, a row's own statement time limit (code_contests, Codeforces, a `time_limit` column) is
            multiplied by this for each test, at most `sandbox_test_timeout` when set (and at most code_contests'
            tester's 10 s). Unset, each format's own: 1 for open-r1 Codeforces (its runner gives the statement's
            seconds, to Python too, as Codeforces does), 3 for the others (no official multiplier; the limits were
            set for C++).
        sandbox_language (`str`, *optional*):
            Language of completions whose row names none and whose code fence has no language tag: `python`,
            `cpp`, `c`, `java`, `javascript` or `rust` (see `trl_sandbox.languages`). Other languages run
            stdin/stdout tasks. Unset: the language of the row's published solutions when they are all in one
            (code_contests' `solutions`), else `python`.
        sandbox_compile_timeout (`float`, *optional*, defaults to `30.0`):
            Seconds a compiler may run on one completion (C, C++, Java, Rust), on top of
            `sandbox_completion_timeout`.
        sandbox_testlib_header (`str`, *optional*):
            Path of an official `testlib.h` to build tasks' C++ checkers and interactors with (`trl-sandbox testlib
            download` fetches a pinned release). Unset: the `TRL_SANDBOX_TESTLIB_H` environment variable, else
            trl-sandbox's own implementation of testlib's API (see `trl_sandbox.testlib`).
        sandbox_max_sessions (`int`, *optional*, defaults to `64`):
            Most interpreter sessions (one sandbox each: `CodeEnvironment` rollouts) per training process at once,
            on top of the `sandbox_pool_size` scoring sandboxes. Session sandboxes are created as rollouts need
            them and kept for the next batch.
        sandbox_tool_timeout (`float`, *optional*, defaults to `10.0`):
            Seconds one `python` tool call of a `CodeEnvironment` may run.
        sandbox_tool_output_chars (`int`, *optional*, defaults to `4000`):
            Characters of a tool call's output returned to the model (its head and tail; the cut is said).
        sandbox_no_submission_reward (`float`, *optional*, defaults to `-1.0`):
            Reward of a `CodeEnvironment` rollout that never called `submit`.
    """

    sandbox_backend: str = field(
        default="local",
        metadata={
            "help": "Backend that runs the code: 'local' (isolated processes here), 'daytona', 'e2b', 'cwsandbox', "
            "'hf', 'ray' or 'mock'."
        },
    )
    sandbox_backend_options: dict | str | None = field(
        default=None,
        metadata={"help": "Extra keyword arguments of the backend's constructor (dict or JSON string)."},
    )
    sandbox_pool_size: int | None = field(
        default=None,
        metadata={"help": "Number of sandboxes per process. Defaults, for 'local', to this process's cores (affinity) "
                          "divided among the node's ranks (LOCAL_WORLD_SIZE), else 8."},
    )
    sandbox_max_concurrency: int | None = field(
        default=None, metadata={"help": "Most executions at once per process. Defaults to sandbox_pool_size."}
    )
    sandbox_test_timeout: float | None = field(
        default=None,
        metadata={"help": "Cap in seconds on each test (and loading the program). Default: the time the dataset's "
                  "official harness gives each test, 5 s where it gives none."},
    )
    sandbox_completion_timeout: float | None = field(
        default=None,
        metadata={"help": "Cap in seconds on one completion's whole run. Default: its tests' own budget, "
                  "(t + 1) * n + 5 for n tests of t seconds."},
    )
    # `int | str | None`: HfArgumentParser then parses the flag as text ("1GiB"), converted by validate_sandbox_options.
    sandbox_memory_limit: int | str | None = field(
        default=1 << 30,
        metadata={"help": "Address-space limit of one execution: bytes, or a size such as 1GiB, 512MiB, 2GB."},
    )
    sandbox_output_limit: int | str | None = field(
        default=1 << 20,
        metadata={"help": "Output kept per execution (the rest is cut): bytes, or a size such as 1MiB."},
    )
    sandbox_create_timeout: float = field(
        default=120.0, metadata={"help": "Seconds allowed to create the whole pool."}
    )
    sandbox_batch_deadline_s: float | None = field(
        default=None,
        metadata={
            "help": "Straggler deadline in seconds for scoring one batch: completions still running are cancelled "
            "and get None. Defaults to a generous value derived from the batch."
        },
    )
    sandbox_allow_weak_isolation: bool = field(
        default=False,
        metadata={"help": "Let the local backend run without namespaces when the kernel refuses them."},
    )
    sandbox_labels: dict | str | None = field(
        default=None, metadata={"help": "Extra labels for every sandbox (dict or JSON string)."}
    )
    sandbox_sweep_orphans: bool = field(
        default=False,
        metadata={"help": "At pool start, delete sandboxes left by dead runs of this host (never a live run's)."},
    )
    sandbox_reward: str = field(
        default="pass_rate",
        metadata={
            "help": "'pass_rate' (fraction of tests passed) or 'all_or_nothing' (1.0 only when every test passes, "
            "else 0.0). Errors, timeouts and banned patterns get -1.0.",
            "choices": list(REWARD_MODES),
        },
    )
    sandbox_reward_values: dict | str | None = field(
        default=None,
        metadata={
            "help": "Rewards by status (dict or JSON string) over the defaults passed 1.0, failed 0.0 "
            "(all_or_nothing only), error -1.0, timeout -1.0, banned -1.0."
        },
    )

    sandbox_compare: dict | str | None = field(
        default=None,
        metadata={
            "help": "Stdout judge of stdin/stdout tasks whose row names none: exact, lines, tokens, float, decimal, "
            "apps, taco, codeforces, "
            "or JSON such as {\"mode\": \"float\", \"tolerance\": 1e-6}. Default: each dataset's official judge."
        },
    )
    sandbox_time_limit_factor: float | None = field(
        default=None,
        metadata={
            "help": "Multiplier of a row's statement time limit per test; capped by sandbox_test_timeout when set. "
            "Default: each format's own (1 for open-r1 Codeforces, as its runner; 3 for code_contests and others)."
        },
    )

    sandbox_language: str | None = field(
        default=None,
        metadata={
            "help": "Language of completions whose row names none and whose code fence has no tag: python, cpp, c, "
            "java, javascript or rust. Default: the one language of a code_contests row's solutions, else python."
        },
    )
    sandbox_compile_timeout: float = field(
        default=30.0,
        metadata={"help": "Seconds a compiler may run on one completion (C, C++, Java, Rust)."},
    )
    sandbox_testlib_header: str | None = field(
        default=None,
        metadata={"help": "Official testlib.h for C++ checkers and interactors (default: $TRL_SANDBOX_TESTLIB_H, else "
                  "trl-sandbox's own)."},
    )

    sandbox_max_sessions: int = field(
        default=64,
        metadata={"help": "Most interpreter sessions (CodeEnvironment rollouts, one sandbox each) per process."},
    )
    sandbox_tool_timeout: float = field(
        default=10.0,
        metadata={"help": "Seconds one python tool call of a CodeEnvironment may run."},
    )
    sandbox_tool_output_chars: int = field(
        default=4000,
        metadata={"help": "Characters of a tool call's output returned to the model."},
    )
    sandbox_no_submission_reward: float = field(
        default=-1.0,
        metadata={"help": "Reward of a CodeEnvironment rollout that never called submit."},
    )

    def __post_init__(self) -> None:
        self.validate_sandbox_options()

    def validate_sandbox_options(self) -> None:
        """Parse JSON-string options and check every ``sandbox_*`` value.

        Raises:
            ConfigurationError: the first invalid option, with the accepted values.
        """
        for name in ("sandbox_backend_options", "sandbox_labels", "sandbox_reward_values"):
            value = getattr(self, name)
            if isinstance(value, str):
                try:
                    value = json.loads(value)
                except ValueError as exc:
                    raise ConfigurationError(f"{name} must be a dict or a JSON object string: {exc}") from None
                setattr(self, name, value)
            if value is not None and not isinstance(value, dict):
                raise ConfigurationError(f"{name} must be a dict, got {type(value).__name__}")
        if not isinstance(self.sandbox_backend, str) or not self.sandbox_backend:
            raise ConfigurationError(f"sandbox_backend must be a backend name, got {self.sandbox_backend!r}")
        from .backends import BACKENDS  # the registry alone: no backend's module is imported

        if self.sandbox_backend not in BACKENDS:
            known = ", ".join(BACKENDS)
            raise UnknownBackendError(f"unknown sandbox backend {self.sandbox_backend!r}; available backends: {known}")
        for name in ("sandbox_max_sessions", "sandbox_tool_output_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"{name} must be a positive integer, got {value!r}")
        if isinstance(self.sandbox_no_submission_reward, bool) or not isinstance(
            self.sandbox_no_submission_reward, (int, float)
        ) or not math.isfinite(self.sandbox_no_submission_reward):
            raise ConfigurationError(
                f"sandbox_no_submission_reward must be a number, got {self.sandbox_no_submission_reward!r}"
            )
        for name in ("sandbox_pool_size", "sandbox_max_concurrency"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ConfigurationError(f"{name} must be a positive integer, got {value!r}")
        for name in ("sandbox_test_timeout", "sandbox_completion_timeout", "sandbox_create_timeout",
                     "sandbox_compile_timeout", "sandbox_tool_timeout"):
            if getattr(self, name) is None and name in ("sandbox_test_timeout", "sandbox_completion_timeout"):
                continue  # derived from each task's tests
            if not isinstance(getattr(self, name), (int, float)) or getattr(self, name) <= 0:
                raise ConfigurationError(f"{name} must be a positive number of seconds, got {getattr(self, name)!r}")
        if self.sandbox_batch_deadline_s is not None and (
            not isinstance(self.sandbox_batch_deadline_s, (int, float)) or self.sandbox_batch_deadline_s <= 0
        ):
            raise ConfigurationError(
                f"sandbox_batch_deadline_s must be a positive number of seconds, got {self.sandbox_batch_deadline_s!r}"
            )
        for name in SIZE_FIELDS:
            try:
                setattr(self, name, parse_size(getattr(self, name)))
            except ValueError as exc:
                raise ConfigurationError(f"{name}: {exc}") from None
        reward_table(self.sandbox_reward, self.sandbox_reward_values)
        if self.sandbox_language is not None:
            self.sandbox_language = language_named(self.sandbox_language).name
        if self.sandbox_time_limit_factor is not None and (
                not isinstance(self.sandbox_time_limit_factor, (int, float)) or self.sandbox_time_limit_factor <= 0):
            raise ConfigurationError(
                f"sandbox_time_limit_factor must be a positive number, got {self.sandbox_time_limit_factor!r}"
            )
        if self.sandbox_compare is not None:
            try:
                self.sandbox_compare = parse_compare(self.sandbox_compare)
            except TaskFormatError as exc:
                raise ConfigurationError(f"sandbox_{exc}") from None
        if self.sandbox_memory_limit < (64 << 20):
            raise ConfigurationError(
                f"sandbox_memory_limit={self.sandbox_memory_limit} bytes is too small to start Python; use at "
                "least 64 MiB (67108864)"
            )


def _add_short_flags(cls: type) -> None:
    """Give every ``sandbox_*`` field of ``cls`` its short command-line names (``--pool-size`` and ``--pool_size``
    for ``sandbox_pool_size``) as ``aliases`` metadata, which ``transformers.HfArgumentParser`` (hence ``trl.TrlParser``
    and ``trl-sandbox train``) adds beside the long names; ``trl-sandbox score`` reads the same list, so every command
    takes the same flags (``docs/cli.md``)."""
    for f in dataclasses.fields(cls):
        short = f.name.removeprefix("sandbox_")
        flags = [f"--{short.replace('_', '-')}"] + ([f"--{short}"] if "_" in short else [])
        f.metadata = types.MappingProxyType({**f.metadata, "aliases": flags})


_add_short_flags(SandboxConfig)
