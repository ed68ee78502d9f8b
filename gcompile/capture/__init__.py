"""Loop capture: ``for`` loops and ``if`` statements of Python functions rewritten into runtime
calls a tracer can take over (``handling``), and run as Python runs them otherwise.

``convert(fn)`` returns a ``Converted`` whose ``function`` computes what ``fn`` computes; its
loops call ``for_range`` / ``for_each`` with a function of one iteration, its ``if`` statements
``cond`` with a function per branch, which offer them to the handler installed with
``handling(handler)`` (see ``runtime`` for the protocol).
"""

from .convert import Converted, convert, convert_or_reason
from .runtime import UNDEFINED, BranchInfo, LoopInfo, cond, for_each, for_range, handling
from .tables import is_table, loaded_globals, own_tables

__all__ = [
    "UNDEFINED",
    "BranchInfo",
    "Converted",
    "LoopInfo",
    "cond",
    "convert",
    "convert_or_reason",
    "for_each",
    "for_range",
    "handling",
    "is_table",
    "loaded_globals",
    "own_tables",
]
