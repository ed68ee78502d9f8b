"""Loop programs: a graph with loops (or one top-level loop nest) lowered into one loop IR
program, then rendered as one Numba function with real ``for`` loops.

::

    graph --_ProgramLowering--> loop IR Kernel --PROGRAM_REWRITES--> --render--> source

    def kernel(a0, s0, s1):                      # the inputs, buffers, sizes, then constants
        out0_fused_1 = np.empty((1,), np.float64)        (an Alloc marked once: made first)
        # %for_range_1 : f64[s0,s1] = for_range(%A, start=0, step=1, stop=s0)    # lu.py:4
        A = a0
        for k0 in range(s0):
            ...
            # %fused_1 : f64[] = fused_1(%A)
            _fused_1(out0_fused_1, A, n0=k1, o0=k0 * s1, st0=s1)     # A[k0, :k1] @ A[:k1, k1]
            fused_1 = out0_fused_1[0]
            # %subtract_1 : f64[] = subtract(%getitem_1, %fused_1)    # lu.py:7
            subtract_1 = np.float64((getitem_1 - fused_1))
        return (A,)

The graph's nodes become statements, each under its IR line and the user's ``file:line``
(``Comment``): a read of one element is a subscript (``Item``), a store into a region element
loops over the region (Numba's array assignment would compile its broadcasting error messages:
``program_regions``), a scalar elementwise op an ``Apply`` written by its Numba rule, a fused
kernel a ``CallKernel`` of its serial variant with its integers by keyword (``kernel_calls``,
as the host calls kernels, with a program's hooks: ``program_kernels``), a matrix product a
BLAS call (``blas``, ``program_products``, also for the products of a loop's trips), a nested
loop a ``Loop`` whose carried values are variables (``program_control``, also for branches and
while loops). Carried arrays the loop does not run in place (``ForRange.in_place``) are copied
once before it, as the interpreter does. A kernel in a loop sums in order, one accumulator
(short sums); when its sums may be long it also gets the blocked-lane variant, called from
``LONG_SUM`` terms. The rewrites make a buffer that serves every trip once (``loops.allocations``), choose
each float function's implementation (``mathselect``), and give a top-level loop whose trips are
independent a parallel copy (``prange``), run when its work is large enough
(``loops.program_parallel``; kernel calls and copies say which regions they read and write, for
it: ``program_regions``); a program with one is compiled with Numba's ``parallel`` for its
``prange`` loops only (``program_host``). Anything else raises
``NoTemplate``: the host then calls a program per loop nest, or runs the loop in the
interpreter, and says why.

``program_host`` compiles a program: its module imports the kernels it calls by their cache
keys, so kernels are cached on their own; the module text is the program's cache key.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np
from numba.core import types as nbtypes

from ...errors import UnsupportedError
from ...ir import ops
from ...ir.control import MAX_BRANCHES, Cond
from ...ir.graph import Graph, Node
from ...ir.kernel import FusedKernel
from ...ir.meta import TupleMeta
from ...ir.shape_env import using
from ...ir.subgraph import program_graphs
from ...ir.symbolic import free_symbols, is_expr, is_int
from ...loops.allocations import hoist_allocations
from ...loops.dtypes import operand_dtypes
from ...loops.nodes import (
    Alloc,
    Apply,
    Assign,
    Attr,
    BinOp,
    BoolOp,
    Call,
    Cast,
    Comment,
    Compare,
    Const,
    Eval,
    If,
    Item,
    Kernel,
    Let,
    Name,
    Param,
    Raise,
    Return,
    Slice,
    Tuple,
    Var,
    size_of,
    typed,
)
from ...loops.program_parallel import parallel_program_loops
from ...loops.rewrite import apply_rewrites
from ...loops.unsigned_indices import unsigned_indices
from . import codegen, kernels, scans
from .mathselect import MathContext, select_math
from .program_control import CONTROL, ControlLowering
from .program_entry import entry_statements
from .program_externs import ExternCalls
from .program_kernels import ProgramKernelCalls, in_parallel, memory_order, small_output
from .program_products import ProgramProducts
from .program_regions import RESHAPING, RegionLowering, reshaped
from .render import Namespace, render
from .rules import NoTemplate

_FILLS = {ops.ZEROS: 0, ops.ONES: 1, ops.EMPTY: None}  # what each creation op fills with
# the rewrites of a program's loop IR, in order (kernels have theirs: ``codegen.REWRITES``)
PROGRAM_REWRITES = [
    ("allocations", hoist_allocations),
    ("select_math", select_math),
    ("parallel_loops", parallel_program_loops),
    ("unsigned_indices", unsigned_indices),
]


@dataclass
class LoopProgram:
    """A generated function (a loop nest, or a whole graph) and how the host calls it:
    ``kernel(*inputs, *buffers, *sizes, *constants)``, returning the tuple of its ``outputs``
    that are not buffers (one bare, none as None)."""

    source: str
    inputs: list  # the nodes the host passes first, in order (arrays, scalars as their dtype)
    outputs: list  # metas of the returned values
    sizes: list = field(default_factory=list)  # the size parameters, passed after the inputs
    kernels: dict = field(default_factory=dict)  # global name -> the Variant called there
    constants: list = field(default_factory=list)  # arrays the function reads, passed last
    # arrays the host allocates (through NumPy, and its buffer pool) for the program's top-level
    # kernels, passed after the inputs: ``(shape, dtype, order)`` each
    buffers: list = field(default_factory=list)
    blas: bool = False  # whether it calls ``blas.matmul_into`` (a matrix product)
    helpers: frozenset = frozenset()  # the modules of compiled helpers it calls (``copies``)
    objmode: bool = False  # whether it calls back into Python (library calls)
    callbacks: list = field(default_factory=list)  # what it calls back into Python for, and why
    parallel: bool = False  # whether a loop of it runs in parallel (``loops.program_parallel``)
    # per output, the buffer it is written into (the host's, not returned), else None
    in_buffers: list = field(default_factory=list)
    libraries: frozenset = frozenset()  # the modules of other libraries' calls (``scipy.linalg``)


def generate(node: Node, sizes: dict, options: dict) -> LoopProgram:
    """The function running ``node`` (a top-level loop or branch); ``sizes`` names the host's
    size variables by symbol. Raises ``NoTemplate`` for a body it cannot write."""
    if not isinstance(node.target, CONTROL):
        raise NoTemplate(f"{node.target.name}: no loop program form")
    lowering = _ProgramLowering(sizes, options)
    lowering.env = node.graph.shape_env
    given = [lowering.input(v) if isinstance(v, Node) else lowering.value(v) for v in node.args]
    results = lowering.control(node, given)
    outputs = node.meta.items if isinstance(node.meta, TupleMeta) else (node.meta,)
    return lowering.finish(node.name, results, list(outputs))


def _of_one_element(op) -> bool:
    """Whether ``op``'s value over one element is that element (in the result's dtype): a
    ufunc's reduce (``sum``, ``amax``, ``any``, ...), and the mean."""
    return op.kind == "reduction" and (op.reduces is not None or op is ops.MEAN)


def generate_graph(graph: Graph, options: dict) -> LoopProgram:
    """The function running the whole of ``graph`` (its host, as one Numba function), called
    with the graph's inputs (and the host's buffers for large outputs): it reads its sizes,
    checks them and allocates its other arrays (``program_entry``)."""
    lowering = _ProgramLowering({}, options)
    lowering.whole, lowering.env = True, graph.shape_env
    for placeholder in graph.placeholders:
        lowering.values[placeholder] = lowering.input(placeholder)
    inputs = [lowering.values[p] for p in graph.placeholders]
    lowering.in_parallel = in_parallel(graph, options)  # (guards the entry then checks)
    lowering.entry = tuple(entry_statements(graph, inputs, lowering.symbols, lowering.size_table))
    lowering.graph(graph)
    returned = [v for v in graph.output_node.args[0] if isinstance(v, Node)]  # (not literals)
    results = [lowering.values[v] for v in returned]
    lowering.buffers_for_results(results)
    return lowering.finish(graph.name, results, [v.meta for v in returned])


# The most statements one loop nest's function may have (option ``max_loop_statements``): Numba
# compiles a function in time growing about quadratically with its size (1000 statements ~15 s).
MAX_LOOP_STATEMENTS = 400


def statements(graph: Graph) -> int:
    """The statements a program of ``graph`` has, those of its loop bodies and branches
    included; fused kernels count as one (compiled on their own)."""
    return sum(
        1
        for member_graph in program_graphs(graph)
        for member in member_graph.nodes
        if member.op in ("call", "constant")
    )


def check_budget(node: Node, options: dict) -> None:
    """Refuse (``UnsupportedError``: the function runs eagerly) a loop nest whose function would
    be too big to compile quickly (Numba's time grows faster than its size)."""
    budget = int(options.get("max_loop_statements", MAX_LOOP_STATEMENTS))
    count = sum(statements(region.graph) for region in node.target.regions)
    if count > budget:
        raise UnsupportedError(
            "a loop too large to compile",
            detail=f"the loop at {node.target.source or node.name} has {count} statements in its "
            f"body (budget {budget}, option max_loop_statements)",
            hint="move work out of the loop body, or split the loop",
        )


def check_program_budget(graph: Graph) -> None:
    """Refuse a whole graph with loops whose one program would take Numba seconds to compile:
    more than ``MAX_PROGRAM_STATEMENTS`` statements in all (a loop unrolled around a ``while``
    of the data, one per trip: 40 trips, 921 statements, 4.5 s)."""
    count = statements(graph)
    if count > MAX_PROGRAM_STATEMENTS:
        raise UnsupportedError(
            "a function too large to compile",
            detail=f"{graph.name}: one program of {count} statements (budget "
            f"{MAX_PROGRAM_STATEMENTS}); Numba's compile time grows faster than a function's size",
            hint="keep its loops rolled: see explain() for why a loop was unrolled",
        )


# The most statements one program of a whole graph with loops may have: the programs of public
# code have at most about 120 (npbench, pub2, sweeps E-G), a loop unrolled around a data-decided
# ``while`` 23 a trip; 600 compile in about 3 s.
MAX_PROGRAM_STATEMENTS = 600


# The most branches a graph may compile each as a function of its own (a host staying Python):
# about 0.3 s each (one program takes ``control.MAX_BRANCHES``, about 35 ms of Numba's each).
MAX_SEPARATE_BRANCHES = 24


def check_budget_of(graph: Graph, name: str, options: dict, separately: bool = False) -> None:
    """Refuse a graph's branches that would take Numba long to compile (the trips of a loop
    run in Python, unrolled, each an ``if`` of the data): in one program of branches and no
    loop, more statements in them than the loop budget or more than ``MAX_BRANCHES``; each
    compiled on its own (``separately``), more than ``MAX_SEPARATE_BRANCHES``."""
    budget = int(options.get("max_loop_statements", MAX_LOOP_STATEMENTS))
    branches = [node for node in graph.nodes if isinstance(node.target, Cond)]
    if separately and len(branches) > MAX_SEPARATE_BRANCHES:
        raise UnsupportedError(
            "a function too large to compile",
            detail=f"{name}: its {len(branches)} branches would each compile as a Numba "
            f"function of its own (more than {MAX_SEPARATE_BRANCHES}), the whole graph not "
            "being one",
            hint="keep its loops rolled: see explain() for why a loop was unrolled",
        )
    if separately:
        return
    count = sum(1 + sum(statements(r.graph) for r in node.target.regions) for node in branches)
    if count > budget or len(branches) > MAX_BRANCHES:
        raise UnsupportedError(
            "a function too large to compile",
            detail=f"{name} has {len(branches)} branches of {count} statements (budgets "
            f"{MAX_BRANCHES} and {budget}, option max_loop_statements); Numba's compile time "
            "grows faster than a function's size",
            hint="keep its loops rolled: see explain() for why a loop was unrolled",
        )


def signature(program: LoopProgram) -> tuple:
    """The Numba argument types the host passes: arrays as their metas promise (``A``: any
    layout), scalars as their dtypes, sizes as int64, constants as they are."""
    types = []
    for value in program.inputs:
        dtype = codegen.numba_type(value.meta.dtype)
        if _is_array(value):
            layout = value.meta.layout if value.meta.layout in ("C", "F") else "A"
            readonly = not value.meta.writeable
            types.append(nbtypes.Array(dtype, value.meta.ndim, layout, readonly=readonly))
        else:
            types.append(dtype)
    for shape, dtype, order in program.buffers:
        types.append(nbtypes.Array(codegen.numba_type(dtype), len(shape), order))
    types += [nbtypes.int64] * len(program.sizes)
    return tuple(types) + tuple(numba.typeof(array) for array in program.constants)


def module_preamble(program: LoopProgram, loaded: dict) -> str:
    """The lines importing the kernels the loop calls (``loaded``: global name -> cache key)."""
    lines = [
        "from gcompile.backends.numba import memory as _memory",
        "from gcompile.backends.numba.program_entry import GuardFailure as _GuardFailure",
        "from gcompile.ir.ops import RerunEagerly",
        "from gcompile.backends.numba.cache import dispatcher_of as _dispatcher_of",
    ]
    if program.blas:
        lines.append("from gcompile.backends.numba.blas import matmul_into as _matmul_into")
    if program.objmode:
        lines.append("from numba import objmode as _objmode")
        lines.append("from gcompile.ir.callbacks import run_registered as _run_callback")
    lines += [f"import {module}" for module in sorted(program.libraries)]
    lines += [f"from gcompile.backends.numba import {m} as _{m}" for m in sorted(program.helpers)]
    lines.append("")
    lines += [f"{name} = _dispatcher_of({key!r})" for name, key in sorted(loaded.items())]
    return "\n".join(lines) + "\n\n"


def _is_array(value: Node) -> bool:
    return value.meta.ndim > 0


class _ProgramLowering(
    ControlLowering, RegionLowering, ProgramKernelCalls, ProgramProducts, ExternCalls
):
    """Lowers the nodes of a loop nest, or of a whole graph, into the statements of one loop
    program (one instance per generated function)."""

    def __init__(self, sizes: dict, options: dict):
        # symbol -> the variable holding it: the host's sizes, then loop indices as they open
        self.symbols = {symbol: Var(name) for symbol, name in sizes.items()}
        self.sizes_given = list(sizes.values())
        self.options = options
        self.statements: list = []  # of the block being lowered
        self.inputs: list[Node] = []
        self.constants: list = []
        self.buffers: list = []
        self.made: dict = {}  # an array allocated at the top level -> (shape, dtype, order)
        self.buffer_of: dict = {}  # a buffer's variable (or one bound to it) -> its position
        self.values: dict[Node, object] = {}  # node -> the expression of its value
        self.kernels: dict[Var, kernels.Variant] = {}  # a kernel's global -> the Variant called
        self.orders: dict[Node, list] = {}  # a kernel node -> the order of each output it makes
        self.in_loop_buffers: dict = {}  # (kernel node, output) -> (its buffer, order) in loops
        self.loop_indices: set = set()  # the index symbols of the loops opened so far
        self.depth = 0  # the loops around the statements being lowered
        self.open_loops: list = []  # (loop node, the statements around its loop), outermost first
        self.whole = False  # the whole graph: its top-level kernels run as the host's would
        self.in_parallel: dict = {}  # its top-level kernels -> whether they run in parallel
        self.env = None  # the trace's sizes, which rewrites read as hints (``program_parallel``)
        self.entry: tuple = ()  # a whole graph's: its sizes read and checked (``program_entry``)
        self.blas = False
        self.helpers: set = set()  # (module names: ``LoopProgram.helpers``)
        self.objmode = False
        self.libraries: set = set()  # (SciPy's modules its library calls name)
        self.callbacks: list = []

    def buffer(self, buffer: tuple) -> Var:
        """The parameter of a new buffer ``(shape, dtype, order)`` the host passes."""
        self.buffers.append(buffer)
        variable = Var(f"b{len(self.buffers) - 1}")
        self.buffer_of[variable] = len(self.buffers) - 1
        return variable

    def input(self, value: Node) -> Var:
        """The parameter of a value the host passes."""
        self.inputs.append(value)
        return Var(f"a{len(self.inputs) - 1}")

    def finish(self, name: str, results: list, outputs: list) -> LoopProgram:
        """The program: its statements as a loop IR kernel, rewritten and rendered."""
        params = [
            Param(Var(f"a{i}"), ("input", i), v.meta.dtype, v.meta.ndim)
            for i, v in enumerate(self.inputs)
        ]
        params += [
            Param(Var(f"b{i}"), ("buffer", i), dtype, len(shape), order)
            for i, (shape, dtype, order) in enumerate(self.buffers)
        ]
        params += [Param(Var(s), ("size", s), np.dtype(np.int64)) for s in self.sizes_given]
        params += [
            Param(Var(f"c{i}"), ("constant", i), c.dtype, c.ndim)
            for i, c in enumerate(self.constants)
        ]
        in_buffers = [self.buffer_of.get(r) if isinstance(r, Var) else None for r in results]
        returned = tuple(r for r, buffer in zip(results, in_buffers) if buffer is None)
        body = (*self.statements, Return(returned, bare=len(returned) <= 1))
        symbols = tuple(self.symbols.items())
        program = Kernel(name, tuple(params), body, (), (), entry=self.entry, symbols=symbols)
        ctx = MathContext(
            parallel=bool(self.options.get("parallel", True)),
            parallel_threshold=int(self.options["parallel_threshold"]),
        )
        with using(self.env):
            program = apply_rewrites(program, ctx, PROGRAM_REWRITES)
        names = Namespace(True, ())
        source, _ = render(program, True, names)
        called = {names.var(var): variant for var, variant in self.kernels.items()}
        return LoopProgram(
            source,
            self.inputs,
            outputs,
            self.sizes_given,
            called,
            self.constants,
            self.buffers,
            self.blas,
            frozenset(self.helpers),
            self.objmode,
            self.callbacks,
            program.parallel,
            in_buffers,
            libraries=frozenset(self.libraries),
        )

    def emit(self, statement) -> None:
        self.statements.append(statement)

    def fresh(self, base: str) -> Var:
        """A new variable (the renderer's namespace keeps names unique across nested graphs)."""
        return Var("", _Named(base))

    def size(self, value):
        """An int, or a symbolic expression over sizes and loop indices."""
        unknown = free_symbols(value) - set(self.symbols) if is_expr(value) else ()
        if unknown:
            raise NoTemplate(f"a size the host cannot compute ({min(map(str, unknown))})")
        return size_of(value)

    def graph(self, graph: Graph) -> None:
        for node in graph.nodes:
            if node.op == "constant":
                self.constant(node)
            elif node.op == "call":
                self.call(node)

    def value(self, value):
        """The expression of an operand: a node's value, a literal, or a size."""
        if isinstance(value, Node):
            return self.values[value]
        if isinstance(value, np.generic):
            return Const(value.item(), value.dtype)
        if isinstance(value, (bool, float, complex)):
            return Const(value)
        if isinstance(value, int) or is_expr(value):
            return self.size(value)
        raise NoTemplate(f"a Python object in a loop body ({type(value).__name__})")

    def constant(self, node: Node) -> None:
        """A scalar as a literal; an array as a parameter (the host passes the array)."""
        value = node.target
        if isinstance(value, np.ndarray) and value.ndim > 0:
            self.values[node] = self.array_constant(value)
        else:
            self.values[node] = Const(np.asarray(value).item(), node.meta.dtype)

    def array_constant(self, value: np.ndarray) -> Var:
        """The parameter of an array the host passes as it is."""
        self.constants.append(value)
        return Var(f"c{len(self.constants) - 1}")

    def size_table(self, table: np.ndarray) -> Var:
        """The parameter of the entry's table of size checks (``size_checks``)."""
        self.helpers.add("size_checks")
        return self.array_constant(table)

    def call(self, node: Node) -> None:
        """The statements of one call node, under its IR line and the user's ``file:line``."""
        self.emit(Comment(node))
        target = node.target
        if isinstance(target, CONTROL):
            results = self.control(node, [self.value(v) for v in node.args])
            self.values[node] = results[0] if results else Tuple(())  # (a loop for its effects)
            if len(results) > 1:
                self.assign(node, Tuple(tuple(results)))
        elif isinstance(target, FusedKernel):
            self.kernel(node)
        elif target is ops.KERNEL_OUTPUT:
            self.assign(node, Item(self.values[node.args[0]], (Const(node.kwargs["item"]),)))
        elif target is ops.GETITEM and node.args[0].meta.ndim == 0:  # x[()]: a scalar already
            self.values[node] = self.values[node.args[0]]
        elif target is ops.GETITEM:
            items = self.items(node.kwargs["index"], node.args[0].meta.ndim)
            self.assign(node, Item(self.values[node.args[0]], items))
        elif target is ops.STORE:
            self.store(node)
        elif target is ops.UPDATE:
            self.update(node)
        elif target in (ops.PUT_STORE, ops.PUT_UPDATE):
            self.put(node)
        elif target is ops.WRITEBACK:
            self.writeback(node)
        elif target in (ops.MATMUL, ops.DOT):
            self.product(node)
        elif target is ops.EXTERN:
            self.extern(node)
        elif target is ops.ELEMENT:
            self.element(node)
        elif target in (ops.CHECK, ops.RAISE_UNLESS):
            self.check(node)
        elif target is ops.CALLBACK:
            self.callback(node)
        elif target is ops.SYMINT:
            self.assign(node, self.size(node.kwargs["expr"]))
        elif scans.kind_of(node) is not None:
            self.scan(node)
        elif target in _FILLS:
            self.creation(node)
        elif target is ops.LINSPACE:
            self.linspace(node)
        elif target is ops.ARANGE:
            self.arange(node)
        elif target is ops.EYE:
            self.eye(node)
        elif target in (ops.STACK, ops.CONCATENATE):
            self.joined(node)
        elif target in RESHAPING or target in (ops.TRANSPOSE, ops.BROADCAST_TO, ops.SLIDING_WINDOW):
            self.assign(node, self.view(node))
        elif target.kind == "elementwise" and node.meta.ndim == 0:
            self.assign(node, self.scalar(node))
        elif _of_one_element(target) and node.args[0].meta.ndim == 0:
            (x,) = node.args  # (``np.sum(np.sum(a))``: the element, in the result's dtype)
            self.assign(node, typed(self.values[x], x.meta.dtype, node.meta.dtype))
        else:
            raise NoTemplate(f"{target.name} in a loop body")

    def element(self, node: Node) -> None:
        """``x[i, k]`` with ``k`` read from the data: NumPy's IndexError when ``k`` is out of
        range (a negative one counts from the end, as Numba's subscript does). A region
        (``x[k, 1:]``) is copied: the graph's value, which later stores must not reach."""
        array, *positions = node.args
        items = self.checked_items(array.meta.shape, node.kwargs["index"], positions)
        found = Item(self.values[array], items)
        self.assign(node, Call(Attr(found, "copy")) if node.meta.ndim else found)

    def checked_items(self, shape: tuple, index: tuple, positions: list) -> tuple:
        """The items of an ``element`` (``put``) index into an array of ``shape``, each None
        of ``index`` the next of ``positions``, after NumPy's IndexError when one is out of
        range (a negative one counts from the end, as Numba's subscript does)."""
        given = iter(positions)
        items = []
        for axis, (size, item) in enumerate(zip(shape, index)):
            if item is not None:
                items.append(self.item(item))
                continue
            position, extent = self.value(next(given)), self.size(size)
            items.append(position)
            low = Compare(("<",), (position, BinOp("-", Const(0), extent)))
            outside = BoolOp("or", (low, Compare((">=",), (position, extent))))
            message = f"an index read from the data is out of bounds for axis {axis}"
            self.emit(If(outside, (Raise("IndexError", message),)))
        return tuple(items)

    def check(self, node: Node) -> None:
        """``value`` once ``ok`` holds, else the node's error (``ops.CHECK``, ``ops.RAISE_UNLESS``)."""
        value, ok = node.args
        failed = Compare(("==",), (self.value(ok), Const(False)))
        self.emit(If(failed, (Raise(node.kwargs["error"], node.kwargs["message"]),)))
        self.values[node] = self.value(value)

    def assign(self, node: Node, expression) -> None:
        variable = self.fresh(node.name)
        self.emit(Let(variable, expression))
        self.values[node] = variable

    def creation(self, node: Node) -> None:
        meta = node.meta
        if meta.layout == "F" and meta.ndim > 1:
            raise NoTemplate("a Fortran-ordered array created in a loop body")
        fill = _FILLS[node.target]
        fill = None if fill is None else Const(np.array(fill, meta.dtype).item(), meta.dtype)
        if self.top() and meta.ndim and not small_output(node, meta):
            # (a large array from the host's pool: one the caller dropped is written again)
            self.values[node] = self.buffer(
                (tuple(meta.shape), meta.dtype, memory_order(meta.layout))
            )
            if fill is not None:
                self.emit(Assign(Item(self.values[node], (Name("..."),)), fill))
            return
        variable = self.fresh(node.name)
        self.emit(Alloc(variable, self.shape(meta.shape), meta.dtype, fill))
        self.values[node] = variable
        if self.top() and meta.ndim:
            self.made[variable] = (tuple(meta.shape), meta.dtype, memory_order(meta.layout))

    def scan(self, node: Node) -> None:
        """A scan (``np.cumsum``, ``np.maximum.accumulate``): the loop of ``scans`` on
        views of the operand and the result with the axis moved last (all of a flattened
        operand: one axis)."""
        (x,) = node.args
        if not isinstance(x, Node) or x.meta.ndim == 0:
            raise NoTemplate(f"{node.target.name} of a scalar in a loop body")
        axis, source = node.kwargs.get("axis"), self.values[x]
        if axis is None and x.meta.ndim > 1:
            source = reshaped(
                Call(Name("np.ascontiguousarray"), (source,)), self.shape(node.meta.shape)
            )
        out = self.output_buffer(node, 0, node.meta, "C")
        into, ndim = out, node.meta.ndim
        moved = scans.moved_last(ndim, 0 if axis is None else axis)
        source, into = (self.transposed(v, moved) for v in (source, out))
        kind = Const(scans.kind_of(node))
        self.emit(Eval(Call(Name("_scans.last_axis"), (source, into, kind))))
        self.helpers.add("scans")
        self.assign(node, out)

    def linspace(self, node: Node) -> None:
        """``np.linspace(start, stop, num)`` of float64 (Numba's gives NumPy's values, the
        last one ``stop`` itself)."""
        kwargs = node.kwargs
        default = kwargs.get("endpoint", True) is True and kwargs.get("axis", 0) == 0
        if not default or node.meta.dtype != np.float64 or node.args:
            raise NoTemplate("linspace with endpoint, axis, dtype or array bounds in a loop body")
        bounds = tuple(self.value(kwargs.get(k, d)) for k, d in (("start", 0.0), ("stop", 1.0)))
        self.assign(node, Call(Name("np.linspace"), (*bounds, self.size(kwargs["num"]))))

    def arange(self, node: Node) -> None:
        """``np.arange`` in a loop body, of integer bounds and step (sizes too), in an integer or
        float dtype: Numba's integer ``arange``, cast (every value exact)."""
        if self.top():  # (the host's: fused into the kernels that read it)
            raise NoTemplate("arange outside loops runs in the host")
        kwargs, dtype = node.kwargs, node.meta.dtype
        start, stop, step = (kwargs.get(k) for k in ("start", "stop", "step"))
        start, stop = (0, start) if stop is None else (start, stop)  # (np.arange's own reading)
        bounds = [0 if start is None else start, stop, 1 if step is None else step]
        if dtype.kind not in "iuf" or not all(is_int(b) or is_expr(b) for b in bounds):
            raise NoTemplate("arange of float bounds or steps in a loop body")
        values = Call(Name("np.arange"), tuple(self.size(b) for b in bounds))
        self.assign(node, Call(Attr(values, "astype"), (Name(f"np.{dtype.name}"),)))

    def joined(self, node: Node) -> None:
        """``np.stack`` and ``np.concatenate``: a new array, each operand stored into its part
        (``np.array([a, b, c])`` of scalars: three element stores)."""
        meta = node.meta
        stacking = node.target is ops.STACK
        axis = node.kwargs.get("axis", 0)
        if axis is None or meta.ndim == 0:
            raise NoTemplate(f"{node.target.name} of flattened operands")
        axis %= meta.ndim
        variable = self.fresh(node.name)
        self.emit(Alloc(variable, self.shape(meta.shape), meta.dtype))
        self.values[node] = variable
        offset = 0
        for position, operand in enumerate(node.args):
            lead = (Slice(),) * axis
            if stacking:
                part = lead + (Const(position),)
                region = meta.shape[:axis] + meta.shape[axis + 1 :]
            else:
                extent = operand.meta.shape[axis] if isinstance(operand, Node) else 1
                part = lead + (Slice(self.size(offset), self.size(offset + extent)),)
                region = meta.shape[:axis] + (extent,) + meta.shape[axis + 1 :]
                offset = offset + extent
            if isinstance(operand, Node) and operand.meta.ndim:
                self.write_items(Item(variable, part), region, node, operand)
                continue
            value = self.value(operand)
            if isinstance(operand, Node):
                value = Cast(value, operand.meta.dtype, meta.dtype)
            self.emit(Assign(Item(variable, part), value))

    def eye(self, node: Node) -> None:
        """``np.eye(N, M, k)`` in C order (Numba's: ones on the ``k``-th diagonal)."""
        kwargs = node.kwargs
        if kwargs.get("order", "C") != "C" or is_expr(kwargs.get("k", 0)):
            raise NoTemplate("eye in F order, or with a diagonal given as a size, in a loop body")
        rows = self.size(kwargs["N"])
        columns = rows if kwargs.get("M") is None else self.size(kwargs["M"])
        dtype = Name(f"np.{node.meta.dtype.name}")
        self.assign(node, Call(Name("np.eye"), (rows, columns, Const(kwargs.get("k", 0)), dtype)))

    def scalar(self, node: Node) -> Apply:
        """One scalar elementwise op, as its Numba rule writes it."""
        operands = []
        for value in node.args:
            if isinstance(value, Node):
                kind = value.meta.dtype
                if value.meta.weak:
                    kind = type(np.zeros((), kind).item())
                operands.append((self.values[value], kind))
            else:
                kind = type(value) if not isinstance(value, np.generic) else value.dtype
                operands.append((value, kind))
        kinds = [k for _, k in operands]
        loop = operand_dtypes(node, kinds)
        if loop is None:
            raise NoTemplate(f"{node.target.name}: no NumPy loop for {kinds}")
        args = tuple(typed(e, k, d) for (e, k), d in zip(operands, loop))
        return Apply(node.target, node, args, loop, tuple(kinds), where="scalar")

    def top(self) -> bool:
        """Whether the statements lowered are the top level of a whole graph's program."""
        return self.whole and not self.depth


@dataclass(frozen=True, eq=False)
class _Named:
    """A stand-in with a name, for the namespace's unique identifiers."""

    name: str
