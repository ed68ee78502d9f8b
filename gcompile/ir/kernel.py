"""FusedKernel: the op holding a fused group's sub-graph, made by the fusion pass.

A kernel node in a graph reads its inputs like any call node; its ``target`` is
a ``FusedKernel``, a ``SubgraphOp`` (``ir/subgraph.py``) whose one region, ``body``,
computes the kernel's outputs from placeholders bound one to one to the node's
arguments. A kernel with several outputs has a ``TupleMeta`` and is read through
``kernel_output`` nodes. The interpreter runs the sub-graph; the Numba backend
generates a loop nest for it.

``style`` tells the code generator the loop structure:

* ``pointwise``: one loop nest over ``space``, every op elementwise;
* ``reduction``: elementwise producers feeding reductions, one pass over ``space``;
* ``row``: ``space`` is rows x reduced trailing axes; per row, phases of loops over
  the row (a reduction's result is used only in later phases);
* ``epilogue``: pointwise, applied to the result of a library matmul.

A kernel whose sub-graph returns a ``store`` into its first placeholder writes its result
straight into that argument's region (``mutates``; made by ``passes/buffers.py``): the node's
value is that array, written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import ops
from .graph import Graph
from .shape_env import map_symbolic
from .subgraph import Region, RunGraph, SubgraphOp


@dataclass(eq=False)
class FusedKernel(SubgraphOp):
    """A fused group of ops, kept as a sub-graph (see the module docstring).

    Its meta is what the sub-graph returns (``SubgraphOp.infer``).
    """

    name: str
    style: str
    space: tuple
    graph: Graph
    members: tuple = field(default=())  # names of the original nodes, for reports
    inplace_input: int | None = None  # epilogue: input index whose buffer may hold the result

    kind = "fused"

    @property
    def regions(self) -> tuple[Region, ...]:
        """One region, ``body``: the sub-graph, its placeholders bound to the arguments in order."""
        return (Region("body", self.graph, tuple(range(len(self.graph.placeholders)))),)

    @property
    def params(self) -> dict:
        """The loop structure: ``style`` and iteration ``space``."""
        return {"style": self.style, "space": self.space}

    def region_note(self, region: Region) -> str:
        """The body's header comment: ``row over [s0,s1]``, and ``; result into argument 1``
        for an epilogue whose result may take an input's memory (``inplace_input``)."""
        note = f"{self.style} over [{','.join(str(size) for size in self.space)}]"
        if self.inplace_input is not None:
            note += f"; result into argument {self.inplace_input}"
        return note

    @property
    def mutates(self) -> bool:
        """Whether the kernel writes its result into its first argument's memory (its output
        is a ``store`` into the region it replaces; ``passes/buffers.py`` makes these)."""
        outputs = self.graph.output_node.args[0]
        return len(outputs) == 1 and getattr(outputs[0], "target", None) is ops.STORE

    @property
    def written_arguments(self) -> tuple:
        """The first argument when the kernel writes into it (``mutates``)."""
        return (0,) if self.mutates else ()

    def output_argument(self, output: int) -> int | None:
        """A kernel writing in place holds its one output in its first argument."""
        return 0 if self.mutates and output == 0 else None

    def interpret(self, run_graph: RunGraph, args: tuple, kwargs: dict) -> object:
        """Run the sub-graph on the arguments: its one output, or a tuple of several."""
        outputs = run_graph(self.graph, list(args))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def map_sizes(self, fn) -> None:
        """Replace the symbolic sizes of the kernel's space by ``fn(size)`` (its graph's are
        replaced by ``Graph.substitute_sizes``)."""
        self.space = map_symbolic(tuple(self.space), fn)

    def __repr__(self) -> str:
        return f"<kernel {self.name} ({self.style})>"
