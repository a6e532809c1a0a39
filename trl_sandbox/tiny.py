"""A tiny random Qwen3 model and a locally trained tokenizer, for CPU runs with no hub access.

``trl-sandbox train --model tiny`` and the tests use it: it exercises the whole GRPO + sandbox path in seconds. Its
completions are random tokens, so they score -1 (code that does not run) almost always; it is a smoke test of the
machinery, not a model that learns.
"""

from __future__ import annotations

from typing import Any

from .tasks import load_tasks

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
