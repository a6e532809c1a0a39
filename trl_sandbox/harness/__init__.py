"""trl-sandbox's test harness: runs INSIDE the sandbox. Standard library only (Python >= 3.8).

It reaches every sandbox as one file, ``trl_sandbox_harness.pyz``: a zip archive of this package (the standard
library's ``zipapp`` format, built by :mod:`.archive`, written by the pool at creation), run as ``python
trl_sandbox_harness.pyz`` with one JSON request on stdin (built by :mod:`trl_sandbox.tasks`), or as ``python
trl_sandbox_harness.pyz session`` for an interpreter session. In the archive the package is named
``trl_sandbox_harness``; the local backend's fork server imports it under that name from this directory. Every
module imports the others relatively, and none imports anything of ``trl_sandbox``.

Two processes
-------------
- the *judge* (trusted: :mod:`.server`, :mod:`.judges`) never executes model-written code. It reads the request, runs
  the tests, decides each verdict, and writes JSON-lines records to its *result channel*: the original stdout, kept on
  a private descriptor;
- the *worker* (:mod:`.worker`), forked *before* the request is read (so the tests and the expected outputs never
  exist in its memory), runs the model's program and answers the judge over a pair of pipes. It holds no result
  descriptor, cannot trace the judge (non-dumpable; seccomp), and in the local backend cannot signal it.

The judge's namespace mirrors the worker's module: every module-level name of the program reaches the judge as a
*value* when it is plain data and as a *remote object* otherwise (:mod:`.values`, :mod:`.remote`, :mod:`.peer`).
Nothing the model's code controls decides a comparison with a value (:mod:`.compare`).

Modules, from the bottom up (each imports only those above it):

- :mod:`.base`: exceptions, constants, saved builtins, short descriptions, trusted code compilation;
- :mod:`.wire`: framed JSON messages over pipes and sockets, descriptor helpers, the worker's output pipe;
- :mod:`.cputime`: a test's time limit on the worker's CPU time, with its wall-clock backstop;
- :mod:`.remote`: the proxy of an object of the other side;
- :mod:`.values`: values encoded with their exact types, references, exceptions crossing;
- :mod:`.peer`: one side of the judge-worker conversation, the operations on lent objects;
- :mod:`.compare`: return values and outputs against the expected ones (each dataset's comparison);
- :mod:`.stdio`: one run of a program on one test's input, a Python program in the worker;
- :mod:`.native`: programs in other languages: compile, then one process per test;
- :mod:`.worker`: the worker process: bans, loading the program, answering the judge;
- :mod:`.processes`: the worker as the judge holds it, and forks of the judge for task code;
- :mod:`.checkers`: checker programs (special judges) in Python or compiled, their self-test;
- :mod:`.interaction`: interactive problems (the program and an interactor on two direct pipes);
- :mod:`.judges`: one judge per test mode (assert, call, stdio, function, reference);
- :mod:`.pytest_runner`: pytest files (KodCode);
- :mod:`.server`: one request per process (``main``) or many (``serve``, the local backend's judge server);
- :mod:`.session`: interpreter sessions for ``CodeEnvironment``;
- :mod:`.archive` (host side only, not in the archive): the archive's bytes.

Request fields: ``mode`` (``assert`` | ``call`` | ``stdio`` | ``function`` | ``pytest`` | ``reference`` | ``selftest``:
a checker's self-test, :func:`.checkers.judge_selftest`), ``program``
(source run by the worker), ``prelude`` (import statements of the tests, run by the worker after the program, as the
official harnesses' single module would), ``trusted`` (``assert``: code the judge runs first), ``setup`` (``assert``:
test module source run by the judge; ``pytest``: the test file), ``entry`` (``assert``: function the tests call as
``candidate``), ``entries`` (``assert``, ``pytest``: the functions under test, the only names of the program's that may
be named like a builtin in the tests' namespace), ``tests``, ``expected`` (``call``: encoded return values; ``stdio``:
output texts; ``function``: JSON return values), ``func_name``, ``rule`` (``function``), ``compare`` (``stdio``: the
judge of the output, see :func:`.compare.same_output`, or a checker: its Python source, or a compiled one's
``binary`` (base64) and ``sha256``), ``interactor`` (``stdio``: the interactor, likewise), ``memory_limit_bytes``,
``files``,
``files_only`` (the files are the program's only input and output), ``nonzero_exit`` (``fails`` | ``ignored`` |
``judged``: how a stdin program's crash counts, see :func:`.judges.judge_stdio`), ``build`` and
``compile_timeout_s`` (``stdio`` programs in other languages), ``test_timeout_s``, ``output_limit``, ``stop_on_failure``
(stop at the first failing test: the all-or-nothing reward), ``banned`` (runtime bans: ``builtins``, ``modules``,
``imports``), ``budget_s`` (the backend's time limit for the whole command: ``python harness.pyz`` stops the program's
requests a moment before it, to end the program's processes itself), ``key`` (a secret of the host: ``python
harness.pyz`` then signs every later record with it, a ``mac`` field, see :func:`.base.record_mac`).

Records: ``{"infra": true, "error"}`` alone when the harness refused to run anything (the request could still be
read by the program: see below); else ``{"ready": true}``, then ``{"load": "error" | "timeout" | "compile_error" |
"unsupported", "error"}`` or one ``{"i": k, "ok": bool}`` per test (with ``error``, ``timeout``, ``unserializable``
(a value of the tests' own could not be sent to the program) or ``invalid`` when it failed so), ``{"crash": reason}``
when the worker died, then ``{"done": n}``, then (``python harness.pyz`` only) ``{"output": text, "truncated"}``: the
first 64 KiB the worker printed. The worker's stdout and stderr are a pipe the judge reads, never the process's own:
remote backends merge a command's stdout and stderr, and nothing the code prints may reach the result channel.

Remote sandboxes: where their exec API has no stdin, the backend uploads the request as a file named
``.trl-sandbox-stdin-*`` and redirects it; the judge unlinks it and checks that no name is left before it forks
anything (else it fails closed with the ``infra`` record), then becomes non-dumpable and a child subreaper. The worker
gets no-new-privs (``sudo`` cannot make it root), a fixed environment (none of the service's variables) and, when the
harness runs as root, runs as an account of the run's own (:mod:`.accounts`) and, where the kernel allows, as PID 1
of a PID namespace of its own. At the end (or on SIGTERM) the judge stops then kills every process the program
started, and as root every process of that account: nothing of one completion runs when the next request arrives, and
nothing of another run sharing the kernel is touched. :mod:`.strays` ends, after every test, what the program left
running (and, on the local backend, times it). :mod:`.server` (``main``) gives the order of these steps.
"""
