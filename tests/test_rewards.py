"""code_reward with TRL's calling convention, through the mock backend fixture."""

from trl_sandbox import CodeReward, InfrastructureError, SandboxConfig, Scorer, code_reward, load_tasks
from trl_sandbox.scoring import set_active_scorer
from trl_sandbox.testing import harness_reply, run_unsandboxed

ROWS = load_tasks("daytona")


def trl_kwargs(rows, n_generations):
    """What TRL passes: every column except prompt, repeated per generation, plus its own arguments."""
    repeated = [r for r in rows for _ in range(n_generations)]
    columns = {k: [r[k] for r in repeated] for k in rows[0] if k != "prompt"}
    metrics, extra = {}, {}
    columns.update(
        prompts=[r["prompt"] for r in repeated],
        completion_ids=[[1, 2]] * len(repeated),
        trainer_state=object(),
        log_metric=lambda k, v: metrics.setdefault(k, v),
        log_extra=lambda k, v: extra.setdefault(k, v),
    )
    return columns, metrics, extra


def test_code_reward_uses_the_fixture_backend(mock_sandbox_backend):
    mock_sandbox_backend.handler = run_unsandboxed  # trusted code below: run the real harness, unisolated
    sort_ok = "    out = []\n    for x in xs:\n        i = 0\n        while i < len(out) and out[i] < x:\n            i += 1\n        out.insert(i, x)\n    return out\n"
    kadane = "    best = cur = xs[0]\n    for x in xs[1:]:\n        cur = max(x, cur + x)\n        best = max(best, cur)\n    return best\n"
    kwargs, metrics, extra = trl_kwargs(ROWS, 2)
    completions = [sort_ok, "    return sorted(xs)\n", kadane, [{"role": "assistant", "content": "nonsense("}]]
    with Scorer.from_config(SandboxConfig(sandbox_backend="mock", sandbox_pool_size=2)) as scorer:
        rewards = CodeReward(scorer)(completions=completions, **kwargs)
    assert rewards == [1.0, -1.0, 1.0, -1.0]
    assert metrics["sandbox/pass_rate"] == 0.5 and metrics["sandbox/banned"] == 1.0
    assert extra["sandbox_status"] == ["passed", "banned", "passed", "error"]
    assert mock_sandbox_backend.live == {}


def test_infra_failure_is_none_not_minus_one(mock_sandbox_backend):
    def down(request):
        raise InfrastructureError("sandbox died")

    mock_sandbox_backend.handler = down
    kwargs, metrics, _ = trl_kwargs(ROWS[1:], 2)
    with Scorer.from_config(SandboxConfig(sandbox_backend="mock", sandbox_pool_size=2)) as scorer:
        rewards = code_reward.bind(scorer)(completions=["    return 1\n"] * 2, **kwargs)
    assert rewards == [None, None] and metrics["sandbox/infra_errors"] == 2.0


def test_unbound_code_reward_uses_the_active_scorer(mock_sandbox_backend):
    mock_sandbox_backend.handler = lambda request: harness_reply(request, passed=True)
    rows = [{"test_list": ["assert f() == 1"], "task_id": "a"}]
    scorer = Scorer.from_config(SandboxConfig(sandbox_backend="mock", sandbox_pool_size=1)).start()
    previous = set_active_scorer(scorer)
    try:
        assert code_reward(["def f(): return 1"], prompts=["write f"], test_list=[rows[0]["test_list"]]) == [1.0]
    finally:
        set_active_scorer(previous)
        scorer.close()


def test_malformed_rows_get_none_and_do_not_crash(mock_sandbox_backend):
    mock_sandbox_backend.handler = lambda request: harness_reply(request, passed=True)
    with Scorer.from_config(SandboxConfig(sandbox_backend="mock", sandbox_pool_size=1)) as scorer:
        rewards = CodeReward(scorer)(
            completions=["x = 1", "def f(): return 1"],
            prompts=["p", "p"],
            test_list=[None, ["assert f() == 1"]],
            unrelated=[1, 2],
        )
    assert rewards == [None, 1.0]
