"""SandboxGRPOTrainer: pool lifecycle around train(), hung scoring, config parsing. Tiny CPU model, mock backend."""

import json
import random

import pytest

pytest.importorskip("trl")

from datasets import Dataset  # noqa: E402

from trl_sandbox import ConfigurationError, InfrastructureError, SandboxGRPOConfig, SandboxGRPOTrainer  # noqa: E402
from trl_sandbox.testing import harness_reply  # noqa: E402

ROWS = [{"task_id": f"t{i}", "prompt": f"Write f{i}.", "test_list": [f"assert f{i}() == {i}"] * 2} for i in range(4)]


def config(tmp_path, **overrides):
    values = dict(
        output_dir=str(tmp_path / "out"),
        use_cpu=True,
        bf16=False,
        report_to="none",
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=8,
        max_steps=2,
        logging_steps=1,
        save_strategy="no",
        sandbox_backend="mock",
        sandbox_pool_size=3,
    )
    values.update(overrides)
    return SandboxGRPOConfig(**values)


def test_pool_lives_exactly_as_long_as_training(tiny_model_dir, tmp_path, mock_sandbox_backend):
    seen = []

    def handler(request):
        seen.append(len(mock_sandbox_backend.live))
        return harness_reply(request, passed=[random.random() < 0.5, True])

    mock_sandbox_backend.handler = handler
    trainer = SandboxGRPOTrainer(model=tiny_model_dir, args=config(tmp_path), train_dataset=Dataset.from_list(ROWS))
    assert mock_sandbox_backend.live == {}  # nothing is created before training begins
    trainer.train()
    assert len(seen) == 8 and set(seen) == {3}  # 2 steps x 4 completions, all while the 3 sandboxes lived
    assert mock_sandbox_backend.live == {} and len(mock_sandbox_backend.created) == 3
    lines = (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()
    assert len(lines) >= 2 and '"sandbox/pass_rate"' in lines[0] and '"rewards/code_reward/mean"' in lines[0]
    from trl_sandbox.rewards import METRICS

    first = json.loads(lines[0])
    assert set(METRICS) <= set(first)  # every documented metric reached metrics.jsonl through log_metric
    assert first["sandbox/completions"] == 4 and first["sandbox/pool_size"] == 3
    assert first["sandbox/exec_seconds_p95"] >= first["sandbox/exec_seconds_mean"] > 0

    # trl-sandbox plot draws PNGs of that run
    from PIL import Image

    from trl_sandbox.cli import main

    assert main(["plot", str(tmp_path / "out")]) == 0
    for name in ("rewards.png", "sandbox_time.png", "statuses.png"):
        path = tmp_path / "out" / "plots" / name
        assert path.stat().st_size > 10_000
        with Image.open(path) as image:
            assert image.size == (1200, 840)
            assert len(image.convert("L").getcolors(1 << 16)) > 20  # drawn on, not a blank canvas


def test_pool_is_deleted_when_train_raises(tiny_model_dir, tmp_path, mock_sandbox_backend):
    mock_sandbox_backend.handler = lambda request: harness_reply(request, passed=True)

    def exploding_reward(completions, **kwargs):
        assert len(mock_sandbox_backend.live) == 3
        raise RuntimeError("reward exploded")

    from trl_sandbox import code_reward

    trainer = SandboxGRPOTrainer(
        model=tiny_model_dir,
        reward_funcs=[code_reward, exploding_reward],
        args=config(tmp_path),
        train_dataset=Dataset.from_list(ROWS),
    )
    with pytest.raises(RuntimeError, match="reward exploded"):
        trainer.train()
    assert mock_sandbox_backend.live == {} and len(mock_sandbox_backend.deleted) == 3


def test_hung_scoring_gives_none_and_training_goes_on(tiny_model_dir, tmp_path, mock_sandbox_backend):
    import anyio

    async def hang(request):
        await anyio.sleep(3600)

    mock_sandbox_backend.handler = hang
    trainer = SandboxGRPOTrainer(
        model=tiny_model_dir,
        args=config(tmp_path, max_steps=1, sandbox_batch_deadline_s=0.5),
        train_dataset=Dataset.from_list(ROWS),
    )
    trainer.train()
    assert trainer.state.global_step == 1 and mock_sandbox_backend.live == {}
    (log,) = [h for h in trainer.state.log_history if "sandbox/cancelled" in h]
    assert log["sandbox/cancelled"] == 4 and log["sandbox/infra_errors"] == 0


def test_second_train_call_gets_a_fresh_pool(tiny_model_dir, tmp_path, mock_sandbox_backend):
    mock_sandbox_backend.handler = lambda request: harness_reply(request, passed=True)
    trainer = SandboxGRPOTrainer(
        model=tiny_model_dir, args=config(tmp_path, max_steps=1), train_dataset=Dataset.from_list(ROWS)
    )
    trainer.train()
    trainer.args.max_steps = 2
    trainer.train()
    assert len(mock_sandbox_backend.created) == 6 and mock_sandbox_backend.live == {}


def test_config_parses_from_cli_and_yaml(tmp_path):
    from trl import TrlParser

    yaml_file = tmp_path / "c.yaml"
    yaml_file.write_text("sandbox_pool_size: 5\nsandbox_test_timeout: 2.5\nuse_cpu: true\nbf16: false\n")
    (cfg,) = TrlParser((SandboxGRPOConfig,)).parse_args_and_config(
        ["--config", str(yaml_file), "--output_dir", str(tmp_path), "--sandbox_backend_options",
         '{"site_packages": true}', "--sandbox-memory-limit", "268435456"]
    )
    assert cfg.sandbox_pool_size == 5 and cfg.sandbox_test_timeout == 2.5
    assert cfg.sandbox_backend_options == {"site_packages": True} and cfg.sandbox_memory_limit == 1 << 28


@pytest.mark.parametrize(
    "bad", [{"sandbox_pool_size": 0}, {"sandbox_test_timeout": -1}, {"sandbox_backend_options": "{nope"},
            {"sandbox_memory_limit": 1000}]
)
def test_bad_sandbox_options_are_rejected(tmp_path, bad):
    with pytest.raises(ConfigurationError):
        SandboxGRPOConfig(output_dir=str(tmp_path), use_cpu=True, bf16=False, **bad)


def test_mock_backend_outside_fixture_is_a_clear_error(tiny_model_dir, tmp_path):
    with pytest.raises(ConfigurationError, match="mock_sandbox_backend"):
        SandboxGRPOTrainer(model=tiny_model_dir, args=config(tmp_path), train_dataset=Dataset.from_list(ROWS))


def test_infra_error_class_is_exported():
    assert issubclass(InfrastructureError, Exception)


def test_hanging_completion_times_out_and_training_goes_on(tiny_model_dir, tmp_path, own_sandbox_root):
    """Real hanging code in the local backend during training: scored -1 (timeout), and the step completes.

    The reward swaps the tiny model's random completions for an infinite loop and calls the *unbound*
    code_reward, which must use the trainer's active pool."""
    from trl_sandbox import code_reward

    statuses = []

    def hanging_reward(completions, log_extra=None, **kwargs):
        rewards = code_reward(["def f0():\n    while True:\n        pass\n"] * len(completions), **kwargs)
        statuses.extend(rewards)
        return rewards

    args = config(
        tmp_path,
        max_steps=1,
        sandbox_backend="local",
        sandbox_pool_size=2,
        sandbox_test_timeout=0.5,
        sandbox_completion_timeout=3.0,
        sandbox_backend_options={"root_dir": str(own_sandbox_root)},
    )
    trainer = SandboxGRPOTrainer(
        model=tiny_model_dir, reward_funcs=[hanging_reward], args=args, train_dataset=Dataset.from_list(ROWS[:1] * 4)
    )
    trainer.train()
    assert trainer.state.global_step == 1 and statuses == [-1.0] * 4
    assert list(own_sandbox_root.iterdir()) == []


def test_code_reward_owns_its_pool_in_a_plain_grpo_trainer(tiny_model_dir, tmp_path, own_sandbox_root):
    """For users who cannot switch trainer class (or use one that patches GRPOTrainer): the reward owns its pool
    through a context manager, and TRL's log_metric/log_extra still carry its metrics."""
    from trl import GRPOConfig, GRPOTrainer

    from trl_sandbox import CodeReward, SandboxConfig
    from trl_sandbox.trainer import MetricsJsonlCallback

    sandbox = SandboxConfig(sandbox_pool_size=2, sandbox_backend_options={"root_dir": str(own_sandbox_root)})
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"), use_cpu=True, bf16=False, report_to="none", per_device_train_batch_size=4,
        num_generations=2, max_completion_length=8, max_steps=2, logging_steps=1, save_strategy="no",
    )  # fmt: skip
    with CodeReward.from_config(sandbox) as reward:
        assert len(reward.scorer.pool.live_sandboxes()) == 2
        assert reward.scorer.pool.labels["trl-sandbox-rank"] == "0"
        trainer = GRPOTrainer(
            model=tiny_model_dir,
            reward_funcs=[reward],
            args=args,
            train_dataset=Dataset.from_list(ROWS),
            callbacks=[MetricsJsonlCallback(tmp_path / "out" / "metrics.jsonl")],
        )
        trainer.train()
        assert reward.scorer.status_counts["completions"] == 8
    assert reward.scorer.pool.closed and reward.scorer.pool.live_sandboxes() == []
    logged = [json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()]
    assert [m["sandbox/completions"] for m in logged if "sandbox/completions" in m] == [4.0, 4.0]


def test_the_config_runs_on_a_cpu_as_written(tmp_path):
    """``SandboxGRPOConfig(output_dir=...)`` as the README writes it: TRL's default bf16 fails without a GPU; ours is
    off there unless asked for."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: bf16 stays TRL's default there")
    config = SandboxGRPOConfig(output_dir=str(tmp_path))
    assert config.bf16 is False and config.dataloader_pin_memory is False  # no GPU to pin memory for
    with pytest.raises(ValueError, match="bf16"):
        SandboxGRPOConfig(output_dir=str(tmp_path), bf16=True)  # asked for: TRL's own check stands


def test_the_config_raises_no_deprecation_warning(tmp_path):
    """GRPOConfig sets ``gradient_checkpointing=True``, a name transformers >= 5.24 deprecates for
    ``activation_checkpointing`` (with a FutureWarning at every config): ours carries the setting under its new name,
    so a user sees no warning for a default they never wrote; an explicit choice is kept."""
    import warnings

    import transformers

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config = SandboxGRPOConfig(output_dir=str(tmp_path))
        off = SandboxGRPOConfig(output_dir=str(tmp_path), gradient_checkpointing=False)
    assert config.gradient_checkpointing is True and off.gradient_checkpointing is False
    if hasattr(config, "activation_checkpointing"):  # transformers >= 5.24
        assert config.activation_checkpointing is True and off.activation_checkpointing is False
    else:
        from packaging.version import Version

        assert Version(transformers.__version__) < Version("5.24")


def test_training_raises_no_deprecation_warning(tiny_model_dir, tmp_path, mock_sandbox_backend):
    """A training run with TRL's defaults (gradient checkpointing on) warns of nothing: TRL toggles checkpointing
    around each generation through names transformers >= 5.24 deprecates, which the user cannot act on."""
    import warnings

    mock_sandbox_backend.handler = lambda request: harness_reply(request, passed=[True, False])
    trainer = SandboxGRPOTrainer(model=tiny_model_dir, args=config(tmp_path), train_dataset=Dataset.from_list(ROWS))
    assert trainer.args.gradient_checkpointing is True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer.train()
    deprecations = [str(w.message) for w in caught if issubclass(w.category, (FutureWarning, DeprecationWarning))]
    assert deprecations == [], deprecations
    assert trainer.state.global_step == 2
