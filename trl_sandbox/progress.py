"""Progress bars on stderr (tqdm): the pool's creation bar, ``trl-sandbox score``'s and the benchmarks'."""

from __future__ import annotations

import sys
from typing import Any


def progress_bar(show: bool | None, **kwargs: Any) -> Any:
    """A tqdm progress bar on stderr (``kwargs`` go to ``tqdm``); ``show=None`` shows it only when stderr is a
    terminal, ``False`` never. The bar is safe to update from the pool's thread."""
    from tqdm import tqdm

    return tqdm(disable=(not sys.stderr.isatty()) if show is None else not show, file=sys.stderr,
                dynamic_ncols=True, **kwargs)
