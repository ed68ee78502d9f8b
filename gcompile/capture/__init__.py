"""Loop capture: ``for`` loops of Python functions rewritten into runtime calls a tracer can
take over (``handling``), and run as Python loops otherwise.

``convert(fn)`` returns a ``Converted`` whose ``function`` computes what ``fn`` computes; its
loops call ``for_range`` / ``for_each`` with a function of one iteration, which offer them to
the handler installed with ``handling(handler)`` (see ``runtime`` for the protocol).
"""

from .convert import Converted, convert, convert_or_reason
from .runtime import UNDEFINED, LoopInfo, for_each, for_range, handling

__all__ = [
    "UNDEFINED",
    "Converted",
    "LoopInfo",
    "convert",
    "convert_or_reason",
    "for_each",
    "for_range",
    "handling",
]
