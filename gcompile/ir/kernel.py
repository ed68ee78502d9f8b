"""FusedKernel: a call target that holds a sub-graph, made by the fusion pass.

A kernel node in a graph reads its inputs like any call node; its ``target`` is
a ``FusedKernel`` whose ``graph`` computes the kernel's outputs from placeholders
standing for those inputs. A kernel with several outputs has a ``TupleMeta`` and
is read through ``kernel_output`` nodes. Backends run the sub-graph (the
interpreter) or generate a loop nest for it (Numba).

``style`` tells the code generator the loop structure:

* ``pointwise``: one loop nest over ``space``, every op elementwise;
* ``reduction``: elementwise producers feeding reductions, one pass over ``space``;
* ``row``: ``space`` is rows x reduced trailing axes; per row, phases of loops over
  the row (a reduction's result is used only in later phases);
* ``epilogue``: pointwise, applied to the result of a library matmul.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .graph import Graph
from .meta import TensorMeta, TupleMeta
from .shape_env import map_symbolic


@dataclass(eq=False)
class FusedKernel:
    """A fused group of ops, kept as a sub-graph (see the module docstring)."""

    name: str
    style: str
    space: tuple
    graph: Graph
    meta: TensorMeta | TupleMeta
    members: tuple = field(default=())  # names of the original nodes, for reports
    inplace_input: int | None = None  # epilogue: input index whose buffer may hold the result

    kind = "fused"

    def infer(self, *inputs: TensorMeta, **params) -> TensorMeta | TupleMeta:
        """The outputs' metas; checks that the inputs still match the sub-graph's placeholders."""
        expected = [p.meta for p in self.graph.placeholders]
        if list(inputs) != expected:
            raise ValueError(
                f"kernel {self.name}: inputs {inputs} do not match its placeholders {expected}"
            )
        return self.meta

    def substitute_sizes(self, fn) -> None:
        """Replace the symbolic sizes of the kernel's space and meta by ``fn(size)`` (its graph's
        are replaced by ``Graph.substitute_sizes``)."""
        self.space = map_symbolic(tuple(self.space), fn)
        self.meta = map_symbolic(self.meta, fn)

    def __repr__(self) -> str:
        return f"<kernel {self.name} ({self.style})>"
