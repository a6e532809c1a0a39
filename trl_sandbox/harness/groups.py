"""Which tests of a task with subtasks can still change its score (see ``trl_sandbox.subtasks`` on the host): the
request's ``groups`` (``[{"tests": [indices], "min": bool, "depends": [group positions]}]``) tell the judge which
tests belong to which subtask, and :class:`TestSkipper` says, before each test, whether any of its subtasks can
still earn from it. Skipped tests are not run and get no record: the host counts them 0, which is what they would
earn. Python 3.8 or later, standard library only (it runs in the sandbox)."""


def test_score(record):
    """A test's score in [0, 1] from its record: 1 when it passed, its checker's partial ``score`` else, 0."""
    if record.get("ok") is True:
        return 1.0
    score = record.get("score")
    if type(score) in (int, float) and score == score:
        return min(1.0, max(0.0, float(score)))
    return 0.0


class TestSkipper:
    """Follows the scores of the tests run so far. A subtask is done earning once it is a ``min`` subtask one of
    whose tests scored 0, or one of the subtasks it depends on lost a test (scored below 1); a test is needed while
    it belongs to no subtask, or to one not done, or to one that a subtask not done depends on (Polygon's
    dependencies are not transitive: C depending on B needs B's every test to pass even when B earns nothing)."""

    def __init__(self, groups, n_tests):
        self.groups = [g for g in groups if type(g) is dict]
        self.member = [[] for _ in range(n_tests)]
        for position, group in enumerate(self.groups):
            for index in group.get("tests") or ():
                if type(index) is int and 0 <= index < n_tests:
                    self.member[index].append(position)
        self.zero = [False] * len(self.groups)
        self.lost = [False] * len(self.groups)
        self.depends = [[d for d in group.get("depends") or () if type(d) is int and 0 <= d < len(self.groups)]
                        for group in self.groups]
        self.dependents = [[] for _ in self.groups]
        for position, depends in enumerate(self.depends):
            for d in depends:
                self.dependents[d].append(position)

    def _earning(self, position):
        return not self.zero[position] and not any(self.lost[d] for d in self.depends[position])

    def needed(self, index):
        """Whether test ``index`` may still change the score."""
        if index >= len(self.member) or not self.member[index]:
            return True
        for position in self.member[index]:
            if self._earning(position):
                return True
            if not self.lost[position] and any(self._earning(c) for c in self.dependents[position]):
                return True
        return False

    def ran(self, index, record):
        """Record the outcome of test ``index`` (its record)."""
        if index >= len(self.member):
            return
        score = test_score(record)
        for position in self.member[index]:
            if score < 1.0:
                self.lost[position] = True
            if score <= 0.0 and self.groups[position].get("min"):
                self.zero[position] = True


# -- Kattis test data groups (problemtools' TestCaseGroup, judge/submission_judge.py and default_grader) ----------
# A node: {"items": [test index | node, ...] (in the package's sorted order), "flags": [grader flags], "break": bool
# (on_reject: break), "accept": accept_score, "reject": reject_score}.

def _aggregate(node, verdicts, scores):
    """problemtools' default_grader on the judged children's ``verdicts`` (True: AC) and ``scores``: (AC, score)."""
    if not verdicts:
        return True, 0.0  # grade_group: no results is ('AC', 0.0)
    flags = node.get("flags") or ()
    if "ignore_sample" in flags:
        verdicts, scores = verdicts[-1:], scores[-1:]
    how, verdict_rule = "sum", "worst_error"
    for flag in flags:  # the last aggregator of each kind named wins, as the grader's loop over its flags
        if flag in ("sum", "avg", "max", "min"):
            how = flag
        if flag in ("worst_error", "no_errors", "first_error", "always_accept"):
            verdict_rule = flag
    # worst_error and first_error differ only in which error they name: either is AC only when every child is
    ac = verdict_rule == "always_accept" or all(verdicts) or ("accept_if_any_accepted" in flags and any(verdicts))
    if how == "avg":
        score = sum(scores) / len(scores)
    elif how == "max":
        score = max(scores)
    elif how == "min":
        score = min(scores)
    else:
        score = sum(scores)
    return ac, float(score)


def tree_outcome(node, results, stop_at=None):
    """The (AC, score) of ``node`` from the tests' ``results`` (index -> True when it passed; a test without a result
    fails), walking its items in order and, with ``break``, stopping after the first child that is not AC, as
    problemtools' ``SubmissionJudge._judge_group``. With ``stop_at`` (a test index), returns instead whether that test
    is judged, given the results of the tests before it."""
    verdicts, scores = [], []
    for item in node.get("items") or ():
        if type(item) is dict:
            if stop_at is not None and stop_at in tree_tests(item):
                return tree_outcome(item, results, stop_at)
            ac, score = tree_outcome(item, results)
        else:
            if stop_at is not None and item == stop_at:
                return True
            ac = results.get(item) is True
            score = float(node.get("accept", 1.0) if ac else node.get("reject", 0.0))
        verdicts.append(ac)
        scores.append(score)
        if not ac and node.get("break", True):
            if stop_at is not None:
                return False
            break
    if stop_at is not None:
        return False
    return _aggregate(node, verdicts, scores)


def tree_tests(node):
    """Every test index under ``node``, in order."""
    found = []
    for item in node.get("items") or ():
        found.extend(tree_tests(item) if type(item) is dict else [item])
    return found


class TreeSkipper:
    """:class:`TestSkipper`'s interface for a Kattis package's test data groups: a test is run only when problemtools
    judges it (no group with ``on_reject: break`` above it has a child before it that was not accepted)."""

    def __init__(self, tree):
        self.tree = tree
        self.results = {}

    def needed(self, index):
        return tree_outcome(self.tree, self.results, stop_at=index)

    def ran(self, index, record):
        self.results[index] = record.get("ok") is True
