"""The account a remote sandbox's program runs as when the harness runs as root: a uid of this run's own.

Several sandboxes may share one kernel (a self-hosted runner, a pool host, two services on one machine, a fake that
runs commands on one host). Were every program ``nobody``, one run's cleanup (kill every process of the uid, remove its
files in the temporary directories) would end another run's worker, and remove its home, while it runs: tried that
way, 1 of 24 canonical HumanEval solutions passed. So each judge claims a uid of :data:`ACCOUNT_BASE` +
[0, :data:`ACCOUNT_SPAN`) in a registry every judge of the machine shares (:func:`registry_dir`: a file per uid, held
with an exclusive ``flock`` for as long as the run lives, in a directory only root may enter), and its cleanup only
ever sweeps that uid (:func:`.processes.sweep_uid`). A claim no live process holds is a run that was killed before its
cleanup: the next judge sweeps its uid (what it left running, its files) and removes the claim.

Standard library only (the harness archive), Python >= 3.8.
"""

import fcntl
import os
import random
import signal
import stat
import time

from .base import NOBODY

#: The first uid of the programs' accounts, and how many there are: above the distributions' ``UID_MAX`` (60000)
#: and below 65536, so that a user namespace that maps 65536 ids (a rootless container) can still run them.
ACCOUNT_BASE = 60500
ACCOUNT_SPAN = 4500
#: The claim this process holds: ``[uid, descriptor]`` (``[None, None]``: none).
_CLAIM = [None, None]


def registry_dir():
    """The claims' directory: ``/run/trl-sandbox-accounts`` where root may write ``/run``, else
    ``/tmp/.trl-sandbox-accounts-0``; made with mode 0700. None when neither is root's own directory that only root
    may enter (a name planted by another user is never trusted)."""
    for base, name in (("/run", "trl-sandbox-accounts"), ("/tmp", ".trl-sandbox-accounts-0")):
        path = os.path.join(base, name)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError:
            continue
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o077:
            return path
    return None


def _hold(path):
    """A descriptor holding ``path``'s exclusive lock, or None (another process holds it, or it is gone: a file
    unlinked after we opened it is not the claim any more). Raises FileNotFoundError when its directory is gone (the
    last run of the machine removed it meanwhile)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_ino == os.stat(path, follow_symlinks=False).st_ino:
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def become(uid):
    """Become ``uid`` (as its group too, with no supplementary groups), for good: a root process's last step before
    it runs what the program's account runs. Raises OSError when the kernel refuses."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def usable(uid):
    """Whether this process (root) can become ``uid`` (a user namespace may not map it)."""
    pid = os.fork()
    if pid == 0:
        try:
            become(uid)
        except BaseException:  # noqa: BLE001
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def claim(sweep):
    """Claim a uid for this run's program (root only): first sweep the uids of runs that were killed (their claims
    held by no process: ``sweep(uid)`` ends their processes and files), then hold a free one. Returns the uid, or
    None when no uid can be claimed or used (the caller then runs the program as ``nobody`` and sweeps no uid)."""
    for _attempt in range(5):  # the directory may be removed by the last release of another run meanwhile
        directory = registry_dir()
        if directory is None:
            return None
        try:
            return _claim_in(directory, sweep)
        except FileNotFoundError:
            continue
        except OSError:
            return None
    return None


def _claim_in(directory, sweep):
    for name in os.listdir(directory):
        if name.isdigit():
            fd = _hold(os.path.join(directory, name))
            if fd is not None:  # a run killed before its cleanup
                try:
                    sweep(int(name))
                finally:
                    release_file(directory, int(name), fd, keep_directory=True)
    start = random.randrange(ACCOUNT_SPAN)
    for offset in range(ACCOUNT_SPAN):
        uid = ACCOUNT_BASE + (start + offset) % ACCOUNT_SPAN
        fd = _hold(os.path.join(directory, str(uid)))
        if fd is None:
            continue
        if not usable(uid):
            release_file(directory, uid, fd)
            return None
        _CLAIM[:] = [uid, fd]
        return uid
    return None


def release_file(directory, uid, fd, keep_directory=False):
    """Give back a claim: unlink its file while still holding the lock (a claimer that opened it sees it unlinked
    and tries another), then close it; the directory goes too when it was the last claim of the machine."""
    try:
        os.unlink(os.path.join(directory, str(uid)))
    except OSError:
        pass
    os.close(fd)
    if not keep_directory:
        try:
            os.rmdir(directory)
        except OSError:  # other claims: theirs to remove
            pass


def release():
    """Give back this process's claim, if any (after its uid was swept). Idempotent."""
    uid, fd = _CLAIM
    if fd is not None:
        directory = registry_dir()
        if directory is not None:
            release_file(directory, uid, fd)
        else:
            os.close(fd)
    _CLAIM[:] = [None, None]


def claim_fd():
    """The descriptor of this process's claim (a worker must not inherit it: holding it would keep the claim alive,
    and unlocking it would let another run share the uid), or None."""
    return _CLAIM[1]


#: The uid the code runs as when the harness runs as root: this run's own account (see :mod:`.accounts`, claimed by
#: :func:`claim_program_uid`), else ``nobody``.
PROGRAM_UID = [NOBODY]


def claim_program_uid():
    """As root: claim this run's own account for the code (sweeping those of killed runs first), so that this run's
    cleanup never touches another's; ``nobody`` where none can be claimed. Returns the uid."""
    uid = claim(sweep_uid) if os.geteuid() == 0 else None
    PROGRAM_UID[0] = uid if uid is not None else NOBODY
    return PROGRAM_UID[0]


def sweep_program():
    """As root, end every process of this run's account and remove its files (:func:`sweep_uid`); never ``nobody``'s,
    which other runs and services of the machine may share."""
    if os.geteuid() == 0 and PROGRAM_UID[0] != NOBODY:
        sweep_uid(PROGRAM_UID[0])


def private_home(prefix):
    """A new directory of this sandbox's temporary directory for the code to work in, owned by the code's account when
    this process is root (the code then runs as :data:`PROGRAM_UID`, see :func:`confine`)."""
    import tempfile

    home = tempfile.mkdtemp(prefix=prefix)
    if os.geteuid() == 0:
        os.chown(home, PROGRAM_UID[0], PROGRAM_UID[0])
    return home


#: Where an unprivileged process can leave files in a sandbox (world-writable directories).
_SHARED_TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/var/lock")


def sweep_uid(uid):
    """Remove what processes of ``uid`` left in this sandbox: kill every process of that uid (through a helper that
    takes that uid, so the signal reaches nothing else), then remove the files and directories that uid owns in the
    world-writable temporary directories (:data:`_SHARED_TEMP_DIRS` and the world-writable directories in them).
    Runs as root."""
    import shutil
    import tempfile

    def alive():
        # /proc/<pid>/status, not the owner of /proc/<pid>: a process that made itself non-dumpable shows as root's
        found = 0
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open("/proc/%s/status" % name, "rb") as f:
                        for line in f:
                            if line.startswith(b"State:") and line.split()[1] in (b"Z", b"X"):
                                break  # a zombie: dead already, reaped by its parent whenever it wants
                            if line.startswith(b"Uid:"):
                                found += uid in [int(x) for x in line.split()[1:]]
                                break
                except (OSError, ValueError):
                    pass
        return found

    deadline = time.monotonic() + 5.0
    while True:
        pid = os.fork()
        if pid == 0:
            try:
                become(uid)
                for _ in range(20):  # a fork bomb may add processes between two rounds
                    try:
                        os.kill(-1, signal.SIGKILL)  # every process this uid may signal, this one excepted
                    except OSError:
                        break
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        if not alive() or time.monotonic() > deadline:
            break
        time.sleep(0.01)

    def clear(directory):
        # what uid owns goes; a world-writable directory of another owner (/tmp/.X11-unix) is searched too
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_uid == uid:
                if stat.S_ISDIR(st.st_mode):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    try:
                        os.unlink(entry.path)
                    except OSError:
                        pass
            elif stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_IWOTH:
                clear(entry.path)

    for directory in {os.path.realpath(d) for d in (*_SHARED_TEMP_DIRS, tempfile.gettempdir())}:
        clear(directory)
