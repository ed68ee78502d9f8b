"""The IR: Graph and Node, TensorMeta, the op table, printing and verification."""

from .graph import Graph, Node
from .meta import TensorMeta
from .verify import GraphError

__all__ = ["Graph", "Node", "TensorMeta", "GraphError"]
