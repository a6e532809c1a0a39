"""`trl-sandbox plot`'s figures, inspected before they are saved (trl_sandbox.plots.draw_run): the reward band stays
within what a reward can be, the outcome bars add up with a legend of what is drawn, the y label says what was
averaged, and steps are whole numbers."""

import json

import pytest

pytest.importorskip("matplotlib")

from trl_sandbox.plots import draw_run, plot_run, read_metrics, reward_range_of


def step(n, **values):
    """A metrics.jsonl record as SandboxGRPOTrainer writes it for one step of the code reward (8 completions)."""
    record = {"step": n, "epoch": n / 10, "reward": 0.8, "reward_std": 0.5, "rewards/code_reward/mean": 0.8,
              "rewards/code_reward/std": 0.5, "sandbox/completions": 8.0, "sandbox/pass_rate": 0.5,
              "sandbox/tests_pass_rate": 0.6, "sandbox/timeouts": 1.0, "sandbox/errors": 2.0,
              "sandbox/errors_syntax": 1.0, "sandbox/errors_runtime": 1.0, "sandbox/errors_exit": 0.0,
              "sandbox/errors_compile": 0.0, "sandbox/banned": 0.0, "sandbox/infra_errors": 1.0,
              "sandbox/invalid_tasks": 0.0, "sandbox/cancelled": 0.0, "sandbox/unserializable": 1.0,
              "sandbox/batch_seconds": 0.1, "sandbox/exec_seconds_mean": 0.01, "sandbox/exec_seconds_p95": 0.02,
              "sandbox/queue_seconds_mean": 0.001, "step_time": 0.3}  # fmt: skip
    record.update(values)
    return record


def band(figures):
    """The y values of the reward's ± std band (the only filled area of the reward axes)."""
    (collection,) = figures["rewards.png"].axes[0].collections
    return [y for path in collection.get_paths() for _, y in path.vertices]


def test_the_reward_band_stays_within_the_reward_range():
    # mean 0.8 +- 0.5 would reach 1.3; the code reward's default values go from -1 to 1
    records = [step(1), step(2, reward=-0.7, **{"rewards/code_reward/mean": -0.7})]
    assert reward_range_of(records) == (-1.0, 1.0)
    ys = band(draw_run(records))
    assert max(ys) == pytest.approx(1.0) and min(ys) == pytest.approx(-1.0)


def test_custom_reward_values_widen_the_range_to_what_was_logged():
    # sandbox_reward_values={"passed": 3.0}: means above 1 were logged, so 1 is no bound; nor is a made-up one
    records = [step(1, reward=2.5, **{"rewards/code_reward/mean": 2.5}), step(2, reward=-1.5, reward_std=0.2,
                                                                             **{"rewards/code_reward/mean": -1.5})]
    assert reward_range_of(records) == (-1.5, 2.5)
    ys = band(draw_run(records))
    assert max(ys) == pytest.approx(2.5) and min(ys) == pytest.approx(-1.5)


def test_the_band_is_left_as_logged_when_the_range_is_unknown_or_clipped_to_the_one_given():
    # two reward functions (TRL sums them, weighted): no range is known from the metrics
    records = [step(1, **{"rewards/format/mean": 1.0}), step(2, **{"rewards/format/mean": 1.0})]
    assert reward_range_of(records) is None
    assert max(band(draw_run(records))) == pytest.approx(1.3)
    ys = band(draw_run(records, reward_range=(0.0, 2.0)))
    assert max(ys) == pytest.approx(1.3) and min(ys) == pytest.approx(0.3)
    ys = band(draw_run([step(1), step(2)], reward_range=(0.0, 1.1)))
    assert max(ys) == pytest.approx(1.1)


def test_the_outcome_bars_add_up_and_the_legend_lists_only_them():
    records = [step(1), step(2, **{"sandbox/pass_rate": 0.25})]
    (ax,) = draw_run(records)["statuses.png"].axes
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert labels == ["passed", "failed (some tests)", "timeout", "error: syntax", "error: runtime", "infra error",
                      "unserializable"]
    assert not ax.get_lines()  # no line under the bars (a one-step run drew it invisible, yet listed it)
    tops = {}  # the top of each step's stack of bars
    for patch in ax.patches:
        x = round(patch.get_x() + patch.get_width() / 2)
        tops[x] = max(tops.get(x, 0.0), patch.get_y() + patch.get_height())
    assert tops == {1: pytest.approx(8.0), 2: pytest.approx(8.0)}  # the step's 8 completions, none missing


@pytest.mark.parametrize(
    "extra, label",
    [({}, "completions per process"), ({"num_processes": 1}, "completions"),
     ({"num_processes": 4}, "completions per process (mean over 4 processes)")],
)
def test_the_y_label_says_mean_over_processes_only_when_several_were_averaged(extra, label):
    (ax,) = draw_run([step(1, **extra), step(2, **extra)])["statuses.png"].axes
    assert ax.get_ylabel() == label
    assert "mean over" not in label or extra.get("num_processes", 1) > 1


@pytest.mark.parametrize("steps", [[1], [1, 2, 3], list(range(1, 301, 7))])
def test_steps_are_whole_numbers_on_every_axis(steps):
    figures = draw_run([step(n) for n in steps])
    assert set(figures) == {"rewards.png", "sandbox_time.png", "statuses.png"}
    for name, fig in figures.items():
        fig.canvas.draw()  # ticks as they are drawn
        for ax in fig.axes:
            low, high = ax.get_xlim()
            shown = [t for t in ax.get_xticks() if low <= t <= high]
            assert shown and all(float(t).is_integer() for t in shown), (name, shown)


def test_plot_run_writes_what_draw_run_draws(tmp_path):
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(step(n)) + "\n" for n in (1, 2)))
    written = plot_run(tmp_path, dpi=50)
    assert [p.name for p in written] == ["rewards.png", "sandbox_time.png", "statuses.png"]
    assert all(p.parent == tmp_path / "plots" and p.stat().st_size > 5_000 for p in written)
    assert len(read_metrics(tmp_path)) == 2
