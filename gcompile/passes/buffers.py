"""Buffer assignment: a write goes straight into the memory it updates, not into copies.

    %fused_1     : f64[s0-2,s1-2] = fused_1(%a)                %fused_1 : f64[s0,s1] = fused_1(%b, %a)
    %update_1    : f64[s0,s1] = update(%b, %fused_1,      =>     graph fused_1(b, a):
                                       index=[1:-1, 1:-1])          ...
    %writeback_1 : f64[s0,s1] = writeback(%b, %update_1)            %store_1 = store(%b, %multiply_1,
    return None                                                                      index=[1:-1, 1:-1])
                                                               return None

Functionalization (``functionalize.py``) turns every write into an ``update`` (a copy of the
whole array with the region replaced) and every written argument into a ``writeback`` (a copy
into the caller's array): exact, but two full copies for ``B[1:-1, 1:-1] = ...``. After fusion,
this pass undoes them where nothing needs the old values:

1. An ``update`` becomes a ``store`` (the region written in place, the node's value the array
   itself; a ``put_update``, at positions read from the data, a ``put_store``) when the array
   is memory the graph may write (an argument the function writes, or an array it made; never
   an array read from outside) and no reader of its old value depends on the write, so every
   such reader can run before it. ``Graph.sort`` then orders them so.
2. A store folds into the kernel computing the stored value: the kernel writes its result
   straight into the region (``FusedKernel.mutates``; no temporary). Legal when the kernel's
   one result is the region's shape and dtype, it reads no other version of that memory, and
   every read it makes of the array is either the element it writes in the same iteration
   (the same index map: ``x[1:] = np.exp(x[1:])``) or provably elsewhere (an address range
   disjoint from the region's: ``A[2, :] = A[0, :] * c``). Otherwise the kernel's result stays
   a temporary and the store copies it in, as NumPy does: ``u[1:-1] = u[:-2] + u[2:]`` reads
   the region's neighbours, which an in-place loop would already have overwritten. (The Numba
   backend copies with a loop compiled once per machine, parallel on large arrays.)
3. A ``writeback`` of an argument whose newest value already lives in the caller's array is
   dropped; readers of the written argument read that value (the same array object).
4. A loop (or branch) carrying an array runs in that array's memory where its graphs write
   it in place and nothing needs its old value after the loop.
5. A kernel whose result has the shape and dtype of an array it reads, an array the graph
   made that nothing reads after the kernel, writes its result there (the legality of 2), as
   NumPy reuses a dying temporary: ``lap[...] = ...; return lap / h**2`` allocates once.

Arguments written in place are written during the call, not at its end, so a graph whose
Python arithmetic may refuse at run time (``x ** y`` of Python floats can turn complex; the
call then reruns eagerly) keeps its copies and write-backs: a rerun must see the arguments
unchanged.
"""

from __future__ import annotations

from ..ir import layout, ops
from ..ir.alias import alias_parent, copied_region, memory_of, memory_readers, store_region
from ..ir.graph import Graph, Node
from ..ir.kernel import FusedKernel
from ..ir.meta import TupleMeta
from ..ir.printer import format_index
from ..ir.shape_env import using
from ..ir.subgraph import subgraphs_of

# the in-place form of each functional update
_STORES = {ops.UPDATE: ops.STORE, ops.PUT_UPDATE: ops.PUT_STORE}


def assign_buffers(graph: Graph) -> bool:
    """Write updates in place and into the kernels computing them (see the module docstring);
    True if anything changed."""
    notes, changed = [], False
    with using(graph.shape_env):
        for update in [n for n in graph.nodes if n.op == "call" and n.target in _STORES]:
            why_not = _in_place(graph, update.args[0], update)
            if why_not:
                notes.append(f"%{update.name} copies %{update.args[0].name}: {why_not}")
                continue
            store = _to_store(graph, update)
            changed = True
            if store.target is ops.STORE:
                notes.append(_fold(graph, store, store.kwargs))
            else:  # (its positions are read from the data: no kernel writes at them)
                notes.append(f"%{store.name} writes %{store.args[0].name} in place")
        changed |= _loops_in_place(graph, notes)
        changed |= _drop_writebacks(graph)
        for writeback in _writebacks_of_kernels(graph):
            note = _fold(graph, writeback, {"index": (Ellipsis,)})
            changed |= "no temporary" in note
            notes.append(note)
        changed |= _into_dead_temporaries(graph, notes)
        if changed:
            graph.sort()
    report = graph.notes.fusion
    if report is not None:  # (explain() shows these beside fusion's own decisions)
        report.notes += notes
    return changed


assign_buffers.skips_kernels = True  # (a kernel's own graph holds no update)
assign_buffers.nested_first = True  # (a loop runs in place when its body writes in place)


# -- 1. in place ------------------------------------------------------------------------------


def _in_place(graph: Graph, base: Node, update: Node) -> str | None:
    """Why ``base`` cannot be written in place by ``update`` (an update, or a loop carrying
    it), or None (module docstring, 1)."""
    memory = memory_of(base)
    if alias_parent(base) is not None or not base.meta.writeable:
        return "it is a view, or read-only"
    if memory.op == "constant":
        return "an array read from outside the function is never written"
    if memory.op == "placeholder" and not _written_back(memory):
        return "the function does not write that argument"
    if memory.op == "placeholder" and any(_may_refuse(n) for n in graph.nodes):
        return "Python arithmetic may refuse at run time, then eager mode reruns the call"
    others = _old_value_readers(base, update)
    if any(_writes(reader, memory) for reader in others):
        return "another write starts from the same value"
    later = _descendants(update)
    if any(reader in later for reader in others):
        return "its old value is read after the write"
    return None


def _old_value_readers(base: Node, update: Node) -> list:
    """The nodes reading ``base``'s memory as it is before ``update`` (directly or through
    views): its readers, but for ``update`` and the write-back into it (which writes the
    newest value there at the end, reading none)."""
    return [
        reader
        for reader in memory_readers(base)
        if reader is not update and not (reader.target is ops.WRITEBACK and reader.args[0] is base)
    ]


def _writes(node: Node, memory: Node) -> bool:
    """Whether ``node`` writes into ``memory`` (a kernel storing into another array does not)."""
    return any(
        isinstance(node.args[i], Node) and memory_of(node.args[i]) is memory
        for i in node.written_arguments
    )


def _written_back(placeholder: Node) -> bool:
    return any(user.target is ops.WRITEBACK for user in placeholder.users if user.op == "call")


def _may_refuse(node: Node) -> bool:
    """Python arithmetic whose result type may change with the values (the interpreter refuses
    such a call at run time, which then reruns eagerly)."""
    return (
        node.op == "call"
        and node.meta is not None
        and node.meta.weak
        and (node.target is ops.POWER)
    )


def _descendants(node: Node) -> set:
    found, pending = set(), [node]
    while pending:
        for user in pending.pop().users:
            if user not in found:
                found.add(user)
                pending.append(user)
    return found


def _to_store(graph: Graph, update: Node) -> Node:
    with graph.inserting_before(update):
        store = graph.call(_STORES[update.target], update.args, update.kwargs, source=update.source)
    graph.replace_all_uses_with(update, store)
    graph.erase(update)
    return store


# -- 2. into the kernel ----------------------------------------------------------------------------


def _fold(graph: Graph, writer: Node, params: dict) -> str:
    """Make the kernel computing the value ``writer`` (a ``store``, or a ``writeback`` of the
    whole array) writes into ``writer``'s first argument write it there itself, if legal;
    the note saying what was done."""
    base, kernel = writer.args[:2]
    where = f"%{base.name}[{format_index(params['index'])[1:-1]}]"
    region = store_region(base, params)
    why_not = "no flat memory" if region is None else _foldable(kernel, base, region)
    if why_not:
        if writer.target is ops.STORE and copied_region(writer) is not None:
            why_not += "; a copy loop writes it in"
        return f"%{writer.name} writes {where} in place; {why_not}"
    target: FusedKernel = kernel.target
    sub = target.graph
    destination = _first_placeholder(sub, base, kernel)
    result = sub.output_node.args[0][0]
    with sub.inserting_before(sub.output_node):
        written = sub.call(ops.STORE, (destination, result), params, source=writer.source)
    sub.output_node.args = ((written,),)
    kernel.meta = base.meta
    graph.replace_all_uses_with(writer, kernel)
    graph.erase(writer)
    return f"%{kernel.name} writes its result into {where} (no temporary)"


def _foldable(kernel, base: Node, region: layout.Strided) -> str | None:
    """Why the kernel computing the stored value cannot write it into ``region`` itself, or
    None (module docstring, 2)."""
    target = getattr(kernel, "target", None)  # (the value may be a literal)
    if not isinstance(target, FusedKernel) or target.style == "epilogue":
        return "the value is not a fused kernel's result"
    if isinstance(kernel.meta, TupleMeta) or len(kernel.users) != 1 or target.mutates:
        return f"%{kernel.name}'s result is read elsewhere too"
    meta = kernel.meta
    if meta.dtype != base.meta.dtype or tuple(meta.shape) != tuple(region.shape):
        return f"%{kernel.name}'s result is cast or broadcast into the region"
    if tuple(target.space) != tuple(meta.shape):
        return f"%{kernel.name}'s result is a reduction's, known after its loop"
    memory = memory_of(base)
    for arg in kernel.args:
        if isinstance(arg, Node) and arg is not base and memory_of(arg) is memory:
            return f"%{kernel.name} reads an older value of that memory"
    if base in kernel.args:
        placeholder = target.graph.placeholders[kernel.args.index(base)]
        if not all(_harmless(read, region) for read in _reads(placeholder)):
            return (
                f"%{kernel.name} reads the region through another index map, so its result "
                "is a temporary, as in NumPy"
            )
    return None


def _reads(placeholder: Node) -> list:
    """The values the kernel's ops read from ``placeholder``'s memory: ``(value, views)``."""
    found, pending = [], [(placeholder, [])]
    while pending:
        value, views = pending.pop()
        for user in value.users:
            if user.op == "call" and user.kind == "view":
                pending.append((user, views + [user]))
            else:
                found.append((value, views))
    return found


def _harmless(read: tuple, region: layout.Strided) -> bool:
    """Whether a read never sees an element the kernel has already overwritten: it reads the
    element written in the same iteration, or memory outside the region."""
    value, views = read
    strided = layout.of_meta(views[0].args[0].meta if views else value.meta)
    for view in views:
        strided = view.target.strided(strided, **view.kwargs)
        if strided is None:
            return False
    same = (strided.shape, strided.strides, strided.offset) == (
        region.shape,
        region.strides,
        region.offset,
    )
    return same or layout.disjoint(strided, region)


def _first_placeholder(sub: Graph, base: Node, kernel: Node) -> Node:
    """The kernel's placeholder for ``base``, made its first (its memory is written)."""
    first = sub.nodes[0]
    with sub.inserting_before(first):
        destination = sub.placeholder(base.name, base.meta)
    args = list(kernel.args)
    if base in args:
        old = sub.placeholders[args.index(base) + 1]  # (the new one is first)
        sub.replace_all_uses_with(old, destination)
        sub.erase(old)
        args.remove(base)
    kernel.args = (base, *args)
    return destination


# -- 5. into a dead temporary ---------------------------------------------------------------------


def _into_dead_temporaries(graph: Graph, notes: list) -> bool:
    """Let a kernel write its result into an array the graph made that it reads and that
    nothing reads after it, instead of into new memory (module docstring, 5)."""
    changed = False
    for kernel in [n for n in graph.nodes if n.op == "call" and isinstance(n.target, FusedKernel)]:
        for temporary in _dead_temporaries(graph, kernel):
            with graph.inserting_after(kernel):
                store = graph.call(ops.STORE, (temporary, kernel), {"index": (Ellipsis,)})
            graph.replace_all_uses_with(kernel, store)
            store.args = (temporary, kernel)
            note = _fold(graph, store, store.kwargs)
            if "no temporary" in note:
                notes.append(
                    f"%{kernel.name} writes its result into %{temporary.name}, dead after it"
                )
                changed = True
                break
            graph.replace_all_uses_with(store, kernel)
            graph.erase(store)
    return changed


def _dead_temporaries(graph: Graph, kernel: Node) -> list:
    """The arguments of ``kernel`` of its result's shape and dtype whose memory the graph
    made (never an argument's or a constant's) and no node needs after ``kernel``."""
    target = kernel.target
    if target.mutates or target.style == "epilogue" or isinstance(kernel.meta, TupleMeta):
        return []
    found, later = [], None
    for value in dict.fromkeys(a for a in kernel.args if isinstance(a, Node)):
        memory = memory_of(value)
        same = value.meta.dtype == kernel.meta.dtype and value.meta.shape == kernel.meta.shape
        if not same or memory.op != "call" or alias_parent(value) is not None:
            continue
        if not memory.meta.writeable or subgraphs_of(memory):
            continue
        later = graph.followers(kernel) if later is None else later  # (its users, and the
        # writes into what it reads: a reader of the temporary such a write needs first
        # cannot run before it)
        if _dead_after(graph, memory, value, kernel, later):
            found.append(value)
    return found


def _dead_after(graph: Graph, memory: Node, value: Node, kernel: Node, later: set) -> bool:
    """Whether ``value`` is the newest version of ``memory`` and no reader of any version of
    it runs after ``kernel`` (nor returns it)."""
    versions = [n for n in graph.nodes if n.op == "call" and memory_of(n) is memory]
    if any(v in later for v in versions):
        return False
    if any(u is not kernel and value in u.args and _writes(u, memory) for u in value.users):
        return False
    for version in versions:
        for reader in memory_readers(version):
            if reader is not kernel and (reader in later or reader.op == "output"):
                return False
    return True


# -- 4. loops -----------------------------------------------------------------------------------


def _loops_in_place(graph: Graph, notes: list) -> bool:
    """Let each loop (or branch) run in the memory of the arrays it carries where its graphs
    write them in place and nothing needs their old values after it (module docstring, 4)."""
    changed = False
    for node in graph.nodes:
        loop = node.target if subgraphs_of(node) else None
        if loop is None or not loop.carries:
            continue
        for position, output in loop.carries:
            argument = node.args[position]
            if position in loop.in_place or not _in_own_memory(loop, position, output):
                continue
            why_not = (
                _in_place(graph, argument, node) if isinstance(argument, Node) else "a literal"
            )
            if why_not is None and _shared(node, position):
                why_not = "the loop reads that memory through another argument too"
            if why_not:
                what = f"%{argument.name}" if isinstance(argument, Node) else repr(argument)
                notes.append(f"%{node.name} copies {what} before it runs: {why_not}")
                continue
            loop.in_place = loop.in_place | {position}
            notes.append(f"%{node.name} carries %{argument.name} in its own memory")
            changed = True
    return changed


def _in_own_memory(op, position: int, output: int) -> bool:
    """Whether every graph of ``op`` (a loop's body; a branch's two) returns as ``output`` the
    memory of its placeholder for argument ``position`` (written in place, or unchanged); a
    while loop's test returns its predicate, no carried value."""
    for region in op.regions:
        if region.role == "test":
            continue
        if position not in region.operands:
            return False
        placeholder = region.graph.placeholders[region.operands.index(position)]
        value = region.graph.output_node.args[0][output]
        if not (isinstance(value, Node) and memory_of(value) is placeholder):
            return False
    return True


def _shared(node: Node, position: int) -> bool:
    memory = memory_of(node.args[position])
    others = [a for i, a in enumerate(node.args) if i != position and isinstance(a, Node)]
    return any(memory_of(a) is memory for a in others)


# -- 3. write-backs ---------------------------------------------------------------------------------


def _writebacks_of_kernels(graph: Graph) -> list:
    """Write-backs of a kernel's result (``x[...] = f(x)``) that the kernel may write into the
    argument itself: the argument's old value is needed by nothing after the kernel."""
    found = []
    for node in graph.nodes:
        if node.op != "call" or node.target is not ops.WRITEBACK:
            continue
        target, value = node.args
        if not isinstance(getattr(value, "target", None), FusedKernel):
            continue
        if any(_may_refuse(n) for n in graph.nodes):
            continue
        others = [r for r in _old_value_readers(target, node) if r is not value]
        later = _descendants(value)
        if not any(r.is_mutation or r in later for r in others):
            found.append(node)
    return found


def _drop_writebacks(graph: Graph) -> bool:
    """Drop the write-backs whose value is already in the caller's array (module docstring, 3)."""
    changed = False
    for node in graph.nodes:
        if node.op == "call" and node.target is ops.WRITEBACK:
            target, value = node.args
            whole = isinstance(value, Node) and alias_parent(value) is None  # (not a view of it)
            if whole and value is not target and memory_of(value) is target:
                graph.replace_all_uses_with(node, value)
                graph.erase(node)
                changed = True
    return changed
