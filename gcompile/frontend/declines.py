"""Why a captured loop is not traced as a loop: ``Declined`` (it runs in Python, unrolled; the
reason is a ``LoopNote``) and ``LoopEscape`` (the whole trace runs again, that loop in Python);
``LiteralsNeeded`` (the whole trace runs again, arrays of Python numbers the graph's) and
``StrongItems`` (the whole trace runs again, a list of numbers giving back NumPy scalars).
"""

from __future__ import annotations


class Declined(Exception):
    """The loop cannot be kept rolled; the message says why (shown by ``explain()``)."""


class LoopEscape(Exception):
    """A value made in a captured loop's body was used after the loop other than as a carried
    value (appended to a list, stored in a dict the body was given), or an array a loop took as
    its buffer was (``CarriedValues.consume``): the trace runs again with that loop
    (``source``) run in Python, the ``reason`` its note."""

    ESCAPED = "a value made in its body is used after it other than as a carried value"

    def __init__(self, source: str | None, reason: str = ESCAPED):
        super().__init__(f"the loop at {source}: {reason}")
        self.source, self.reason = source, reason


class LiteralsNeeded(Exception):
    """A trace gave a traced value to an array NumPy made from Python numbers in the function:
    wrote one into it (``x0 = np.array([4.0, 4, 5])``; ``x0[i] = ...``: NumPy's "setting an
    array element with a sequence") or indexed it by one (``rules[7 - code]``): the trace runs
    again with those arrays the graph's (``Tracer.literal_array``)."""


class StrongItems(Exception):
    """A NumPy scalar was stored in a list of numbers traced as an array whose items read back
    as Python numbers (``number_lists``): the trace runs again with the items of the lists
    made at ``site`` read back as NumPy scalars, as eager mode's list gives the ones stored."""

    def __init__(self, site: str):
        super().__init__(f"the list of numbers made at {site} holds NumPy scalars")
        self.site = site
