"""The allocation rewrite: a buffer that serves every trip of the loops around it is made once,
before them.

::

    for k0 in range(s0) [program]:            out0_dot_1 = alloc once[(s1,)] f64 C
      for k1 in range(k0) [program]:     =>   for k0 in range(s0) [program]:
        out0_dot_1 = alloc once[(s1,)] f64 C    for k1 in range(k0) [program]:
        call _dot_1(out0_dot_1, ...)              call _dot_1(out0_dot_1, ...)

The lowering marks an ``Alloc`` ``once`` when the buffer's size names no loop index and its
value dies within the trip; this rewrite moves every such allocation to the kernel's start, in
the order they appear.
"""

from __future__ import annotations

import dataclasses

from .nodes import Alloc, If, Kernel, Loop, While
from .rewrite import Context


def hoist_allocations(kernel: Kernel, ctx: Context) -> Kernel:
    """``kernel`` with its ``once`` allocations first (see the module docstring)."""
    hoisted: list = []
    body = _without_once(kernel.body, hoisted)
    if not hoisted:
        return kernel
    return dataclasses.replace(kernel, body=tuple(hoisted) + body)


def _without_once(stmts: tuple, hoisted: list) -> tuple:
    out = []
    for stmt in stmts:
        if isinstance(stmt, Alloc) and stmt.once:
            hoisted.append(stmt)
        elif isinstance(stmt, Loop):
            out.append(dataclasses.replace(stmt, body=_without_once(stmt.body, hoisted)))
        elif isinstance(stmt, While):
            test, body = _without_once(stmt.test, hoisted), _without_once(stmt.body, hoisted)
            out.append(dataclasses.replace(stmt, test=test, body=body))
        elif isinstance(stmt, If):
            body, orelse = _without_once(stmt.body, hoisted), _without_once(stmt.orelse, hoisted)
            out.append(dataclasses.replace(stmt, body=body, orelse=orelse))
        else:
            out.append(stmt)
    return tuple(out)
