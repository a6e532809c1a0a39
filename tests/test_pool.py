"""Pool lifecycle with the mock backend: concurrent creation, cleanup on failure, replacement, deadlines."""

import anyio
import pytest

from trl_sandbox import InfrastructureError, SandboxCreationError, SandboxPool, Scorer, Task
from trl_sandbox.harness.archive import HARNESS_NAME
from trl_sandbox.testing import MockBackend, harness_reply

TASK = Task.from_row({"task_id": "m", "test_list": ["assert f() == 1", "assert f() == 1"]})


class CountingBackend(MockBackend):
    """Records the most creations in flight at once."""

    def __post_init__(self):
        super().__post_init__()
        self.in_flight = self.max_in_flight = 0

    async def create(self, labels):
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await super().create(labels)
        finally:
            self.in_flight -= 1


def test_pool_creates_concurrently_and_deletes_everything():
    backend = CountingBackend(create_latency_s=0.05)
    with SandboxPool(backend, size=8, labels={"run": "x"}) as pool:
        assert len(backend.live) == 8 and backend.max_in_flight == 8
        assert all(s.data[HARNESS_NAME] for s in backend.live.values())  # harness installed
        assert {s.labels["run"] for s in backend.live.values()} == {"x"}
    assert backend.live == {} and len(backend.deleted) == 8
    pool.close()  # idempotent


def test_partial_creation_failure_deletes_what_was_created():
    backend = MockBackend(fail_create=3)
    pool = SandboxPool(backend, size=6)
    with pytest.raises(SandboxCreationError, match="then deleted"):
        pool.start()
    assert backend.live == {} and len(backend.created) == 3


def test_run_has_a_deadline():
    with SandboxPool(MockBackend(), size=1) as pool:
        with pytest.raises(InfrastructureError, match="did not answer"):
            pool.run(anyio.sleep, 10, timeout_s=0.2)


def test_default_labels_say_who_owns_the_sandbox():
    backend = MockBackend()
    with SandboxPool(backend, size=1):
        (sandbox,) = backend.live.values()
    assert {"trl-sandbox", "trl-sandbox-run", "trl-sandbox-rank", "trl-sandbox-host", "trl-sandbox-created"} <= set(
        sandbox.labels
    )


def test_infra_error_is_retried_on_another_sandbox_then_none():
    calls = []

    def flaky(request):
        calls.append(request.sandbox.id)
        if request.harness is None:  # health check: this sandbox is dead
            raise InfrastructureError("sandbox died")
        if len(calls) == 1:
            raise InfrastructureError("sandbox died")
        return harness_reply(request, passed=True)

    backend = MockBackend(flaky)
    with Scorer(SandboxPool(backend, size=2)) as scorer:
        (result,) = scorer.score([TASK], ["def f(): return 1"])
        assert result.status == "passed" and result.reward == 1.0 and result.retries == 1
        assert scorer.pool.stats.deleted == 1  # the sandbox that failed its health check was deleted at once...
        results = scorer.score([TASK] * 2, ["def f(): return 1"] * 2)
        assert [r.status for r in results] == ["passed"] * 2
        assert scorer.pool.stats.replaced == 1 and len(backend.live) == 2  # ...and replaced when next needed
        backend.handler = lambda request: (_ for _ in ()).throw(InfrastructureError("down"))
        (result,) = scorer.score([TASK], ["def f(): return 1"])
    assert result.status == "infra_error" and result.reward is None
    assert backend.live == {}


def test_batch_deadline_cancels_a_hung_backend_and_gives_none():
    async def hang(request):
        await anyio.sleep(3600)

    with Scorer(SandboxPool(MockBackend(hang), size=2), batch_deadline_s=0.5) as scorer:
        results = scorer.score([TASK] * 3, ["def f(): return 1"] * 3)
    assert [r.status for r in results] == ["cancelled"] * 3 and all(r.reward is None for r in results)


def test_harness_that_never_starts_is_infra_not_wrong():
    from trl_sandbox.backends.base import ExecResult

    backend = MockBackend(lambda request: ExecResult(127, b"", b"python3: not found", 0.0))
    with Scorer(SandboxPool(backend, size=1)) as scorer:
        (result,) = scorer.score([TASK], ["def f(): return 1"])
    assert result.status == "infra_error" and result.reward is None


def test_concurrency_is_bounded_by_the_pool():
    state = {"now": 0, "max": 0}

    async def slow(request):
        state["now"] += 1
        state["max"] = max(state["max"], state["now"])
        await anyio.sleep(0.02)
        state["now"] -= 1
        return harness_reply(request, passed=[True, False])

    with Scorer(SandboxPool(MockBackend(slow), size=3)) as scorer:
        results = scorer.score([TASK] * 12, ["def f(): return 1"] * 12)
    assert state["max"] == 3 and all(r.reward == 0.5 for r in results)
