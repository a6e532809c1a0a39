"""Comparisons: a program's answer against the expected one, as each test format's official harness compares them.

- return values of call-based tasks (:func:`same_value`: exact types, the TRL Daytona example's reference outputs);
- stdout of stdin/stdout tasks (:func:`same_output`, one judge per name: ``exact``, ``lines``, ``tokens`` as
  Codeforces' default checker, ``float`` as testlib's ``rcmp6`` or code_contests' ``OutputsMatch``, ``decimal`` as
  LiveCodeBench's ``grade_stdio``);
- return values of function tasks with JSON arguments (:func:`same_call_output`: APPS/TACO's ``run_test`` and
  LiveCodeBench's ``grade_call_based``).

Used by the judge in the sandbox, and on the host by :mod:`trl_sandbox.testing` and the benchmarks.
"""

import decimal
import math

from .base import _type
from .remote import Remote


def same_value(a, b):
    """Whether return value ``a`` equals expected value ``b`` with exact types (``bool`` is not ``int``, a
    ``list`` is not a ``tuple``); floats within 1e-9 relative (NaN equals NaN); dicts by keys then values. Used for
    call-based tasks, whose expected values come from a reference function."""
    ta = _type(a)
    if ta is not _type(b):
        return False
    if ta is float:
        return (a != a and b != b) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if ta is list or ta is tuple:
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if ta is dict:
        return a.keys() == b.keys() and all(same_value(v, b[k]) for k, v in a.items())
    if ta is Remote:
        return a is b
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def normalize_stdout(text):
    """Output text as stdin/stdout tasks compare it: ``\\r\\n`` as ``\\n``, trailing whitespace of each line and
    trailing blank lines dropped."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def same_stdout(output, expected):
    """Whether a program's ``output`` matches ``expected`` (see :func:`normalize_stdout`)."""
    return normalize_stdout(output) == normalize_stdout(expected)


# -- stdout judges (``compare`` of stdin/stdout requests) ------------------------------------------------------------

#: Judges of a program's stdout against the expected text, by name (see :func:`same_output`).
JUDGES = ("exact", "lines", "tokens", "float", "decimal")
_NUMERIC = None


def _numeric(token):
    """``token`` as a float when it is written as a number (``12``, ``-0.5``, ``1e-9``), else None: words such as
    ``nan`` or ``inf`` stay words."""
    global _NUMERIC
    if _NUMERIC is None:
        import re

        _NUMERIC = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
    if _NUMERIC.match(token) is None:
        return None
    try:
        return float(token)
    except (ValueError, OverflowError):
        return None


def _is_integer(token):
    return token.lstrip("+-").isdigit()


def _close(got, want, tolerance, absolute_only):
    """testlib's ``doubleCompare`` (``rcmp6`` with 1e-6): equal within ``tolerance`` absolutely, or relatively to
    the expected value; ``absolute_only``: strictly within ``tolerance`` absolutely (code_contests' ``ValuesMatch``)."""
    if math.isnan(got) or math.isnan(want):
        return False
    diff = abs(got - want)
    if absolute_only:
        return diff < tolerance
    return diff <= tolerance or diff <= tolerance * abs(want) * (1 + 1e-15)


def _same_token(got, want, tolerance, absolute_only):
    if got == want:
        return True
    if _is_integer(got) and _is_integer(want):
        return int(got) == int(want)  # integers compare exactly, however large
    a, b = _numeric(got), _numeric(want)
    if a is None or b is None:
        return False
    return _close(a, b, tolerance, absolute_only)


def _decimal_line(line):
    try:
        return [decimal.Decimal(token) for token in line.split()]
    except (decimal.InvalidOperation, ValueError):
        return None


def same_output(output, expected, compare=None):
    """Whether a program's stdout ``output`` matches ``expected`` under the judge ``compare`` (a dict; default
    ``{"mode": "lines"}``). Modes:

    - ``exact``: the same text, byte for byte (``\\r\\n`` read as ``\\n``);
    - ``lines``: the same lines once each line's trailing whitespace and the trailing blank lines are dropped;
    - ``tokens``: the same whitespace-separated tokens (Codeforces' default checker, testlib's ``wcmp``);
    - ``float``: tokens, where two numbers match within ``tolerance`` (default 1e-6) absolutely or relatively to
      the expected one (testlib's ``rcmp6``), or with ``absolute_only`` strictly within it absolutely
      (code_contests' ``OutputsMatch``); integers compare exactly, other tokens as text;
    - ``decimal``: LiveCodeBench's ``grade_stdio``: the outputs stripped, the same number of lines, each line
      (stripped) equal as text or as a list of ``Decimal`` numbers (``0.500`` is ``0.5``, ``0.333`` is not
      ``0.3333``).

    ``ignore_case`` (``tokens``/``float``) compares tokens case-insensitively (code_contests lowercases both).
    """
    compare = compare or {}
    mode = compare.get("mode", "lines")
    if mode == "lines":
        return same_stdout(output, expected)
    if mode == "exact":
        return output.replace("\r\n", "\n") == expected.replace("\r\n", "\n")
    if mode == "decimal":
        got = [line.strip() for line in output.strip().split("\n")]
        want = [line.strip() for line in expected.strip().split("\n")]
        if len(got) != len(want):
            return False
        for a, b in zip(got, want):
            if a != b:
                da, db = _decimal_line(a), _decimal_line(b)
                if da is None or db is None or da != db:
                    return False
        return True
    got, want = output.split(), expected.split()
    if compare.get("ignore_case"):
        got, want = [t.lower() for t in got], [t.lower() for t in want]
    if len(got) != len(want):
        return False
    if mode == "tokens":
        return got == want
    if mode == "float":
        tolerance = float(compare.get("tolerance", 1e-6))
        absolute_only = bool(compare.get("absolute_only"))
        return all(_same_token(a, b, tolerance, absolute_only) for a, b in zip(got, want))
    raise ValueError("unknown judge %r" % (mode,))


# -- function calls with JSON arguments (APPS/TACO call-based, LiveCodeBench functional) --------------------------


def apps_key_fix(value):
    """APPS's ``run_test``: JSON forces dict keys to strings; a dict whose keys are all integers gets them back."""
    if _type(value) is dict:
        try:
            return {int(k): v for k, v in value.items()}
        except (TypeError, ValueError):
            return value
    return value


def same_call_output(out, want, rule):
    """Whether a call's return value ``out`` matches the JSON-decoded ``want`` by the dataset's rule.

    ``lcb`` (LiveCodeBench's ``grade_call_based``): a tuple counts as a list, then ``==``. ``apps`` (APPS/TACO's
    ``run_test``): the same, or ``out`` equals ``want[0]`` when ``want`` is a non-empty list (expected values are
    often wrapped in a list), or a list of tuples equals ``want[0]`` as a list of lists. ``==`` runs here, on
    decoded values: a remote object never equals a value."""
    if _type(out) is tuple:
        out = list(out)
    try:
        if out == want:
            return True
        if rule != "apps":
            return False
        if _type(want) is list and want:
            if out == want[0]:
                return True
            if _type(out) is list and out and _type(out[0]) is tuple and [list(x) for x in out] == want[0]:
                return True
    except Exception:  # noqa: BLE001
        return False
    return False
