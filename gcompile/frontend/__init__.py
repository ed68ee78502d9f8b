"""The front end: from a Python function and its arguments to a traced graph.

``function.trace`` converts the function's loops (``capture``) and runs it on traced values:
``traced_array.TracedArray`` stands for each array argument, and NumPy hands every operation
on it to the recorder (``recorder.Tracer``), which adds one node per op of the table
(``ir/ops.py``) or of a decomposition (``decompositions.py``); ``numpy_patching`` routes the
NumPy functions that do not dispatch (``np.zeros``, ``np.asarray``) to it. Sizes are
``symint.SymInt`` symbols, complex parts views that see writes (``complex_parts``), and each
converted loop is traced once into a ``for_range`` sub-graph (``loops``).
"""

from .function import trace
from .recorder import current_tracer

__all__ = ["current_tracer", "trace"]
