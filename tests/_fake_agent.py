"""The process that plays a remote service's in-sandbox daemon (E2B's envd, Daytona's daemon, HF's sandbox server)
in the fakes: one long-lived process per fake sandbox, inside a sandbox of the *local* backend, that runs the
service's commands as its children, writes its uploads and keeps its working directory.

Why not one local execution per command: a local execution is PID 1 of its own PID namespace, so everything a
command starts dies with it, and its working directory is emptied after it. A remote service's sandbox is a machine:
what a command leaves running (a ``setsid`` daemon) keeps running, the command's user owns and can write the working
directory, and the next command finds there what the last one left. The agent gives the fakes the same:

- it is PID 1 of its local execution's PID namespace; orphans are re-parented to it and reaped (so they live on
  until the fake sandbox is deleted, as on the service), and a signal sent from inside the namespace never reaches it
  (PID 1 without a handler), as a program cannot kill the service's root-owned daemon; it is not dumpable, so a
  command cannot open its pipes through ``/proc`` either;
- its working directory (``work``: the service's ``/tmp/trl-sandbox``) is its own, writable by the command's user,
  and lives as long as the fake sandbox; in read-only mode (``ro``) it is made unwritable (mode 0555) after every
  upload, as a directory owned by another user would be: the harness cannot remove a request file there;
- commands run as ``/bin/sh -c COMMAND`` in a session of their own, with the agent's environment plus the service's
  environment variables (the sandbox's ``env``: what a service puts in every command's environment).

Protocol: JSON lines, one request per line on stdin (``{"op", "id", ...}``), answers and events on stdout:
``{"ready": true, "work"}`` first; ``run`` (``command``, ``stdin`` base64, ``timeout`` seconds or null: the process
group is killed at it) answers ``{"id", "exit_code", "stdout", "stderr", "timed_out", "truncated",
"duration_s"}``; ``start`` (an interactive command) answers ``{"id", "started"}`` then streams ``{"id", "out"}``
(base64) and ``{"id", "exit"}``; ``send`` (``data``), ``close_input`` and ``kill`` (its process group) act on a
started command; ``write`` (``path`` relative to ``work``, ``data``, optional ``offset`` and ``truncate_to``). Errors
answer ``{"id", "error"}``. Standard library only: it runs with the sandbox's interpreter (``-I -S``).
"""

SOURCE = r'''
import base64, ctypes, json, os, select, signal, sys, threading, time

ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: its pipes and memory closed to the commands (same uid)

BASE = os.getcwd()
WORK, HOME, TMP = (os.path.join(BASE, name) for name in ("work", "home", "tmp"))
for path in (WORK, HOME, TMP):
    os.mkdir(path, 0o700)
os.chdir(HOME)  # where a command without a ``cd`` runs, as a service's user's home
READ_ONLY = sys.argv[1] == "ro"
ENV = dict(os.environ, HOME=HOME, TMPDIR=TMP, PWD=WORK)
ENV.update(json.loads(sys.argv[2]))
LIMIT = 1 << 20
signal.signal(signal.SIGINT, signal.SIG_DFL)  # PID 1: a signal with no handler from inside the namespace is dropped
registry_lock, out_lock = threading.Lock(), threading.Lock()
children = {}  # pid -> {"event", "status"}
started = {}  # request id -> {"pid", "stdin"} of interactive commands


def answer(message):
    data = (json.dumps(message) + "\n").encode()
    with out_lock:
        while data:
            data = data[os.write(1, data):]


def reap():
    # Every child: commands (their waiter is told) and orphans re-parented to PID 1 (discarded).
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            time.sleep(0.01)
            continue
        with registry_lock:  # a command is registered under this lock as it is spawned: never missed
            entry = children.pop(pid, None)
        if entry is not None:
            entry["status"] = status
            entry["event"].set()


def spawn(command):
    pipes = [os.pipe() for _ in range(3)]
    actions = [(os.POSIX_SPAWN_DUP2, pipes[0][0], 0), (os.POSIX_SPAWN_DUP2, pipes[1][1], 1),
               (os.POSIX_SPAWN_DUP2, pipes[2][1], 2)]
    with registry_lock:
        pid = os.posix_spawn("/bin/sh", ["/bin/sh", "-c", command], ENV, file_actions=actions, setsid=True,
                             setsigdef=(signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT))
        entry = children[pid] = {"event": threading.Event(), "status": None}
    for fd in (pipes[0][0], pipes[1][1], pipes[2][1]):
        os.close(fd)
    return pid, entry, pipes[0][1], pipes[1][0], pipes[2][0]


def code_of(status):
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def pump(pid, entry, stdin_fd, data, fds, deadline, on_data):
    """Feed ``data`` to the command, read its outputs until it ended and they closed (or 0.5 s after its end: a
    process it left may hold them), kill its process group at ``deadline``. Returns whether it timed out."""
    writing = None
    if stdin_fd is not None:
        if data:
            os.set_blocking(stdin_fd, False)
            writing = stdin_fd
        else:
            os.close(stdin_fd)  # no input: end of file at once
    open_fds = set(fds)
    ended_at = None
    timed_out = False
    while True:
        now = time.monotonic()
        if entry["event"].is_set():
            ended_at = ended_at or now
            if not open_fds or now - ended_at > 0.5:
                break
        elif deadline is not None and now >= deadline and not timed_out:
            timed_out = True
            kill_group(pid)
        ready_r, ready_w, _ = select.select(list(open_fds), [writing] if writing is not None else [], [], 0.05)
        for fd in ready_r:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                on_data(fd, chunk)
            else:
                open_fds.discard(fd)
        if ready_w:
            try:
                data = data[os.write(writing, data[:1 << 16]):]
            except OSError:
                data = b""
            if not data:
                os.close(writing)
                writing = None
    if writing is not None:
        os.close(writing)
    for fd in fds:
        os.close(fd)
    return timed_out


def run(message):
    start = time.monotonic()
    pid, entry, stdin_fd, out_fd, err_fd = spawn(message["command"])
    buffers = {out_fd: bytearray(), err_fd: bytearray()}
    cut = [False]

    def keep(fd, chunk):
        room = LIMIT - len(buffers[fd])
        buffers[fd] += chunk[:max(room, 0)]
        cut[0] = cut[0] or len(chunk) > room

    timeout = message.get("timeout")
    deadline = start + float(timeout) if timeout else None
    timed_out = pump(pid, entry, stdin_fd, base64.b64decode(message.get("stdin") or ""), [out_fd, err_fd],
                     deadline, keep)
    entry["event"].wait()
    answer({"id": message["id"], "exit_code": None if timed_out else code_of(entry["status"]),
            "timed_out": timed_out, "truncated": cut[0], "duration_s": time.monotonic() - start,
            "stdout": base64.b64encode(bytes(buffers[out_fd])).decode(),
            "stderr": base64.b64encode(bytes(buffers[err_fd])).decode()})


def interactive(message):
    pid, entry, stdin_fd, out_fd, err_fd = spawn(message["command"])
    started[message["id"]] = {"pid": pid, "stdin": stdin_fd}
    answer({"id": message["id"], "started": True})

    def forward(fd, chunk):
        if fd == out_fd:
            answer({"id": message["id"], "out": base64.b64encode(chunk).decode()})

    pump(pid, entry, None, None, [out_fd, err_fd], None, forward)
    entry["event"].wait()
    record = started.pop(message["id"], None)
    if record is not None and record["stdin"] is not None:
        try:
            os.close(record["stdin"])
        except OSError:
            pass
    answer({"id": message["id"], "exit": code_of(entry["status"])})


def write(message):
    relative = os.path.normpath(message["path"])
    if relative.startswith("..") or os.path.isabs(relative):
        raise ValueError("path outside the working directory: %s" % message["path"])
    target = os.path.join(WORK, relative)
    directories = [WORK]
    for part in os.path.dirname(relative).split(os.sep):
        if part:
            directories.append(os.path.join(directories[-1], part))
    for directory in directories:
        if os.path.isdir(directory):
            os.chmod(directory, 0o700)
        else:
            os.mkdir(directory, 0o700)
    data = base64.b64decode(message["data"])
    flags = os.O_WRONLY | os.O_CREAT | (0 if "offset" in message else os.O_TRUNC)
    fd = os.open(target, flags, 0o644)
    try:
        os.pwrite(fd, data, int(message.get("offset", 0)))
        if message.get("truncate_to") is not None:
            os.ftruncate(fd, int(message["truncate_to"]))
    finally:
        os.close(fd)
    os.chmod(target, 0o644)
    for directory in directories:  # as the service leaves them: the user's own, or (read-only) not writable
        os.chmod(directory, 0o555 if READ_ONLY else 0o755)


def handle(message):
    op = message["op"]
    try:
        if op == "run":
            run(message)
            return
        if op == "start":
            interactive(message)
            return
        if op == "write":
            write(message)
        elif op == "send":
            fd = started[message["process"]]["stdin"]
            data = base64.b64decode(message["data"])
            while data:
                data = data[os.write(fd, data):]
        elif op == "close_input":
            record = started[message["process"]]
            fd, record["stdin"] = record["stdin"], None
            if fd is not None:
                os.close(fd)
        elif op == "kill":
            record = started.get(message["process"])
            if record is not None:
                kill_group(record["pid"])
        answer({"id": message["id"], "ok": True})
    except Exception as exc:
        answer({"id": message["id"], "error": "%s: %s" % (type(exc).__name__, exc)})


threading.Thread(target=reap, daemon=True).start()
answer({"ready": True, "work": WORK})
for line in sys.stdin.buffer:
    message = json.loads(line)
    if message["op"] in ("run", "start"):
        threading.Thread(target=handle, args=(message,), daemon=True).start()
    else:
        handle(message)
os._exit(0)
'''
