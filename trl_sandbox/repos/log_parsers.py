"""Test logs read into a status map (test id -> ``PASSED``, ``FAILED``, ``SKIPPED``, ``ERROR`` or ``XFAIL``), by the
rules of SWE-bench 5.0's parsers (``swebench/harness/log_parsers/python.py``, release 5.0.2): an instance's
``log_parser`` field names one of :data:`PARSERS`. SWE-smith, SWE-Gym and R2E-Gym's Python repositories use the same
ones (SWE-smith's profiles call SWE-bench's ``parse_log_pytest``).

Each parser keeps the official one's quirks where they decide a verdict (a ``FAILED`` line's `` - message`` dropped,
pytest's ``SKIPPED [N] file:line`` summary not read as a test named ``[N]``, the status word kept as printed); they
are this module's own code, measured against the official functions on the same logs (docs/repositories.md).
Languages other than Python (SWE-bench Multimodal and Multilingual's parsers) are not read yet: a row that names one
is refused with the list of the supported ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: The statuses a parser reports (SWE-bench's ``TestStatus``); a line is a result line when it starts with one.
STATUSES = ("FAILED", "PASSED", "SKIPPED", "ERROR", "XFAIL")
_SKIP_SUMMARY = re.compile(r"\[\d+\]")
_COLOUR = re.compile(r"\[(\d+)m")
_CONTROL = str.maketrans("", "", "".join(chr(c) for c in range(1, 32)))


def _result_fields(line: str) -> list[str] | None:
    """The fields of a pytest ``-rA`` summary line (``STATUS test_id [- message]``), or None for any other line."""
    if not line.startswith(STATUSES):
        return None
    if line.startswith("FAILED"):
        line = line.replace(" - ", " ")
    fields = line.split()
    if len(fields) < 2 or (fields[0] == "SKIPPED" and _SKIP_SUMMARY.fullmatch(fields[1])):
        return None
    return fields


def pytest(log: str) -> dict[str, str]:
    """pytest's ``-rA`` short summary: ``PASSED tests/test_x.py::test_y`` per line (``parse_log_pytest``)."""
    found = {}
    for line in log.split("\n"):
        fields = _result_fields(line)
        if fields:
            found[fields[1]] = fields[0]
    return found


def pytest_options(log: str) -> dict[str, str]:
    """As :func:`pytest`, with a parametrized id's option that is a path kept as its last component
    (``test_x[/tmp/a/b]`` -> ``test_x[/b]``, not ``//`` nor a glob) (``parse_log_pytest_options``)."""
    found = {}
    for line in log.split("\n"):
        fields = _result_fields(line)
        if not fields:
            continue
        name = fields[1]
        option = re.search(r"(.*?)\[(.*)\]", name)
        if option:
            head, value = option.groups()
            if value.startswith("/") and not value.startswith("//") and "*" not in value:
                value = "/" + value.split("/")[-1]
            name = f"{head}[{value}]"
        found[name] = fields[0]
    return found


def pytest_v2(log: str) -> dict[str, str]:
    """pytest's summary with colour codes and control characters removed, ids that contain spaces, and the older
    ``test_id STATUS`` lines (``parse_log_pytest_v2``)."""
    found = {}
    for line in log.split("\n"):
        line = _COLOUR.sub("", line).translate(_CONTROL)
        if line.startswith(STATUSES):
            if line.startswith("FAILED"):
                line = line.split(" - ", 1)[0]
            fields = line.split()
            if len(fields) >= 2 and not (fields[0] == "SKIPPED" and _SKIP_SUMMARY.fullmatch(fields[1])):
                found[" ".join(fields[1:])] = fields[0]
        elif line.endswith(STATUSES):
            fields = line.split()
            if len(fields) >= 2:
                found[" ".join(fields[:-1])] = fields[-1]
    return found


def matplotlib(log: str) -> dict[str, str]:
    """As :func:`pytest`, with ``MouseButton.LEFT``/``RIGHT`` written as 1 and 3 (``parse_log_matplotlib``)."""
    return pytest(log.replace("MouseButton.LEFT", "1").replace("MouseButton.RIGHT", "3"))


def seaborn(log: str) -> dict[str, str]:
    """seaborn's logs: ``FAILED id``, ``id PASSED ...`` and ``PASSED id`` lines (``parse_log_seaborn``)."""
    found = {}
    for line in log.split("\n"):
        fields = line.split()
        if len(fields) < 2:
            continue
        if line.startswith("FAILED"):
            found[fields[1]] = "FAILED"
        elif " PASSED " in line:
            if fields[1] == "PASSED":
                found[fields[0]] = "PASSED"
        elif line.startswith("PASSED"):
            found[fields[1]] = "PASSED"
    return found


def sympy(log: str) -> dict[str, str]:
    """sympy's ``bin/test``: ``____ file.py:test_name ____`` failure headers, then ``test_x ok|F|E`` lines
    (``parse_log_sympy``)."""
    found = {f"{path}.py:{rest}": "FAILED" for _, path, rest, _ in re.findall(r"(_*) (.*)\.py:(.*) (_*)", log)}
    for line in log.split("\n"):
        line = line.strip()
        if not line.startswith("test_"):
            continue
        for suffix, status in ((" E", "ERROR"), (" F", "FAILED"), (" ok", "PASSED")):
            if line.endswith(suffix):
                found[line.split()[0]] = status
    return found


_DJANGO_PASS = (" ... ok", " ... OK", " ...  OK")
_DJANGO_INTERRUPTED = (  # a pass whose "ok" a long multi-line print pushed to the next line
    r"^(.*?)\s\.\.\.\sTesting\ against\ Django\ installed\ in\ ((?s:.*?))\ silenced\)\.\nok$",
    r"^(.*?)\s\.\.\.\sInternal\ Server\ Error:\ \/(.*)\/\nok$",
    r"^(.*?)\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok$",
)


def django(log: str) -> dict[str, str]:
    """Django's ``runtests.py`` (unittest verbosity 2): ``name ... ok|skipped|FAIL|ERROR``, ``FAIL: name`` headers,
    an ``ok`` on the line after the test's own (``parse_log_django``)."""
    found = {}
    previous = None
    for line in log.split("\n"):
        line = line.strip()
        if "--version is equivalent to version" in line:
            found["--version is equivalent to version"] = "PASSED"
        if " ... " in line:
            previous = line.split(" ... ")[0]
        for suffix in _DJANGO_PASS:
            if line.endswith(suffix):
                if line.startswith("Applying sites.0002_alter_domain_unique...test_no_migrations"):
                    line = line.split("...", 1)[-1].strip()  # django__django-7188: a migration's line before it
                found[line.rsplit(suffix, 1)[0]] = "PASSED"
                break
        if " ... skipped" in line:
            found[line.split(" ... skipped")[0]] = "SKIPPED"
        if line.endswith(" ... FAIL"):
            found[line.split(" ... FAIL")[0]] = "FAILED"
        if line.startswith("FAIL:"):
            found[line.split()[1].strip()] = "FAILED"
        if line.endswith(" ... ERROR"):
            found[line.split(" ... ERROR")[0]] = "ERROR"
        if line.startswith("ERROR:"):
            found[line.split()[1].strip()] = "ERROR"
        if line.lstrip().startswith("ok") and previous is not None:
            found[previous] = "PASSED"
    for pattern in _DJANGO_INTERRUPTED:
        for match in re.finditer(pattern, log, re.MULTILINE):
            found[match.group(1)] = "PASSED"
    return found


def swesmith_pytest(log: str) -> dict[str, str]:
    """pytest's ``--verbose`` lines, ``tests/x.py::test_y PASSED [ 50%]``: SWE-smith's own ``parse_log_pytest``
    (``swesmith/harness/log_parsers.py``), which its Python repositories' test command (``pytest --disable-warnings
    --color=no --tb=no --verbose``) prints: the first field of a line followed by whitespace and a status word."""
    found = {}
    for line in log.split("\n"):
        for status in STATUSES:
            match = re.match(rf"^(\S+)(\s+){status}", line)
            if match:
                found[match.group(1)] = status
    return found


_R2E_CLEAN = re.compile(r"\x1b\[[0-9;]*m|\r")


def r2e_pytest(log: str) -> dict[str, str]:
    """R2E-Gym's ``parse_log_pytest`` (``r2egym/repo_analysis/execution_log_parser.py``, which ``parse_log_fn``
    returns for every repository), on the output as its runtime cleans it first (``run_tests``: ANSI colour codes and
    ``\\r`` removed): after pytest's ``short test summary info`` line, ``PASSED``, ``FAILED`` and ``ERROR`` lines,
    each test named ``<file's base name>::<last id part>`` (a ``FAILED``/``ERROR`` line's `` - message`` dropped)."""
    log = _R2E_CLEAN.sub("", log)
    if "short test summary info" not in log:
        return {}
    found = {}
    for line in log.split("short test summary info")[1].strip().split("\n"):
        for status in ("PASSED", "FAILED", "ERROR"):
            if line.startswith(status):
                parts = line.split("::")
                name = "::".join([parts[0].split("/")[-1], parts[-1]])
                found[name if status == "PASSED" else name.split(" - ")[0]] = status
                break
    return found


#: The ``log_parser`` names of SWE-bench 5.0 instances this module reads, and the function for each (several
#: repositories' names are the same parser, as in SWE-bench's registry).
PARSERS: dict[str, Callable[[str], dict[str, str]]] = {
    "parse_log_pytest": pytest,
    "parse_log_pytest_options": pytest_options,
    "parse_log_pytest_v2": pytest_v2,
    "parse_log_django": django,
    "parse_log_seaborn": seaborn,
    "parse_log_sympy": sympy,
    "parse_log_matplotlib": matplotlib,
    **{f"parse_log_{name}": pytest for name in ("astroid", "flask", "marshmallow", "pvlib", "pyvista", "sqlfluff",
                                                "xarray")},
    **{f"parse_log_{name}": pytest_options for name in ("pydicom", "requests", "pylint")},
    **{f"parse_log_{name}": pytest_v2 for name in ("astropy", "scikit", "sphinx")},
    "swesmith_parse_log_pytest": swesmith_pytest,
    "r2e_parse_log_pytest": r2e_pytest,
}
