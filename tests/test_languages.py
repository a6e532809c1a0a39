"""Completions in C++, C, Java, JavaScript and Rust: compiled and run in the sandbox, judged as Python ones are.

The rows are code_contests rows as published (``tests/test_formats.py``); the completions are written as models
write them (prose around a tagged code fence). A toolchain missing on this machine skips its language, except in CI
(``CI`` set), where ``.ci/toolchains`` installs them all and a missing one fails.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from trl_sandbox import SandboxConfig, Scorer, Task
from trl_sandbox.errors import ConfigurationError, TaskFormatError
from trl_sandbox.languages import (
    LANGUAGES,
    build_spec,
    completion_language,
    fence_language,
    java_classes,
    language_named,
    row_language,
    solutions_language,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_formats import CODE_CONTESTS

# code_contests rows publish Python, C++ and Java solutions side by side: the completion's fence decides.
ROW = {**CODE_CONTESTS, "solutions": {"language": [2, 3, 4], "solution": ["", "", ""]}}

PROGRAMS = {
    "cpp": {
        "right": "#include <bits/stdc++.h>\nusing namespace std;\nint main() {\n  long long n; cin >> n;\n"
                 "  cout << (n % 2 == 0 ? \"YES\" : \"NO\") << endl;\n}\n",
        "wrong": "#include <iostream>\nint main() { std::cout << \"YES\\n\"; }\n",
        "compile_error": "#include <iostream>\nint main() { std::cout << n; }\n",
        "timeout": "int main() { volatile long x = 0; while (true) x++; }\n",
    },
    "c": {
        "right": "#include <stdio.h>\nint main(void) { long long n; scanf(\"%lld\", &n); "
                 "puts(n % 2 ? \"NO\" : \"YES\"); return 0; }\n",
        "wrong": "#include <stdio.h>\nint main(void) { puts(\"NO\"); return 0; }\n",
        "compile_error": "int main(void) { return undefined_name; }\n",
        "timeout": "#include <unistd.h>\nint main(void) { sleep(60); return 0; }\n",
    },
    "java": {
        # The class with main is not called Main (as Kattis and Codeforces accept), and the file is named after it.
        "right": "import java.util.*;\n\npublic class TheatreSquare {\n  public static void main(String[] args) {\n"
                 "    Scanner in = new Scanner(System.in);\n    long n = in.nextLong();\n"
                 "    System.out.println(n % 2 == 0 ? \"YES\" : \"NO\");\n  }\n}\n",
        "wrong": "class Solution {\n  public static void main(String[] args) { System.out.println(\"YES\"); }\n}\n",
        "compile_error": "public class Main {\n  public static void main(String[] args) { int x = \"s\"; }\n}\n",
        "timeout": "public class Main {\n  public static void main(String[] args) { while (true) {} }\n}\n",
    },
    "javascript": {
        "right": "const n = Number(require('fs').readFileSync(0, 'utf8').trim());\n"
                 "console.log(n % 2 === 0 ? 'YES' : 'NO');\n",
        "wrong": "console.log('YES');\n",
        "compile_error": "console.log((;\n",
        "timeout": "while (true) {}\n",
    },
    "rust": {
        "right": "use std::io::Read;\nfn main() {\n    let mut s = String::new();\n"
                 "    std::io::stdin().read_to_string(&mut s).unwrap();\n    let n: i64 = s.trim().parse().unwrap();\n"
                 "    println!(\"{}\", if n % 2 == 0 { \"YES\" } else { \"NO\" });\n}\n",
        "wrong": "fn main() { println!(\"YES\"); }\n",
        "compile_error": "fn main() { let x: i32 = \"s\"; }\n",
        "timeout": "fn main() { loop { std::hint::spin_loop(); } }\n",
    },
}
EXPECTED = {"right": ("passed", 4, 1.0), "wrong": ("failed", 2, 0.5), "compile_error": ("compile_error", 0, -1.0),
            "timeout": ("timeout", 0, -1.0)}


def have(language: str) -> bool:
    return all(shutil.which(tool, path="/usr/local/bin:/usr/bin:/bin") for tool in LANGUAGES[language].toolchain)


def need(language: str) -> None:
    if not have(language):
        if os.environ.get("CI"):
            pytest.fail(f"CI must have the {language} toolchain ({LANGUAGES[language].install}; see .ci/toolchains)")
        pytest.skip(f"no {language} toolchain here ({LANGUAGES[language].install})")


def answer(language: str, code: str) -> str:
    tag = {"cpp": "cpp", "c": "c", "java": "java", "javascript": "js", "rust": "rust"}[language]
    return f"Read n and print YES when it is even.\n\n```{tag}\n{code}```\n\nThis runs in O(1)."


@pytest.fixture(scope="module")
def lang_scorer(sandbox_root):
    import glob
    import tempfile

    jvm_files = os.path.join(tempfile.gettempdir(), "hsperfdata_*")
    before = set(glob.glob(jvm_files))
    config = SandboxConfig(sandbox_pool_size=2, sandbox_test_timeout=2.0, sandbox_completion_timeout=20.0,
                           sandbox_backend_options={"root_dir": str(sandbox_root)})
    with Scorer.from_config(config) as scorer:
        yield scorer
    assert set(glob.glob(jvm_files)) == before, "a JVM left its perf data in the temporary directory"


# -- choosing the language -------------------------------------------------------------------------------------------


def test_language_names_and_aliases():
    assert [language_named(n).name for n in ("C++", "cpp", "g++", "Java", "js", "node", "rs", "python3", "py")] == [
        "cpp", "cpp", "cpp", "java", "javascript", "javascript", "rust", "python", "python"]
    with pytest.raises(ConfigurationError, match="unknown language 'cobol'; known: python, cpp, c, java"):
        language_named("cobol")
    with pytest.raises(ConfigurationError, match="unknown language"):
        SandboxConfig(sandbox_language="fortran")
    assert SandboxConfig(sandbox_language="C++").sandbox_language == "cpp"


def test_the_row_then_the_fence_then_the_config_then_the_solutions_decide():
    assert row_language({"language": "cpp"}) == "cpp"
    prime = {"verification_info": json.dumps({"language": "rust", "test_cases": []})}
    assert row_language(prime) == "rust"
    # code_contests' solutions are a guess (what humans wrote), not what the row asks for
    only_cpp = {"solutions": {"language": [2, 2], "solution": ["", ""]}}
    assert row_language(only_cpp) is None and solutions_language(only_cpp) == "cpp"
    assert solutions_language({"solutions": {"language": [4], "solution": [""]}}) == "java"
    assert solutions_language(ROW) is None  # Python, C++ and Java solutions: no guess
    with pytest.raises(TaskFormatError, match="unknown language 'brainfuck'"):
        row_language({"language": "brainfuck"})
    text = "First in Python:\n```python\nprint(1)\n```\nFaster in C++:\n```cpp\nint main(){}\n```\n"
    assert fence_language(text) == "cpp"
    assert fence_language("```\ncode\n```") is None
    assert completion_language("java", text) == "java"
    assert completion_language(None, text) == "cpp"
    assert completion_language(None, "no fence", "rust") == "rust"
    assert completion_language(None, "no fence") == "python"
    # the guess comes last: after the fence and after sandbox_language
    python = "```python\nprint(1)\n```"
    assert completion_language(None, python, None, "cpp") == "python"
    assert completion_language(None, "no fence", "python", "cpp") == "python"
    assert completion_language(None, "```\nint main(){}\n```", None, "cpp") == "cpp"
    assert Task.from_row({**ROW, "language": "java"}).language == "java"
    with pytest.raises(TaskFormatError, match="C\\+\\+ completions run stdin/stdout tasks only"):
        Task.from_row({"task_id": "t", "test_list": ["assert f() == 1"], "language": "cpp"})


def test_java_file_and_main_class():
    source = ("// public class Decoy {}\nimport java.io.*;\n/* class Hidden { public static void main } */\n"
              "class Helper { int x = '{'; }\npublic class Answer {\n  static class Runner {\n"
              "    public static void main(String[] a) {}\n  }\n}\n")
    assert java_classes(source) == ("Answer", "Answer$Runner")
    assert java_classes("class A {}\nclass B { public static void main(String[] a) { String s = \"}\"; } }") == (
        None, "B")
    spec = build_spec("java", 128 << 20, source)
    assert spec["source"] == "Answer.java" and spec["run"][-1] == "Answer$Runner" and "-Xmx128m" in spec["run"]
    assert build_spec("java", None, "class X {}")["source"] == "Main.java"
    assert build_spec("cpp")["compile"] == ["g++", "-O2", "-std=c++17", "-pipe", "-o", "main", "main.cpp"]


# -- scoring ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("language", list(PROGRAMS))
def test_code_contests_rows_in_each_language(language, lang_scorer):
    """Right, wrong (half the tests: code_contests' 4 tests, 2 of them odd), compile error and timeout, in each
    language; a compile error shows the compiler's message."""
    need(language)
    kinds = list(PROGRAMS[language])
    results = lang_scorer.score([Task.from_row(ROW)] * len(kinds),
                                [answer(language, PROGRAMS[language][k]) for k in kinds])
    got = {k: (r.status, r.tests_passed, r.reward) for k, r in zip(kinds, results)}
    assert got == {k: EXPECTED[k] for k in kinds}, [(k, r.error) for k, r in zip(kinds, results)]
    compile_error = results[kinds.index("compile_error")].error
    assert "error" in compile_error.lower() and "/runs/" not in compile_error, compile_error


# A real-valued problem with a declared tolerance (Kattis problemtools' default validator, `float_tolerance 1e-4`):
# a ratio a / b, printed at full precision. 49 * (1 / 49) is 0.9999999999999999 in doubles: C++ prints
# 0.99999999999999989, Java 0.9999999999999999, for an expected "1" (issue 36, item 12).
RATIO_ROW = {"task_id": "kattis-style-ratio", "inputs": ["49 49\n", "5 2\n", "1 3\n"],
             "outputs": ["1\n", "2.5\n", "0.333333333\n"], "time_limit": 1.0,
             "compare": {"mode": "float", "tolerance": 1e-4}}
RATIO = {
    "cpp": "#include <cstdio>\n\nint main() {\n  double a, b;\n  if (scanf(\"%lf %lf\", &a, &b) != 2) return 1;\n"
           "  printf(\"%.17g\\n\", a * (1.0 / b));\n  return 0;\n}\n",
    "java": "import java.util.Scanner;\n\npublic class Ratio {\n  public static void main(String[] args) {\n"
            "    Scanner in = new Scanner(System.in);\n    double a = in.nextDouble(), b = in.nextDouble();\n"
            "    System.out.println(a * (1.0 / b));\n  }\n}\n",
}


@pytest.mark.parametrize("language", list(RATIO))
def test_a_declared_tolerance_accepts_a_real_value_for_an_expected_integer(language, lang_scorer):
    """Kattis accepts these submissions (every number within 1e-4, "1" included); so does the row's float judge. The
    same program printing a / b + 0.001 is wrong on every test."""
    need(language)
    off = RATIO[language].replace("a * (1.0 / b)", "a * (1.0 / b) + 0.001")
    completions = [f"Multiply a by the inverse of b:\n\n```{language}\n{code}```\n\nPrinted at full precision."
                   for code in (RATIO[language], off)]
    results = lang_scorer.score([Task.from_row(RATIO_ROW)] * 2, completions)
    assert [(r.status, r.tests_passed) for r in results] == [("passed", 3), ("failed", 0)], [r.error for r in results]


def test_the_row_language_runs_a_completion_without_a_fence(lang_scorer):
    need("cpp")
    task = Task.from_row({**ROW, "language": "c++"})
    (result,) = lang_scorer.score([task], [PROGRAMS["cpp"]["right"]])
    assert result.status == "passed", result.error


def test_sandbox_language_is_the_default_for_untagged_completions(sandbox_root):
    need("cpp")
    config = SandboxConfig(sandbox_pool_size=1, sandbox_language="cpp",
                           sandbox_backend_options={"root_dir": str(sandbox_root)})
    with Scorer.from_config(config) as scorer:
        results = scorer.score([Task.from_row(ROW)] * 2, [PROGRAMS["cpp"]["right"],
                                                          "```python\nn = int(input())\nprint('YES' if n % 2 == 0 else 'NO')\n```"])
    assert [r.status for r in results] == ["passed", "passed"]


#: A code_contests row as published whose solutions are all C++ (``solutions.language`` 2: ``CPP`` in
#: ``contest_problem.proto``): many older problems are so.
CPP_ONLY = {**CODE_CONTESTS, "solutions": {"language": [2, 2], "solution": [PROGRAMS["cpp"]["right"]] * 2}}
PYTHON_RIGHT = "n = int(input())\nprint('YES' if n % 2 == 0 else 'NO')\n"


def test_a_python_fence_beats_the_language_of_the_published_solutions(lang_scorer):
    """Issue 36 item 5: a ```python completion on a row whose solutions are all C++ runs as Python (it was compiled
    as C++: ``compile_error``, -1.0); an untagged fence or no fence at all takes the guess, C++."""
    need("cpp")
    task = Task.from_row(CPP_ONLY)
    assert task.language is None and task.solutions_language == "cpp"
    completions = [f"In Python:\n\n```python\n{PYTHON_RIGHT}```\n", f"```py\n{PYTHON_RIGHT}```",
                   f"```\n{PROGRAMS['cpp']['right']}```", PROGRAMS["cpp"]["right"],
                   f"```\n{PYTHON_RIGHT}```"]
    results = lang_scorer.score([task] * len(completions), completions)
    assert [(r.status, r.reward) for r in results] == [
        ("passed", 1.0), ("passed", 1.0), ("passed", 1.0), ("passed", 1.0), ("compile_error", -1.0)], [
        r.error for r in results]


def test_sandbox_language_beats_the_language_of_the_published_solutions(sandbox_root):
    """A user who sets ``sandbox_language`` is never overruled by the guess; the chat prompt asks for the same."""
    from trl_sandbox.prompts import problem_prompt

    config = SandboxConfig(sandbox_pool_size=1, sandbox_language="python",
                           sandbox_backend_options={"root_dir": str(sandbox_root)})
    with Scorer.from_config(config) as scorer:
        (result,) = scorer.score([Task.from_row(CPP_ONLY)], [f"```\n{PYTHON_RIGHT}```"])
    assert (result.status, result.reward) == ("passed", 1.0), result.error
    assert "Write a Python program" in problem_prompt(CPP_ONLY, language="python")
    assert "Write a C++ program" in problem_prompt(CPP_ONLY)  # nothing said: the guess
    assert SandboxConfig().sandbox_language is None


def test_identical_programs_of_a_task_compile_once_per_batch(lang_scorer, monkeypatch):
    """GRPO's generations of one prompt often repeat: 4 identical C++ completions and one other cost 2 executions."""
    need("cpp")
    executions = []
    real_exec = lang_scorer.pool.backend.exec

    async def counting_exec(sandbox, argv, **kwargs):
        executions.append(1)
        return await real_exec(sandbox, argv, **kwargs)

    monkeypatch.setattr(lang_scorer.pool.backend, "exec", counting_exec)
    same = answer("cpp", PROGRAMS["cpp"]["right"])
    results = lang_scorer.score([Task.from_row(ROW)] * 5, [same, same, answer("cpp", PROGRAMS["cpp"]["wrong"]),
                                                          same, same])
    assert [r.status for r in results] == ["passed", "passed", "failed", "passed", "passed"]
    assert len(executions) == 2


def test_memory(lang_scorer):
    """Past the row's limit fails (C++ measured by peak RSS); Java's and JavaScript's runtimes get room to reserve
    address space, so a program that uses 120 MB under a 256 MB limit passes."""
    row = {**ROW, "public_tests": {"input": ["4\n"], "output": ["YES\n"]}, "private_tests": {"input": [], "output": []},
           "generated_tests": {"input": [], "output": []}, "memory_limit_bytes": 256 << 20}
    programs = []
    if have("cpp"):
        programs += [
            ("cpp", "#include <bits/stdc++.h>\nint main(){ std::vector<char> v(600u<<20, 1); long long n; "
                    "std::cin>>n; std::cout<<(v[12345]+n%2==1?\"YES\":\"NO\")<<\"\\n\"; }\n", False),
            ("cpp", "#include <bits/stdc++.h>\nint main(){ std::vector<char> v(100u<<20, 1); "
                    "std::cout<<(v[7]==1?\"YES\":\"NO\")<<\"\\n\"; }\n", True)]
    if have("java"):
        programs.append(("java", "public class Main { public static void main(String[] a) { "
                                 "long[][] b = new long[15][1<<20]; b[3][9] = 1; "
                                 "System.out.println(b[3][9] == 1 ? \"YES\" : \"NO\"); } }\n", True))
    if have("javascript"):
        programs.append(("javascript", "const a = []; for (let i = 0; i < 15; i++) a.push(new Float64Array(1 << 20)"
                                       ".fill(1)); console.log(a[14][5] === 1 ? 'YES' : 'NO');\n", True))
    if not programs:
        need("cpp")
    results = lang_scorer.score([Task.from_row(row)] * len(programs), [answer(lang, code) for lang, code, _ in programs])
    got = [(lang, r.status == "passed") for (lang, _, _), r in zip(programs, results)]
    assert got == [(lang, ok) for lang, _, ok in programs], [(r.status, r.error) for r in results]


def test_a_missing_toolchain_is_one_message_and_no_reward(lang_scorer, monkeypatch):
    """Not the model's fault: ``invalid_task`` (reward None), with what to install."""
    import dataclasses

    from trl_sandbox import languages

    fake = dataclasses.replace(LANGUAGES["rust"], compile=("rustc-not-installed", "-o", "main", "{source}"),
                               toolchain=("rustc-not-installed",), install="apt-get install rustc")
    monkeypatch.setitem(languages.LANGUAGES, "rust", fake)
    (result,) = lang_scorer.score([Task.from_row(ROW)], [answer("rust", PROGRAMS["rust"]["right"])])
    assert result.status == "invalid_task" and result.reward is None
    assert "no Rust toolchain (rustc-not-installed not found)" in result.error
    assert "apt-get install rustc" in result.error


def test_the_reward_as_trl_calls_it(lang_scorer):
    """``code_reward`` with code_contests' columns as keyword arguments and conversational completions."""
    need("cpp")
    from trl_sandbox.rewards import CodeReward

    reward = CodeReward().bind(lang_scorer)
    columns = {k: [v, v] for k, v in ROW.items()}
    completions = [[{"role": "assistant", "content": answer("cpp", PROGRAMS["cpp"][k])}] for k in ("right", "wrong")]
    prompt = [{"role": "user", "content": ROW["description"]}]
    assert reward(prompts=[prompt, prompt], completions=completions, **columns) == [1.0, 0.5]


def test_load_tasks_asks_for_a_language():
    """``load_tasks(..., language="cpp", chat=True)``: the rows carry the language (the reward reads it) and the
    prompts ask for a C++ program in a cpp fence; Python is asked for otherwise."""
    from trl_sandbox import load_tasks

    (row,) = load_tasks([ROW], chat=True, language="C++")
    assert row["language"] == "cpp" and Task.from_row(row).language == "cpp"
    text = row["prompt"][-1]["content"]
    assert "Write a C++ program that reads the input from standard input" in text and "```cpp code block" in text
    (plain,) = load_tasks([ROW], chat=True)
    assert "Write a Python program" in plain["prompt"][-1]["content"] and "language" not in plain
    with pytest.raises(TaskFormatError, match="unknown language 'fortran'"):
        load_tasks([ROW], language="fortran")


def check_remote_languages(config):
    """C++ and Java completions on a code_contests row through a remote backend's API (``config(**overrides)`` makes
    its ``SandboxConfig``; the fake services run the harness in local sandboxes): the harness compiles and runs them
    in the remote sandbox with the same judge; a compile error is ``compile_error``. Which images carry which
    toolchains is the user's choice (see docs/languages.md)."""
    need("cpp")
    need("java")
    task = Task.from_row(ROW)
    completions = [answer("cpp", PROGRAMS["cpp"]["right"]), answer("java", PROGRAMS["java"]["right"]),
                   answer("cpp", PROGRAMS["cpp"]["compile_error"])]
    with Scorer.from_config(config(sandbox_pool_size=2, sandbox_completion_timeout=20.0)) as scorer:
        results = scorer.score([task] * 3, completions)
    assert [(r.status, r.tests_passed) for r in results] == [("passed", 4), ("passed", 4), ("compile_error", 0)], [
        r.error for r in results]


@pytest.mark.parametrize("mode", [0o755, 0o700], ids=["readable", "private"])
def test_a_toolchain_linked_from_elsewhere_runs_when_the_sandbox_users_can_reach_it(mode, sandbox_root, monkeypatch):
    """A toolchain installed outside the system directories and linked onto the sandboxes' ``PATH`` (what
    ``.ci/toolchains`` does with a toolchain the user has, e.g. Node under ``/opt``): its prefix becomes readable to
    the sandboxes, and its completions are judged. Under a directory other users cannot search (a rustup toolchain
    under ``/root``), it is not offered: ``invalid_task``, not a wrong answer."""
    need("javascript")
    import dataclasses
    import tempfile

    from trl_sandbox import languages
    from trl_sandbox.backends import local

    home = Path(tempfile.mkdtemp(prefix="trl-sandbox-toolchain-"))
    try:
        (home / "opt" / "node" / "bin").mkdir(parents=True)
        node = home / "opt" / "node" / "bin" / "node"
        try:
            os.link(os.path.realpath(shutil.which("node", path="/usr/local/bin:/usr/bin:/bin")), node)
        except OSError:  # another file system
            shutil.copy2(os.path.realpath(shutil.which("node", path="/usr/local/bin:/usr/bin:/bin")), node)
        (home / "bin").mkdir()
        (home / "bin" / "their-node").symlink_to(node)
        home.chmod(mode)
        js = LANGUAGES["javascript"]
        fake = dataclasses.replace(js, compile=tuple("their-node" if a == "node" else a for a in js.compile),
                                   run=tuple("their-node" if a == "node" else a for a in js.run),
                                   toolchain=("their-node",))
        monkeypatch.setitem(languages.LANGUAGES, "javascript", fake)
        monkeypatch.setitem(local._BASE_ENV, "PATH", f"{home / 'bin'}:/usr/local/bin:/usr/bin:/bin")
        config = SandboxConfig(sandbox_pool_size=1, sandbox_test_timeout=5.0, sandbox_completion_timeout=60.0,
                               sandbox_backend_options={"root_dir": str(sandbox_root)})
        with Scorer.from_config(config) as scorer:
            results = scorer.score([Task.from_row(ROW)] * 2, [answer("javascript", PROGRAMS["javascript"][k])
                                                               for k in ("right", "wrong")])
        if mode == 0o755:
            assert [r.status for r in results] == ["passed", "failed"], [r.error for r in results]
        else:
            assert [r.status for r in results] == ["invalid_task"] * 2, [r.error for r in results]
            assert "cannot run its JavaScript toolchain (their-node: Permission denied)" in results[0].error
            assert results[0].reward is None
    finally:
        home.chmod(0o700)
        shutil.rmtree(home)


def test_a_toolchain_prefix_holding_data_is_never_made_readable(tmp_path, monkeypatch):
    """A ``node`` in a virtual environment's ``bin``: its prefix is the environment, whose ``site-packages`` may hold
    task data; nor a home directory, a tree holding a cache or credentials at any depth, or a directory right under
    ``/``: none is made readable (the sandboxes' Landlock list does not grow)."""
    from trl_sandbox.backends._toolchains import _extra_dirs, _unsafe_prefix, unusable_reason

    home = tmp_path / "home" / "alice"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "node").write_text("")
    monkeypatch.setenv("HOME", str(home))
    assert _extra_dirs("javascript", [str(home / "bin" / "node")], ("/usr", "/bin")) == []
    assert "home directory" in _unsafe_prefix(str(home))
    cached = tmp_path / "tools" / "node"
    (cached / "bin").mkdir(parents=True)
    (cached / "share" / "x" / ".cache" / "huggingface").mkdir(parents=True)
    (cached / "bin" / "node").write_text("")
    assert _extra_dirs("javascript", [str(cached / "bin" / "node")], ("/usr", "/bin")) == []
    assert "holds .cache" in _unsafe_prefix(str(cached))
    assert "right under it" in _unsafe_prefix("/opt")

    venv = tmp_path / "venv"
    (venv / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (venv / "bin").mkdir()
    tool = venv / "bin" / "node"
    tool.write_text("")
    tool.chmod(0o755)
    assert _extra_dirs("javascript", [str(tool)], ("/usr", "/bin")) == []
    opt = tmp_path / "opt" / "node"
    (opt / "bin").mkdir(parents=True)
    (opt / "bin" / "node").symlink_to(tool)
    (opt / "bin" / "rustc").write_text("")
    assert _extra_dirs("rust", [str(opt / "bin" / "rustc")], ("/usr", "/bin")) == [str(opt)]
    (opt / "bin" / "rustc").chmod(0o700)
    assert "not executable by other users" in unusable_reason(str(opt / "bin" / "rustc"))
