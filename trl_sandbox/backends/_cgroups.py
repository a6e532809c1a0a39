"""Per-sandbox cgroups of the local backend (cgroup v1 ``memory`` and ``pids``, where this process may write): a cap
on a whole execution tree's memory and process count, whatever it forks."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..errors import InfrastructureError

_CGROUP_V1 = Path("/sys/fs/cgroup")
#: The group, in each hierarchy, that holds the sandboxes' groups of every run of this host.
_PARENT = "trl-sandbox"


class Cgroups:
    """The cgroup v1 hierarchies this process may create groups in, and one group per sandbox in each.

    Args:
        bases: Controller name (``memory``, ``pids``) -> the hierarchy's directory; empty: no cgroups.
    """

    def __init__(self, bases: dict[str, Path]) -> None:
        self.bases = bases

    @classmethod
    def writable(cls) -> Cgroups:
        """The ``memory`` and ``pids`` hierarchies this process may create groups in (none where not writable)."""
        found = {}
        for controller in ("memory", "pids"):
            base = _CGROUP_V1 / controller
            if (base / "cgroup.procs").exists() and os.access(base, os.W_OK):
                found[controller] = base
        return cls(found)

    def dirs(self, sandbox_id: str) -> dict[str, Path]:
        """The group of sandbox ``sandbox_id`` in each hierarchy, by controller."""
        return {name: base / _PARENT / sandbox_id for name, base in self.bases.items()}

    def procs_files(self, sandbox_id: str) -> list[str]:
        """The ``cgroup.procs`` files a process of the sandbox joins (its groups that exist)."""
        return [str(g / "cgroup.procs") for g in self.dirs(sandbox_id).values() if g.exists()]

    def create(self, sandbox_id: str, memory_bytes: int, max_processes: int) -> None:
        """Create the sandbox's groups: at most ``memory_bytes`` of memory, ``max_processes`` tasks.

        Raises:
            InfrastructureError: a group cannot be created or configured.
        """
        limits = {"memory": {"memory.limit_in_bytes": memory_bytes}, "pids": {"pids.max": max_processes}}
        for name, group in self.dirs(sandbox_id).items():
            try:
                _make_group(group)
                for key, value in limits[name].items():
                    (group / key).write_text(str(value))
            except OSError as exc:
                raise InfrastructureError(f"local backend: cannot create cgroup {group}: {exc}") from exc

    def remove_parents(self) -> None:
        """Remove the ``trl-sandbox`` groups that hold the sandboxes' groups, where empty. The kernel refuses to
        remove a group that still has groups (``EBUSY``): those of another run of this host, or sandboxes this one
        leaves, keep theirs; that run removes it when it closes."""
        for base in self.bases.values():
            try:
                (base / _PARENT).rmdir()
            except OSError:
                pass

    def delete(self, sandbox_id: str) -> None:
        """Remove the sandbox's groups (waiting up to 0.5 s for the processes of a killed execution to leave)."""
        for group in self.dirs(sandbox_id).values():
            for _ in range(50):
                try:
                    group.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


def _make_group(group: Path) -> None:
    """Create ``group`` and its parent: another run's :meth:`Cgroups.remove_parents` may remove the parent, empty,
    between the two ``mkdir`` calls, so the pair is tried again (raises the last ``OSError`` past a few tries). Not
    ``Path.mkdir(exist_ok=True)``: it checks again after ``EEXIST``, and raises when the parent was removed since."""
    for attempt in range(20):
        for path in (group.parent, group):
            try:
                os.mkdir(path)
            except FileExistsError:
                pass
            except FileNotFoundError:  # the parent, removed since its mkdir
                if attempt == 19:
                    raise
                break
        else:
            return
