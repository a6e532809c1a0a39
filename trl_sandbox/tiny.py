"""A tiny Qwen3 model and a locally trained tokenizer, for CPU runs with no hub access; and the quick start that
shows it learning.

A random tiny model writes random tokens: its code never runs, its reward is flat. The quick start
(``trl-sandbox train --model tiny``) makes learning visible on a CPU in a few minutes, honestly:

1. a family of small tasks, :func:`quickstart_tasks`: ``def add_7(x)`` / ``sub_12`` / ``mul_5`` with a docstring
   ("Return x plus 7.") and HumanEval-style tests (``check(candidate)``, three inputs). Every (operation, constant)
   pair is one task; a fixed shuffle puts two thirds of them in the ``warmup`` split and the rest in the ``rl``
   split;
2. a short supervised warm start (:func:`warm_start`) on the ``warmup`` tasks' reference solutions: the model learns
   the shape of an answer (``    return x + 7``), and gets the ``rl`` tasks right only sometimes (it has never seen
   their solutions);
3. GRPO on the ``rl`` tasks alone, scored in the sandbox by their tests: the reward rises as the policy learns to
   answer tasks whose solutions it never saw. No scoring shortcut: every reward is a test verdict.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from .loading import load_tasks

_SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
_CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _corpus() -> list[str]:
    texts = []
    for name in ("daytona", "humaneval"):
        for row in load_tasks(name):
            texts.append(row.get("prompt", ""))
            texts.append(row.get("canonical_solution", ""))
    return [t for t in texts if t]


def build_tiny_tokenizer(vocab_size: int = 1024) -> Any:
    """Train a byte-level BPE tokenizer (``vocab_size`` tokens) on the bundled task texts, with a ChatML template.

    Returns:
        A ``transformers.PreTrainedTokenizerFast`` with ``eos_token == pad_token == "<|endoftext|>"``.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=_SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_corpus(), trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    fast.chat_template = _CHATML
    return fast


def build_tiny_model(seed: int = 0) -> tuple[Any, Any]:
    """A random Qwen3 causal LM (hidden size 64, 2 layers, ~0.1M parameters) and its tokenizer.

    Args:
        seed: Seed for the weights.

    Returns:
        ``(model, tokenizer)``.
    """
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    tokenizer = build_tiny_tokenizer()
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model, tokenizer


#: Tokens of Qwen3's tool-calling format, added to the tool-calling tiny tokenizer.
TOOL_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]


def build_tool_calling_tiny_model(seed: int = 0) -> tuple[Any, Any]:
    """:func:`build_tiny_model` with Qwen3's chat template (the copy TRL ships, ``trl/chat_templates/qwen3.jinja``)
    and its tool-call tokens, so that TRL renders tools into prompts and parses ``<tool_call>`` blocks out of
    completions (``trl.chat_template_utils.supports_tool_calling`` is true). A random model writes no tool calls:
    tests and the agentic example script its generation.

    Returns:
        ``(model, tokenizer)``.
    """
    from pathlib import Path

    import trl

    model, tokenizer = build_tiny_model(seed=seed)
    tokenizer.add_special_tokens({"additional_special_tokens": TOOL_TOKENS})
    tokenizer.chat_template = (Path(trl.__file__).parent / "chat_templates" / "qwen3.jinja").read_text()
    model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    return model, tokenizer


def scripted_policy(trainer_class: type, turns: Sequence[dict[str, Any] | str]) -> type:
    """``trainer_class`` (``trl.GRPOTrainer`` or a subclass) whose generation plays ``turns`` instead of sampling,
    for :func:`build_tool_calling_tiny_model` (a random model writes no tool calls): TRL's real tool loop runs on
    what it writes. Turn k of a rollout (k: the tool responses its prompt holds; the last turn repeats) writes
    ``turns[k]``: a ``{"name", "arguments"}`` dict as a tool call in Qwen3's ``<tool_call>`` format, or a string as
    plain text. Used by the tests, ``examples/agentic_coding.py`` and ``benchmarks/environment.py``.

    Overrides ``GRPOTrainer._generate_single_turn`` (TRL 1.16; the transformers generation path, no logprobs).
    """
    import json

    texts = [f"<tool_call>\n{json.dumps(t)}\n</tool_call>" if isinstance(t, dict) else str(t) for t in turns]

    class Scripted(trainer_class):
        def _generate_single_turn(self, prompt_ids: Any, images: Any, multimodal_fields: Any, num_generations: int,
                                  has_tool_images: bool = False) -> tuple[list[list[int]], None]:
            out = []
            for ids in prompt_ids:
                turn = min(self._tokenizer.decode(ids).count("<tool_response>"), len(texts) - 1)
                out.append(self._tokenizer.encode(texts[turn] + "<|im_end|>"))
            return out, None

    Scripted.__name__ = f"Scripted{trainer_class.__name__}"
    return Scripted


def quickstart_tasks(split: str | None = None) -> list[dict[str, Any]]:
    """The quick start's task family (bundled as ``load_tasks("quickstart")``): 54 HumanEval-format rows
    (``task_id``, ``prompt``, ``canonical_solution``, ``test``, ``entry_point``), one per pair of an operation
    (``add``, ``sub``, ``mul``: "Return x plus 7.") and a constant (2 to 19), with three asserts each, and ``split``:
    ``warmup`` (36 rows) or ``rl`` (18 rows), by a fixed shuffle of the pairs.

    Args:
        split: ``"warmup"`` or ``"rl"`` for that split only; None for all rows.
    """
    rows = load_tasks("quickstart")
    return [r for r in rows if split is None or r["split"] == split]


def supervised_examples(tokenizer: Any, rows: list[dict[str, Any]]) -> list[tuple[list[int], list[int]]]:
    """``(input ids, labels)`` for next-token training on each row's ``prompt`` followed by its
    ``canonical_solution`` and the end-of-sequence token, the prompt's labels masked out (-100, which
    transformers' loss ignores)."""
    examples = []
    for row in rows:
        prompt = tokenizer(row["prompt"]).input_ids
        solution = tokenizer(row["canonical_solution"]).input_ids + [tokenizer.eos_token_id]
        examples.append((prompt + solution, [-100] * len(prompt) + solution))
    return examples


def padded_batch(batch: list[tuple[list[int], list[int]]], pad: int, device: Any = None) -> tuple[Any, Any, Any]:
    """``batch`` of :func:`supervised_examples` as ``(input_ids, labels, attention_mask)`` tensors of shape
    ``(len(batch), longest)``, padded on the right (``pad`` ids, -100 labels, 0 attention), on ``device``."""
    import torch

    width = max(len(ids) for ids, _ in batch)
    input_ids = torch.tensor([ids + [pad] * (width - len(ids)) for ids, _ in batch], device=device)
    labels = torch.tensor([lab + [-100] * (width - len(lab)) for _, lab in batch], device=device)
    attention = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids, _ in batch], device=device)
    return input_ids, labels, attention


def warm_start(model: Any, tokenizer: Any, rows: Sequence[dict[str, Any]], *, steps: int = 100,
               batch_size: int = 16, learning_rate: float = 3e-3, seed: int = 0) -> list[float]:
    """Supervised warm start: ``steps`` AdamW steps of next-token loss on the reference solutions
    (``canonical_solution``) of ``rows``, the prompt masked out.

    The prompt and the solution are tokenized apart and joined, as GRPO generates (the prompt's tokens, then the
    completion's): a joint tokenization (TRL's ``SFTTrainer`` on prompt-completion rows) can merge the last
    whitespace of the prompt with the first of the solution, teaching the model a token boundary it never sees when
    it generates.

    Args:
        model: A causal LM (trained in place).
        tokenizer: Its tokenizer (its ``eos_token`` ends each solution).
        rows: Rows with ``prompt`` and ``canonical_solution``.
        steps, batch_size, learning_rate: The optimisation (rows sampled with replacement, seeded by ``seed``).

    Returns:
        The loss of every step.
    """
    import torch

    rng = random.Random(seed)
    torch.manual_seed(seed)
    examples = supervised_examples(tokenizer, rows)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    model.train()
    losses = []
    for _ in range(steps):
        batch = [rng.choice(examples) for _ in range(batch_size)]
        input_ids, labels, attention = padded_batch(batch, tokenizer.pad_token_id)
        loss = model(input_ids=input_ids, attention_mask=attention, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    model.eval()
    return losses
