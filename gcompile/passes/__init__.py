"""Graph-to-graph passes. Each is a function ``(Graph) -> bool`` that edits the graph through its methods.

The pass manager runs a pass on the graph and on every nested graph (the graphs of
ops holding sub-graphs, ``ir/subgraph.py``); a pass function with the attribute
``skips_kernels = True`` (fusion, buffer assignment) runs on the top level and loop bodies
only, not on fused kernels' bodies.

``default_pipeline(graph, options)`` brings a traced graph to stage "optimized"
(functionalize, then constant folding, simplification, CSE and DCE to a fixpoint);
``fuse(graph)`` groups ops into FusedKernel nodes (stage "fused"). ``manager``
holds the named pipeline and ``run_pipeline(graph, stage, options)``.
"""

from .fuse import fuse
from .manager import optimize as default_pipeline
from .manager import run_pipeline

__all__ = ["default_pipeline", "fuse", "run_pipeline"]
