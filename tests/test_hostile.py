"""The attack suite: hostile completions, scored through the real local backend and harness.

Each attack must be contained (the host checks below stay clean) and scored as not passing (``failed``, ``error``,
``timeout`` or ``banned``; never ``infra_error``), while good completions in the same batch still pass.
Runs with full isolation and with the no-namespace fallback (Landlock + seccomp + subreaper), and in CI a second
time as a non-root account. Needs no torch: only the scoring path.

Safety net: the session fixture in conftest.py puts pytest in pids/memory cgroups where writable; every test has a
timeout; the attacks' own limits here are small (256 MiB, 16 MiB scratch, 1 s per test).
"""

import json
import os
import re
import secrets
import signal
import socket
import tempfile
import threading
from pathlib import Path

import pytest

from trl_sandbox import SandboxConfig, Scorer, Task, load_tasks

SOURCE_MARKER = "HOSTILE-SUITE-SOURCE-" + "MARKER-7f3a"  # split so that only reading this file reveals it whole
SQUARE = Task.from_row(
    {"task_id": "square", "test_list": ["assert f(2) == 4", "assert f(3) == 9", "assert f(-4) == 16"]}
)
SQUARE_OK = "def f(x):\n    return x * x\n"
DAYTONA = {r["task_id"]: Task.from_row(r) for r in load_tasks("daytona")}
MAXSUB, SORTING = DAYTONA["daytona/max_subarray"], DAYTONA["daytona/sorting"]
STDIO = Task.from_row({"task_id": "stdio-square", "inputs": ["3\n", "5\n"], "outputs": ["9", "25"]})
HE38 = Task.from_row(next(r for r in load_tasks("humaneval") if r["task_id"] == "HumanEval/38"))
# A task whose test lends the program a lambda (a callback into the judge).
APPLY = Task.from_row({"task_id": "apply", "test_list": ["assert apply(lambda v: v + 1, 1) == 2"]})

# (id, task, completion template, must be reported as "banned"). Placeholders are filled by the `host` fixture.
ATTACKS = [
    # -- time: CPU and wall clock ----------------------------------------------------------------------------
    ("busy-loop", SQUARE, "def f(x):\n    while True:\n        pass\n", False),
    ("sleep", SQUARE, "import time\ndef f(x):\n    time.sleep(60)\n", False),
    ("blocking-read", SQUARE, "import os\nr, w = os.pipe()\ndef f(x):\n    return os.read(r, 1)\n", False),
    ("signal-pause", SQUARE, "import signal\ndef f(x):\n    signal.pause()\n", False),
    ("swallow-timeouts", SQUARE,
     "def f(x):\n    while True:\n        try:\n            while True:\n                pass\n"
     "        except BaseException:\n            pass\n", False),
    ("c-level-loop", SQUARE, "def f(x):\n    return sum(range(10 ** 14))\n", False),
    ("loop-at-import", SQUARE, "while True:\n    pass\n", False),
    # -- memory -------------------------------------------------------------------------------------------------
    ("huge-allocation", SQUARE, "def f(x):\n    return len(bytearray(8 << 30))\n", False),
    ("slow-growth", SQUARE, "def f(x):\n    a = []\n    while True:\n        a.append(bytearray(8 << 20))\n", False),
    ("memory-across-processes", SQUARE,
     "import os, time\ndef f(x):\n    for _ in range(24):\n        try:\n            if os.fork() == 0:\n"
     "                b = bytearray(200 << 20)\n                time.sleep(30)\n        except OSError:\n"
     "            pass\n    return 0\n", False),
    # the address-space limit is the hard one too: a program that could raise it (a Java runtime may) scores
    ("raise-address-space-limit", SQUARE,
     "import resource\ndef f(x):\n    soft, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
     "    return x * x if hard > soft or soft == resource.RLIM_INFINITY else 0\n", False),
    # -- processes ----------------------------------------------------------------------------------------------
    ("fork-bomb", SQUARE,
     "import os\ndef f(x):\n    while True:\n        try:\n            os.fork()\n        except OSError:\n"
     "            pass\n", False),
    ("thread-bomb", SQUARE,
     "import threading, time\ndef f(x):\n    while True:\n"
     "        threading.Thread(target=time.sleep, args=(60,)).start()\n", False),
    ("double-fork-daemon", SQUARE,
     "import os, sys\ndef f(x):\n    if os.fork() == 0:\n        os.setsid()\n        if os.fork() == 0:\n"
     "            os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(120)  # {marker}'])\n"
     "        os._exit(0)\n    return 0\n", False),
    # -- disk ---------------------------------------------------------------------------------------------------
    ("big-file", SQUARE,
     "def f(x):\n    with open('big', 'wb') as fh:\n        while True:\n            fh.write(b'x' * (1 << 20))\n",
     False),
    ("many-files", SQUARE,
     "def f(x):\n    i = 0\n    while True:\n        open('f%d' % i, 'wb').write(b'x' * (1 << 20))\n"
     "        i += 1\n", False),
    # -- output -------------------------------------------------------------------------------------------------
    ("stdout-flood", SQUARE, "import sys\ndef f(x):\n    while True:\n        sys.stdout.write('x' * 65536)\n", False),
    ("stderr-flood", SQUARE, "import os\ndef f(x):\n    while True:\n        os.write(2, b'y' * 65536)\n", False),
    # -- network ------------------------------------------------------------------------------------------------
    ("tcp-localhost", SQUARE,
     "import socket\ndef f(x):\n    s = socket.create_connection(('127.0.0.1', {tcp_port}), timeout=1)\n"
     "    s.sendall(b'pwned')\n", False),
    ("tcp-ipv6-localhost", SQUARE,
     "import socket\ndef f(x):\n    socket.create_connection(('::1', {tcp_port}), timeout=1)\n", False),
    ("udp-localhost", SQUARE,
     "import socket\ndef f(x):\n    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
     "    s.sendto(b'pwned', ('127.0.0.1', {udp_port}))\n", False),
    ("unix-socket-path", SQUARE,
     "import socket\ndef f(x):\n    s = socket.socket(socket.AF_UNIX)\n    s.connect('{unix_path}')\n"
     "    s.sendall(b'pwned')\n", False),
    ("unix-socket-abstract", SQUARE,
     "import socket\ndef f(x):\n    s = socket.socket(socket.AF_UNIX)\n    s.connect('\\0{abstract}')\n"
     "    s.sendall(b'pwned')\n", False),
    # An address outside this machine that no network routes (TEST-NET-1, RFC 5737): no test addresses a real host.
    # The program passes when a packet could leave: the connection times out (a route exists) or gets an answer;
    # only a refused socket or no route at all (the sandbox's empty network) fail it.
    ("internet", SQUARE,
     "import errno, socket\ndef f(x):\n    s = socket.socket()\n    s.settimeout(1)\n    try:\n"
     "        s.connect(('192.0.2.1', 80))\n    except socket.timeout:\n        return x * x\n"
     "    except OSError as e:\n        if e.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):\n            raise\n"
     "    return x * x\n", False),
    ("netlink-raw", SQUARE,
     "import socket\ndef f(x):\n    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)\n    return 0\n", False),
    # -- host files and environment -----------------------------------------------------------------------------
    ("read-secret-file", SQUARE, "def f(x):\n    raise Exception(open('{secret_path}').read())\n", False),
    ("write-outside-scratch", SQUARE, "def f(x):\n    open('{canary_dir}/pwned', 'w').write('x')\n", False),
    ("delete-secret-file", SQUARE, "import os\ndef f(x):\n    os.remove('{secret_path}')\n", False),
    ("symlink-escape", SQUARE,
     "import os\ndef f(x):\n    os.symlink('{secret_path}', 'link')\n    raise Exception(open('link').read())\n",
     False),
    ("hardlink-escape", SQUARE,
     "import os\ndef f(x):\n    os.link('{secret_path}', 'hl')\n    raise Exception(open('hl').read())\n", False),
    ("read-etc-passwd", SQUARE, "def f(x):\n    raise Exception(open('/etc/passwd').read())\n", False),
    ("read-project-checkout", SQUARE, "def f(x):\n    raise Exception(open('{source_path}').read())\n", False),
    ("write-tmp", SQUARE, "def f(x):\n    open('/tmp/trl-sandbox-pwned-{marker}', 'w').write('x')\n", False),
    ("write-dev-shm", SQUARE, "def f(x):\n    open('/dev/shm/trl-sandbox-pwned-{marker}', 'w').write('x')\n", False),
    ("own-environment", SQUARE, "import os\ndef f(x):\n    raise Exception(repr(dict(os.environ)))\n", False),
    ("trainer-environ-via-proc", SQUARE,
     "def f(x):\n    raise Exception(open('/proc/{pid}/environ', 'rb').read().decode(errors='replace'))\n", False),
    ("pid1-environ-via-proc", SQUARE,
     "def f(x):\n    raise Exception(open('/proc/1/environ', 'rb').read().decode(errors='replace'))\n", False),
    ("list-proc", SQUARE, "import os\ndef f(x):\n    raise Exception(repr(os.listdir('/proc')))\n", False),
    # -- signals and tracing ------------------------------------------------------------------------------------
    ("signal-trainer", SQUARE, "import os, signal\ndef f(x):\n    os.kill({pid}, signal.SIGUSR1)\n", False),
    ("signal-everyone", SQUARE, "import os, signal\ndef f(x):\n    os.kill(-1, signal.SIGUSR1)\n", False),
    ("ptrace-trainer", SQUARE,
     "import ctypes\ndef f(x):\n    libc = ctypes.CDLL(None)\n    if libc.ptrace(16, {pid}, 0, 0) == 0:\n"
     "        raise Exception('TRACED')\n", False),
    ("kill-the-judge", SQUARE, "import os, signal\ndef f(x):\n    os.kill(os.getppid(), signal.SIGKILL)\n", False),
    # -- reward hacking -----------------------------------------------------------------------------------------
    ("exit-0-at-import", SQUARE, "import sys\nsys.exit(0)\n", False),
    ("os-exit-in-test", SQUARE, "import os\ndef f(x):\n    os._exit(0)\n", False),
    ("exit-builtin", SQUARE, "exit()\n", False),
    ("print-forged-results", SQUARE,
     "def f(x):\n    for i in range(3):\n        print('{{\"i\": %d, \"ok\": true}}' % i)\n"
     "    print('{{\"done\": 3}}')\n", False),
    ("write-forged-results-to-every-fd", SQUARE,
     "import os\ndef f(x):\n    for fd in range(256):\n        try:\n"
     "            os.write(fd, b'{{\"i\": 0, \"ok\": true}}\\n{{\"i\": 1, \"ok\": true}}\\n{{\"i\": 2, \"ok\": true}}\\n')\n"
     "        except OSError:\n            pass\n", False),
    ("rigged-eq-assert", SQUARE,
     "class Anything:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
     "def f(x):\n    return Anything()\n", False),
    ("rigged-int-subclass", SQUARE,
     "class Int(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n"
     "def f(x):\n    return Int(0)\n", False),
    ("rigged-eq-call", MAXSUB,
     "    class R(int):\n        def __eq__(self, o):\n            return True\n        def __hash__(self):\n"
     "            return 0\n        def __repr__(self):\n            return '6'\n    return R(0)\n", False),
    ("rigged-str-stdio", STDIO,
     "class S(str):\n    def __eq__(self, o):\n        return True\nprint(S('wrong'))\n", False),
    ("patch-builtins", SQUARE,
     "import builtins\nbuiltins.AssertionError = type('Nope', (Exception,), {{}})\nbuiltins.abs = lambda v: 0\n"
     "def f(x):\n    return None\n", False),
    ("patch-harness", SQUARE,
     "import sys\nfor m in list(sys.modules.values()):\n    for name in ('emit', '_emit', 'encode', 'decode', '_judge_assert'):\n"
     "        if hasattr(m, name):\n            setattr(m, name, lambda *a, **k: None)\n"
     "def f(x):\n    return None\n", False),
    ("patch-tests-via-gc", SQUARE,
     "import gc\nfor o in gc.get_objects():\n    if isinstance(o, dict) and 'check' in o:\n"
     "        o['check'] = lambda c: None\ndef f(x):\n    return None\n", False),
    ("read-tests-from-memory", SQUARE,
     "import gc\ndef f(x):\n    for o in gc.get_objects():\n        if isinstance(o, str) and 'f(%d) ==' % x in o:\n"
     "            return int(o.split('==')[1].split()[0])\n    for o in gc.get_objects():\n"
     "        if isinstance(o, (list, tuple)):\n            for s in o:\n"
     "                if isinstance(s, str) and 'f(%d) ==' % x in s:\n"
     "                    return int(s.split('==')[1].split()[0])\n    return None\n", False),
    ("garbage-into-judge-pipe", SQUARE,
     "import os\ndef f(x):\n    for fd in range(3, 64):\n        try:\n            os.write(fd, b'\\xff' * 64)\n"
     "        except OSError:\n            pass\n    return None\n", False),
    ("exception-named-like-the-judges", SQUARE,
     "class _Timeout(BaseException):\n    pass\nclass _WorkerDied(BaseException):\n    pass\n"
     "def f(x):\n    raise _Timeout()\n", False),
    ("escape-through-a-test-callback", APPLY,
     "def apply(fn, x):\n    b = fn.__globals__['__builtins__']\n"
     "    b['__import__']('os').system('touch {canary_dir}/pwned')\n    return fn(x)\n", False),
    ("rigged-namedtuple", SQUARE,
     "import collections\nclass P(collections.namedtuple('P', 'x')):\n    def __eq__(self, o):\n        return True\n"
     "    __hash__ = tuple.__hash__\ndef f(x):\n    return P(0)\n", False),
    ("redefine-prompt-helper", HE38,
     "def encode_cyclic(s: str):\n    return s\n\n\ndef decode_cyclic(s: str):\n    return s\n", False),
    # -- banned patterns ----------------------------------------------------------------------------------------
    ("banned-spacing", SORTING, "    return sorted (xs)\n", True),
    ("banned-alias", SORTING, "    s = sorted\n    return s(xs)\n", True),
    ("banned-getattr-builtins", SORTING, "    return getattr(__builtins__, 'sorted')(xs)\n", True),
    ("banned-dunder-import", SORTING, "    return __import__('heapq').nsmallest(len(xs), xs)\n", True),
    ("banned-method-via-getattr", SORTING, "    getattr(xs, 'sort')()\n    return xs\n", True),
    ("banned-method-alias", SORTING, "    f = list.sort\n    f(xs)\n    return xs\n", True),
    ("banned-name-by-concatenation", SORTING, "    return getattr(__builtins__, 'sor' + 'ted')(xs)\n", False),
    ("banned-module-by-concatenation", SORTING,
     "    imp = __builtins__.__dict__['__imp' + 'ort__']\n    h = imp('hea' + 'pq')\n"
     "    return h.nsmallest(len(xs), xs)\n", False),
]
GOOD = [(SQUARE, SQUARE_OK), (STDIO, "print(int(input()) ** 2)\n"),
        (MAXSUB, "    best = cur = xs[0]\n    for x in xs[1:]:\n        cur = max(x, cur + x)\n        best = max(best, cur)\n    return best\n")]


# -- native code (C and C++): the same containment without Python's runtime in the way --------------------------------
# Programs for a stdin/stdout task, compiled in the sandbox by g++. ``@@name@@`` is filled like the templates above.
NATIVE = Task.from_row({"task_id": "native-square", "inputs": ["3\n", "5\n"], "outputs": ["9", "25"],
                        "language": "cpp"})
NATIVE_OK = "#include <cstdio>\nint main() { long x; scanf(\"%ld\", &x); printf(\"%ld\\n\", x * x); }\n"
_C = "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n#include <signal.h>\n" \
     "#include <fcntl.h>\n#include <sys/types.h>\n#include <sys/socket.h>\n#include <sys/syscall.h>\n" \
     "#include <sys/ptrace.h>\n#include <sys/wait.h>\n#include <sys/mman.h>\n#include <netinet/in.h>\n" \
     "#include <arpa/inet.h>\n#include <sys/un.h>\n#include <pthread.h>\n"
NATIVE_ATTACKS = [
    # time
    ("c-busy-loop", _C + "int main() { volatile unsigned long i = 0; for (;;) i++; }\n"),
    ("c-sleep", _C + "int main() { sleep(60); return 0; }\n"),
    ("c-blocking-read", _C + "int main() { int p[2]; pipe(p); char c; read(p[0], &c, 1); return 0; }\n"),
    ("c-ignore-signals", _C + "int main() { for (int s = 1; s < 32; s++) signal(s, SIG_IGN); for (;;) pause(); }\n"),
    # memory
    ("c-huge-allocation", _C + "int main() { size_t n = 8UL << 30; char *p = (char *)malloc(n); if (!p) return 1;"
                               " memset(p, 1, n); printf(\"%d\\n\", p[n - 1]); }\n"),
    ("c-mmap-noreserve", _C + "int main() { size_t n = 8UL << 30; char *p = (char *)mmap(0, n, PROT_READ | "
                              "PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);"
                              " if (p == MAP_FAILED) return 1; for (size_t i = 0; i < n; i += 4096) p[i] = 1; }\n"),
    ("c-slow-growth", _C + "int main() { for (;;) { char *p = (char *)malloc(8 << 20); if (!p) continue;"
                           " memset(p, 1, 8 << 20); } }\n"),
    ("c-memory-across-processes", _C + "int main() { for (int i = 0; i < 24; i++) if (fork() == 0) {"
                                       " char *p = (char *)malloc(200 << 20); if (p) memset(p, 1, 200 << 20);"
                                       " sleep(30); _exit(0); } sleep(30); }\n"),
    # processes
    ("c-fork-bomb", _C + "int main() { for (;;) fork(); }\n"),
    ("c-raw-clone-bomb", _C + "int main() { for (;;) syscall(SYS_fork); }\n"),
    ("c-thread-bomb", _C + "void *idle(void *a) { sleep(60); return a; }\n"
                           "int main() { pthread_t t; for (;;) pthread_create(&t, 0, idle, 0); }\n"),
    ("c-daemon", _C + "int main() { if (fork() == 0) { setsid(); if (fork() == 0) { execl(\"/bin/sh\", \"sh\","
                      " \"-c\", \"sleep 120 # @@marker@@\", (char *)0); } _exit(0); } return 0; }\n"),
    ("c-spawn-shell", _C + "int main() { return system(\"cat @@secret_path@@; touch @@canary_dir@@/pwned;"
                           " sleep 100 # @@marker@@\"); }\n"),
    # disk and output
    ("c-big-file", _C + "int main() { FILE *f = fopen(\"big\", \"wb\"); static char b[1 << 20];"
                        " for (;;) fwrite(b, 1, sizeof b, f); }\n"),
    ("c-stdout-flood", _C + "int main() { static char b[65536]; memset(b, 'x', sizeof b);"
                            " for (;;) fwrite(b, 1, sizeof b, stdout); }\n"),
    ("c-stderr-flood", _C + "int main() { static char b[65536]; memset(b, 'y', sizeof b);"
                            " for (;;) write(2, b, sizeof b); }\n"),
    # network, with raw system calls
    ("c-tcp-localhost", _C + "int main() { int s = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);"
                             " struct sockaddr_in a = {0}; a.sin_family = AF_INET; a.sin_port = htons(@@tcp_port@@);"
                             " a.sin_addr.s_addr = htonl(0x7f000001);"
                             " if (syscall(SYS_connect, s, &a, sizeof a) == 0) write(s, \"pwned\", 5);"
                             " return 0; }\n"),
    ("c-udp-localhost", _C + "int main() { int s = socket(AF_INET, SOCK_DGRAM, 0); struct sockaddr_in a = {0};"
                             " a.sin_family = AF_INET; a.sin_port = htons(@@udp_port@@);"
                             " a.sin_addr.s_addr = htonl(0x7f000001);"
                             " sendto(s, \"pwned\", 5, 0, (struct sockaddr *)&a, sizeof a); return 0; }\n"),
    ("c-unix-socket", _C + "int main() { int s = socket(AF_UNIX, SOCK_STREAM, 0); struct sockaddr_un a = {0};"
                           " a.sun_family = AF_UNIX; strcpy(a.sun_path, \"@@unix_path@@\");"
                           " if (connect(s, (struct sockaddr *)&a, sizeof a) == 0) write(s, \"pwned\", 5);"
                           " return 0; }\n"),
    ("c-abstract-socket", _C + "int main() { int s = socket(AF_UNIX, SOCK_STREAM, 0); struct sockaddr_un a = {0};"
                               " a.sun_family = AF_UNIX; strcpy(a.sun_path + 1, \"@@abstract@@\");"
                               " if (connect(s, (struct sockaddr *)&a, sizeof(sa_family_t) + 1 +"
                               " strlen(\"@@abstract@@\")) == 0) write(s, \"pwned\", 5); return 0; }\n"),
    # host files, environment, other processes
    ("c-read-secret", _C + "int main() { char b[200] = {0}; int f = open(\"@@secret_path@@\", O_RDONLY);"
                           " read(f, b, 199); printf(\"%s\\n\", b); fprintf(stderr, \"%s\\n\", b); return 0; }\n"),
    ("c-read-passwd-and-checkout", _C + "int main() { char b[4096] = {0}; int f = open(\"/etc/passwd\", O_RDONLY);"
                                        " read(f, b, 4095); fputs(b, stderr); f = open(\"@@source_path@@\", O_RDONLY);"
                                        " read(f, b, 4095); fputs(b, stderr); return 0; }\n"),
    ("c-write-outside-scratch", _C + "int main() { const char *p[] = {\"@@canary_dir@@/pwned\","
                                     " \"/tmp/trl-sandbox-pwned-@@marker@@\", \"/dev/shm/trl-sandbox-pwned-@@marker@@\"};"
                                     " for (int i = 0; i < 3; i++) { FILE *f = fopen(p[i], \"w\"); if (f) fputs(\"x\", f); }"
                                     " FILE *s = fopen(\"@@secret_path@@\", \"w\"); if (s) fputs(\"gone\", s);"
                                     " unlink(\"@@secret_path@@\"); return 0; }\n"),
    ("c-trainer-environ", _C + "int main() { char b[4096] = {0}; int f = open(\"/proc/@@pid@@/environ\", O_RDONLY);"
                               " read(f, b, 4095); for (int i = 0; i < 4095; i++) if (!b[i]) b[i] = ' ';"
                               " fputs(b, stderr); return 0; }\n"),
    ("c-signal-trainer", _C + "int main() { kill(@@pid@@, SIGUSR1); kill(-1, SIGUSR1); return 0; }\n"),
    ("c-ptrace-trainer", _C + "int main() { if (ptrace(PTRACE_ATTACH, @@pid@@, 0, 0) == 0) puts(\"TRACED\");"
                              " return 0; }\n"),
    ("c-ptrace-parent", _C + "int main() { if (ptrace(PTRACE_ATTACH, getppid(), 0, 0) == 0) puts(\"9\\n25\");"
                             " return 0; }\n"),
    ("c-kill-parent", _C + "int main() { kill(getppid(), SIGKILL); kill(1, SIGKILL); return 0; }\n"),
    # reward hacking: forge results through every descriptor
    ("c-forge-results", _C + "int main() { const char *r = \"{\\\"i\\\": 0, \\\"ok\\\": true}\\n{\\\"i\\\": 1, "
                             "\\\"ok\\\": true}\\n{\\\"done\\\": 2}\\n\"; for (int fd = 0; fd < 256; fd++)"
                             " write(fd, r, strlen(r)); return 0; }\n"),
    # the compiler reads untrusted input first
    ("cpp-include-secret", "#include \"@@secret_path@@\"\nint main() { return 0; }\n"),
    ("cpp-include-dev-zero", "#include \"/dev/zero\"\nint main() { return 0; }\n"),
    ("cpp-template-bomb", "template <int N> struct F { enum { v = F<N - 1>::v + F<N - 2>::v }; };\n"
                          "template <> struct F<0> { enum { v = 0 }; };\ntemplate <> struct F<1> { enum { v = 1 }; };\n"
                          "int main() { return F<100000>::v; }\n"),
]


class Host:
    """Canaries on the host that the attacks try to reach."""

    def __init__(self, root: Path):
        self.root = root
        self.secret = "canary-" + secrets.token_hex(16)
        self.marker = "trl-sandbox-attack-" + secrets.token_hex(6)
        self.canary_dir = root / "canary"
        self.canary_dir.mkdir()
        self.canary_dir.chmod(0o777)  # even world-writable: only the sandbox layers may stop the attacks
        self.secret_path = self.canary_dir / "secret.txt"
        self.secret_path.write_text(self.secret)
        self.secret_path.chmod(0o666)
        self.connections = []
        self.signals = []
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.tcp.settimeout(0.2)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.settimeout(0.2)
        self.unix_path = str(self.canary_dir / "sock")
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(self.unix_path)
        os.chmod(self.unix_path, 0o777)
        self.unix.listen(4)
        self.unix.settimeout(0.2)
        self.abstract = "trl-sandbox-canary-" + secrets.token_hex(4)
        self.abstract_sock = socket.socket(socket.AF_UNIX)
        self.abstract_sock.bind("\0" + self.abstract)
        self.abstract_sock.listen(4)
        self.abstract_sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()
        self._old_handler = signal.signal(signal.SIGUSR1, lambda *_: self.signals.append("SIGUSR1"))

    def _listen(self):
        while not self._stop.is_set():
            for server in (self.tcp, self.unix, self.abstract_sock):
                try:
                    conn, _ = server.accept()
                    self.connections.append(server.getsockname())
                    conn.close()
                except OSError:
                    pass
            try:
                self.udp.recvfrom(100)
                self.connections.append("udp")
            except OSError:
                pass

    def fill(self, template: str) -> str:
        return template.format(
            marker=self.marker, tcp_port=self.tcp.getsockname()[1], udp_port=self.udp.getsockname()[1],
            unix_path=self.unix_path, abstract=self.abstract, secret_path=self.secret_path,
            canary_dir=self.canary_dir, source_path=os.path.abspath(__file__), pid=os.getpid(),
        )

    def close(self):
        self._stop.set()
        self._thread.join()
        signal.signal(signal.SIGUSR1, self._old_handler)
        for s in (self.tcp, self.udp, self.unix, self.abstract_sock):
            s.close()

    def problems(self) -> list[str]:
        found = []
        if self.connections:
            found.append(f"connections reached the host: {self.connections}")
        if self.signals:
            found.append("the test process received a signal from a sandbox")
        if not self.secret_path.exists() or self.secret_path.read_text() != self.secret:
            found.append("the secret file was changed or deleted")
        extra = sorted(p.name for p in self.canary_dir.iterdir()) 
        if extra != ["secret.txt", "sock"]:
            found.append(f"files appeared in the canary directory: {extra}")
        for path in (f"/tmp/trl-sandbox-pwned-{self.marker}", f"/dev/shm/trl-sandbox-pwned-{self.marker}"):
            if os.path.exists(path):
                os.remove(path)
                found.append(f"{path} was written")
        status = Path("/proc/self/status").read_text()
        if "TracerPid:\t0" not in status:
            found.append("the test process is being traced")
        survivors = [p for p in os.listdir("/proc") if p.isdigit() and self.marker.encode() in _cmdline(p)]
        if survivors:
            found.append(f"processes outlived their sandbox: {survivors}")
        return found


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.fixture(scope="module", params=["isolated", "isolated-all-or-nothing", "launcher-per-execution",
                                        "no-namespaces"])
def hostile_scorer(request, sandbox_root):
    """``isolated``: the default (fork server, judge server); ``isolated-all-or-nothing``: the same, in the other
    reward mode (``sandbox_reward="all_or_nothing"``: the first failing test ends the run); ``launcher-per-execution``:
    namespaces without the fork server; ``no-namespaces``: the fallback layers."""
    options = {"root_dir": str(sandbox_root), "scratch_limit_bytes": 16 << 20, "max_processes": 32}
    if request.param == "no-namespaces":
        options["namespaces"] = False
    if request.param == "launcher-per-execution":
        options["fork_server"] = False
    config = SandboxConfig(
        sandbox_pool_size=2,
        sandbox_test_timeout=1.0,
        sandbox_completion_timeout=4.0,
        sandbox_memory_limit=256 << 20,
        sandbox_output_limit=64 << 10,
        sandbox_compile_timeout=15.0,
        sandbox_backend_options=options,
        sandbox_reward="all_or_nothing" if request.param.endswith("all-or-nothing") else "pass_rate",
    )
    with Scorer.from_config(config) as scorer:
        yield scorer


@pytest.fixture
def host():
    root = Path(tempfile.mkdtemp(prefix="trl-sandbox-host-"))
    root.chmod(0o755)
    h = Host(root)
    try:
        yield h
    finally:
        h.close()
        for path in sorted(root.rglob("*"), reverse=True):
            path.unlink() if not path.is_dir() else path.rmdir()
        root.rmdir()


def test_attack_suite_is_contained_and_scores_nothing(hostile_scorer, host):
    assert len(ATTACKS) >= 40
    tasks, completions = [], []
    for _name, task, template, _banned in ATTACKS:
        tasks.append(task)
        completions.append(host.fill(template))
    for task, code in GOOD:  # good completions interleaved: their results must come through intact
        tasks.insert(len(tasks) // 2, task)
        completions.insert(len(completions) // 2, code)
    results = hostile_scorer.score(tasks, completions)

    good_results = [r for r, c in zip(results, completions) if any(c == code for _, code in GOOD)]
    assert [r.status for r in good_results] == ["passed"] * len(GOOD)
    attack_results = [r for r, c in zip(results, completions) if not any(c == code for _, code in GOOD)]
    failures = []
    for (name, _task, _template, banned), result in zip(ATTACKS, attack_results):
        if result.passed or result.reward is None or result.reward > 0:
            failures.append(f"{name}: scored {result.status} {result.reward} ({result.error})")
        if banned and result.status != "banned":
            failures.append(f"{name}: expected banned, got {result.status}")
        text = result.error or ""
        for leak in (host.secret, SOURCE_MARKER, "root:x:0:0"):
            if leak in text:
                failures.append(f"{name}: leaked {leak[:20]!r} in its result: {text[:200]}")
    failures += host.problems()
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("hostile_scorer", ["isolated", "launcher-per-execution", "no-namespaces"], indirect=True)
def test_native_attacks_are_contained_and_score_nothing(hostile_scorer, host):
    """The C and C++ attacks, compiled and run in the sandbox: contained as the Python ones are (the host checks
    stay clean), never passed, never an infrastructure error, nothing of the host in their results. In each
    isolation mode; not again in the other reward mode, whose sandbox is ``isolated``'s (the Python attacks, which
    address the judge's verdicts, run in both reward modes)."""
    import shutil

    if not shutil.which("g++", path="/usr/local/bin:/usr/bin:/bin"):
        if os.environ.get("CI"):
            pytest.fail("CI must have g++ (see .ci/toolchains)")
        pytest.skip("no g++ here (apt-get install g++)")
    (probe,) = hostile_scorer.score([NATIVE], [NATIVE_OK])
    if probe.status == "invalid_task" and "forbids" in (probe.error or ""):
        pytest.skip(f"this mode forbids process creation, so no compiler can run: {probe.error}")
    assert probe.status == "passed", probe.error

    def fill(code):
        escaped = code.replace("{", "{{").replace("}", "}}")
        return host.fill(re.sub(r"@@(\w+)@@", r"{\1}", escaped))

    completions = ["```cpp\n" + fill(code) + "```" for _name, code in NATIVE_ATTACKS]
    tasks = [NATIVE] * len(completions)
    tasks.insert(len(tasks) // 2, NATIVE)
    completions.insert(len(completions) // 2, NATIVE_OK)  # a good one in the middle comes through intact
    results = hostile_scorer.score(tasks, completions)
    good = results.pop(len(results) // 2)
    assert good.status == "passed", good.error
    failures = []
    for (name, _code), result in zip(NATIVE_ATTACKS, results):
        compiler_attack = name.startswith("cpp-")
        if (result.status == "compile_error") != compiler_attack:  # every other attack compiled, and so ran
            failures.append(f"{name}: {result.status} ({result.error})")
        if result.passed or result.reward is None or result.reward > 0:
            failures.append(f"{name}: scored {result.status} {result.reward} ({result.error})")
        seen = (result.error or "") + (result.output or "")
        for leak in (host.secret, SOURCE_MARKER, "root:x:0:0"):
            if leak in seen:
                failures.append(f"{name}: leaked {leak[:20]!r} in its result: {seen[:200]}")
    failures += host.problems()
    assert not failures, "\n".join(failures)


def test_nothing_carries_over_between_executions(sandbox_root):
    """Files (scratch, HOME, /tmp) and module state from one execution are not visible to the next one, on the
    same sandbox."""
    options = {"root_dir": str(sandbox_root)}
    config = SandboxConfig(sandbox_pool_size=1, sandbox_test_timeout=2.0, sandbox_backend_options=options)
    task = Task.from_row({"task_id": "leftovers", "test_list": ["assert f() == []"]})
    writer = (
        "import builtins, os\n"
        "builtins.LEFT_BEHIND = 1\n"
        "for d in ('.', os.environ.get('HOME', '.'), os.environ.get('TMPDIR', '.')):\n"
        "    open(os.path.join(d, 'left-behind'), 'w').write('x')\n"
        "def f():\n    return []\n"
    )
    reader = (
        "import builtins, os\n"
        "def f():\n"
        "    seen = [n for n in os.listdir('.') if n.startswith('left')]\n"
        "    seen += [n for n in os.listdir(os.environ.get('HOME', '.')) if n.startswith('left')]\n"
        "    if hasattr(builtins, 'LEFT_BEHIND'):\n        seen.append('module state')\n"
        "    return seen\n"
    )
    with Scorer.from_config(config) as scorer:
        (first,) = scorer.score([task], [writer])
        (second,) = scorer.score([task], [reader])
    assert first.status == "passed" and second.status == "passed", (first, second)


# -- scratch space: one execution writes its own slot only ---------------------------------------------------------
# Writes into every sibling slot of the fork server (``runs/w``, ``runs/0``...: next to its own working directory),
# fills the scratch tmpfs through them, and still answers its own tests.
SLOT_SQUATTER = (
    "import os\n"
    "def _squat():\n"
    "    here = os.getcwd()\n"
    "    runs = os.path.dirname(here)\n"
    "    for name in ('w', '0', '1', '2', '3'):\n"
    "        d = os.path.join(runs, name)\n"
    "        if d == here:\n"
    "            continue\n"
    "        try:\n"
    "            open(os.path.join(d, 'left-by-another'), 'w').write('x')\n"
    "            with open(os.path.join(d, 'fill'), 'wb') as fh:\n"
    "                while True:\n"
    "                    fh.write(b'x' * (1 << 20))\n"
    "        except OSError:\n"
    "            pass\n"
    "_squat()\n"
    "def f(x):\n"
    "    _squat()\n"
    "    return x * x\n"
)
# What an honest completion after it needs: to write its own files, and to find nothing of another execution's.
WRITER_OK = "def f(x):\n    open('work.txt', 'w').write('y' * 100000)\n    return x * x\n"
LOOKER = Task.from_row({"task_id": "looker", "test_list": ["assert f() == []"]})
LOOKER_OK = (
    "import os\n"
    "def f():\n"
    "    here = os.getcwd()\n"
    "    runs = os.path.dirname(here)\n"
    "    seen = []\n"
    "    for d in [here] + [os.path.join(runs, n) for n in ('w', '0', '1', '2', '3')]:\n"
    "        try:\n"
    "            seen += [os.path.join(d, n) for n in os.listdir(d) if n in ('left-by-another', 'fill')]\n"
    "        except OSError:\n"
    "            pass\n"
    "    return seen\n"
)


def check_slots_hold(scorer):
    """The squatter is contained to its own slot: what runs after it on the same sandbox writes its files, finds
    nothing the squatter left, and compiles C++ (the finding: ENOSPC for every later completion)."""
    import shutil

    tasks, completions = [SQUARE, SQUARE, LOOKER], [SLOT_SQUATTER, WRITER_OK, LOOKER_OK]
    if shutil.which("g++", path="/usr/local/bin:/usr/bin:/bin"):
        tasks.append(NATIVE)
        completions.append("```cpp\n" + NATIVE_OK + "```")
    results = [scorer.score([task], [code])[0] for task, code in zip(tasks, completions)]
    assert [r.status for r in results] == ["passed"] * len(results), [(r.status, r.error) for r in results]


def test_an_execution_writes_its_own_scratch_slot_only(sandbox_root):
    """Finding 3 (local, scoring): with one sandbox, every completion runs on the squatter's sandbox after it."""
    options = {"root_dir": str(sandbox_root), "scratch_limit_bytes": 16 << 20}
    config = SandboxConfig(sandbox_pool_size=1, sandbox_test_timeout=5.0, sandbox_compile_timeout=30.0,
                           sandbox_backend_options=options)
    with Scorer.from_config(config) as scorer:
        check_slots_hold(scorer)


def check_sessions_hold(make_env):
    """Finding 3 (sessions): a rollout's interpreter writes into the other slots of its sandbox; the next rollout on
    that sandbox (one session sandbox) finds nothing of it and writes its own files. Returns the second rollout's
    environment."""
    from test_languages import ROW

    first = make_env()
    first.reset(**ROW)
    out = first.python(SLOT_SQUATTER + "print('squatted', f(3))")
    assert "squatted 9" in out, out
    second = make_env()
    first.reset(**ROW)  # ends the first session: its sandbox goes back to the pool
    second.reset(**ROW)
    seen = second.python(LOOKER_OK + "print(f())")
    assert seen.strip() == "[]", seen
    assert second.python("open('notes.txt', 'w').write('z' * 100000)") == "100000\n"
    return second


def test_a_session_writes_its_own_scratch_slot_only(own_sandbox_root):
    from trl_sandbox import CodeEnvironment

    config = SandboxConfig(sandbox_pool_size=1, sandbox_max_sessions=1, sandbox_tool_timeout=5.0,
                           sandbox_backend_options={"root_dir": str(own_sandbox_root),
                                                    "scratch_limit_bytes": 16 << 20})
    with CodeEnvironment.factory(config) as make_env:
        check_sessions_hold(make_env)


@pytest.mark.skipif(os.geteuid() != 0, reason="planting a file in a sandbox's private tmpfs needs root")
def test_a_sandbox_whose_scratch_is_not_empty_is_replaced_never_lent(sandbox_root):
    """Every idle slot is checked empty after each execution; a sandbox with a slot that is not (here a file planted
    from outside, through the fork server's mount namespace) runs nothing more: the completion is retried on its
    replacement and passes."""
    options = {"root_dir": str(sandbox_root)}
    config = SandboxConfig(sandbox_pool_size=1, sandbox_test_timeout=5.0, sandbox_backend_options=options)
    with Scorer.from_config(config) as scorer:
        (sandbox,) = scorer.pool.live_sandboxes()
        server = scorer.pool.backend._servers.get(sandbox.id)
        runs = Path(f"/proc/{server.proc.pid}/root") / Path(sandbox.data, "runs").relative_to("/")
        planted = runs / "2" / "planted"
        planted.write_text("x")
        first, second = scorer.score([SQUARE, SQUARE], [SQUARE_OK, SQUARE_OK])
        assert (first.status, second.status) == ("passed", "passed"), (first, second)
        assert scorer.pool.stats.replaced == 1
        assert [s.id for s in scorer.pool.live_sandboxes()] != [sandbox.id]


# -- package directories: the answer key that a normal install ships is never readable ------------------------------
# Looks for HumanEval (tests and canonical solutions) in every package directory it can name, and defines every
# canonical solution it finds: with the file readable, it passes any HumanEval task.
DATA_THIEF = (
    "import glob, gzip, json, os, sys\n"
    "def _steal():\n"
    "    roots = os.environ.get('TRL_SANDBOX_PACKAGES', '').split(os.pathsep) + sys.path + ['{site}']\n"
    "    roots += glob.glob('/usr/lib/python3*/*-packages') + glob.glob('/usr/local/lib/python3*/*-packages')\n"
    "    for root in roots:\n"
    "        for path in glob.glob(os.path.join(root, 'trl_sandbox', 'data', 'HumanEval.jsonl.gz')):\n"
    "            try:\n"
    "                return [json.loads(line) for line in gzip.open(path)]\n"
    "            except OSError as exc:\n"
    "                print('denied', path, exc)\n"
    "    return []\n"
    "for _row in _steal():\n"
    "    try:\n"
    "        exec(_row['prompt'] + _row['canonical_solution'], globals())\n"
    "    except Exception:\n"
    "        pass\n"
)
_WHEEL_SCORE = """
import json, sys
from trl_sandbox import SandboxConfig, Scorer, Task, load_tasks
rows = [r for r in load_tasks("humaneval")][:6]
config = SandboxConfig(sandbox_pool_size=2, sandbox_test_timeout=5.0,
                       sandbox_backend_options={"root_dir": sys.argv[1]})
with Scorer.from_config(config) as scorer:
    thief = scorer.score([Task.from_row(r) for r in rows], [sys.argv[2]] * len(rows))
    honest = scorer.score([Task.from_row(r) for r in rows], [r["canonical_solution"] for r in rows])
    review = json.loads(sys.argv[3])  # tests/test_hostile_review.py's attacks, from the wheel too
    stdio = Task.from_row(review["stdio"])
    square = Task.from_row(review["square"])
    attacks = scorer.score([stdio, square, square], [review["unwaited"], review["deep"], review["square_ok"]])
    repo = json.loads(sys.argv[4])  # tests/test_hostile_repos.py's attacks on a repository task, from the wheel
    from trl_sandbox.repos import read_task
    repo_results = scorer.score([read_task(repo["row"])] * len(repo["patches"]), repo["patches"])
    print(json.dumps({"thief": [r.status for r in thief], "honest": [r.status for r in honest],
                      "review": [(r.status, r.reward, r.retries) for r in attacks],
                      "repo": [(r.status, r.reward, r.output) for r in repo_results],
                      "replaced": scorer.pool.stats.replaced, "describe": scorer.pool.backend.describe()}))
"""


@pytest.fixture
def readable_tmp():
    """A temporary directory other users can read (pytest's own are under a private directory), removed after."""
    import shutil

    path = Path(tempfile.mkdtemp(prefix="trl-sandbox-wheel-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def test_a_wheel_install_never_shows_its_data_to_sandboxed_code(readable_tmp, sandbox_root):
    """Finding 1, as users install us: trl-sandbox built as a wheel and installed (not editable) in a virtual
    environment that the sandbox user can read, whose site-packages then holds trl_sandbox/data/HumanEval.jsonl.gz.
    A completion that finds it and defines every canonical solution passes nothing; honest ones pass. The attacks of
    tests/test_hostile_review.py and tests/test_hostile_repos.py (a repository task's patches: a pass printed at
    exit, a daemon writing the exit status, writes to the image's files and the network) are contained there too."""
    import shutil
    import subprocess
    import sys
    import sysconfig

    pytest.importorskip("setuptools", minversion="77", reason="building the wheel offline needs setuptools >= 77 here "
                        "(the test extra's; the non-root pass runs the system interpreter)")
    # Built from a copy (the build writes build/ and an egg-info beside the sources: not in the checkout), by pip
    # with no PYTHONPATH (where it names the checkout, pip would take trl-sandbox as installed already).
    repo = Path(__file__).resolve().parent.parent
    source = readable_tmp / "source"
    shutil.copytree(repo, source, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__",
                                                                "runs", "wandb"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    wheels = readable_tmp / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(wheels), str(source)], check=True, timeout=300, capture_output=True, env=env)
    (wheel,) = wheels.glob("trl_sandbox-*.whl")
    venv = readable_tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120, env=env)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], check=True, timeout=300, capture_output=True, env=env)
    site_dir = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True).stdout.strip()
    assert (Path(site_dir) / "trl_sandbox" / "data" / "HumanEval.jsonl.gz").is_file()
    # The wheel's dependencies (anyio...) from this environment, behind the wheel's own copy of trl_sandbox.
    (Path(site_dir) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    for path in [readable_tmp, *readable_tmp.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o555 if path.is_dir() else path.stat().st_mode | 0o444)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    from test_hostile_review import DEEP_TREE, PY_UNWAITED, SQUARE_OK

    review = {"stdio": {"task_id": "square-1s", "inputs": ["3\n", "5\n"], "outputs": ["9", "25"], "time_limit": 1},
              "square": {"task_id": "square", "test_list": ["assert f(2) == 4"]},
              # 4 s of CPU in all: past the 3 s this row gets (its statement's 1 s x 3; the wheel's scorer caps at 5)
              "unwaited": PY_UNWAITED.format(share=4.0 / 16, wait=""), "deep": DEEP_TREE, "square_ok": SQUARE_OK}
    import _repo_image as R
    from test_hostile_repos import ESCAPE, FORGE_AT_EXIT, FORGE_EXIT_STATUS, _patch_with

    image, info = R.repo_image(readable_tmp / "repo-image")
    git = image.rootfs / "usr" / "bin" / "git"
    git_before = git.read_bytes()
    repo = {"row": R.swebench_row(info),
            "patches": [info["patch"], *(_patch_with(info, code) for code in (FORGE_AT_EXIT, FORGE_EXIT_STATUS,
                                                                             ESCAPE))]}
    env["TRL_SANDBOX_CACHE"] = str(R.cache_root())
    proc = subprocess.run([str(python), "-c", _WHEEL_SCORE, str(sandbox_root), DATA_THIEF.format(site=site_dir),
                           json.dumps(review), json.dumps(repo)], capture_output=True, text=True, timeout=600,
                          cwd=str(readable_tmp), env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["honest"] == ["passed"] * 6, out
    assert "passed" not in out["thief"], out
    (unwaited, deep, honest), replaced = out["review"], out["replaced"]
    assert unwaited[0] != "passed" and unwaited[1] is not None and unwaited[1] <= 0, out  # its children are timed
    assert deep == ["passed", 1.0, 0] and honest == ["passed", 1.0, 0] and replaced == 0, out  # nothing spent
    (gold, at_exit, daemon, escape) = out["repo"]
    assert gold[:2] == ["passed", 1.0], gold
    assert at_exit[:2] == ["error", -1.0], at_exit  # a pass printed after the failure is not believed
    assert daemon[:2] == ["failed", 0.0] and "DAEMON-WAS-HERE" not in daemon[2], daemon
    assert escape[:2] == ["failed", 0.0] and "NETWORK-REACHED" not in escape[2], escape
    assert git.read_bytes() == git_before  # the cached image is as it was


# -- sandbox uids: never shared between sandboxes of different processes --------------------------------------------
_UID_HOLDER = """
import anyio, itertools, os, sys, uuid
sys.path.insert(0, sys.argv[3])
from trl_sandbox.backends._uids import UID_SPAN
# Every sandbox id of both processes differs (their cgroups are their own), and every one hashes to the same uid.
_ids = itertools.count((1 if sys.argv[2] == "hog" else 2) * 1000)
uuid.uuid4 = lambda: uuid.UUID(int=(next(_ids) * UID_SPAN) << 64)
from trl_sandbox.backends.local import LocalBackend

HOG = ("import threading, time\\n"
       "threads = []\\n"
       "try:\\n"
       "    while True:\\n"
       "        t = threading.Thread(target=time.sleep, args=(30,), daemon=True)\\n"
       "        t.start()\\n"
       "        threads.append(t)\\n"
       "except RuntimeError:\\n"
       "    pass\\n"
       "print('holding', len(threads), flush=True)\\n"
       "time.sleep(30)\\n")
HONEST = ("import threading\\n"
          "out = []\\n"
          "ts = [threading.Thread(target=out.append, args=(i,)) for i in range(8)]\\n"
          "[t.start() for t in ts]\\n"
          "[t.join() for t in ts]\\n"
          "print(sorted(out) == list(range(8)))\\n")

async def main():
    backend = LocalBackend(root_dir=sys.argv[1], max_processes=24)
    await backend.start()
    sandbox = await backend.create({})
    uid = (await backend.exec(sandbox, [*sandbox.python, "-c", "import os; print(os.getuid())"], timeout_s=20))
    print("uid", uid.stdout.decode().strip(), flush=True)
    if sys.argv[2] == "hog":
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: backend.exec(sandbox, [*sandbox.python, "-c", HOG], timeout_s=25))
            await anyio.to_thread.run_sync(sys.stdin.readline)  # the test says when to stop
            tg.cancel_scope.cancel()
    else:
        sys.stdin.readline()  # the test says when the hog holds its threads
        result = await backend.exec(sandbox, [*sandbox.python, "-c", HONEST], timeout_s=20)
        error = result.stderr.decode()[-300:].replace("\\n", " ")
        print("honest", result.exit_code, result.stdout.decode().strip(), error, flush=True)
    await backend.delete(sandbox)
    await backend.aclose()

anyio.run(main)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="per-sandbox uids are given as root (a non-root user has one uid)")
def test_sandboxes_of_two_processes_never_share_a_uid(own_sandbox_root):
    """Finding 5: two training processes each open a pool whose sandbox ids would map to the same uid. One
    completion holds every process its uid may have; an honest completion starting threads in the other process's
    sandbox still runs, because the uids are claimed host-wide."""
    import subprocess
    import sys
    import time

    repo = str(Path(__file__).resolve().parent.parent)
    roots = [own_sandbox_root / name for name in ("a", "b")]
    for root in roots:
        root.mkdir(mode=0o711)
    from trl_sandbox.backends._host import processes_of

    procs = [subprocess.Popen([sys.executable, "-c", _UID_HOLDER, str(root), role, repo], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for root, role in zip(roots, ("hog", "honest"))]
    hog, honest = procs
    try:
        hog_uid = int(hog.stdout.readline().split()[1])
        honest_uid = int(honest.stdout.readline().split()[1])
        deadline = time.monotonic() + 60
        while processes_of(hog_uid) < 14 and time.monotonic() < deadline:  # the hog holds what its cgroup lets it
            time.sleep(0.1)
        honest.stdin.write("go\n")
        honest.stdin.flush()
        line = honest.stdout.readline()
        hog.stdin.write("stop\n")
        hog.stdin.flush()
        assert line.startswith("honest 0 True"), line
        assert hog_uid != honest_uid
    finally:
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    assert [proc.returncode for proc in procs] == [0, 0]
    assert [list(root.iterdir()) for root in roots] == [[], []]
    for root in roots:
        root.rmdir()


# -- dodges: a value the program cannot send, or a reply it forged, is its failure (never a None reward) ------------
# A None reward is "not the model's doing": TRL leaves the completion out, so a program unsure of its answer would lose
# nothing by making its value uncrossable. Each of these scored None before; each fails its test now.

_FORGED_U = ("import os, struct\nFRAME = b'{\"u\": \"forged\"}'\n\ndef forge():\n    for fd in range(3, 256):\n"
             "        try:\n            os.write(fd, struct.pack('<I', len(FRAME)) + FRAME)\n        except OSError:\n"
             "            pass\n")
# A value that cannot cross: tuples nested 300 deep (a list that contains itself crosses now, as a twin).
_SELF_CONTAINING = "    a = ()\n    for _ in range(300):\n        a = (a,)\n    return a\n"
APPS_CALL = Task.from_row({"problem_id": 2500, "starter_code": "", "input_output": json.dumps(
    {"fn_name": "count_sheeps", "inputs": [[[True, False, True]], [[False]]], "outputs": [[2], [0]]})})


def _kodcode(question_id: str, test: str) -> Task:
    """A KodCode-V1 row as far as the harness reads it: its pytest file."""
    return Task.from_row({"question_id": question_id, "test": test})


KOD_VALUE = _kodcode("Prefill_90001_C", "import pytest\nfrom solution import pairs\n\n\n"
                     "def test_pairs():\n    assert pairs(2) == [(0, 1)]\n\n\n"
                     "def test_pairs_negative():\n    with pytest.raises(Exception):\n        pairs(-1)\n\n\n"
                     "@pytest.mark.xfail(raises=ZeroDivisionError)\ndef test_pairs_xfail():\n"
                     "    assert pairs(3) == [(0, 1), (0, 2), (1, 2)]\n\n\n"
                     "def test_pairs_anything_raised():\n    with pytest.raises(BaseException):\n        pairs(-2)\n")
# A test whose own code catches everything around the call.
CATCHES = Task.from_row({"task_id": "catches-everything", "test_list": [
    "try:\n    r = f(2)\nexcept BaseException:\n    r = 4\nassert r == 4", "assert f(3) == 9"]})
# A test argument the tests set up once: the program grows it past the message limit, so its changes cannot be
# copied back into the tests' list (a twin): the program's failure, at every call from then on.
GROWN = Task.from_row({"task_id": "grown-argument", "test_setup_code": "data = [1, 2, 3]",
                       "test_list": ["assert total(data) == 6", "assert total([data, data]) == 12"]})

DODGES = [
    # (id, task, program, reward, text in the failing test's error)
    ("assert-returns-itself", SQUARE, "def f(x):\n" + _SELF_CONTAINING, 0.0, "nested deeper than 200"),
    ("assert-nested-250-deep", SQUARE, "def f(x):\n    a = []\n    for _ in range(250):\n        a = [a]\n"
     "    return a\n", 0.0, "nested deeper than 200"),
    ("assert-over-64-mib", SQUARE, "def f(x):\n    return 'x' * (65 << 20)\n", 0.0, "over the 64 MiB limit"),
    ("assert-forged-reply", SQUARE, _FORGED_U + "\ndef f(x):\n    forge()\n    return 0\n", 0.0, "forged"),
    ("assert-caught-by-the-test", CATCHES, "def f(x):\n" + _SELF_CONTAINING, 0.0, "nested deeper than 200"),
    ("call-returns-itself", MAXSUB, _SELF_CONTAINING, 0.0, "nested deeper than 200"),
    ("function-returns-itself", APPS_CALL, "def count_sheeps(arr):\n" + _SELF_CONTAINING, 0.0,
     "nested deeper than 200"),
    ("stdio-forged-reply", STDIO, _FORGED_U + "\nforge()\nprint(0)\n", 0.0, "forged"),
    # pytest.raises(Exception) and an xfail test cannot take the failure for an expected exception
    ("pytest-returns-itself", KOD_VALUE, "def pairs(n):\n" + _SELF_CONTAINING, 0.0, "nested deeper than 200"),
    ("returned-value-sent-back", Task.from_row({"task_id": "sent-back", "test_list": ["assert g([f(0)] * 3) == 3"]}),
     "def f(x):\n    return 'x' * (30 << 20)\n\ndef g(v):\n    return len(v)\n", 0.0, "made or changed"),
    ("grown-test-argument", GROWN, "def total(xs):\n    s = sum(xs)\n    xs.extend(['x' * (1 << 20)] * 70)\n"
     "    return s\n", 0.0, "over the 64 MiB limit"),
]


@pytest.fixture(scope="module")
def value_scorer(sandbox_root):
    """The default isolation, with room for a program's 65 MiB value (1 GiB) and the time to send it (5 s a test)."""
    config = SandboxConfig(sandbox_pool_size=2, sandbox_test_timeout=5.0, sandbox_completion_timeout=30.0,
                           sandbox_memory_limit=1 << 30, sandbox_backend_options={"root_dir": str(sandbox_root)})
    with Scorer.from_config(config) as scorer:
        yield scorer


@pytest.mark.parametrize("name, task, program, reward, text", DODGES, ids=[d[0] for d in DODGES])
def test_a_value_the_program_cannot_send_fails_its_test(value_scorer, name, task, program, reward, text):
    (result,) = value_scorer.score([task], [program])
    assert result.status == "failed" and result.reward == pytest.approx(reward), (result.status, result.error)
    assert text in (result.error or ""), result.error


def test_whose_unsendable_value_it_is():
    """The judge's rule (``Worker.not_sent``), without a sandbox: what the tests cannot send is theirs (a None reward)
    unless it holds an object the program sent, or the program sent more than the judge keeps track of; a
    container that contains itself is always the tests' own (what the program sends arrives as fresh objects)."""
    from trl_sandbox.harness.base import ProgramValueError, Unserializable, ValueNotSent
    from trl_sandbox.harness.processes import PROGRAM_VALUES_BUDGET, Worker

    r, w = os.pipe()
    try:
        worker = Worker(0, w, r)
        theirs, from_program = [1, 2], [[3], "text"]
        worker.received(from_program)
        size, depth = Unserializable("big", "size"), Unserializable("deep", "depth")
        cycle = Unserializable("loop", "cycle")
        assert type(worker.not_sent(size, ([theirs], {}))) is ValueNotSent
        assert type(worker.not_sent(size, ([theirs, [from_program[0]]], {}))) is ProgramValueError
        assert type(worker.not_sent(depth, ({"k": from_program[1]},))) is ProgramValueError
        assert type(worker.not_sent(cycle, ([from_program],))) is ValueNotSent
        assert worker.value_failures == 2 and "deep" in worker.value_failure
        worker.received(["x" * (1 << 20) + str(i) for i in range(PROGRAM_VALUES_BUDGET >> 20)])  # more than it keeps
        assert worker.flooded and not worker.from_program
        assert type(worker.not_sent(size, ([theirs], {}))) is ProgramValueError
        assert type(worker.not_sent(cycle, ([theirs], {}))) is ValueNotSent
    finally:
        os.close(r)
        os.close(w)


def test_the_tests_own_value_that_cannot_cross_is_still_not_the_programs_doing(value_scorer):
    """What the tests themselves cannot send (a 300-deep list or tuple they build) stays an
    ``unserializable`` result with a None reward, whatever the program: a correct one included, even after it
    returned values and changed the tests' arguments."""
    deep = Task.from_row({"task_id": "deep-input", "test_setup_code": "deep = []\nfor _ in range(300):\n"
                          "    deep = [deep]\nxs = [3, 1, 2]",
                          "test_list": ["assert depth([[1]]) == 2", "assert sort_in_place(xs) is None",
                                        "assert xs == [1, 2, 3]", "assert depth(deep) == 301"]})
    correct = ("def sort_in_place(xs):\n    xs.sort()\n\ndef depth(v):\n    d = 0\n    while isinstance(v, list):\n"
               "        d += 1\n        v = v[0] if v else None\n    return d\n")
    looped = Task.from_row({"task_id": "loop-input", "test_setup_code": "loop = ()\nfor _ in range(300):\n"
                            "    loop = (loop,)", "test_list": ["assert size(loop) == 1"]})
    results = value_scorer.score([deep, looped], [correct, "def size(v):\n    return len(v)\n"])
    assert [(r.status, r.reward, r.tests_passed) for r in results] == [("unserializable", None, 3),
                                                                       ("unserializable", None, 0)], results



# -- borrowed names: the program's names never become the tests' builtins or modules ------------------------------
# The official harnesses run program and tests as one module, where a program's `def set(*a): return 0` is the tests'
# set(); we refuse that: the tests' builtins, and the modules they import, stay theirs.

HUMANEVAL = {r["task_id"]: Task.from_row(r) for r in load_tasks("humaneval")}
# Every HumanEval task that a builtin stub turned from 0 to 1.0 (all tasks, each builtin its tests use, several stub
# values): tolerance checks (`abs(candidate(x) - y) < 1e-6`), the tests' loops (`for _ in range(100)`), tuple().
HUMANEVAL_STUBS = [
    ("HumanEval/4", "def mean_absolute_deviation(numbers):\n    return 0\n\ndef abs(*a, **k):\n    return 0\n"),
    ("HumanEval/32", "def find_zero(xs):\n    return 0\n\ndef range(*a, **k):\n    return []\n"),
    ("HumanEval/33", "def sort_third(l):\n    return None\n\ndef tuple(*a, **k):\n    return 0\n"),
    ("HumanEval/37", "def sort_even(l):\n    return None\n\ndef tuple(*a, **k):\n    return 0\n"),
    ("HumanEval/38", "def decode_cyclic(s):\n    return ''\n\ndef range(*a, **k):\n    return []\n"),
    ("HumanEval/50", "def decode_shift(s):\n    return ''\n\ndef range(*a, **k):\n    return []\n"),
]


def _mbpp(task_id: int, tests: list[str]) -> Task:
    return Task.from_row({"task_id": f"mbpp/{task_id}", "test_list": tests, "test_imports": []})


# Sanitized-MBPP rows (google-research/mbpp sanitized-mbpp.json, test_list as published) that a `set` stub passed.
MBPP_SET = [
    _mbpp(2, ["assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))",
              "assert set(similar_elements((1, 2, 3, 4),(5, 4, 3, 7))) == set((3, 4))",
              "assert set(similar_elements((11, 12, 14, 13),(17, 15, 14, 13))) == set((13, 14))"]),
    _mbpp(7, ["assert set(find_char_long('Please move back to stream')) == set(['Please', 'move', 'back', 'stream'])",
              "assert set(find_char_long('Jing Eco and Tech')) == set(['Jing', 'Tech'])",
              "assert set(find_char_long('Jhingai wulu road Zone 3')) == set(['Jhingai', 'wulu', 'road', 'Zone'])"]),
    _mbpp(111, ["assert set(common_in_nested_lists([[12, 18, 23, 25, 45], [7, 12, 18, 24, 28], "
                "[1, 5, 8, 12, 15, 16, 18]]))==set([18, 12])",
                "assert set(common_in_nested_lists([[12, 5, 23, 25, 45], [7, 11, 5, 23, 28], "
                "[1, 5, 8, 18, 23, 16]]))==set([5,23])",
                "assert set(common_in_nested_lists([[2, 3,4, 1], [4, 5], [6,4, 8],[4, 5], [6, 8,4]]))==set([4])"]),
    _mbpp(140, ["assert set(extract_singly([(3, 4, 5), (4, 5, 7), (1, 4)])) == set([3, 4, 5, 7, 1])",
                "assert set(extract_singly([(1, 2, 3), (4, 2, 3), (7, 8)])) == set([1, 2, 3, 4, 7, 8])",
                "assert set(extract_singly([(7, 8, 9), (10, 11, 12), (10, 11)])) == set([7, 8, 9, 10, 11, 12])"]),
    _mbpp(232, ["assert set(larg_nnum([10, 20, 50, 70, 90, 20, 50, 40, 60, 80, 100],2))==set([100,90])",
                "assert set(larg_nnum([10, 20, 50, 70, 90, 20, 50, 40, 60, 80, 100],5))==set([100,90,80,70,60])",
                "assert set(larg_nnum([10, 20, 50, 70, 90, 20, 50, 40, 60, 80, 100],3))==set([100,90,80])"]),
]
MBPP_SUM = _mbpp(126, ["assert sum(10,15) == 6", "assert sum(100,150) == 93", "assert sum(4,6) == 3"])

# KodCode: `from solution import *` after the file's own imports, and a program's context manager.
KOD_STAR = _kodcode("Prefill_90002_C", "import math\nimport pytest\nfrom solution import *\n\n\n"
                    "def test_area():\n    assert math.isclose(circle_area(2), 12.566, rel_tol=1e-3)\n\n\n"
                    "def test_area_negative():\n    with pytest.raises(ValueError):\n        circle_area(-1)\n\n\n"
                    "def test_areas_sorted():\n    assert sorted(round(circle_area(r), 2) for r in (2, 1)) == "
                    "sorted([12.57, 3.14])\n")
KOD_STAR_CORRECT = ("import math\n\ndef circle_area(r):\n    if r < 0:\n        raise ValueError('negative radius')\n"
                    "    return math.pi * r * r\n")
# What KodCode's test files also do: use a module the solution imported and the file did not.
KOD_BORROWS = _kodcode("Prefill_90003_C", "from solution import *\n\n\n"
                       "def test_area():\n    assert math.isclose(circle_area(2), 12.566, rel_tol=1e-3)\n")
KOD_CM = _kodcode("Prefill_90004_C", "import pytest\nfrom solution import Account\n\n\n"
                  "def test_balance():\n    with Account(10) as account:\n        assert account.balance() == 10\n\n\n"
                  "def test_overdraw():\n    with Account(10) as account:\n        with pytest.raises(ValueError):\n"
                  "            account.withdraw(20)\n\n\n"
                  "def test_never_overdrawn():\n    with Account(10) as account:\n        account.withdraw(5)\n"
                  "        if account.balance() < 0:\n            pytest.fail('overdrawn')\n\n\n"
                  "def test_closing_an_account_keeps_errors():\n    with pytest.raises(KeyError):\n"
                  "        with Account(10):\n            raise KeyError('boom')\n")
ACCOUNT_OK = ("class Account:\n    def __init__(self, amount):\n        self.amount = amount\n\n"
              "    def __enter__(self):\n        return self\n\n    def __exit__(self, kind, value, tb):\n"
              "        self.closed = kind is None\n        return False\n\n    def balance(self):\n"
              "        return self.amount\n\n    def withdraw(self, n):\n        if n > self.amount:\n"
              "            raise ValueError('overdrawn')\n        self.amount -= n\n")
SWALLOWS = ("class Account:\n    def __init__(self, amount):\n        pass\n\n    def __enter__(self):\n"
            "        return self\n\n    def __exit__(self, *exc):\n        return True\n\n    def balance(self):\n"
            "        return -1\n\n    def withdraw(self, n):\n        return None\n")
# The assert-mode twins (MBPP tests may hold any statement): a context manager swallowing the test's failure, and
# one meant to suppress an exception, which it still may when that is not the test's own failure.
CM_ASSERT = Task.from_row({"task_id": "cm-assert", "test_list": [
    "with Account(10) as account:\n    assert account.balance() == 10",
    "with Account(10) as account:\n    account.withdraw(4)\n    assert account.balance() == 6"]})
CM_SUPPRESS = Task.from_row({"task_id": "cm-suppress", "test_list": [
    "x = 1\nwith Suppress(ZeroDivisionError):\n    x = 1 / 0\nassert x == 1",
    "try:\n    with Suppress(KeyError):\n        1 / 0\n    raised = False\nexcept ZeroDivisionError:\n"
    "    raised = True\nassert raised"]})
SUPPRESS = ("class Suppress:\n    def __init__(self, *kinds):\n        self.kinds = kinds\n\n    def __enter__(self):\n"
            "        return self\n\n    def __exit__(self, kind, value, tb):\n"
            "        return kind is not None and issubclass(kind, self.kinds)\n")

SHADOWING = [
    *[(f"{tid}-{program.split('def ')[2].split('(')[0]}-stub", HUMANEVAL[tid], program, 0.0)
      for tid, program in HUMANEVAL_STUBS],
    *[(f"{task.task_id}-set-stub", task, "def %s(*a, **k):\n    return None\n\ndef set(*a, **k):\n    return 0\n"
       % task.entry_points[0], 0.0) for task in MBPP_SET],
    ("kodcode-star-import-fakes", KOD_STAR,
     "class _Math:\n    def isclose(self, *a, **k):\n        return True\n\nclass _Raises:\n"
     "    def __enter__(self):\n        return self\n\n    def __exit__(self, *exc):\n        return True\n\n"
     "class _Pytest:\n    def raises(self, *a, **k):\n        return _Raises()\n\nmath, pytest = _Math(), _Pytest()\n\n"
     "def sorted(*a, **k):\n    return 0\n\ndef circle_area(r):\n    return 0\n", 0.0),
    ("kodcode-swallowing-context-manager", KOD_CM, SWALLOWS, 0.0),
    ("assert-swallowing-context-manager", CM_ASSERT, SWALLOWS, 0.0),
]


KOD_CM_RAISES = _kodcode("Prefill_90006_C", "import pytest\nfrom solution import Account\n\n\n"
                         "def test_balance_then_close():\n    with pytest.raises(ValueError):\n"
                         "        with Account(10) as account:\n            assert account.balance() == 10\n"
                         "            raise ValueError('closed')\n")


def test_a_context_manager_cannot_replace_a_tests_failure(value_scorer):
    """Told that an assertion fails in its block, a program's ``__exit__`` that raises the exception the test expects
    around it (pytest.raises(ValueError)) does not replace the failure; a correct one passes."""
    replaces = SWALLOWS.replace("        return True\n", "        if exc[0] is not None:\n"
                                "            raise ValueError('closed')\n        return False\n")
    assert replaces != SWALLOWS
    results = value_scorer.score([KOD_CM_RAISES] * 2, [replaces, ACCOUNT_OK])
    assert [(r.status, r.reward) for r in results] == [("failed", 0.0), ("passed", 1.0)], results


@pytest.mark.parametrize("name, task, program, reward", SHADOWING, ids=[s[0] for s in SHADOWING])
def test_the_programs_names_never_become_the_tests(value_scorer, name, task, program, reward):
    (result,) = value_scorer.score([task], [program])
    assert result.status == "failed" and result.reward == pytest.approx(reward), (result.status, result.error)


def test_correct_programs_keep_their_names(value_scorer):
    """A program may define helpers named like builtins, be itself named like one (MBPP's `sum`), import the modules
    a star-importing test file uses without importing them, and suppress exceptions with its context managers."""
    own_abs = "def abs(v):\n    return v if v >= 0 else -v\n\ndef f(x):\n    return abs(x) * abs(x)\n"
    own_sum = ("def sum(a, b):\n    total = 0\n    for i in range(1, min(a, b)):\n"
               "        if a % i == 0 and b % i == 0:\n            total += i\n    return total\n")
    he4 = ("def abs(v):\n    return v if v >= 0 else -v\n\n"
           "def mean_absolute_deviation(numbers):\n    mean = sum(numbers) / len(numbers)\n"
           "    return sum(abs(x - mean) for x in numbers) / len(numbers)\n")
    tasks = [SQUARE, MBPP_SUM, HUMANEVAL["HumanEval/4"], KOD_STAR, KOD_BORROWS, KOD_CM, CM_ASSERT, CM_SUPPRESS]
    programs = [own_abs, own_sum, he4, KOD_STAR_CORRECT, KOD_STAR_CORRECT, ACCOUNT_OK, ACCOUNT_OK, SUPPRESS]
    results = value_scorer.score(tasks, programs)
    assert [r.status for r in results] == ["passed"] * len(tasks), [(r.task_id, r.status, r.error) for r in results]


def _literal(program: str) -> str:
    """``program`` as an ATTACKS template (filled with ``str.format``)."""
    return program.replace("{", "{{").replace("}", "}}")


# The dodges and borrowed names above join the attack suite too, under each isolation mode.
_PROGRAMS = {name: program for name, _task, program, *_ in DODGES + SHADOWING}
ATTACKS += [
    ("returns-itself", SQUARE, _PROGRAMS["assert-returns-itself"], False),
    ("returns-250-deep", SQUARE, _PROGRAMS["assert-nested-250-deep"], False),
    ("forged-unserializable-reply", SQUARE, _literal(_PROGRAMS["assert-forged-reply"]), False),
    ("forged-unserializable-stdio-reply", STDIO, _literal(_PROGRAMS["stdio-forged-reply"]), False),
    ("builtin-set-stub", MBPP_SET[0], _PROGRAMS["mbpp/2-set-stub"], False),
    ("builtin-range-stub", HE38, "def decode_cyclic(s):\n    return ''\n\ndef range(*a, **k):\n    return []\n", False),
    ("swallowing-context-manager", CM_ASSERT, SWALLOWS, False),
]
