"""Lazy mode (``gcompile.lazy``): NumPy operations on lazy values recorded, not run, and the
accumulated graph compiled and run when a value is needed.

``array.LazyArray`` takes NumPy's dispatch (``__array_ufunc__``, ``__array_function__``,
indexing, a few methods) and records each call as a ``record.Step``; ``record.Session`` keeps
the values still pending and, when one is needed, computes every pending value still alive in
one compiled call (``replay``: the steps as a generated function, compiled once per structure);
``scope`` is ``gcompile.lazy`` itself, a value or a ``with`` block.
"""
