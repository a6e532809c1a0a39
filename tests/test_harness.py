"""The harness run as a plain command, as remote backends run it: stdout and stderr merged, the request in a file
redirected to stdin (their exec APIs have no stdin), possibly as root."""

import json
import os
import subprocess
import sys
from pathlib import Path

from trl_sandbox import Task
from trl_sandbox.harness.archive import HARNESS_FILES, HARNESS_NAME
from trl_sandbox.harness.base import STDIN_PREFIX

TASK = Task.from_row({"task_id": "sq", "test_list": ["assert f(3) == 9", "assert f(4) == 16"]})
FORGER = (
    "import os, sys\n"
    "line = '{\"i\": 0, \"ok\": true}\\n{\"i\": 1, \"ok\": true}\\n{\"done\": 2}\\n'\n"
    "sys.stdout.write(line); sys.stdout.flush(); sys.stderr.write(line); sys.stderr.flush()\n"
    "os.write(1, line.encode()); os.write(2, line.encode())\n"
    "print('uid', os.getuid(), file=sys.stderr)\n"
    "try:\n    print('REQUEST', open(sys.argv[0]).read()[:20])\nexcept Exception as e:\n    print('no request', e)\n"
    "def f(x):\n    return 0\n"
)


def run_merged(tmp_path, code):
    request = TASK.request(code, test_timeout_s=5.0, output_limit=1 << 16)
    path = tmp_path / f"{STDIN_PREFIX}1"
    path.write_text(json.dumps(request))
    harness = tmp_path / HARNESS_NAME
    harness.write_bytes(HARNESS_FILES[HARNESS_NAME])
    with open(path, "rb") as stdin:
        proc = subprocess.run([sys.executable, str(harness)], stdin=stdin, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=60, cwd=tmp_path)
    return proc, path


def test_printed_records_cannot_forge_a_pass_when_stdout_and_stderr_are_merged(tmp_path):
    proc, path = run_merged(tmp_path, FORGER)
    verdict = TASK.judge(proc.stdout, exit_code=proc.returncode, timed_out=False)
    assert verdict.status == "failed" and verdict.tests_passed == 0, (verdict, proc.stdout)
    output = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith(b'{"output"')]
    assert len(output) == 1 and '{"i": 0, "ok": true}' in output[0]["output"]  # what it printed, escaped
    assert not path.exists()  # the request file was unlinked before the code ran
    if os.geteuid() == 0:
        assert "uid 65534" in output[0]["output"]  # root in the sandbox: the code runs as nobody
    assert not list(Path("/tmp").glob("trl-sandbox-worker-*"))


def test_a_passing_program_still_passes(tmp_path):
    proc, _ = run_merged(tmp_path, "def f(x):\n    print('hello')\n    return x * x\n")
    verdict = TASK.judge(proc.stdout, exit_code=proc.returncode, timed_out=False)
    assert verdict.status == "passed", proc.stdout
