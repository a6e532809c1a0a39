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
    it belongs to no subtask or to one not done."""

    def __init__(self, groups, n_tests):
        self.groups = [g for g in groups if type(g) is dict]
        self.member = [[] for _ in range(n_tests)]
        for position, group in enumerate(self.groups):
            for index in group.get("tests") or ():
                if type(index) is int and 0 <= index < n_tests:
                    self.member[index].append(position)
        self.zero = [False] * len(self.groups)
        self.lost = [False] * len(self.groups)

    def needed(self, index):
        """Whether test ``index`` may still change the score."""
        if index >= len(self.member) or not self.member[index]:
            return True
        for position in self.member[index]:
            group = self.groups[position]
            depends = [d for d in group.get("depends") or () if type(d) is int and 0 <= d < len(self.groups)]
            if not self.zero[position] and not any(self.lost[d] for d in depends):
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
