"""Comparisons: a program's answer against the expected one, as each test format's official harness compares them.

- return values of call-based tasks (:func:`same_value`: exact types, the TRL Daytona example's reference outputs);
- stdout of stdin/stdout tasks (:func:`same_output`, one judge per name: ``exact``, ``lines``, ``tokens`` as
  testlib's ``wcmp``, ``float`` as testlib's ``rcmp6`` or code_contests' ``OutputsMatch``, ``decimal`` as
  LiveCodeBench's ``grade_stdio``, ``apps``, ``taco`` and ``codeforces`` as those datasets' official harnesses);
- return values of function tasks with JSON arguments (:func:`same_call_output`: APPS/TACO's ``run_test`` and
  LiveCodeBench's ``grade_call_based``).

Used by the judge in the sandbox, and on the host by :mod:`trl_sandbox.testing` and the benchmarks.
"""

import decimal
import math
import re

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
JUDGES = ("exact", "lines", "tokens", "float", "decimal", "apps", "taco", "codeforces")
#: A token of a text split on ASCII whitespace (space, ``\t``, ``\n``, ``\r``, ``\v``, ``\f``), as testlib and
#: piston's ``tr [:space:]`` split it (code_contests' tester does not split on ``\f``: its judge gives
#: ``separators``): Python's ``str.split`` also splits on ``\x1c``-``\x1f``, ``\x85``, ``\xa0`` and the other
#: Unicode spaces, which none of them does.
_ASCII_TOKEN = re.compile(r"[^ \t\n\r\x0b\x0c]+")
#: A number as the C-library judges read one (testlib, code_contests' ``SimpleAtod``): ASCII digits only.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
#: An integer token: ASCII digits, an optional sign, no decimal point or exponent.
_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
#: The whole words ``yes`` and ``no`` in any case (piston's ``sed -E 's/\b(yes)\b/YES/ig; s/\b(no)\b/NO/ig'``).
_YES_NO = re.compile(r"\b(?:yes|no)\b", re.IGNORECASE | re.ASCII)
#: ASCII whitespace as absl's ``ascii_isspace`` and C's ``isspace`` count it (what ``SimpleAtoi``/``SimpleAtod``
#: strip from the ends of a number).
_ASCII_SPACE = " \t\n\r\x0b\x0c"
#: ``str.translate`` table of ``ignore_case``: ASCII letters only, as absl's ``AsciiStrToLower`` (``Ä`` stays ``Ä``).
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_SPLITTERS = {}


def _tokens(text, separators=None):
    """``text`` split on ASCII whitespace (see :data:`_ASCII_TOKEN`), or on the characters of ``separators`` (a
    judge's ``separators``: code_contests' tester splits on ``" \\n\\t\\r\\v"``, not on ``\\f``)."""
    if separators is not None:
        if not any(c in text for c in _ASCII_SPACE if c not in separators):
            separators = None  # no whitespace that is not a separator: the usual split is the same
        else:
            splitter = _SPLITTERS.get(separators)
            if splitter is None:
                splitter = _SPLITTERS[separators] = re.compile("[^%s]+" % re.escape(separators))
            return splitter.findall(text)
    if text.isascii() and not any(c in text for c in "\x1c\x1d\x1e\x1f"):
        return text.split()  # the same split, faster
    return _ASCII_TOKEN.findall(text)


def _lower(tokens):
    """``ignore_case``: ``tokens`` with their ASCII letters lowercased (code_contests' ``AsciiStrToLower``)."""
    return [t.translate(_ASCII_LOWER) for t in tokens]


def _number_text(token):
    """A token as a number is read: without the ASCII whitespace at its ends (absl's ``SimpleAtoi``/``SimpleAtod``
    strip it; only a whitespace character that is not a separator, ``\\f`` for code_contests, can be there), when
    what is left is a number; else the token as it is (then compared as text)."""
    stripped = token.strip(_ASCII_SPACE)
    return stripped if stripped != token and _NUMBER.match(stripped) else token


def _numeric(token):
    """``token`` as a float when it is written as a number with ASCII digits (``12``, ``-0.5``, ``1e-9``), else
    None: words such as ``nan`` or ``inf``, ``--5``, ``²`` are no numbers."""
    if _NUMBER.match(token) is None:
        return None
    try:
        return float(token)
    except (ValueError, OverflowError):
        return None


def _integer_text(token):
    """An integer token in one spelling (no ``+``, no leading zeros, ``0`` for ``-0``): compared as text, so that no
    integer is ever converted (Python refuses ``int()`` of more than 4300 digits)."""
    digits = token.lstrip("+-").lstrip("0") or "0"
    return "-" + digits if token.startswith("-") and digits != "0" else digits


def _same_integer(got, want, parse=_numeric):
    """Whether ``got`` is the integer ``want`` (an integer token): the same integer, or a number ``parse`` reads
    whose exact value is that integer (``3.0`` is ``3``; ``3.0000001`` and ``500001000.0`` for ``500000003`` are
    not: no tolerance for integers)."""
    if _INTEGER.match(got):
        return _integer_text(got) == _integer_text(want)
    if parse(got) is None:
        return False
    try:
        return decimal.Decimal(got.strip()) == decimal.Decimal(want)
    except (ArithmeticError, ValueError):
        return False


def _close(got, want, tolerance, absolute_only):
    """testlib's ``doubleCompare`` (``rcmp6`` with 1e-6): equal within ``tolerance`` absolutely, or relatively to
    the expected value; ``absolute_only``: strictly within ``tolerance`` absolutely (code_contests' ``ValuesMatch``)."""
    if math.isnan(got) or math.isnan(want):
        return False
    diff = abs(got - want)
    if absolute_only:
        return diff < tolerance
    return diff <= tolerance or diff <= tolerance * abs(want) * (1 + 1e-15)


def _same_token(got, want, tolerance, absolute_only, integers_exact=False):
    """One token of the ``float`` judge: the same text; else two numbers within the tolerance, but with
    ``integers_exact`` an integer expected is matched only by that integer."""
    if got == want:
        return True
    if integers_exact and _INTEGER.match(want):
        return _same_integer(got, want)
    a, b = _numeric(got), _numeric(want)
    if a is None or b is None:
        return False
    return _close(a, b, tolerance, absolute_only)


def _float_judge(output, expected, compare):
    separators = compare.get("separators")
    got, want = _tokens(output, separators), _tokens(expected, separators)
    if compare.get("ignore_case"):
        got, want = _lower(got), _lower(want)
    if len(got) != len(want):
        return False
    if separators is not None:
        got, want = [_number_text(t) for t in got], [_number_text(t) for t in want]
    tolerance = float(compare.get("tolerance", 1e-6))
    absolute_only = bool(compare.get("absolute_only"))
    integers_exact = compare.get("integers") == "exact"
    return all(_same_token(a, b, tolerance, absolute_only, integers_exact) for a, b in zip(got, want))


def _tokens_judge(output, expected, compare):
    separators = compare.get("separators")
    got, want = _tokens(output, separators), _tokens(expected, separators)
    if compare.get("ignore_case"):
        got, want = _lower(got), _lower(want)
    return got == want


def _decimal_line(line):
    try:
        return [decimal.Decimal(token) for token in line.split()]
    except (ArithmeticError, ValueError):
        return None


def _decimal_judge(output, expected, compare):
    got = [line.strip() for line in output.strip().split("\n")]
    want = [line.strip() for line in expected.strip().split("\n")]
    if len(got) != len(want):
        return False
    for a, b in zip(got, want):
        if a != b:
            da, db = _decimal_line(a), _decimal_line(b)
            try:
                if da is None or db is None or da != db:
                    return False
            except ArithmeticError:  # a signaling NaN (``sNaN``) refuses to be compared
                return False
    return True


def _py_float(token):
    """``float(token)`` as APPS's harness reads a number (Python's syntax: spaces around, ``1_000``, Unicode digits,
    ``inf``, ``nan``), else None."""
    try:
        return float(token)
    except (ValueError, OverflowError):
        return None


def _isclose(a, b):
    """``np.isclose(a, b)``: ``|a - b| <= 1e-8 + 1e-5 * |b|``, infinities equal to themselves, NaN to nothing."""
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= 1e-8 + 1e-5 * abs(b)


def _apps_number(got, want):
    """One line (``np.allclose`` of APPS's check 4) or one token (check 6) as APPS compares numbers, with its
    departure: an integer expected is matched only by that integer (``np.allclose`` pays ``500001000.0`` for
    ``500000003``)."""
    a, b = _py_float(got), _py_float(want)
    if a is None or b is None:
        return False
    if _INTEGER.match(want.strip()):
        return _same_integer(got.strip(), want.strip(), _py_float)
    return _isclose(a, b)


def _apps_judge(output, expected, compare):
    """APPS's ``run_test`` on a stdin program's captured lines (``hendrycks/apps`` ``eval/testing_util.py``)."""
    lines = output.splitlines()  # APPS captures stdout as its lines
    want = expected.strip()
    # custom_compare_: the lines joined, then each line stripped, against the expected text, both stripped
    if "\n".join(lines).strip() == want or "\n".join(line.strip() for line in lines).strip() == want:
        return True
    # checks 1-3: the expected text's non-empty lines, stripped, against the lines, then the non-empty lines
    want_lines = [line.strip() for line in expected.split("\n") if line]
    kept = [line for line in lines if line]
    if lines == want_lines or kept == want_lines:
        return True
    # check 4: one number a line, np.allclose (rtol 1e-5, atol 1e-8)
    if len(kept) == len(want_lines) and all(_apps_number(a, b) for a, b in zip(kept, want_lines)):
        return True
    # checks 5-6: each line's tokens; APPS compares them as sets (order and repeats ignored) and then, when every
    # token is a number, rounded to 3 decimals: here in order, and numbers also within np.isclose
    got = [tokens for tokens in (line.split() for line in lines) if tokens]
    want_tokens = [line.split() for line in want_lines]
    if len(got) != len(want_tokens):
        return False
    if got == want_tokens:
        return True
    for line, want_line in zip(got, want_tokens):
        if len(line) != len(want_line):
            return False
        for a, b in zip(line, want_line):
            x, y = _py_float(a), _py_float(b)
            if x is None or y is None or not _apps_number(a, b):
                return False
            if not _INTEGER.match(b) and round(x, 3) != round(y, 3):
                return False
    return True


def _taco_judge(output, expected, compare):
    """TACO's ``compare_std_results`` (``FlagOpen/TACO`` ``metrics/testing_util.py``) on the stdout of ``python
    program.py`` read as text (universal newlines): the same text once stripped."""
    return _universal(output).strip() == _universal(expected).strip()


def _universal(text):
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _codeforces_judge(output, expected, compare):
    """open-r1's runner without a checker (``guipenedo/piston`` ``packages/codeforces/1.0.0/run``,
    ``normalize_output`` then ``diff -b``): the whole words yes/no upper-cased, every ASCII whitespace run (newlines
    included) one space: the same tokens, yes/no in any case."""
    return _tokens(_YES_NO.sub(_upper, output)) == _tokens(_YES_NO.sub(_upper, expected))


def _upper(match):
    return match.group(0).upper()


#: What GNU diff's ``-b`` counts as white space within a line (``isspace`` in the C locale, the newline aside).
_DIFF_SPACE = re.compile(r"[ \t\v\f\r]+")


def _diff_b_lines(text):
    """``text``'s lines as ``diff -b`` compares them: each run of white space one space, none at the line's end; a
    last line without its newline is the same line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [_DIFF_SPACE.sub(" ", line).rstrip(" ") for line in lines]


def _ioi_judge(output, expected, compare):
    """open-r1's IOI runner without a checker (``guipenedo/piston`` ``packages/cms_ioi/1.0.0/run``, Batch tasks:
    ``diff -bq <(echo "$CORRECT_OUTPUT") "$SOLUTION_OUTPUT"``, ``CORRECT_OUTPUT=$(cat correct_output.txt)``): the
    answer without its NUL bytes and trailing newlines, then one newline, against the output line by line, each run
    of white space within a line the same as any other, white space at line ends ignored; blank lines and leading
    white space count."""
    answer = expected.replace("\x00", "").rstrip("\n") + "\n"
    return _diff_b_lines(output) == _diff_b_lines(answer)


#: What C's ``isspace`` is in the C locale: the separators of ``std::cin >> token``.
_C_SPACE = " \t\n\v\f\r"
_C_SPACE_RUN = re.compile(r"([ \t\n\v\f\r]+)")
#: ``sscanf(s, "%lf%10s")`` reading the whole token as one number (glibc's ``scanf``, measured): decimal, where an
#: exponent without digits (``5e``, ``5e+``) is consumed and ignored; or hexadecimal, with at least a digit or the
#: point (``0x.`` is 0), its exponent likewise (``0x1p``); ``inf`` and ``nan`` are no float to the validator.
_C_DECIMAL = re.compile(r"([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(?:[eE]([+-]?[0-9]*))?\Z")  # ASCII digits only
_C_HEX = re.compile(r"([+-]?)0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]*)(?:[pP]([+-]?[0-9]*))?\Z")


def _c_float(token):
    """problemtools' ``isfloat``: the token read whole as a finite double, as glibc's ``sscanf`` reads it, else
    None."""
    try:
        decimal = _C_DECIMAL.match(token)
        if decimal:
            mantissa, exponent = decimal.groups()
            value = float(mantissa + ("e" + exponent if exponent and exponent.lstrip("+-") else ""))
        else:
            hexadecimal = _C_HEX.match(token)
            if not hexadecimal:
                return None
            sign, digits, exponent = hexadecimal.groups()
            if digits.strip(".") == "":
                if exponent is not None:  # "0x.p1": the point alone takes no exponent
                    return None
                value = 0.0
            else:
                power = exponent if exponent and exponent.lstrip("+-") else "0"
                value = float.fromhex("0x" + (digits + "0" if digits.endswith(".") else digits) + "p" + power)
            value = -value if sign == "-" else value
    except (ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def kattis_flags(flags):
    """The default validator's settings from its flags (``case_sensitive``, ``space_change_sensitive``,
    ``float_absolute_tolerance X``, ``float_relative_tolerance X``, ``float_tolerance X`` for both): ``(case,
    space, absolute, relative)``, a tolerance -1 when not given; raises ``ValueError`` on a flag it does not know
    (problemtools' validator stops with a judge error)."""
    case = space = False
    absolute = relative = -1.0
    i = 0
    while i < len(flags):
        flag = flags[i]
        if flag == "case_sensitive":
            case = True
        elif flag == "space_change_sensitive":
            space = True
        elif flag in ("float_absolute_tolerance", "float_relative_tolerance", "float_tolerance"):
            value = _c_float(flags[i + 1]) if i + 1 < len(flags) else None
            if value is None:
                raise ValueError("%s needs a number" % flag)
            if flag != "float_relative_tolerance":
                absolute = value
            if flag != "float_absolute_tolerance":
                relative = value
            i += 1
        else:
            raise ValueError("unknown flag %r" % (flag,))
        i += 1
    return case, space, absolute, relative


def _kattis_judge(output, expected, compare):
    """Kattis' default output validator (problemtools ``support/default_validator/default_validator.cc``) with the
    task's ``flags``: the answer's and the output's tokens (split on C white space) pairwise, each expected token
    that is a finite number (``isfloat``) matched by a number within the absolute or the relative tolerance when
    either is given, else as text, ignoring ASCII case unless ``case_sensitive``; no token left over; with
    ``space_change_sensitive`` the white space between, before and after them the same, byte for byte."""
    case, space, absolute, relative = kattis_flags(list(compare.get("flags") or ()))
    floats = absolute >= 0 or relative >= 0
    if space:
        want, got = _C_SPACE_RUN.split(expected), _C_SPACE_RUN.split(output)
        if (len(want) != len(got) or any(w != g for w, g in zip(want[1::2], got[1::2]))
                or (want[0] == "") != (got[0] == "") or (want[-1] == "") != (got[-1] == "")):
            return False  # the same white space runs, at the same places (before the first token, after the last)
        want, got = ([t.split("\x00", 1)[0] for t in parts[0::2] if t] for parts in (want, got))
    else:
        want, got = _c_tokens(expected), _c_tokens(output)
    if len(want) != len(got):
        return False
    for judge, team in zip(want, got):
        value = _c_float(judge) if floats else None
        if value is not None:
            mine = _c_float(team)
            if mine is None:
                return False
            if not (abs(value - mine) <= absolute or abs(value - mine) <= relative * abs(value)):
                return False
        elif case:
            if judge != team:
                return False
        elif judge.encode("utf-8", "surrogateescape").lower() != team.encode("utf-8", "surrogateescape").lower():
            return False
    return True


def _c_tokens(text):
    """``text``'s tokens as ``std::cin >> token`` reads them, each as its C string is (``strcmp`` and ``isfloat`` read
    it up to its first NUL byte)."""
    return [t.split("\x00", 1)[0] for t in _C_SPACE_RUN.split(text)[0::2] if t]


def _lines_judge(output, expected, compare):
    return same_stdout(output, expected)


def _exact_judge(output, expected, compare):
    return output.replace("\r\n", "\n") == expected.replace("\r\n", "\n")


_STDOUT_JUDGES = {"exact": _exact_judge, "lines": _lines_judge, "tokens": _tokens_judge, "float": _float_judge,
                  "decimal": _decimal_judge, "apps": _apps_judge, "taco": _taco_judge,
                  "codeforces": _codeforces_judge, "ioi": _ioi_judge, "kattis": _kattis_judge}


def same_output(output, expected, compare=None):
    """Whether a program's stdout ``output`` matches ``expected`` under the judge ``compare`` (a dict; default
    ``{"mode": "lines"}``). Never raises on what the program printed: output no judge can read (``--5``, ``²``, an
    integer of 5,000 digits, ``sNaN``) is a wrong answer. Modes:

    - ``exact``: the same text, byte for byte (``\\r\\n`` read as ``\\n``);
    - ``lines``: the same lines once each line's trailing whitespace and the trailing blank lines are dropped;
    - ``tokens``: the same tokens, split on ASCII whitespace (Codeforces' default checker, testlib's ``wcmp``);
    - ``float``: tokens, where two numbers match within ``tolerance`` (default 1e-6) absolutely or relatively to
      the expected one (testlib's ``rcmp6``; Kattis problemtools' default validator with ``float_tolerance``), or
      with ``absolute_only`` strictly within it absolutely (code_contests' ``OutputsMatch``), an expected integer
      too (``1.000000000000141`` is ``1``); with ``"integers": "exact"`` (the datasets' own ``float`` judges, see
      :meth:`trl_sandbox.tasks.Task.judge_spec`) an expected integer only by the same integer (``3.0`` is ``3``);
      other tokens as text;
    - ``decimal``: LiveCodeBench's ``grade_stdio``: the outputs stripped, the same number of lines, each line
      (stripped) equal as text or as a list of ``Decimal`` numbers (``0.500`` is ``0.5``, ``0.333`` is not
      ``0.3333``);
    - ``apps``: APPS's ``run_test`` (``hendrycks/apps`` ``eval/testing_util.py``): the stripped text, the stripped
      lines, the non-empty lines, one number a line within ``np.allclose``, then each line's tokens in order (APPS
      compares them as sets) with numbers rounded to 3 decimals and within ``np.isclose``; an expected integer only
      by that integer (APPS pays ``500001000.0`` for ``500000003``);
    - ``taco``: TACO's ``compare_std_results`` (``FlagOpen/TACO`` ``metrics/testing_util.py``): the same text once
      stripped, ``\\r\\n`` read as ``\\n`` (its other checks pay only wrong programs: ``2 1`` for ``1\\n2``);
    - ``codeforces``: open-r1's runner without a checker (``guipenedo/piston`` ``packages/codeforces/1.0.0/run``):
      the same tokens (ASCII whitespace, newlines included), the whole words yes/no in any case;
    - ``kattis``: Kattis' default output validator with the task's ``flags`` (problemtools
      ``support/default_validator``): tokens, numbers within its tolerances, case-insensitive unless
      ``case_sensitive``, white space exact with ``space_change_sensitive``;
    - ``ioi``: open-r1's IOI runner without a checker (``guipenedo/piston`` ``packages/cms_ioi/1.0.0/run``):
      ``diff -b`` of the lines (white space runs within a line alike, none at line ends; blank lines count).

    ``ignore_case`` (``tokens``/``float``) compares tokens with their ASCII letters lowercased (code_contests'
    ``AsciiStrToLower``: ``É`` and ``é`` stay different). ``separators`` (``tokens``/``float``): the characters
    tokens are split on instead of ASCII whitespace (code_contests' ``" \\n\\t\\r\\v"``); a number is then read
    without the whitespace left at its ends (``5\\f`` is ``5``, as absl's ``SimpleAtoi`` reads it).
    """
    compare = compare or {}
    mode = compare.get("mode", "lines")
    judge = _STDOUT_JUDGES.get(mode)
    if judge is None:
        raise ValueError("unknown judge %r" % (mode,))
    try:
        return bool(judge(output, expected, compare))
    except Exception:  # noqa: BLE001 - output no judge can read is a wrong answer on that test, never a crash
        return False


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
