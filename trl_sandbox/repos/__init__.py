"""Repository tasks (SWE-bench 5.0, SWE-smith, R2E-Gym, Harbor): rows read as published (:mod:`.rows`), the verdict
on a run's test log (:mod:`.grading`, with the log parsers of :mod:`.log_parsers`). The images they run from are
:mod:`trl_sandbox.images`."""

from .grading import RepoVerdict, grade, recorded_exit_code, reward
from .log_parsers import PARSERS
from .rows import RepoTask, read_swebench

__all__ = ["PARSERS", "RepoTask", "RepoVerdict", "grade", "read_swebench", "recorded_exit_code", "reward"]
