"""The call of a fused kernel, as loop IR: shared by the host function and loop programs.

::

    _out0_fused_1 = _empty((s0 - 2,), _float64, 'C')           (the host's buffer; a program's
    if s0 - 2 >= 131072:                                          ``Alloc`` or parameter)
        _parallel_fused_1(_out0_fused_1, v_u, n0=s0 - 2, o0=1)
    else:
        _serial_fused_1(_out0_fused_1, v_u, n0=s0 - 2, o0=1)

The kernel's arguments (``KernelCode.arguments``) in order: its output buffers, the arrays and
scalars it reads by position, its integers (sizes, offsets, strides) by keyword, computed from
the caller's sizes. A kernel with two variants is called through a test of its size: the
parallel variant at the threshold, or (in a loop program) the one summing in blocks of lanes.
What differs between the host and a program are hooks: where an output buffer comes from, how a
scalar operand and an array read through views are passed, the name a variant is called by, and
whether the call records the regions it reads and writes.
"""

from __future__ import annotations

from ...ir import ops
from ...ir.graph import Node
from ...ir.symbolic import product_of
from ...loops.nodes import CallKernel, Compare, Const, If, Item, Tuple


class KernelCalls:
    """The statements calling a kernel (a part of the host's and a program's lowering, which
    provide ``emit``, ``size``, ``value``, ``orders`` (a kernel node -> the order of each output
    it made) and the hooks below)."""

    def kernel_call(self, node: Node, found: list, threshold: int):
        """Emit the call of ``node``'s kernel (``found``: its variants, the second taken at
        ``threshold`` elements); returns the expression of its result."""
        code = found[0].code
        last = len(code.outputs) - 1
        outputs = [
            self.output_buffer(node, position, meta, code.orders[position], position == last)
            for position, meta in enumerate(code.outputs)
        ]
        arguments = tuple(
            self.kernel_argument(node, outputs, param, argument)
            for param, argument in zip(code.params, code.arguments)
        )
        writes, reads = self.call_regions(node, code, arguments)
        calls = [
            CallKernel(self.kernel_function(node, variant, position), arguments, writes, reads)
            for position, variant in enumerate(found)
        ]
        if len(calls) == 1:
            self.emit(calls[0])
        else:
            test = Compare((">=",), (self.size(product_of(node.target.space)), Const(threshold)))
            self.emit(If(test, (calls[1],), (calls[0],)))
        if code.writes is not None:  # the result is that input's array, written in place
            return self.value(node.args[code.writes])
        self.orders[node] = code.orders
        results = [
            Item(out, (Const(0),)) if meta.ndim == 0 else out
            for out, meta in zip(outputs, code.outputs)
        ]
        return results[0] if len(results) == 1 else Tuple(tuple(results))

    def call_regions(self, node: Node, code, arguments: tuple) -> tuple:
        """``(writes, reads)`` of the call (``CallKernel``): None, None, unknown (the host's
        calls); a loop program says which regions its calls touch."""
        return None, None

    def shape(self, shape: tuple) -> Tuple:
        """A shape as the caller's size expressions."""
        return Tuple(tuple(self.size(size) for size in shape))

    def order_of(self, value: Node) -> str:
        """The memory order of ``value``'s array: the order a kernel made it in, else the one
        its meta promises (``"A"``: none)."""
        if value.op == "call" and value.target is ops.KERNEL_OUTPUT:
            orders = self.orders.get(value.args[0])
            return orders[value.kwargs["item"]] if orders else value.meta.layout
        orders = self.orders.get(value)
        return orders[0] if orders else value.meta.layout

    def kernel_argument(self, node: Node, outputs: list, param: str, argument: tuple) -> tuple:
        """``(keyword, value)`` of one argument: ints by keyword (``n0=s0 - 2``), the rest by
        position."""
        kind = argument[0]
        if kind == "output":
            return None, outputs[argument[1]]
        if kind == "int":
            return param, self.size(argument[1])
        value = node.args[argument[1]]
        if kind == "scalar":
            return None, self.scalar_argument(value)
        if kind == "array" and argument[2]:  # an input without a layout promise, through views
            return None, self.viewed(value, argument[2])
        return None, self.value(value)
