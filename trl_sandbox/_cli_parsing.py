"""Command-line parsing shared by the ``trl-sandbox`` commands: dataclass fields to ``argparse`` flags (without
``transformers.HfArgumentParser``, whose import costs 2 s and a lot of memory: ``trl-sandbox score`` and the early
checks of ``trl-sandbox train`` must stay light), YAML option files, and one-line errors."""

from __future__ import annotations

import argparse
import dataclasses
import re
import types
import typing
from typing import Any, NoReturn

from .config import SIZE_FIELDS, parse_size
from .errors import ConfigurationError


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
    """``true``/``false`` (and 1/0, yes/no, on/off) as a bool."""
    lowered = text.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected a boolean, got {text!r}")


def _parse_size(text: str) -> int:
    """A size flag (``1GiB``, ``512MiB``, bytes) in bytes."""
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_fields(parser: argparse.ArgumentParser, cls: type, prefix: str = "") -> None:
    """Add one flag per field of the dataclass ``cls`` to ``parser``, as ``HfArgumentParser`` would: ``--name-x`` and
    ``--name_x``, the field's default (or required), its ``help`` and ``choices`` metadata; booleans take an optional
    ``true``/``false``, size fields (:data:`~trl_sandbox.config.SIZE_FIELDS`) a size such as ``1GiB``, dict fields a
    JSON string. With ``prefix`` (``"sandbox_"``), fields are named without it (``--pool-size``), and also with it
    (``--sandbox_pool_size``, ``--sandbox-pool-size``) as TRL's parser names them."""
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


def read_yaml(path: str) -> dict[str, Any]:
    """The options of the YAML file ``path`` (``--config``): its top-level mapping (empty for an empty file).

    Raises:
        ConfigurationError: the file cannot be read or parsed, or is not a mapping.
    """
    import yaml

    try:
        with open(path) as f:
            values = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigurationError(f"cannot read config file {path}: {exc}") from None
    if not isinstance(values, dict):
        raise ConfigurationError(f"config file {path} must contain a YAML mapping")
    return values


def apply_yaml(parser: argparse.ArgumentParser, path: str, prefix: str) -> None:
    """Make the options of the YAML file ``path`` the defaults of ``parser`` (the command line still wins); a key
    names a flag without its dashes, with ``-`` or ``_``, with or without ``prefix`` (``pool_size: 4``).

    Raises:
        ConfigurationError: the file cannot be read, is not a mapping, or names an unknown option.
    """
    values = read_yaml(path)
    known = {a.dest for a in parser._actions}
    defaults = {}
    for key, value in values.items():
        dest = key.replace("-", "_")
        if dest not in known and prefix + dest in known:
            dest = prefix + dest
        if dest not in known:
            raise ConfigurationError(f"config file {path}: unknown option {key!r}")
        defaults[dest] = value
    for action in parser._actions:
        if action.dest in defaults:
            action.required = False
    parser.set_defaults(**defaults)


def one_line_errors(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Make ``parser`` report a bad command line as one :class:`ConfigurationError` line (printed by
    :func:`trl_sandbox.cli.main`, exit code 2) instead of argparse's usage block, which for ``train`` lists several
    hundred options. A flag with several spellings is named by its first. Returns ``parser``."""

    def error(message: str) -> NoReturn:
        command = parser.prog.split()[-1]
        message = re.sub(r"^argument (--[\w-]+)(/--[\w-]+)+:", r"argument \1:", message)  # one of its spellings
        raise ConfigurationError(f"{message} (trl-sandbox {command} --help lists the options)")

    parser.error = error  # type: ignore[method-assign]
    return parser
