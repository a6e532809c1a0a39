"""The scratch slots of a local sandbox's fork server: each execution's only writable directory, emptied after it and
checked empty before the next one (see ``_forkserver.py``). Standard library only; imported by the fork server, never
by the trainer.

Nothing an execution leaves may stop the emptying or end the server: :func:`empty` needs neither recursion (a tree
1,100 directories deep passed Python's recursion limit and ended the server) nor paths (a path longer than
``PATH_MAX`` could not be removed by its name, and spent the sandbox).
"""

import os
import stat

#: Bytes of the scratch tmpfs that may stay in use once every slot is empty and nothing runs (the judge's own slot);
#: more means a file some process still holds, and the sandbox is replaced.
SPACE_SLACK_BYTES = 1 << 20
#: How a directory is opened to be emptied: never through a link, never inherited.
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def empty(path):
    """Remove everything under ``path`` (even what an execution made unwritable), keeping ``path`` itself; returns
    None when it is empty, else why not (a short reason).

    Neither the depth nor the length of what an execution made can stop it: no recursion (a tree deeper than Python's
    recursion limit) and no path longer than a name (a path past ``PATH_MAX`` cannot be removed by path). One
    directory descriptor is held at a time: each entry is removed relative to its directory (``unlinkat``,
    ``rmdir`` with ``dir_fd``), a subdirectory is entered by its name and left through its ``..``; the names on the
    way down are kept, never joined. A directory that cannot be emptied is passed over, and the reason returned."""
    try:
        fd = os.open(path, _DIR_FLAGS)
    except OSError as exc:
        return "cannot open it (%s)" % (exc.strerror,)
    down = []  # the names from ``path`` to the directory ``fd`` is
    stuck = set()  # inode numbers of directories that would not go (one file system: the sandbox's tmpfs)
    problem = None
    try:
        while True:
            entered = None
            for entry in os.scandir(fd):
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.inode() in stuck:
                            continue
                        os.chmod(entry.name, stat.S_IRWXU, dir_fd=fd)  # an execution may have closed it
                        entered = os.open(entry.name, _DIR_FLAGS, dir_fd=fd)
                        down.append(entry.name)
                        break
                    os.unlink(entry.name, dir_fd=fd)
                except OSError as exc:
                    problem = "%s (%s)" % (entry.name[:40], exc.strerror)
            if entered is not None:
                os.close(fd)
                fd = entered
                continue
            if not down:
                break
            inode = os.fstat(fd).st_ino
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            name = down.pop()
            try:
                os.rmdir(name, dir_fd=fd)
            except OSError as exc:
                stuck.add(inode)
                problem = "%s (%s)" % (name[:40], exc.strerror)
        left = os.listdir(fd)
    except OSError as exc:
        return "emptying it failed (%s)" % (exc.strerror,)
    finally:
        os.close(fd)
    if left:
        return "it still holds %s%s" % (", ".join(sorted(n[:40] for n in left)[:3]),
                                         ": %s" % problem if problem else "")
    return None


def leftover(slots, busy, runs, idle):
    """Why the sandbox must not run anything more, or None: a slot of ``slots`` not in ``busy`` (the slots of
    running executions) that is not empty, or, when ``idle`` (nothing runs), the scratch tmpfs ``runs`` still using
    space (names gone, space not: a file some process still holds)."""
    for slot in slots:
        if slot in busy:
            continue
        try:
            left = os.listdir(slot)
        except OSError as exc:
            left = ["(%s)" % exc]
        if left:
            return "%s holds %s" % (os.path.basename(slot), ", ".join(sorted(left)[:3]))
    if idle:
        try:
            info = os.statvfs(runs)
            used = (info.f_blocks - info.f_bfree) * info.f_frsize
        except OSError:
            used = 0
        if used > SPACE_SLACK_BYTES:
            return "its scratch space did not come back (%d KiB in use, nothing running)" % (used >> 10)
    return None
