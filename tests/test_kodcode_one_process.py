"""KodCode's tests and ``solution.py`` are ONE Python process in the official harness (``KodCode-AI/kodcode``
``pipeline/run_test.sh``: ``pytest`` in the directory holding both files, a pass when it exits 0). trl-sandbox keeps the
program in a worker process of its own, and makes values crossing between the two behave as in that one process:
an object that crosses and comes back is the same object, a change to any crossed object (at any depth) or to the
program's module state is seen on the other side after every call, values keep their types, and process-wide state
the tests set or read (warnings, logging, ``random``'s seed, ``sys.stdin``) is bridged.

Each case is a row as ``KodCode/KodCode-V1`` publishes it, scored through ``code_reward`` as TRL calls it, with a
program the official single process passes (reward 1.0) and one it fails (a lower reward). The comment of each case
says what the official process does.
"""

from __future__ import annotations

import zlib

import pytest

from tests._official import trl_rewards
from tests.test_official_kodcode import kodcode_row

#: name -> (test file, entry function, a program the one process passes, one it fails)
CASES: dict[str, tuple[str, str, str, str]] = {
    # -- 1. identity and aliasing: the program's wrong answers that two processes used to pay ----------------------
    "returns_a_new_list": (
        "from solution import sort_copy\n\n\ndef test_new_list():\n    lst = [3, 1, 2]\n"
        "    result = sort_copy(lst)\n    assert result == [1, 2, 3]\n    assert result is not lst\n"
        "    assert lst == [3, 1, 2]\n",
        "sort_copy",
        "def sort_copy(lst):\n    return sorted(lst)\n",
        # sorts in place and returns its argument: `result is lst`
        "def sort_copy(lst):\n    lst.sort()\n    return lst\n"),
    "returns_its_argument": (
        "from solution import add_item\n\n\ndef test_same_list():\n    items = [1]\n"
        "    assert add_item(items, 2) is items\n    assert items == [1, 2]\n",
        "add_item",
        "def add_item(items, x):\n    items.append(x)\n    return items\n",
        "def add_item(items, x):\n    return items + [x]\n"),
    "deep_copy": (
        "from solution import deep_copy_grid\n\n\ndef test_deep_copy():\n    grid = [[1, 2], [3, 4]]\n"
        "    copy = deep_copy_grid(grid)\n    copy[0][0] = 99\n    assert grid == [[1, 2], [3, 4]]\n"
        "    assert copy == [[99, 2], [3, 4]]\n",
        "deep_copy_grid",
        "def deep_copy_grid(grid):\n    return [list(row) for row in grid]\n",
        # a shallow copy shares its rows with the argument
        "def deep_copy_grid(grid):\n    return list(grid)\n"),
    "getter_does_not_expose_state": (
        "from solution import Inventory\n\n\ndef test_items_is_a_copy():\n    inv = Inventory()\n    inv.add('a')\n"
        "    inv.items().append('hacked')\n    assert inv.items() == ['a']\n",
        "Inventory",
        "class Inventory:\n    def __init__(self):\n        self._items = []\n\n    def add(self, x):\n"
        "        self._items.append(x)\n\n    def items(self):\n        return list(self._items)\n",
        "class Inventory:\n    def __init__(self):\n        self._items = []\n\n    def add(self, x):\n"
        "        self._items.append(x)\n\n    def items(self):\n        return self._items\n"),
    "constructor_copies_its_argument": (
        "from solution import Playlist\n\n\ndef test_copies():\n    songs = ['a', 'b']\n    p = Playlist(songs)\n"
        "    songs.append('c')\n    assert p.songs() == ['a', 'b']\n",
        "Playlist",
        "class Playlist:\n    def __init__(self, songs):\n        self._songs = list(songs)\n\n"
        "    def songs(self):\n        return list(self._songs)\n",
        "class Playlist:\n    def __init__(self, songs):\n        self._songs = songs\n\n"
        "    def songs(self):\n        return list(self._songs)\n"),
    "default_config_is_not_mutated": (
        "from solution import get_config\n\n\ndef test_default_untouched():\n    config = get_config()\n"
        "    config['debug'] = True\n    assert get_config()['debug'] is False\n",
        "get_config",
        "DEFAULTS = {'debug': False}\n\n\ndef get_config():\n    return dict(DEFAULTS)\n",
        "DEFAULTS = {'debug': False}\n\n\ndef get_config():\n    return DEFAULTS\n"),
    "numpy_input_not_modified": (
        "import numpy as np\nfrom solution import sorted_array\n\n\ndef test_input_kept():\n"
        "    a = np.array([3, 1, 2])\n    assert sorted_array(a).tolist() == [1, 2, 3]\n"
        "    assert a.tolist() == [3, 1, 2]\n",
        "sorted_array",
        "import numpy as np\n\n\ndef sorted_array(a):\n    return np.sort(a)\n",
        "def sorted_array(a):\n    a.sort()\n    return a\n"),
    "mutation_at_depth_is_seen": (
        "from solution import pad_rows\n\n\ndef test_rows_padded_in_place():\n    grid = [[1], [2, 3]]\n"
        "    first = grid[0]\n    pad_rows(grid)\n    assert first == [1, 0]\n    assert grid == [[1, 0], [2, 3]]\n",
        "pad_rows",
        "def pad_rows(grid):\n    width = max(len(r) for r in grid)\n    for row in grid:\n"
        "        row.extend([0] * (width - len(row)))\n",
        # rebuilds the rows: `first` is not padded
        "def pad_rows(grid):\n    width = max(len(r) for r in grid)\n"
        "    grid[:] = [r + [0] * (width - len(r)) for r in grid]\n"),
    "large_list_sorted_in_place": (  # over TWIN_MAX_ITEMS: a copy, its changes copied back after the call
        "from solution import sort_in_place\n\n\ndef test_large():\n    xs = list(range(20000, 0, -1))\n"
        "    assert sort_in_place(xs) is None\n    assert xs[:3] == [1, 2, 3] and xs[-1] == 20000\n",
        "sort_in_place",
        "def sort_in_place(xs):\n    xs.sort()\n",
        "def sort_in_place(xs):\n    xs = sorted(xs)\n"),
    "module_state_after_calls": (
        "import solution\nfrom solution import record\n\n\ndef test_counter():\n    record('a')\n    record('b')\n"
        "    assert solution.count == 2\n    assert solution.seen == ['a', 'b']\n",
        "record",
        "count = 0\nseen = []\n\n\ndef record(x):\n    global count\n    count += 1\n    seen.append(x)\n",
        "count = 0\nseen = []\n\n\ndef record(x):\n    seen.append(x)\n"),
    # -- 2. numpy scalars keep their types ---------------------------------------------------------------------------
    "numpy_scalar_is_not_int": (
        "import numpy as np\nfrom solution import total\n\n\ndef test_plain_int():\n"
        "    result = total(np.array([1, 2, 3]))\n    assert result == 6\n    assert isinstance(result, int)\n",
        "total",
        "def total(a):\n    return int(a.sum())\n",
        "def total(a):\n    return a.sum()\n"),
    "numpy_bool_identity": (
        "import numpy as np\nfrom solution import all_positive\n\n\ndef test_numpy_bool():\n"
        "    assert all_positive(np.array([1, 2])) is np.True_\n",
        "all_positive",
        "import numpy as np\n\n\ndef all_positive(a):\n    return np.all(a > 0)\n",
        "def all_positive(a):\n    return bool((a > 0).all())\n"),
    # -- 3. doctest.testmod(solution) finds the program's examples ---------------------------------------------------
    "doctest_testmod": (
        "import doctest\nimport solution\n\n\ndef test_doctests():\n    result = doctest.testmod(solution)\n"
        "    assert result.attempted == 2\n    assert result.failed == 0\n",
        "square",
        "def square(x):\n    \"\"\"\n    >>> square(3)\n    9\n    >>> square(-2)\n    4\n    \"\"\"\n"
        "    return x * x\n",
        "def square(x):\n    \"\"\"\n    >>> square(3)\n    9\n    >>> square(-2)\n    4\n    \"\"\"\n"
        "    return x + x\n"),
    # -- 4. correct programs that two processes used to fail -------------------------------------------------------
    "solution_defines_test_functions": (
        "from solution import *\n\n\ndef test_double():\n    assert double(4) == 8\n",
        "double",
        "def double(x):\n    return 2 * x\n\n\ndef test_double():\n    assert double(1) == 2\n\n\n"
        "def test_double_zero():\n    assert double(0) == 0\n",
        # its own test fails: in the one process, pytest collects it through the star import and exits 1
        "def double(x):\n    return 2 * x\n\n\ndef test_double_negative():\n    assert double(-1) == 2\n"),
    "writes_in_the_working_directory": (
        "import os\nfrom solution import count_lines\n\n\ndef test_file_in_cwd():\n"
        "    with open('data.txt', 'w') as f:\n        f.write('a\\nb\\nc\\n')\n    try:\n"
        "        assert count_lines('data.txt') == 3\n    finally:\n        os.remove('data.txt')\n",
        "count_lines",
        "def count_lines(path):\n    with open(path) as f:\n        return sum(1 for _ in f)\n",
        "def count_lines(path):\n    with open(path) as f:\n        return len(f.read())\n"),
    "sets_attributes_of_the_tests_objects": (
        "from solution import reverse_list\n\n\nclass ListNode:\n    def __init__(self, val, next=None):\n"
        "        self.val = val\n        self.next = next\n\n\ndef to_list(node):\n    out = []\n"
        "    while node:\n        out.append(node.val)\n        node = node.next\n    return out\n\n\n"
        "def test_reverse():\n    head = ListNode(1, ListNode(2, ListNode(3)))\n"
        "    assert to_list(reverse_list(head)) == [3, 2, 1]\n",
        "reverse_list",
        "def reverse_list(head):\n    prev = None\n    while head:\n"
        "        head.next, prev, head = prev, head, head.next\n"
        "    return prev\n",
        "def reverse_list(head):\n    return head\n"),
    "pathlib_paths": (
        "from solution import write_greeting\n\n\ndef test_write(tmp_path):\n    target = tmp_path / 'hello.txt'\n"
        "    write_greeting(target, 'Ada')\n    assert target.read_text() == 'Hello, Ada!'\n",
        "write_greeting",
        "def write_greeting(path, name):\n    path.write_text(f'Hello, {name}!')\n",
        "def write_greeting(path, name):\n    path.write_text(f'Hi, {name}!')\n"),
    "queue_argument": (
        "import queue\nfrom solution import produce\n\n\ndef test_produce():\n    q = queue.Queue()\n"
        "    produce(q, 3)\n"
        "    assert [q.get_nowait() for _ in range(3)] == [0, 1, 2]\n    assert q.empty()\n",
        "produce",
        "def produce(q, n):\n    for i in range(n):\n        q.put(i)\n",
        "def produce(q, n):\n    for i in range(n + 1):\n        q.put(i)\n"),
    "compiled_pattern_argument": (
        "import re\nfrom solution import find_numbers\n\n\ndef test_pattern():\n    pattern = re.compile(r'\\d+')\n"
        "    assert find_numbers(pattern, 'a1b22c') == ['1', '22']\n",
        "find_numbers",
        "def find_numbers(pattern, text):\n    return pattern.findall(text)\n",
        "def find_numbers(pattern, text):\n    return [m.group() for m in pattern.finditer(text)][:1]\n"),
    "warnings_reach_pytest_warns": (
        "import pytest\nfrom solution import old_api\n\n\ndef test_deprecated():\n"
        "    with pytest.warns(DeprecationWarning, match='use new_api'):\n        assert old_api() == 1\n",
        "old_api",
        "import warnings\n\n\ndef old_api():\n"
        "    warnings.warn('old_api is deprecated: use new_api', DeprecationWarning)\n"
        "    return 1\n",
        "def old_api():\n    return 1\n"),
    "logging_reaches_caplog": (
        "import logging\nfrom solution import process\n\n\ndef test_logs(caplog):\n"
        "    with caplog.at_level(logging.INFO):\n        process([1, 2])\n"
        "    assert 'processed 2 items' in caplog.text\n"
        "    assert caplog.records[-1].levelname == 'INFO'\n",
        "process",
        "import logging\n\nlogger = logging.getLogger(__name__)\n\n\ndef process(items):\n"
        "    logger.info('processed %d items', len(items))\n    return len(items)\n",
        "import logging\n\nlogger = logging.getLogger(__name__)\n\n\ndef process(items):\n"
        "    logger.debug('processed %d items', len(items))\n    return len(items)\n"),
    "random_seed_in_the_test": (
        "import random\nfrom solution import roll\n\n\ndef test_seeded():\n    random.seed(7)\n"
        "    expected = [random.randint(1, 6) for _ in range(5)]\n"
        "    random.seed(7)\n    assert roll(5) == expected\n",
        "roll",
        "import random\n\n\ndef roll(n):\n    return [random.randint(1, 6) for _ in range(n)]\n",
        # seeds its own generator: not the test's sequence
        "import random\n\n\ndef roll(n):\n    random.seed(1234)\n"
        "    return [random.randint(1, 6) for _ in range(n)]\n"),
    "sys_stdin_set_by_the_test": (
        "import io\nimport sys\nfrom solution import read_sum\n\n\ndef test_stdin():\n    saved = sys.stdin\n"
        "    sys.stdin = io.StringIO('3\\n1 2 3\\n')\n    try:\n        assert read_sum() == 6\n    finally:\n"
        "        sys.stdin = saved\n",
        "read_sum",
        "def read_sum():\n    n = int(input())\n    return sum(map(int, input().split()[:n]))\n",
        "def read_sum():\n    return int(input())\n"),
    "namedtuple_methods": (
        "from solution import make_point\n\n\ndef test_point():\n    p = make_point(3, 4)\n    assert p == (3, 4)\n"
        "    assert p.norm() == 5.0\n",
        "make_point",
        "from typing import NamedTuple\n\n\nclass Point(NamedTuple):\n    x: int\n    y: int\n\n"
        "    def norm(self):\n        return (self.x ** 2 + self.y ** 2) ** 0.5\n\n\n"
        "def make_point(x, y):\n    return Point(x, y)\n",
        "from typing import NamedTuple\n\n\nclass Point(NamedTuple):\n    x: int\n    y: int\n\n"
        "    def norm(self):\n        return abs(self.x) + abs(self.y)\n\n\n"
        "def make_point(x, y):\n    return Point(x, y)\n"),
    "exception_attributes": (
        "import pytest\nfrom solution import withdraw, InsufficientFunds\n\n\ndef test_shortfall():\n"
        "    with pytest.raises(InsufficientFunds) as info:\n        withdraw(10, 25)\n"
        "    assert info.value.shortfall == 15\n",
        "withdraw",
        "class InsufficientFunds(Exception):\n    def __init__(self, shortfall):\n"
        "        super().__init__(f'short by {shortfall}')\n        self.shortfall = shortfall\n\n\n"
        "def withdraw(balance, amount):\n    if amount > balance:\n        raise InsufficientFunds(amount - balance)\n"
        "    return balance - amount\n",
        "class InsufficientFunds(Exception):\n    def __init__(self, shortfall):\n"
        "        super().__init__(f'short by {shortfall}')\n        self.shortfall = shortfall\n\n\n"
        "def withdraw(balance, amount):\n    if amount > balance:\n        raise InsufficientFunds(amount)\n"
        "    return balance - amount\n"),
    "pandas_categorical": (
        "import pandas as pd\nfrom solution import as_category\n\n\ndef test_category():\n"
        "    s = as_category(pd.Series(['b', 'a', 'b']))\n    assert s.dtype == 'category'\n"
        "    assert list(s.cat.categories) == ['a', 'b']\n",
        "as_category",
        "def as_category(s):\n    return s.astype('category')\n",
        "def as_category(s):\n    return s.astype(str)\n"),
    "generator_type": (
        "import inspect\nimport types\nfrom solution import squares\n\n\ndef test_lazy():\n    g = squares(3)\n"
        "    assert isinstance(g, types.GeneratorType)\n    assert inspect.isgenerator(g)\n"
        "    assert list(g) == [0, 1, 4]\n",
        "squares",
        "def squares(n):\n    for i in range(n):\n        yield i * i\n",
        "def squares(n):\n    return [i * i for i in range(n)]\n"),
    "inspect_getsource": (
        "import inspect\nfrom solution import my_sort\n\n\ndef test_no_builtin_sort():\n"
        "    source = inspect.getsource(my_sort)\n    assert 'def my_sort' in source\n"
        "    assert 'sorted(' not in source\n"
        "    assert my_sort([2, 1]) == [1, 2]\n",
        "my_sort",
        "def my_sort(xs):\n    xs = list(xs)\n    for i in range(len(xs)):\n        for j in range(len(xs) - 1 - i):\n"
        "            if xs[j] > xs[j + 1]:\n                xs[j], xs[j + 1] = xs[j + 1], xs[j]\n    return xs\n",
        "def my_sort(xs):\n    return sorted(xs)\n"),
}


def row_of(name: str, test: str, entry: str, solution: str) -> dict:
    """A KodCode-V1 row for case ``name`` (its question id made from the name)."""
    return kodcode_row(f"Prefill_{zlib.crc32(name.encode()) % 90000 + 10000}_I", f"Implement {entry}.", solution, test,
                       entry, "(*args)")


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_program_behaves_as_in_the_tests_process(scorer, name):
    test, entry, passes, fails = CASES[name]
    rewards = trl_rewards(scorer, row_of(name, test, entry, passes), [passes, fails])
    assert rewards[0] == 1.0, (name, rewards)
    assert rewards[1] is not None and rewards[1] < 1.0, (name, rewards)


# -- what the crossing gives the program is no way out of its verdict (a review's attacks, each one a wrong program) --

_SKIPPED = "class Skipped(BaseException):\n    pass\n\n\nSkipped.__module__ = '_pytest.outcomes'\n\n\n"
DOUBLE = "from solution import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
ATTACKS: dict[str, tuple[str, str, str]] = {
    # docstring examples that look for the judge's record channel and end the process: they run in the worker
    # (doctest's runner sends the program's examples there), where neither exists
    "doctest_forges_records": (
        "import doctest\nimport solution\nfrom solution import double\n\n\ndef test_doc():\n"
        "    assert doctest.testmod(solution).failed == 0\n\n\ndef test_double():\n    assert double(2) == 4\n",
        "double",
        "def double(x):\n    \"\"\"\n    >>> import gc, os\n"
        "    >>> emit = [f for f in gc.get_objects() if type(f).__name__ == "
        "'function' and f.__code__.co_name == '<lambda>'][0]\n    >>> for i in range(2): emit({'i': i, 'ok': True})\n"
        "    >>> os._exit(0)\n    \"\"\"\n    return 0\n"),
    # an exception class named like pytest's Skipped, raised while pytest collects the program's object: never
    # pytest's own, so the file is not skipped whole (that would be invalid_task, a None reward)
    "skipped_at_collection": (
        DOUBLE, "double",
        _SKIPPED + "class T:\n    __test__ = True\n\n    def __call__(self, x):\n        return 0\n\n"
        "    def __getattr__(self, name):\n        if name == '__func__':\n            raise Skipped('nothing')\n"
        "        raise AttributeError(name)\n\n\ndouble = T()\n"),
    # a warning whose class derives from that Skipped, under filterwarnings("error"): raised as a plain warning
    "warning_that_skips": (
        "import pytest\nfrom solution import double\n\n\n@pytest.mark.filterwarnings('error')\ndef test_double():\n"
        "    assert double(2) == 4\n",
        "double",
        "import warnings\n\n" + _SKIPPED + "class Evil(Skipped, UserWarning):\n    pass\n\n\n"
        "def double(x):\n    warnings.warn('x', Evil)\n    return 0\n"),
    # the program's own test function asking for the tests' fixture by name: it gets no fixture
    "test_function_takes_fixtures": (
        "import pytest\nfrom solution import *\n\n\n@pytest.fixture\ndef cases():\n    return [(2, 7), (3, 11)]\n\n\n"
        "def test_mystery(cases):\n    for x, y in cases:\n        assert mystery(x) == y\n",
        "mystery",
        "TABLE = {}\n\n\ndef test_zz(cases):\n    TABLE.update(dict(cases))\n\n\ndef mystery(x):\n"
        "    return TABLE.get(x, 0)\n"),
    # numpy's global generator set past its key: the judge does not take that state (it would crash reading it)
    "numpy_state_out_of_bounds": (
        "import numpy as np\nfrom solution import double\n\n\ndef test_double():\n"
        "    x = int(np.random.randint(1, 10))\n    assert double(x) == 2 * x\n\n\ndef test_again():\n"
        "    x = int(np.random.randint(1, 10))\n    assert double(x) == 2 * x\n",
        "double",
        "import numpy as np\n\n\ndef double(x):\n    name, keys, pos, g, c = np.random.get_state(legacy=True)\n"
        "    np.random.set_state((name, keys, 2 ** 30, 0, 0.0))\n    return -1\n"),
    # resizing the test's array in place (the test holds a view of it): the program's failure, not the judge's crash
    "array_resized_in_place": (
        "import numpy as np\nfrom solution import f\n\n\ndef test_view():\n    a = np.zeros(3000)\n    v = a[:10]\n"
        "    assert f(a) == 1\n    assert v.sum() == 0\n",
        "f",
        "def f(a):\n    a.resize((2000000,), refcheck=False)\n    return 0\n"),
    # waiting on the test's empty queue: its test fails within its time, the next one runs
    "waits_on_an_empty_queue": (
        "import queue\nfrom solution import first\n\n\ndef test_empty():\n    assert first(queue.Queue()) is None\n\n\n"
        "def test_one():\n    q = queue.Queue()\n    q.put(5)\n    assert first(q) == 5\n",
        "first",
        "def first(q):\n    return q.get()\n"),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_the_crossing_is_no_way_out_of_the_verdict(scorer, name):
    test, entry, program = ATTACKS[name]
    (reward,) = trl_rewards(scorer, row_of(name, test, entry, program), [program])
    assert reward is not None and reward < 1.0, (name, reward)


# -- values the crossing must keep intact (the same review: each used to fail a correct program) -------------------

INTACT: dict[str, tuple[str, str, str]] = {
    # a dict whose keys are the tests' objects: decoding it hashes them (requests in the middle of a message)
    "dict_of_test_objects": (
        "from solution import count\n\n\nclass Key:\n    def __init__(self, v):\n        self.v = v\n\n"
        "    def __hash__(self):\n        return hash(self.v)\n\n    def __eq__(self, o):\n"
        "        return isinstance(o, Key) and o.v == self.v\n\n\ndef test_count():\n"
        "    d = {Key(1): 'a', Key(2): 'b'}\n    assert count(d) == 2\n    assert len(d) == 2\n",
        "count", "def count(d):\n    return len(d)\n"),
    # a frozenset of the program's objects beside a list it forgets at once
    "frozenset_of_program_objects": (
        "from solution import f\n\n\ndef test_pair():\n    keys, items = f()\n    assert len(keys) == 1\n"
        "    assert items == [1, 2]\n",
        "f",
        "class P:\n    def __init__(self, v):\n        self.v = v\n\n    def __hash__(self):\n"
        "        return hash(self.v)\n\n"
        "    def __eq__(self, o):\n        return isinstance(o, P) and o.v == self.v\n\n\n"
        "def f():\n    return frozenset({P(1)}), [1, 2]\n"),
    # a ragged array (an array of arrays)
    "array_of_arrays": (
        "import numpy as np\nfrom solution import f\n\n\ndef test_ragged():\n    r = f()\n    assert len(r) == 2\n"
        "    assert list(r[0]) == [1, 2]\n",
        "f",
        "import numpy as np\n\n\ndef f():\n    out = np.empty(2, dtype=object)\n    out[0] = np.array([1, 2])\n"
        "    out[1] = np.array([3])\n    return out\n"),
    # a warning issued as from a FIFO the program made: shown from the program's source, never read from that file
    "warning_from_a_fifo": (
        DOUBLE, "double",
        "import os\nimport warnings\n\n\ndef double(x):\n    if not os.path.exists('fifo'):\n"
        "        os.mkfifo('fifo')\n"
        "    warnings.warn_explicit('hi', UserWarning, 'fifo', 1)\n    return 2 * x\n"),
}


@pytest.mark.parametrize("name", sorted(INTACT))
def test_the_crossing_keeps_values_intact(scorer, name):
    test, entry, program = INTACT[name]
    assert trl_rewards(scorer, row_of(name, test, entry, program), [program]) == [1.0], name
