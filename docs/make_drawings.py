"""Draw the graphs shown in the documentation (needs Graphviz's ``dot``).

Run from the repository root::

    python docs/make_drawings.py

It writes ``docs/softmax_fused.svg`` (and ``docs/softmax_fused.dot``): the softmax of a
transformer block on float32 logits of shape (64, 128), traced at stage ``"fused"``, where
all five ops form one row kernel.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import gcompile

DOCS = Path(__file__).resolve().parent


def softmax(x):
    """Softmax over the last axis, the row maximum subtracted first so ``exp`` cannot overflow."""
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def main() -> None:
    """Trace and render every drawing; print where each went."""
    x = np.random.default_rng(0).standard_normal((64, 128), dtype=np.float32)
    graph = gcompile.trace(softmax, x, stage="fused")
    print(graph.render(DOCS / "softmax_fused.svg"))


if __name__ == "__main__":
    main()
