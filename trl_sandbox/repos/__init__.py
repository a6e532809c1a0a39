"""Repository tasks (SWE-bench 5.0, SWE-smith, R2E-Gym, Harbor): rows read as published (:mod:`.rows`,
:mod:`.harbor`; :func:`read_task` tells them from other rows), the verdict
on a run's test log (:mod:`.grading`, with the log parsers of :mod:`.log_parsers`), the run in a fresh tree of the
task's image (:mod:`.runner`) and its score (:mod:`.scoring`). The images they run from are
:mod:`trl_sandbox.images`."""

from .grading import RepoVerdict, grade, recorded_exit_code, reward
from .log_parsers import PARSERS
from .reading import is_repo_row, read_task
from .rows import RepoTask, read_r2e, read_swebench, read_swesmith

__all__ = ["PARSERS", "RepoTask", "RepoVerdict", "grade", "is_repo_row", "read_r2e", "read_swebench",
           "read_swesmith", "read_task", "recorded_exit_code", "reward"]
