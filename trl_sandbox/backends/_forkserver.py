"""Fork server of the local backend: one pre-started, trusted interpreter per sandbox that forks each execution.

Started by ``_launcher.py`` (server mode) as PID 1 of the sandbox's own network, PID, IPC, UTS and mount namespaces,
in the sandbox's cgroups. Standard library only; never imported by the trainer.

Why: starting Python costs tens of milliseconds per completion, and most of what remains is the kernel copying
pages a fresh process touches. So the server imports the harness and the common standard library once, prepares
everything it can once, and per completion forks *one* process, the worker that runs the model's code, while
the tests are judged by a *judge server* that lives as long as the sandbox.

Processes of a sandbox (all in its namespaces and cgroups):

- the server (this module; root, or every capability of its user namespace): at start it mounts the sandbox's
  scratch tmpfs (``scratch_size`` bytes) with a few *slot* directories, sets the rlimits (all but CPU time),
  nice 10 and the fixed environment that every process of the sandbox inherits, then restricts itself with Landlock
  (read-only: interpreter, system libraries, the sandbox's files; read-write: the slots; no TCP; signals and
  abstract unix sockets scoped) and seccomp (the deny-list, plus ``unshare``/``setns`` of PID namespaces only),
  with no-new-privs. Everything it forks inherits those;
- the judge server (forked once at start; the sandbox uid, no capabilities): runs
  :func:`trl_sandbox.harness.server.serve` on the host's judge socket. It never runs model code;
- per completion, a worker (forked on the judge's request, from this server, which never held a request or a
  test): PID 1 of a new PID namespace (when it is killed, everything it started dies before the judge sees it
  gone), in its own session, in a nested Landlock domain that scopes its signals and abstract sockets to itself,
  in a fresh, emptied slot as its only writable directory and home, with its CPU-time limit, the sandbox uid and
  no capabilities. The judge holds its pidfd to kill it;
- per generic execution (``exec`` of any other command, e.g. the health check): the same, then ``execve``;
- per interpreter session (``{"session": true}``, see :func:`trl_sandbox.harness.session.session_main`): the same,
  then the harness's session loop in that fork, without ``execve``.

System V IPC and POSIX message queues (objects that would outlive an execution in the sandbox's IPC namespace) are
denied by seccomp.

Protocol on the control socket (``SOCK_SEQPACKET``, one message per datagram):

- server -> host once: ``{"ready": true}`` or ``{"error": message}``;
- host -> server: ``{"id", "argv", "timeout_s"}`` with four descriptors attached (stdin, stdout,
  stderr, status); ``{"cancel": id}`` kills a running execution;
- the status descriptor receives one JSON object when the execution has ended, everything it started is gone and its
  slot is emptied: ``{"exit_code", "timed_out", "duration_s", "spent"?}`` (``spent``: why the sandbox must be
  replaced now) or ``{"error": setup failure}``. EOF on the control socket (the host
  closed it or died) kills every process of the sandbox and ends the server.

The judge asks for workers, and releases them, on its own socket (see ``_spawner.py``). Each worker joins the
sandbox's worker group, and every execution gets the OOM score that makes it the OOM killer's first choice (see
``_accounting.py``). An execution's files never end the server: its slot is emptied without recursion or paths
(``_slots.py``), and any error while serving makes the sandbox *spent* instead (every later request refused; the
answer of the execution that spent it, and its status, say so).
"""

import ctypes
import gc
import importlib
import importlib.util
import json
import os
import platform
import random
import resource
import select
import signal
import socket
import sys
import time
import types

import _accounting
import _landlock
import _seccomp
import _slots
import _spawner

CLONE_NEWPID = 0x20000000
PR_SET_DUMPABLE = 4
PR_SET_NAME = 15
PR_SET_NO_NEW_PRIVS = 38
MS_NOSUID = 2
MS_NODEV = 4
_CAPSET = {"x86_64": 126, "aarch64": 91}
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
SLOTS = 4
#: Seconds the server waits for a worker its judge released (killed: it ends at once) before it gives up on it.
_RELEASE_WAIT_S = 10.0

# Imported once here so that executions find them loaded: code importing them pays nothing.
PRELOAD = (
    "array", "bisect", "collections", "copy", "dataclasses", "datetime", "decimal", "fractions", "functools",
    "hashlib", "heapq", "itertools", "math", "operator", "random", "re", "statistics", "string", "typing",
)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]


def _close_all_but(keep):
    low = 3
    for fd in sorted(keep):
        if fd >= low:
            os.closerange(low, fd)
            low = fd + 1
    os.closerange(low, 1 << 20)


def _import_harness(path):
    """The harness package from its directory ``path`` (``trl_sandbox/harness``), under the name it has in the
    archive the sandboxes get, with every module the server uses loaded now: Landlock closes ``path`` to this process
    once it is restricted. Returns a namespace of those modules (``server``, ``session``, ``processes``, ``worker``)."""
    name = "trl_sandbox_harness"
    spec = importlib.util.spec_from_file_location(name, os.path.join(path, "__init__.py"),
                                                  submodule_search_locations=[path])
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
    modules = {m: importlib.import_module("%s.%s" % (name, m)) for m in ("server", "session", "processes", "worker",
                                                                                   "cputime", "strays")}
    return types.SimpleNamespace(**modules)


def _raw_fork():
    """``fork(2)`` from libc, called with the GIL held (``ctypes.PyDLL``), or ``os.fork`` where unavailable.

    Unlike ``os.fork``, the child runs none of Python's after-fork handlers (``threading``'s bookkeeping,
    ``random``'s reseeding...): they run Python code that writes to a few hundred pages the child shares with this
    server, and every such page costs a copy-on-write fault (measured: a bare child takes 217 faults after
    ``os.fork`` and 36 after this; a worker, whose own setup dominates, about 25 fewer). They are not
    needed here: this server has one thread (so no lock can be held by another thread at the fork), and it reseeds
    ``random`` itself before each fork.
    """
    try:
        fork = ctypes.PyDLL(None).fork
    except (OSError, AttributeError):
        return os.fork
    fork.restype = ctypes.c_int
    fork.argtypes = []
    return fork


class Server:
    """The server; ``cfg`` comes from ``LocalBackend._server_launch``."""

    def __init__(self, cfg, libc):
        self.cfg = cfg
        self.libc = libc
        self.uid, self.gid, self.root = cfg["uid"], cfg["gid"], cfg["root"]
        self.ctrl = socket.socket(fileno=cfg["control_fd"])
        self.fork = _raw_fork()
        self.host_judge_fd = cfg["judge_fd"]
        self.harness = _import_harness(cfg["harness_path"])
        for name in PRELOAD:
            try:
                __import__(name)
            except ImportError:
                pass
        self.pidns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        self.oom = _accounting.OomScores()  # the OOM killer takes executions first, this server and the judge last
        self.devnull = os.open(os.devnull, os.O_RDWR)
        runs = cfg["runs"]
        options = "size=%d,nr_inodes=%d,mode=0711" % (cfg["scratch_size"], cfg.get("scratch_inodes", 4096) + SLOTS + 1)
        if libc.mount(b"tmpfs", runs.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options.encode()) != 0:
            raise OSError(ctypes.get_errno(), "mounting the sandbox's scratch tmpfs failed")
        # One slot for the workers (the judge asks for one at a time, and each is reaped and its slot emptied
        # before the next starts), so their HOME is a constant of the environment; a few for other commands.
        self.worker_slot = os.path.join(runs, "w")
        self.slots = [self.worker_slot]
        for i in range(SLOTS):
            self.slots.append(os.path.join(runs, str(i)))
        # The judge's own temporary directory (a Kattis validator's feedback_dir): in no worker's Landlock domain.
        self.judge_slot = os.path.join(runs, "j")
        for path in [*self.slots, self.judge_slot]:
            os.mkdir(path, 0o700)
            os.chown(path, self.uid, self.gid)
        self.free = self.slots[1:]
        self.worker_free = True
        self.running = {}  # our pidfd -> record of a running child
        self.by_id = {}
        self.pending = []  # requests waiting for a free slot
        # The judge's socket (SOCK_SEQPACKET): we answer its requests for workers.
        self.judge_sock, judge_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # What every process of the sandbox shares is set once, here, and inherited: the rlimits but CPU time (per
        # execution), a low priority (the sandbox never starves the trainer), the fixed environment.
        for name, (soft, hard) in cfg["rlimits"].items():  # "as" -> RLIMIT_AS...
            resource.setrlimit(getattr(resource, "RLIMIT_" + name.upper()), (soft, hard))
        os.nice(10)
        os.environ.clear()
        os.environ.update(cfg["env"])
        os.environ["HOME"] = os.environ["TMPDIR"] = self.worker_slot
        # Each execution enters a nested Landlock domain of its slot: it reads what the sandbox reads and writes its
        # own slot only (never a sibling's: what one completion leaves there, or the space it fills, never reaches
        # the next one), and with ABI >= 6 it cannot signal the judge, this server or another execution, nor reach
        # their abstract sockets, even if it could name them. Built now: this server cannot open paths once
        # restricted.
        landlock = cfg.get("landlock")
        self.slot_rulesets = {}
        if landlock:
            for slot in self.slots:
                self.slot_rulesets[slot] = _landlock.create_ruleset(
                    landlock["ro"], [slot], landlock["dev"], abi=landlock["abi"], list_only=landlock.get("ls", ()))
        #: Why this sandbox must not run anything any more (a slot that could not be emptied), or None.
        self.spent = None
        self.group = _accounting.open_worker_group(cfg.get("worker_group"))
        self._restrict()
        self.judge_pid = self._start_judge(judge_end)
        judge_end.close()
        os.close(self.host_judge_fd)
        # Objects that exist now are never collected: forks do not copy their pages when the GC walks them.
        gc.collect()
        gc.freeze()

    def _restrict(self):
        """Landlock, no-new-privs and seccomp for this server and everything it will fork."""
        libc, cfg = self.libc, self.cfg
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        landlock = cfg.get("landlock")
        if landlock:
            # /proc read too: the judge's and this server's, never an execution's (its slot's domain lacks it): the
            # workers' CPU time (see _start_worker); and a v1 worker group's directory (its process list).
            readable = [*landlock["ro"], "/proc"]
            if self.group is not None and self.group["kind"] == "v1":
                readable.append(self.group["dir"])
            ruleset = _landlock.create_ruleset(readable, [*self.slots, self.judge_slot],
                                               landlock["dev"], abi=landlock["abi"], list_only=landlock.get("ls", ()))
            try:
                _landlock.restrict_self(ruleset, libc)
            finally:
                os.close(ruleset)
        if cfg.get("seccomp"):
            _seccomp.install(_seccomp.build(allow_pid_namespaces=True), libc)

    # -- processes --------------------------------------------------------------------------------------------------

    def _drop_privileges(self):
        """In a forked child: the sandbox uid with no groups (root), or no capabilities (user namespace)."""
        if self.root:
            os.setgroups([])
            os.setresgid(self.gid, self.gid, self.gid)
            os.setresuid(self.uid, self.uid, self.uid)
        else:
            number = _CAPSET.get(platform.machine())
            if number is None:
                raise OSError("capset: unsupported architecture %s" % platform.machine())
            data = (_CapData * 2)()
            if self.libc.syscall(number, ctypes.byref(_CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)), data) != 0:
                raise OSError(ctypes.get_errno(), "capset failed")

    def _child_common(self, fds, keep, cpu_s, slot):
        """Setup shared by every forked execution: its own session, the nested Landlock domain of its slot,
        descriptors 0-2, nothing else inherited, the slot as working directory, its CPU-time limit, no privileges.

        Everything else is inherited from the server (the other rlimits, nice, the environment, Python's own
        signal dispositions) and costs nothing here: every object a fork touches is a page the kernel copies. No
        ``PR_SET_PDEATHSIG`` is needed either: the server is PID 1 of the sandbox's PID namespace, so when it dies
        the kernel kills every process in that namespace and in the namespaces nested in it.
        """
        os.setsid()  # its own session and process group: kill(0, ...) reaches nothing of ours
        ruleset = self.slot_rulesets.get(slot)
        if ruleset is not None:
            _landlock.restrict_self(ruleset, self.libc)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        _close_all_but(keep)
        os.chdir(slot)
        cpu = int(cpu_s) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        self._drop_privileges()
        os.umask(0o077)

    def _fork_in_new_pidns(self):
        # Back to our own PID namespace, then a fresh one for the next child, which is its PID 1.
        if self.libc.setns(self.pidns, CLONE_NEWPID) != 0 or self.libc.unshare(CLONE_NEWPID) != 0:
            raise OSError(ctypes.get_errno(), "a new PID namespace was refused")
        random.seed()  # each execution starts from its own seed, as a fresh interpreter would
        pid = self.oom.fork(self.fork)  # the child inherits the score this server has at the fork
        if pid < 0:
            raise OSError(ctypes.get_errno(), "fork failed")
        return pid

    def _start_judge(self, judge_end):
        pid = os.fork()
        if pid:
            return pid
        try:
            self.libc.prctl(PR_SET_NAME, b"trl-sbx-judge", 0, 0, 0)
            os.setsid()
            os.dup2(self.devnull, 0)
            os.dup2(self.devnull, 1)
            keep = {self.host_judge_fd, judge_end.fileno()}
            group = None
            if self.group is not None:  # what the judge reads of the worker group (never the join descriptor)
                procs = self.group.get("procs", os.path.join(self.group["dir"], "cgroup.procs"))
                keep |= {self.group["usage"], *([procs] if isinstance(procs, int) else [])}
                group = self.harness.strays.WorkerGroup(self.group["kind"], self.group["usage"], procs)
            _close_all_but(keep)
            os.chdir(self.cfg["runs"])
            self._drop_privileges()
            self.libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
            kept = {name: os.environ.get(name) for name in ("TRL_SANDBOX_JUDGE_PATH", "TRL_SANDBOX_PACKAGES")}
            os.environ.clear()
            for name, value in kept.items():  # where the judge imports pytest (and the tests' packages) from
                if value:
                    os.environ[name] = value
            os.environ["TMPDIR"] = self.judge_slot
            import tempfile

            tempfile.tempdir = self.judge_slot
            spawn = _spawner.Spawner(judge_end, self.harness, group)
            self.harness.server.serve(self.host_judge_fd, spawn)
        except BaseException as exc:  # noqa: BLE001
            try:
                os.write(2, ("trl-sandbox judge server: %s: %s\n" % (type(exc).__name__, exc)).encode())
            finally:
                os._exit(1)
        os._exit(0)

    # -- the loop ---------------------------------------------------------------------------------------------------

    def serve(self):
        self.libc.prctl(PR_SET_NAME, b"trl-sbx-server", 0, 0, 0)
        self.ctrl.sendall(json.dumps({"ready": True}).encode())
        poller = select.poll()
        self.poller = poller
        poller.register(self.ctrl.fileno(), select.POLLIN)
        poller.register(self.judge_sock.fileno(), select.POLLIN)
        judge_pidfd = os.pidfd_open(self.judge_pid)
        poller.register(judge_pidfd, select.POLLIN)
        while True:
            now = time.monotonic()
            deadlines = [r["deadline"] for r in self.running.values() if r["deadline"] and not r["killed"]]
            timeout = max(0.0, min(deadlines) - now) * 1000 + 1 if deadlines else None
            events = poller.poll(timeout)
            # Reap first: a finished worker's slot is then free for a request in the same batch.
            for fd, _mask in events:
                if fd in self.running:
                    self._guarded(self._reap, fd)
            for fd, _mask in events:
                if fd == self.ctrl.fileno():
                    if not self._guarded(self._on_host, default=True):
                        self._shutdown()
                        return
                elif fd == self.judge_sock.fileno():
                    self._guarded(self._on_judge)
                elif fd == judge_pidfd:
                    poller.unregister(judge_pidfd)
                    os.waitpid(self.judge_pid, 0)  # the host sees its socket close and replaces the sandbox
            now = time.monotonic()
            for run in list(self.running.values()):
                if run["deadline"] and not run["killed"] and now >= run["deadline"]:
                    self._kill(run, timed_out=True)

    def _guarded(self, handler, *args, default=None):
        """``handler(*args)``; nothing an execution left may end this server: an error spends the sandbox instead
        (every later request refused, the host replaces it), said on stderr (the sandbox's log)."""
        try:
            return handler(*args)
        except Exception as exc:  # noqa: BLE001
            self.spent = self.spent or "the fork server failed: %s: %s" % (type(exc).__name__, exc)
            try:
                os.write(2, ("trl-sandbox fork server: %s\n" % self.spent).encode())
            except OSError:
                pass
            return default

    def _on_host(self):
        try:
            data, fds, _flags, _addr = socket.recv_fds(self.ctrl, 1 << 20, 8)
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False
        if not data:
            for fd in fds:
                os.close(fd)
            return False
        try:
            msg = json.loads(data)
        except ValueError:
            msg = {}
        if "cancel" in msg:
            run = self.by_id.get(msg["cancel"])
            if run is not None and not run["killed"]:
                self._kill(run, timed_out=False)
            for fd in fds:
                os.close(fd)
        elif len(fds) == 4:
            self.pending.append((self._start_exec, msg, fds))
            self._start_pending()
        else:
            for fd in fds:
                os.close(fd)
        return True

    def _on_judge(self):
        try:
            data, fds, _flags, _addr = socket.recv_fds(self.judge_sock, 4096, 4)
        except OSError:
            return
        if data and not fds:
            try:
                released = json.loads(data).get("released")
            except (ValueError, AttributeError):
                released = None
            if isinstance(released, int):
                self._release(released)
                return
        if not data or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            if fds:
                self._answer_judge({"error": "malformed worker request"})
            return
        try:
            msg = json.loads(data)
        except ValueError:
            msg = {}
        self.pending.append((self._start_worker, msg, fds))
        self._start_pending()

    def _start_pending(self):
        """Start what waits for a slot, in order, while slots are free; refuse everything once the sandbox is spent."""
        if self.spent:
            for start, msg, fds in self.pending:
                self._refuse(start, fds)
            self.pending = []
            return
        waiting = []
        for start, msg, fds in self.pending:
            if start == self._start_worker and self.worker_free:
                self.worker_free = False
                start(self.worker_slot, msg, fds)
            elif start == self._start_exec and self.free:
                start(self.free.pop(), msg, fds)
            else:
                waiting.append((start, msg, fds))
        self.pending = waiting

    def _refuse(self, start, fds):
        """Answer a request with this sandbox's reason to run nothing more (the host then replaces the sandbox)."""
        error = "the sandbox is spent (%s): it must be replaced" % self.spent
        if start == self._start_worker:
            for fd in fds:
                os.close(fd)
            self._answer_judge({"error": error})
            return
        status = fds[3]
        for fd in fds[:3]:
            os.close(fd)
        try:
            _write_all(status, json.dumps({"error": error}).encode())
        except OSError:
            pass
        os.close(status)

    def _answer_judge(self, msg, fds=()):
        try:
            socket.send_fds(self.judge_sock, [json.dumps(msg).encode()], list(fds))
        except OSError:
            pass

    def _track(self, pid, slot, **fields):
        pidfd = os.pidfd_open(pid)
        run = {"pid": pid, "pidfd": pidfd, "slot": slot, "start": time.monotonic(), "deadline": None,
               "killed": False, "timed_out": False, "id": None, "status": None, "setup": None}
        run.update(fields)
        self.running[pidfd] = run
        if run["id"] is not None:
            self.by_id[run["id"]] = run
        self.poller.register(pidfd, select.POLLIN)
        return run

    def _start_worker(self, slot, msg, fds):
        cmd_r, reply_w, out_w = fds
        try:
            pid = self._fork_in_new_pidns()
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            self.worker_free = True
            self._answer_judge({"error": "cannot start a worker: %s" % exc})
            return
        if pid == 0:
            try:
                self._child_common((self.devnull, out_w, out_w), {cmd_r, reply_w}, float(msg.get("cpu_s", 30)), slot)
                self.harness.worker.run_worker(cmd_r, reply_w)
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)
        run = self._track(pid, slot)
        if self.group is not None:  # into the worker group before the judge hears of it (see harness/strays.py)
            try:
                os.write(self.group["join"], str(pid).encode())
            except OSError as exc:
                self._kill(run, timed_out=False)
                self._answer_judge({"error": "cannot put the worker in its cgroup: %s" % exc})
                return
        judge_fds = [os.dup(run["pidfd"]), self.harness.cputime.open_stat(pid, run["pidfd"])]  # its CPU time (tests'
        try:  # limits): the judge's /proc is the host's, where the worker's pid is another
            self._answer_judge({"pid": pid}, [fd for fd in judge_fds if fd is not None])
        finally:
            for fd in judge_fds:
                if fd is not None:
                    os.close(fd)

    def _start_exec(self, slot, msg, fds):
        stdin, stdout, stderr, status = fds
        setup_r, setup_w = os.pipe2(os.O_CLOEXEC)
        try:
            pid = self._fork_in_new_pidns()
        except OSError as exc:
            for fd in (stdin, stdout, stderr, setup_r, setup_w):
                os.close(fd)
            _write_all(status, json.dumps({"error": "fork server: cannot start: %s" % exc}).encode())
            os.close(status)
            self.free.append(slot)
            return
        if pid == 0:
            try:
                os.close(setup_r)
                self._child_common((stdin, stdout, stderr), {setup_w}, float(msg["timeout_s"]), slot)
                if msg.get("session"):
                    # An interpreter session (CodeEnvironment): the harness's session loop in this fork of the
                    # pre-started interpreter, as a worker is, instead of a fresh interpreter (tens of ms of CPU).
                    os.environ["HOME"] = os.environ["TMPDIR"] = slot
                    os.close(setup_w)  # closed means started
                    self.harness.session.session_main()
                    os._exit(0)
                for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # ignored by Python; execve would keep them ignored
                    signal.signal(sig, signal.SIG_DFL)
                argv = msg["argv"]
                env = dict(os.environ, HOME=slot, TMPDIR=slot)
                os.execve(argv[0], argv, env)  # setup_w is close-on-exec: closed means started
            except BaseException as exc:  # noqa: BLE001 - report any setup failure, then die
                try:
                    os.write(setup_w, ("%s: %s" % (type(exc).__name__, exc)).encode()[:4000])
                finally:
                    os._exit(127)
        for fd in (stdin, stdout, stderr, setup_w):
            os.close(fd)
        self._track(pid, slot, id=msg.get("id"), status=status, setup=setup_r,
                    deadline=time.monotonic() + float(msg["timeout_s"]))

    def _kill(self, run, timed_out):
        run["killed"] = True
        run["timed_out"] = timed_out
        try:
            signal.pidfd_send_signal(run["pidfd"], signal.SIGKILL)  # PID 1 of its namespace: the rest dies too
        except ProcessLookupError:
            pass

    def _release(self, pid):
        """The judge is done with its worker ``pid`` (it saw it end): reap it now, if not yet, emptying its slot, and
        answer whether the sandbox is spent (see ``_spawner.py``)."""
        for pidfd, run in list(self.running.items()):
            if run["pid"] == pid:
                select.select([pidfd], [], [], _RELEASE_WAIT_S)  # the judge saw it end: at once, unless it lied
                if select.select([pidfd], [], [], 0)[0]:
                    self._guarded(self._reap, pidfd)
                else:
                    self.spent = self.spent or "a worker did not end when its judge killed it"
        self._answer_judge({"spent": self.spent})

    def _reap(self, pidfd):
        run = self.running.pop(pidfd)
        if run["id"] is not None:
            self.by_id.pop(run["id"], None)
        self.poller.unregister(pidfd)
        _, code = os.waitpid(run["pid"], 0)
        duration = time.monotonic() - run["start"]
        os.close(pidfd)
        try:
            problem = _slots.empty(run["slot"])
            os.chmod(run["slot"], 0o700)
        except OSError as exc:
            problem = "it could not be restored (%s)" % (exc.strerror,)
        self._check_slots(run["slot"], problem)
        if run["slot"] == self.worker_slot:
            self.worker_free = True
        else:
            self.free.append(run["slot"])
        if run["status"] is not None:
            self._report(run, code, duration)
        if self.pending:
            self._start_pending()

    def _check_slots(self, reaped, problem=None):
        """Before a slot is used again: the slot just emptied (``problem``: why it could not be) and every idle slot
        must be empty, the space back when nothing runs (``_slots.leftover``); else the sandbox is spent."""
        if not self.spent and problem is not None:
            self.spent = "%s: %s" % (os.path.basename(reaped), problem)
        if not self.spent:
            busy = {run["slot"] for run in self.running.values()} - {reaped}
            self.spent = _slots.leftover(self.slots, busy, self.cfg["runs"], idle=not self.running)

    def _report(self, run, code, duration):
        os.set_blocking(run["setup"], False)
        try:
            setup_error = os.read(run["setup"], 4096)
        except BlockingIOError:
            setup_error = b""
        os.close(run["setup"])
        if setup_error:
            status = {"error": "sandbox setup failed: " + setup_error.decode(errors="replace")}
        else:
            code = os.waitstatus_to_exitcode(code)
            status = {
                "exit_code": None if run["timed_out"] else (128 - code if code < 0 else code),
                "timed_out": run["timed_out"],
                "duration_s": duration,
            }
            if self.spent:
                status["spent"] = self.spent
        try:
            _write_all(run["status"], json.dumps(status).encode())
        except OSError:
            pass  # the host gave up on this execution
        os.close(run["status"])

    def _shutdown(self):
        try:
            os.kill(self.judge_pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for run in list(self.running.values()):
            self._kill(run, timed_out=False)
        for run in list(self.running.values()):
            os.waitpid(run["pid"], 0)


def main(cfg, libc):
    """Entry point, called by ``_launcher.py`` in the server process."""
    try:
        server = Server(cfg, libc)
    except BaseException as exc:  # noqa: BLE001 - tell the host why, then stop
        try:
            sock = socket.socket(fileno=cfg["control_fd"])
            sock.sendall(json.dumps({"error": "%s: %s" % (type(exc).__name__, exc)}).encode())
        finally:
            os._exit(1)
    server.serve()
    os._exit(0)
