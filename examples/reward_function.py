"""Score five toy completions with trl-sandbox's code reward, outside any trainer.

The reward is called exactly as TRL calls a reward function (``completions``, ``prompts`` and one list per dataset
column); here it owns its sandbox pool through a context manager, which deletes the sandboxes when the block ends.

    python examples/reward_function.py                      # local sandboxes on this machine
    python examples/reward_function.py --backend daytona    # remote sandboxes (pip install 'trl-sandbox[daytona]')
"""

import argparse

from trl_sandbox import CodeReward, SandboxConfig

# One task per completion, in the MBPP format: each assert line is one test.
TASKS = [
    {"task_id": "add", "test_list": ["assert add(2, 3) == 5", "assert add(-1, 1) == 0", "assert add(0, 0) == 0"]},
    {"task_id": "shout", "test_list": ["assert shout('hi there') == 'THERE HI!'", "assert shout('a') == 'A!'"]},
    {"task_id": "square", "test_list": ["assert square(3) == 9", "assert square(-2) == 4"]},
    {"task_id": "mean", "test_list": ["assert mean([1, 2, 3]) == 2", "assert mean([5]) == 5"]},
    {"task_id": "evens", "test_list": ["assert evens([1, 2, 3, 4]) == [2, 4]", "assert evens([]) == []"]},
]
COMPLETIONS = [
    "def add(a, b):\n    return a + b\n",  # arithmetic
    "def shout(s):\n    return ' '.join(reversed(s.split())).upper() + '!'\n",  # string operations
    "def square(x)\n    return x * x\n",  # a syntax error
    "def mean(xs):\n    return sum(xs) / len(xs[0])\n",  # raises TypeError when called: its tests fail (failed)
    "def evens(xs):\n    return [x for x in xs if x % 2 == 0]\n",  # a list comprehension
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="local", help="sandbox backend: local (default), daytona, e2b, hf...")
    parser.add_argument("--pool-size", type=int, default=4, help="sandboxes in the pool")
    args = parser.parse_args()

    config = SandboxConfig(sandbox_backend=args.backend, sandbox_pool_size=args.pool_size)
    columns = {key: [task.get(key) for task in TASKS] for key in ("task_id", "test_list")}
    with CodeReward.from_config(config) as reward:
        # What TRL does at each step: rewards for a batch, one float (or None) per completion.
        rewards = reward(completions=COMPLETIONS, prompts=[""] * len(COMPLETIONS), **columns)
        # The same batch with every detail, for the table below.
        results = reward.score(COMPLETIONS, [""] * len(COMPLETIONS), **columns)
        pool = reward.scorer.pool
        created = pool.stats.created

    print(f"{'task':<8} {'status':<8} {'reward':>6} {'tests':>5}  error")
    for result in results:
        tests = f"{result.tests_passed}/{result.tests_total}"
        reward_text = "None" if result.reward is None else f"{result.reward:.2f}"
        print(f"{result.task_id:<8} {result.status:<8} {reward_text:>6} {tests:>5}  {(result.error or '')[:70]}")
    scored = [r for r in rewards if r is not None]
    passed = sum(r.passed for r in results)
    print(f"total reward: {sum(scored):.2f} over {len(scored)} completions")
    print(f"pass rate: {passed}/{len(results)} = {passed / len(results):.2f}")
    print(f"cleanup: deleted {pool.stats.deleted} of {created} sandboxes ({len(pool.live_sandboxes())} left)")


if __name__ == "__main__":
    main()
