"""A short soak (benchmarks/soak.py runs the long one): a few hundred mixed executions, including hostile ones,
leave no file descriptors, child processes, scratch directories or cgroups behind and every result as expected."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import soak  # noqa: E402

pytestmark = pytest.mark.serial  # measures or loads the host: no other test beside it (tests/conftest.py)


def test_short_soak_leaks_nothing():
    rows, growth = soak.run(executions=300, batch=100, echo=lambda line: None)
    assert growth["unexpected_statuses"] == 0, rows
    assert all(row["infra_errors"] == 0 for row in rows), rows
    for key in ("fds", "children", "scratch_dirs", "cgroups"):
        assert growth[key] <= 0, (key, rows)
    assert rows[-1]["children"] == 0 and rows[-1]["scratch_dirs"] == 0, rows
