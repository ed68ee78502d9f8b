"""The loops part of ``explain()``: every loop the tracer met, what became of it, and the
symbols the trace reasons with.

::

    == loops
      for_range_1  test.py:12  for i in range(n):  rolled, index k0 in [0, s0-1], s0 trips
          carried: A (in place)
        for_range_2  test.py:13  for j in range(i):  rolled, index k1 in [0, k0-1], k0 trips
      test.py:20  for x in items:  unrolled in Python: it rebinds 'acc', a str
      test.py:12  hoisted out of %for_range_1: %multiply_3
    == symbols
      s0  A.shape[0]  in [2, inf)
      k0  index of the loop at test.py:12  in [0, s0-1]
"""

from __future__ import annotations

from ..ir.graph import Graph
from ..ir.subgraph import loop_of, program_graphs, walk


def loop_lines(graph: Graph) -> list[str]:
    """The loops of ``graph`` (nested ones indented) and the loops left to Python, with why."""
    lines = []
    for visit in walk(graph):
        node = visit.node
        loop = loop_of(node)
        if loop is None:
            continue
        indent = "  " * (1 + sum(1 for call, _ in visit.path if loop_of(call) is not None))
        summary = loop.summary(node.kwargs)
        lines.append(f"{indent}{node.name}  {loop.source or ''}  rolled, {summary}")
        carried = [
            f"{loop.names[output] if output < len(loop.names) else output}"
            f" ({'in place' if position in loop.in_place else 'by value'})"
            for position, output in loop.carries
        ]
        if carried:
            lines.append(f"{indent}    carried: {', '.join(carried)}")
    for note in _notes(graph):
        if not note.rolled and "unroll_loops" in note.reason:
            lines.append(f"  {note.source or '?'}  {note.reason}")
        elif not note.rolled:
            lines.append(f"  {note.source or '?'}  unrolled in Python: {note.reason}")
        elif note.reason:  # a split range, hoisted code
            lines.append(f"  {note.source or '?'}  {note.reason}")
    return lines


def _notes(graph: Graph) -> list:
    """The loop notes of ``graph`` and of the loop bodies in it (passes note on the graph
    they run on), each once."""
    found, seen = [], set()
    for each in program_graphs(graph):
        for note in each.notes.loops:
            if id(note) not in seen:
                seen.add(id(note))
                found.append(note)
    return found


def symbol_lines(graph: Graph) -> list[str]:
    """Every symbol of the trace with what it stands for and its range."""
    env = graph.shape_env
    lines = []
    for symbol in env.symbols:
        if symbol in env.replacements:
            lines.append(f"  {symbol}  {env.origins.get(symbol, '')}  = {env.replacements[symbol]}")
        else:
            lines.append(f"  {symbol}  {env.origins.get(symbol, '')}  in [{symbol.lo}, inf)")
    for symbol, (start, stop, step) in env.loops.items():
        bounds = f"range({start}, {stop}, {step})"
        lines.append(f"  {symbol}  loop index of {bounds}  in [{symbol.lo}, {symbol.hi}]")
    for symbol, origin in env.data_sizes.items():
        hi = "inf)" if symbol.hi == float("inf") else f"{symbol.hi}]"
        lines.append(f"  {symbol}  length the data decide, of {origin}  in [{symbol.lo}, {hi}")
    return lines
