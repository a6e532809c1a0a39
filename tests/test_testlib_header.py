"""trl-sandbox's own testlib.h: checkers and an interactor of our own, compiled against it, judge as testlib does.

The C++ programs below are this project's (not testlib's examples). They are compiled once per session and run on
cases whose verdicts, exit codes and stderr prefixes are testlib's (0.9.45): ok 0, wrong answer 1, presentation
error 2 (also extra output and an unexpected end of the output), FAIL 3 (the jury's files), points 7,
``_pc(n)`` n. The host side (:mod:`trl_sandbox.testlib`) is tested without network.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from trl_sandbox import testlib as tl
from trl_sandbox.errors import ConfigurationError

GXX = shutil.which("g++")

JUDGE = r"""
#include "testlib.h"
// One program, several judges: the first token of the input picks the mode. Run with --validate it validates.
int main(int argc, char *argv[]) {
    if (argc > 1 && std::string(argv[1]) == "--validate") {
        registerValidation(argc, argv);
        int n = inf.readInt(1, 10, "n");
        inf.readEoln();
        std::vector<int> a = inf.readInts(n, -5, 5, "a");
        inf.readEoln();
        inf.readToken("[a-c]{1,3}|z+", "s");
        inf.readEoln();
        inf.readEof();
        return 0;
    }
    setName("trl-sandbox test judge");
    registerTestlibCmd(argc, argv);
    std::string mode = inf.readToken();
    if (mode == "sum") {
        long long want = ans.readLong();
        ensuref(want >= 0, "the jury's sum %lld is negative", want);
        long long got = ouf.readLong();
        if (got != want)
            quitf(_wa, "expected %lld, found %lld", want, got);
        quitf(_ok, "sum is %lld", want);
    }
    if (mode == "points") {
        double best = ans.readDouble();
        double got = ouf.readDouble(0, best, "score");
        quitp(got / best, "Ratio: %.4f", got / best);
    }
    if (mode == "pattern") {
        std::string word = ouf.readToken("[a-z]{1,5}", "word");
        ouf.readEoln();
        quitf(_ok, "word %s", word.c_str());
    }
    if (mode == "partial") {
        int k = ouf.readInt(0, 10, "k");
        quitf(_pc(k), "k=%d", k);
    }
    if (mode == "lines") {
        int n = 0;
        while (!ans.eof()) {
            std::string j = ans.readLine();
            if (j.empty() && ans.eof())
                break;
            std::string p = ouf.readLine();
            n++;
            if (j != p)
                quitf(_wa, "%d%s lines differ", n, englishEnding(n).c_str());
        }
        quitf(_ok, "%d lines", n);
    }
    if (mode == "stream")
        ouf.quitf(_wa, "stream-level verdict %s", vtos(ouf.readInt()).c_str());
    // "silent": no verdict at all (testlib fails such a checker at exit)
}
"""

INTERACTOR = r"""
#include "testlib.h"
// Guess the number: the program asks "? x" and hears "<", ">" or "="; it answers "! x". At most 12 questions.
int main(int argc, char *argv[]) {
    registerInteraction(argc, argv);
    int secret = inf.readInt(1, 1000, "secret");
    for (int asked = 0; asked <= 12; asked++) {
        std::string what = ouf.readToken("[?!]", "what");
        int x = ouf.readInt(1, 1000, "x");
        if (what == "!") {
            tout << x << std::endl;
            if (x != secret)
                quitf(_wa, "guessed %d, the number was %d", x, secret);
            quitf(_ok, "guessed %d after %d questions", x, asked);
        }
        std::cout << (x < secret ? "<" : x > secret ? ">" : "=") << std::endl;
    }
    quitf(_wa, "too many questions");
}
"""


@pytest.fixture(scope="session")
def programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The judge (C++17, -O2 -static, as contest judges are built), the interactor (C++11) and a C++20 build of
    the judge, compiled in parallel against trl-sandbox's header (or, to check these expectations against the
    official testlib, the header ``TRL_SANDBOX_TESTLIB_H`` names)."""
    if GXX is None:
        if os.environ.get("CI") == "true":
            pytest.fail("g++ is missing under CI=true; CI installs it (apt-get install g++)")
        pytest.skip("g++ not found: install it (apt-get install g++) to test trl-sandbox's testlib.h")
    root = tmp_path_factory.mktemp("testlib")
    shutil.copy(tl.testlib_header(None), root / "testlib.h")
    (root / "judge.cpp").write_text(JUDGE)
    (root / "interactor.cpp").write_text(INTERACTOR)
    builds = {
        "judge": ["-std=gnu++17", "-O2", "-static", "judge.cpp"],
        "interactor": ["-std=c++11", "-O1", "interactor.cpp"],
        "judge20": ["-std=c++20", "-O0", "-Wall", "-Werror", "judge.cpp"],
    }

    def build(name: str) -> subprocess.CompletedProcess:
        return subprocess.run([GXX, *builds[name], "-o", name], cwd=root, capture_output=True, text=True)

    with ThreadPoolExecutor(len(builds)) as pool:
        results = dict(zip(builds, pool.map(build, builds)))
    for name, proc in results.items():
        assert proc.returncode == 0, f"{name} did not compile against our testlib.h:\n{proc.stderr[-3000:]}"
    return {name: root / name for name in builds}


def judge(programs: dict[str, Path], tmp_path: Path, inp: str, out: str, ans: str, *extra: str,
          binary: str = "judge") -> tuple[int, str]:
    for name, text in (("in", inp), ("out", out), ("ans", ans)):
        (tmp_path / name).write_bytes(text.encode())
    proc = subprocess.run([str(programs[binary]), "in", "out", "ans", *extra], cwd=tmp_path, capture_output=True,
                          text=True, timeout=20)
    return proc.returncode, proc.stderr


CASES = [
    # (id, input, output, answer, exit code, stderr prefix)
    ("ok", "sum", "6\n", "6\n", 0, "ok sum is 6"),
    ("ok-whitespace", "sum", "\n  6  \r\n\n", "6", 0, "ok sum is 6"),
    ("wa", "sum", "7\n", "6\n", 1, "wrong answer expected 6, found 7"),
    ("pe-token", "sum", "six\n", "6\n", 2, 'wrong output format Expected integer, but "six" found'),
    ("pe-leading-zero", "sum", "06\n", "6\n", 2, "wrong output format Expected integer"),
    ("dirt", "sum", "6 7\n", "6\n", 2, "wrong output format Extra information in the output file"),
    ("unexpected-eof", "sum", "", "6\n", 2, "wrong output format Unexpected end of file - int64 expected"),
    ("ensuref-on-ans", "sum", "6\n", "-6\n", 3, "FAIL the jury's sum -6 is negative"),
    ("ans-unreadable", "sum", "6\n", "x\n", 3, 'FAIL Expected integer, but "x" found (ans)'),
    ("points", "points", "5\n", "10\n", 7, "points 0.5 Ratio: 0.5000"),
    ("points-full", "points", "10", "10", 7, "points 1.0 Ratio: 1.0000"),
    ("points-out-of-range", "points", "11", "10", 1, "wrong answer Double parameter [name=score] equals to 11"),
    ("points-dirt", "points", "5 5", "10", 2, "wrong output format Extra information in the output file"),
    ("pattern-ok", "pattern", "abc\n", "", 0, "ok word abc"),
    ("pattern-wa", "pattern", "abcdef\n", "", 1,
     'wrong answer Token parameter [name=word] equals to "abcdef", doesn\'t correspond to pattern "[a-z]{1,5}"'),
    ("partial", "partial", "4", "", 4, "partially correct (4) k=4"),
    ("lines-ok", "lines", "a b\nc\n", "a b\nc\n", 0, "ok 2 lines"),
    ("lines-wa", "lines", "a  b\nc\n", "a b\nc\n", 1, "wrong answer 1st lines differ"),
    ("stream-quit", "stream", "5", "", 1, "wrong answer stream-level verdict 5"),
    ("no-verdict", "silent", "", "", 3, "FAIL Checker must end with quit or quitf call."),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_checker_verdicts(programs: dict[str, Path], tmp_path: Path, case: tuple) -> None:
    _, mode, out, ans, code, prefix = case
    got_code, err = judge(programs, tmp_path, mode + "\n", out, ans)
    assert (got_code, err[: len(prefix)]) == (code, prefix), err


def test_cxx20_build_judges_alike(programs: dict[str, Path], tmp_path: Path) -> None:
    for _, mode, out, ans, code, prefix in CASES[:10]:
        got_code, err = judge(programs, tmp_path, mode + "\n", out, ans, binary="judge20")
        assert (got_code, err[: len(prefix)]) == (code, prefix), err


def test_report_file_and_appes(programs: dict[str, Path], tmp_path: Path) -> None:
    code, err = judge(programs, tmp_path, "points\n", "5\n", "10\n", "report.txt")
    assert code == 7 and "See file to check exit message" in err
    assert (tmp_path / "report.txt").read_text() == "0.5 Ratio: 0.5000"
    code, _ = judge(programs, tmp_path, "points\n", "5\n", "10\n", "report.xml", "-appes")
    assert code == 7
    assert (tmp_path / "report.xml").read_text() == (
        '<?xml version="1.0" encoding="windows-1251"?><result outcome = "points" points = "0.5">'
        "0.5 Ratio: 0.5000</result>\n")
    code, _ = judge(programs, tmp_path, "sum\n", "1\n", "2\n", "report.xml", "-appes")
    assert code == 1
    assert '<result outcome = "wrong-answer">expected 2, found 1</result>' in (tmp_path / "report.xml").read_text()


@pytest.mark.parametrize("text, code, prefix", [
    ("3\n1 -2 5\nab\n", 0, ""),
    ("3\n1 -2 5\nzzz\n", 0, ""),
    ("3\n1  -2 5\nab\n", 3, "FAIL Unexpected white-space - token expected (stdin, line 2)"),
    ("3\n1 -2 5 \nab\n", 3, "FAIL Expected EOLN (stdin, line 2)"),
    ("3\n1 -2 6\nab\n", 3, "FAIL Integer element a[3] equals to 6, violates the range [-5, 5] (stdin, line 2)"),
    ("3\n1 -2 5\nabcd\n", 3, "FAIL Token parameter [name=s"),
    ("3\n1 -2 5\nab", 3, "FAIL Expected EOLN"),
    ("3\r\n1 -2 5\nab\n", 3, "FAIL Expected EOLN"),
    ("3\n1 -2 5\nab\n\n", 3, "FAIL Expected EOF"),
])
def test_validator_is_strict(programs: dict[str, Path], text: str, code: int, prefix: str) -> None:
    proc = subprocess.run([str(programs["judge"]), "--validate"], input=text.encode(), capture_output=True,
                          timeout=20)
    err = proc.stderr.decode()
    assert (proc.returncode, err[: len(prefix)]) == (code, prefix), err


def play(programs: dict[str, Path], tmp_path: Path, secret: int, strategy: str) -> tuple[int, str, str]:
    """Run the interactor against a Python player over pipes: ``strategy`` is "search" (binary search), "wrong"
    (answers a wrong number at once) or "quit" (asks once, then closes its output)."""
    (tmp_path / "in").write_text(f"{secret}\n")
    proc = subprocess.Popen([str(programs["interactor"]), "in", "tout"], cwd=tmp_path, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        lo, hi = 1, 1000
        if strategy == "wrong":
            proc.stdin.write(f"! {secret % 1000 + 1}\n")
        elif strategy == "quit":
            proc.stdin.write("? 500\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() in "<>="
        else:
            while True:
                mid = (lo + hi) // 2
                proc.stdin.write(f"? {mid}\n")
                proc.stdin.flush()
                reply = proc.stdout.readline().strip()
                if reply == "=":
                    proc.stdin.write(f"! {mid}\n")
                    break
                lo, hi = (mid + 1, hi) if reply == "<" else (lo, mid - 1)
        proc.stdin.close()
        err = proc.stderr.read() if proc.stderr else ""
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    tout = (tmp_path / "tout").read_text() if (tmp_path / "tout").exists() else ""
    return proc.returncode, err, tout


def test_interactor_ok(programs: dict[str, Path], tmp_path: Path) -> None:
    code, err, tout = play(programs, tmp_path, 737, "search")
    assert code == 0 and err.startswith("ok guessed 737 after"), err
    assert tout == "737\n"


def test_interactor_wrong_answer(programs: dict[str, Path], tmp_path: Path) -> None:
    code, err, tout = play(programs, tmp_path, 5, "wrong")
    assert (code, err.strip()) == (1, "wrong answer guessed 6, the number was 5")
    assert tout == "6\n"


def test_interactor_program_exits_early(programs: dict[str, Path], tmp_path: Path) -> None:
    code, err, tout = play(programs, tmp_path, 5, "quit")
    assert (code, err.strip()) == (2, "wrong output format Unexpected end of file - token expected")
    assert tout == ""


# -- host side -----------------------------------------------------------------------------------------------------


def test_own_header_is_package_data_and_original() -> None:
    text = tl.OWN_HEADER.read_text()
    assert tl.OWN_HEADER.name == "testlib.h" and "registerTestlibCmd" in text and "InStream" in text
    assert "trl-sandbox's own" in text[:600] and "Mirzayanov" in text[:600]
    pyproject = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    assert '"data/testlib/*.h"' in pyproject  # shipped in the wheel as package data


def test_header_selection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(tl.TESTLIB_ENV, raising=False)
    assert tl.testlib_header(None) == tl.OWN_HEADER
    good = tmp_path / "testlib.h"
    good.write_text("struct InStream {}; void registerTestlibCmd(int, char**);\n")
    monkeypatch.setenv(tl.TESTLIB_ENV, str(good))
    assert tl.testlib_header(None) == good.resolve()
    other = tmp_path / "other.h"
    other.write_text("// InStream registerTestlibCmd\n")
    assert tl.testlib_header(str(other)) == other.resolve()  # the configured path wins over the variable
    with pytest.raises(ConfigurationError, match="not a file"):
        tl.testlib_header(str(tmp_path / "missing.h"))
    (tmp_path / "bogus.h").write_text("int main() {}\n")
    with pytest.raises(ConfigurationError, match="does not look like testlib.h"):
        tl.testlib_header(str(tmp_path / "bogus.h"))
    monkeypatch.setenv(tl.TESTLIB_ENV, str(tmp_path / "gone.h"))
    with pytest.raises(ConfigurationError, match=tl.TESTLIB_ENV):
        tl.testlib_header(None)


class _Response(io.BytesIO):
    def __enter__(self) -> "_Response":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def test_download_verifies_sha256(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = b"// a stand-in for testlib.h\n"
    requested = []

    def fake_urlopen(url: str, timeout: float) -> _Response:
        requested.append(url)
        return _Response(body)

    monkeypatch.setattr(tl.urllib.request, "urlopen", fake_urlopen)
    monkeypatch.setitem(tl.OFFICIAL_RELEASE, "sha256", hashlib.sha256(body).hexdigest())
    dest = tmp_path / "cache" / "testlib.h"
    assert tl.download_testlib(dest) == dest.resolve()
    assert dest.read_bytes() == body and requested == [tl.OFFICIAL_RELEASE["url"]]
    assert sorted(p.name for p in dest.parent.iterdir()) == ["testlib.h"]  # no temporary file left

    monkeypatch.setitem(tl.OFFICIAL_RELEASE, "sha256", "0" * 64)
    other = tmp_path / "refused.h"
    with pytest.raises(ConfigurationError, match="refusing"):
        tl.download_testlib(other)
    assert not other.exists()


def test_download_network_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(url: str, timeout: float) -> _Response:
        raise tl.urllib.error.URLError("no route to host")

    monkeypatch.setattr(tl.urllib.request, "urlopen", offline)
    with pytest.raises(ConfigurationError, match="could not download"):
        tl.download_testlib(tmp_path / "t.h")


def test_pinned_release_is_consistent() -> None:
    assert tl.OFFICIAL_RELEASE["commit"] in tl.OFFICIAL_RELEASE["url"]
    assert len(tl.OFFICIAL_RELEASE["sha256"]) == 64


def test_cli_download(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from trl_sandbox import cli

    body = b"// header\n"
    monkeypatch.setattr(tl.urllib.request, "urlopen", lambda url, timeout: _Response(body))
    monkeypatch.setitem(tl.OFFICIAL_RELEASE, "sha256", hashlib.sha256(body).hexdigest())
    assert cli.main(["testlib", "download", "--dest", str(tmp_path / "h" / "testlib.h")]) == 0
    printed = capsys.readouterr().out
    assert f"export {tl.TESTLIB_ENV}=" in printed and "sandbox_testlib_header" in printed
    monkeypatch.setitem(tl.OFFICIAL_RELEASE, "sha256", "1" * 64)
    assert cli.main(["testlib", "download", "--dest", str(tmp_path / "x.h")]) == 2
    assert "refusing" in capsys.readouterr().err
