"""Trusted launcher of the local backend: isolates one command, runs it, reports how it ended.

Run as ``python -I -S _launcher.py CONFIG_JSON`` by :class:`trl_sandbox.backends.local.LocalBackend`, never imported
by the trainer. Standard library only: it starts before, and outside of, any model-written code.

What it does, in order (each layer only when the config asks for it; the backend enables all the kernel supports):

1. ``unshare`` new network, PID, IPC, UTS and mount namespaces (plus a user namespace when not root). The new
   network namespace has no interface up, not even loopback. In the mount namespace, the scratch directory becomes
   a private size-capped tmpfs (a disk bomb fills memory-backed space of a fixed size, not the host's disk).
2. ``fork`` the command's first process, which is PID 1 of the new PID namespace. When it exits or is killed, the
   kernel kills every process left in the namespace: double forks, ``setsid`` and daemons cannot outlive it.
   Without a PID namespace the launcher is a child subreaper and kills every orphan it inherits.
3. In the child: die with the launcher (``PR_SET_PDEATHSIG``), join the sandbox's cgroups, enter the scratch
   directory, set the rlimits and a low CPU priority, drop to the unprivileged uid/gid with no supplementary
   groups, set no-new-privs, apply Landlock (filesystem, TCP, signal scoping) and seccomp, and ``execve`` with the
   given environment (never the host's).
4. In the launcher: wait for the child up to the wall-clock timeout, kill it at the deadline, and write one JSON
   status object (exit code, timed out, duration) to ``status_fd``, a pipe the command does not inherit.

With ``cfg["tree"]`` (a repository task's execution, see ``_rootfs.py``), the command runs in a fresh overlay of an
image's root filesystem instead of the host's, as root of a user namespace that maps only that root to the image's
owner; the launcher joins the sandbox's cgroups itself (before the tree's identity could not), step 3 has no
Landlock (no host path is reachable) and seccomp lets sockets through (the network namespace has only loopback).

Exit code 0 means the status was written. Setup failures are reported as ``{"error": ...}`` on ``status_fd``.
"""

import ctypes
import json
import os
import resource
import select
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves the script's directory off sys.path
import _landlock  # noqa: E402
import _reaper  # noqa: E402 - shared with the harness archive (stop then kill every descendant)
import _rootfs  # noqa: E402 - an image's tree per execution (``cfg["tree"]``)
import _seccomp  # noqa: E402

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
MS_NOSUID = 2
MS_NODEV = 4
MS_REC = 16384
MS_PRIVATE = 1 << 18

RLIMITS = {
    "cpu": resource.RLIMIT_CPU,
    "as": resource.RLIMIT_AS,
    "data": resource.RLIMIT_DATA,
    "fsize": resource.RLIMIT_FSIZE,
    "nproc": resource.RLIMIT_NPROC,
    "nofile": resource.RLIMIT_NOFILE,
    "core": resource.RLIMIT_CORE,
    "stack": resource.RLIMIT_STACK,
}


def _write_status(fd, status):
    data = json.dumps(status).encode()
    while data:
        data = data[os.write(fd, data) :]


def _unshare(libc, cfg):
    """Enter the new namespaces and mount the scratch tmpfs; return None or an error message."""
    if not cfg.get("namespaces", True):
        return None
    flags = CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNS
    uid, gid = os.getuid(), os.getgid()
    if cfg.get("userns"):
        flags |= CLONE_NEWUSER
    if libc.unshare(flags) != 0:
        err = ctypes.get_errno()
        return "unshare(%#x) failed: %s" % (flags, os.strerror(err))
    if cfg.get("userns"):
        # Map our own ids only: inside, the code keeps its unprivileged host identity.
        try:
            with open("/proc/self/setgroups", "w") as f:
                f.write("deny")
            with open("/proc/self/uid_map", "w") as f:
                f.write("%d %d 1" % (uid, uid))
            with open("/proc/self/gid_map", "w") as f:
                f.write("%d %d 1" % (gid, gid))
        except OSError as exc:
            return "writing the user namespace id maps failed: %s" % exc
    if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return "making mounts private failed: %s" % os.strerror(ctypes.get_errno())
    tmpfs = cfg.get("scratch_tmpfs")
    if tmpfs:
        owner = cfg.get("uid") if cfg.get("uid") is not None else uid
        group = cfg.get("gid") if cfg.get("gid") is not None else gid
        options = "size=%d,nr_inodes=%d,mode=0700,uid=%d,gid=%d" % (tmpfs["size"], tmpfs["inodes"], owner, group)
        if libc.mount(b"tmpfs", cfg["cwd"].encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options.encode()) != 0:
            return "mounting the scratch tmpfs failed: %s" % os.strerror(ctypes.get_errno())
    return None


def _child(libc, cfg, alive_r, setup_w):
    """Runs in the forked child (PID 1 of the new namespace); never returns."""
    try:
        os.setsid()  # its own session and process group (pgid == pid): killed as one group
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # The launcher may have died before prctl took effect: then nobody would kill us. Its end of the pipe
        # closing tells us so.
        if select.select([alive_r], [], [], 0)[0]:
            os._exit(1)
        for procs in cfg.get("cgroups", []):
            with open(procs, "w") as f:
                f.write("0")  # this process (and everything it starts) joins the sandbox's cgroup
        if cfg.get("server"):  # the sandbox's fork server: it applies the remaining layers to each execution
            os.close(setup_w)
            import _forkserver

            _forkserver.main(cfg["server"], libc)
        os.chdir(cfg["cwd"])
        for name, (soft, hard) in cfg.get("rlimits", {}).items():
            resource.setrlimit(RLIMITS[name], (soft, hard))
        if cfg.get("nice"):
            os.nice(cfg["nice"])
        uid, gid = cfg.get("uid"), cfg.get("gid")
        if gid is not None:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
        if uid is not None:
            os.setresuid(uid, uid, uid)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        landlock = cfg.get("landlock")
        if landlock:
            _landlock.restrict(landlock["ro"], [cfg["cwd"]], landlock["dev"], abi=landlock["abi"],
                               list_only=landlock.get("ls", ()))
        if cfg.get("seccomp"):
            _seccomp.install()
        os.umask(0o077)
        _exec_command(cfg)
    except BaseException as exc:  # noqa: BLE001 - report any setup failure to the launcher, then die
        _die_reporting(setup_w, exc)


def _where(exc):
    """``file:line`` where ``exc`` was raised (a setup failure's report names the step)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return "%s:%d" % (os.path.basename(tb.tb_frame.f_code.co_filename), tb.tb_lineno) if tb else "?"


def _tree_unshare(libc, cfg):
    """Tree mode: join the cgroups, enter the namespaces (with a user namespace mapping root to the image's owner
    unless we are root: then the execution's PID 1 makes its own, see :func:`_tree_child`), name the host, bring up
    loopback and mount the tree. Returns the merged directory and whether we are the host's root. Raises
    OSError."""
    for procs in cfg.get("cgroups", []):
        with open(procs, "w") as f:
            f.write("0")
    uid, gid = os.getuid(), os.getgid()  # before the user namespace: inside, unmapped, they read as 65534
    root = uid == 0
    flags = CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNS
    if not root:
        flags |= CLONE_NEWUSER
    if libc.unshare(flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "unshare(%#x) failed: %s" % (flags, os.strerror(err)))
    if not root:
        _rootfs.write_id_maps("self", uid, gid)
    _rootfs.mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
    hostname = b"sandbox"
    if libc.sethostname(hostname, len(hostname)) != 0:
        raise OSError(ctypes.get_errno(), "sethostname failed")
    _rootfs.loopback_up()
    return _rootfs.mount_tree(libc, cfg["tree"], cfg["cwd"], in_userns=not root), root


def _tree_child(libc, cfg, merged, root, alive_r, setup_w, ready_w, go_r):
    """Tree mode's first process (PID 1 of the new namespaces); never returns. As root, it makes its user
    namespace after leaving the host's root and waits for the launcher to write its id maps."""
    try:
        os.setsid()
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if select.select([alive_r], [], [], 0)[0]:
            os._exit(1)
        _rootfs.enter_tree(libc, merged)
        if root:
            os.setgroups([])
            if libc.unshare(_rootfs.CLONE_NEWUSER) != 0:
                raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER) failed")
            os.write(ready_w, b"u")
            if os.read(go_r, 1) != b"g":
                raise OSError("the launcher did not map the user namespace")
        os.close(ready_w)
        os.close(go_r)
        os.setresgid(0, 0, 0)
        os.setresuid(0, 0, 0)
        _rootfs.write_identity_files()
        _rootfs.drop_capabilities(libc)
        for name, (soft, hard) in cfg.get("rlimits", {}).items():
            resource.setrlimit(RLIMITS[name], (soft, hard))
        if cfg.get("nice"):
            os.nice(cfg["nice"])
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if cfg.get("seccomp"):
            _seccomp.install(_seccomp.build(allow_sockets=True))
        _rootfs.place_inputs(cfg.get("inputs", ()))
        os.chdir(cfg["tree"].get("workdir") or "/")
        os.umask(0o022)
        _exec_command(cfg)
    except BaseException as exc:  # noqa: BLE001 - report any setup failure to the launcher, then die
        _die_reporting(setup_w, exc)


def _fork_tree_child(libc, cfg, merged, root, close=()):
    """Fork :func:`_tree_child`; as root, write its user namespace's id maps when it asks. Returns its pid and the
    setup error it reported (empty once it started)."""
    alive_r, alive_w = os.pipe()
    setup_r, setup_w = os.pipe()
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    os.set_inheritable(setup_w, False)
    pid = os.fork()
    if pid == 0:
        for fd in (alive_w, setup_r, ready_r, go_w, *close):
            os.close(fd)
        _tree_child(libc, cfg, merged, root, alive_r, setup_w, ready_w, go_r)
    for fd in (alive_r, setup_w, ready_w, go_r):
        os.close(fd)
    map_error = b""
    if os.read(ready_r, 1) == b"u":  # nothing (EOF) as not root, or when the child failed before
        try:
            owner = cfg["tree"]["owner"]
            _rootfs.write_id_maps(pid, owner, owner)
            os.write(go_w, b"g")
        except OSError as exc:
            map_error = ("writing the tree's id maps failed: %s" % exc).encode()
    os.close(ready_r)
    os.close(go_w)
    return pid, map_error or _read_to_end(setup_r)


def _read_to_end(fd):
    """Everything ``fd`` gives until its writers close it (a child's setup error; empty once it started); closes
    ``fd``."""
    data = b""
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    os.close(fd)
    return data


def _exec_command(cfg):
    """The signals the launcher's interpreter changed back to their defaults, then ``execve`` of the command with
    exactly its environment; never returns."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    argv = cfg["argv"]
    os.execve(argv[0], argv, cfg.get("env", {}))


def _die_reporting(setup_w, exc):
    """In a forked first process: write the setup failure ``exc`` (and where it was raised) to ``setup_w``, exit
    127."""
    try:
        os.write(setup_w, ("%s: %s (at %s)" % (type(exc).__name__, exc, _where(exc))).encode())
    finally:
        os._exit(127)


def _disk_usage(path, limit):
    """Bytes used under ``path`` (stops counting past ``limit``)."""
    total = 0
    for root, dirs, files in os.walk(path):
        for name in files + dirs:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                continue
        if total > limit:
            break
    return total


def _fork_child(libc, cfg, close=()):
    """Fork the first process (see :func:`_child`), closing ``close`` in it; return its pid and the setup error
    it reported (empty once it started: ``execve`` or the fork server closed the pipe)."""
    alive_r, alive_w = os.pipe()  # alive_w stays open in the launcher for as long as it lives
    setup_r, setup_w = os.pipe()
    os.set_inheritable(setup_w, False)  # closed by a successful execve: EOF means "started"
    pid = os.fork()
    if pid == 0:
        for fd in (alive_w, setup_r, *close):
            os.close(fd)
        _child(libc, cfg, alive_r, setup_w)
    os.close(alive_r)
    os.close(setup_w)
    return pid, _read_to_end(setup_r)


def _serve(libc, cfg):
    """Server mode: start the sandbox's fork server as PID 1 of its namespaces and wait for it to end. Setup
    errors go to the control socket (the server reports its own)."""
    error = _unshare(libc, cfg)
    if error:
        _write_status(cfg["server"]["control_fd"], {"error": error})
        return 0
    # The server's copies of the sockets are the only ones: their EOF is the host's end.
    pid, setup_error = _fork_child(libc, cfg)
    os.close(cfg["server"]["control_fd"])
    os.close(cfg["server"]["judge_fd"])
    if setup_error:
        sys.stderr.write("trl-sandbox fork server setup failed: %s\n" % setup_error.decode(errors="replace"))
    os.waitpid(pid, 0)
    return 0


def main():
    cfg = json.loads(sys.argv[1])
    libc = ctypes.CDLL(None, use_errno=True)
    if cfg.get("server"):
        return _serve(libc, cfg)
    status_fd = cfg["status_fd"]
    os.set_inheritable(status_fd, False)

    if cfg.get("tree"):
        try:
            merged, root = _tree_unshare(libc, cfg)
        except OSError as exc:
            _write_status(status_fd, {"error": "preparing the tree failed: %s (at %s)" % (exc, _where(exc))})
            return 0
        subreaper = False
        start = time.monotonic()
        pid, setup_error = _fork_tree_child(libc, cfg, merged, root, close=(status_fd,))
    else:
        error = _unshare(libc, cfg)
        if error:
            _write_status(status_fd, {"error": error})
            return 0
        subreaper = not cfg.get("namespaces", True)
        if subreaper:  # no PID namespace: orphans of the command become our children, and we kill them
            libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        start = time.monotonic()
        pid, setup_error = _fork_child(libc, cfg, close=(status_fd,))

    timed_out = False
    deadline = start + float(cfg["timeout_s"])
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    disk_limit = cfg.get("scratch_watchdog")  # no tmpfs: poll the scratch directory's size instead
    disk_exceeded = False
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            os.kill(pid, signal.SIGKILL)  # PID 1 of its namespace: the kernel kills the rest
            break
        if poller.poll(min(remaining, 0.1) * 1000 if disk_limit else remaining * 1000):
            break
        if disk_limit and _disk_usage(cfg["cwd"], disk_limit) > disk_limit:
            disk_exceeded = True
            os.kill(pid, signal.SIGKILL)
            break
    _, status = os.waitpid(pid, 0)
    duration = time.monotonic() - start
    os.close(pidfd)
    if subreaper:
        _reaper.kill_tree(pid)
    if setup_error:
        _write_status(status_fd, {"error": "sandbox setup failed: " + setup_error.decode(errors="replace")})
        return 0
    code = os.waitstatus_to_exitcode(status)
    _write_status(
        status_fd,
        {
            "exit_code": None if timed_out else (128 - code if code < 0 else code),
            "timed_out": timed_out,
            "duration_s": duration,
            "disk_exceeded": disk_exceeded,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
