"""PassManager: runs named passes over a graph, verifying, timing and dumping after each.

The pipeline is a flat list of named steps (like tinygrad's ``full_rewrite_to_sink``):

    CLEANUP  = [constant_fold, simplify, cse, dce]     repeated until nothing changes
    OPTIMIZE = [unroll_loops, functionalize]              once, then to a fixpoint:
               [vector_products, scalar_factors, batched_rows, hoist_invariants]
               + CLEANUP                                  stage "optimized"
    FUSE     = [fuse, assign_buffers]                  stage "fused"

Each pass runs on the graph and then on every graph nested in it (``ir/subgraph.py:
graphs_in``: a fused kernel's body, a loop's), top level first. A pass function that says
``skips_kernels = True`` runs on the program's graphs only (``program_graphs``: the top level
and loop bodies, not fused kernels' bodies: fusing a kernel's body would nest kernels in
kernels); ``functools.partial`` of such a pass keeps saying it.

``compile(..., options={"passes": [...], "disable": [...]})`` selects passes by
the names used here and in the log. With ``GCOMPILE_VERIFY=1`` (the test suite sets it) the
graph is verified at the end of each run, a failure naming the passes that ran since the last
verification; with ``GCOMPILE_VERIFY=each`` (the pass tests set it), after every pass that
changed it, its metas checked against their ops' inference before they are derived again: a
failure names the pass and the passes that ran before it. With ``GCOMPILE_DEBUG_DIR`` set, the graph text after
each pass is written to that folder.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import config
from ..errors import UnsupportedError
from ..ir.graph import Graph
from ..ir.meta import TensorMeta
from ..ir.shape_env import using
from ..ir.subgraph import graphs_in, program_graphs, regions_of, walk
from ..ir.symbolic import prove_eq
from .buffers import assign_buffers
from .constant_fold import constant_fold
from .cse import cse
from .dce import dce
from .functionalize import functionalize
from .fuse import MAX_KERNEL_OPS, fuse
from .hoist import hoist_invariants
from .products import batched_rows, scalar_factors, vector_products
from .simplify import simplify
from .unroll import unroll_loops

Pass = Callable[[Graph], bool]

CLEANUP: list[tuple[str, Pass]] = [
    ("constant_fold", constant_fold),
    ("simplify", simplify),
    ("cse", cse),
    ("dce", dce),
]
OPTIMIZE: list[tuple[str, Pass]] = [
    ("unroll_loops", unroll_loops),
    ("functionalize", functionalize),
    ("vector_products", vector_products),
    ("scalar_factors", scalar_factors),
    ("batched_rows", batched_rows),
    ("hoist_invariants", hoist_invariants),
    *CLEANUP,
]
_ONCE = ("unroll_loops", "functionalize")  # the rest of OPTIMIZE repeats to a fixpoint
FUSE: list[tuple[str, Pass]] = [("fuse", fuse), ("assign_buffers", assign_buffers)]
PASS_NAMES = tuple(name for name, _ in OPTIMIZE + FUSE)
STAGES = ("traced", "optimized", "fused")
REQUIRED = ("functionalize",)
# Lowerings for generated code, not for the interpreter (which runs NumPy's own ops exactly):
# a vector product as a fused sum sums in another (valid) order than BLAS, and a scalar factor
# moved out of a product rounds once instead of once per term.
GENERATED_CODE_ONLY = (
    "vector_products",
    "scalar_factors",
    "batched_rows",
)  # backends rely on a graph without in-place setitem nodes

_MAX_ROUNDS = 8


def skips_kernels(step: Pass) -> bool:
    """Whether the pass ``step`` (or the pass it binds arguments of) says ``skips_kernels``."""
    while isinstance(step, functools.partial):
        step = step.func
    return getattr(step, "skips_kernels", False)


def _graphs_for(step: Pass, graph: Graph) -> list:
    """The graphs ``step`` runs on, in order: top level first, or nested graphs first when the
    pass says ``nested_first`` (a loop's decision reads its body's)."""
    graphs = program_graphs(graph) if skips_kernels(step) else graphs_in(graph)
    while isinstance(step, functools.partial):
        step = step.func
    return list(graphs)[::-1] if getattr(step, "nested_first", False) else graphs


class PassError(Exception):
    """A pass failed or left an invalid graph; names the pass and those that ran before it."""


@dataclass
class PassRecord:
    """One run of one pass."""

    name: str
    changed: bool
    seconds: float


def select(steps: list[tuple[str, Pass]], options: dict | None) -> list[tuple[str, Pass]]:
    """The steps that ``options`` (``passes``: names to run, ``disable``: names to skip) keep."""
    options = options or {}
    unknown = (set(options.get("passes") or ()) | set(options.get("disable") or ())) - set(
        PASS_NAMES
    )
    if unknown:
        raise ValueError(f"unknown pass names {sorted(unknown)}; passes are {list(PASS_NAMES)}")
    wanted = options.get("passes")
    disabled = set(options.get("disable") or ())
    for name in REQUIRED:
        if name in disabled or (wanted is not None and name not in wanted):
            raise ValueError(f"the {name!r} pass cannot be disabled: backends need its result")
    if options.get("backend", "numba") != "numba":
        disabled |= set(GENERATED_CODE_ONLY)
    return [(n, p) for n, p in steps if (wanted is None or n in wanted) and n not in disabled]


class PassManager:
    """Runs a list of named passes; ``records`` keeps what each run did and how long it took."""

    def __init__(
        self,
        steps: list[tuple[str, Pass]],
        repeat: bool = False,
        verify: bool | None = None,
        records: list | None = None,
        dump_dir: Path | None = None,
    ):
        self.steps = steps
        self.repeat = repeat
        # False, "stage" (at the end of each run) or "each" (after each pass; True too)
        self.verify = config.get("verify") if verify is None else verify and "each"
        self.debug_dir = config.get("debug_dir")
        self.dump_dir = dump_dir  # overrides <GCOMPILE_DEBUG_DIR>/<graph name>
        self.records: list[PassRecord] = [] if records is None else records  # shared across stages

    def run(self, graph: Graph) -> bool:
        """Run the passes (to a fixpoint when ``repeat``); True if any changed the graph."""
        changed_any = False
        self._unverified: list = []  # passes since the last verification (each: unchanged ones)
        for _ in range(_MAX_ROUNDS if self.repeat else 1):
            changed_round = False
            for name, step in self.steps:
                changed_round |= self._run_one(name, step, graph)
            changed_any |= changed_round
            if not changed_round:
                break
        if self.verify and self._unverified:  # (each: a pass that changed nothing left the
            self._verify(graph)  # graph as it was, verified once here, not after each such pass)
        return changed_any

    def _verify(self, graph: Graph, name: str | None = None, before: list | None = None):
        """``graph.verify()`` after pass ``name`` (None: at the end of the run); a failure
        names it first, then the passes that reported no change since the last verification."""
        try:
            graph.verify()
        except Exception as error:
            suspects = ([(name, before)] if name else []) + self._unverified
            (first, after), rest = suspects[0], [n for n, _ in suspects[1:]]
            unchanged = ", which reported no change" if self.verify == "each" else ""
            others = f" (or one of {rest}{unchanged})" if rest else ""
            raise PassError(
                f"error running the {first!r} pass (after {after or 'no passes'}){others}: "
                f"{type(error).__name__}: {error}"
            ) from error
        self._unverified = []

    def _run_one(self, name: str, step: Pass, graph: Graph) -> bool:
        before = [r.name for r in self.records]
        start = time.perf_counter()
        try:
            changed = False
            for each in _graphs_for(step, graph):
                changed = bool(step(each)) or changed
            if changed and self.verify == "each":
                _check_metas(graph, name)
            if changed:
                graph.propagate_metas()
        except UnsupportedError:
            raise  # a refusal (e.g. a write functionalization cannot model), not a failure of the pass
        except Exception as error:
            raise PassError(
                f"error running the {name!r} pass (after {before or 'no passes'}): "
                f"{type(error).__name__}: {error}"
            ) from error
        if self.verify == "each" and changed:
            self._verify(graph, name, before)
        elif self.verify:
            self._unverified.append((name, before))
        self.records.append(PassRecord(name, changed, time.perf_counter() - start))
        if self.dump_dir or self.debug_dir:
            self._dump(name, graph)
        log = config.logger("passes")
        if log:
            log.info(
                "%s: %s in %.2f ms\n%s",
                name,
                "changed" if changed else "no change",
                self.records[-1].seconds * 1e3,
                graph if changed else "",
            )
        return changed

    def _dump(self, name: str, graph: Graph) -> None:
        folder = self.dump_dir or Path(self.debug_dir) / graph.name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{len(self.records):02d}_{name}.txt").write_text(str(graph) + "\n")


def _check_metas(graph: Graph, name: str) -> None:
    """Raise ``PassError`` naming the pass ``name`` when a node it left has a meta its op
    infers otherwise (dtype, rank, a size provably different, scalar-ness): before the metas are
    re-derived, which would repair it silently. Layouts may be stale (re-deriving updates
    them after a substitution), and so may the form of a size (``max(s0-3,0)`` and ``s0-3``)."""
    for visit in walk(graph):
        node = visit.node
        if node.op != "call" or regions_of(node) or not isinstance(node.meta, TensorMeta):
            continue
        try:
            inferred = node.graph.infer(node.target, node.args, node.kwargs)
        except Exception:  # (an input's own stale meta: verify reports what is wrong there)
            continue
        if not isinstance(inferred, TensorMeta):
            continue
        with using(node.graph.shape_env):
            wrong = (
                inferred.dtype != node.meta.dtype
                or inferred.ndim != node.meta.ndim
                or inferred.scalar != node.meta.scalar
                or any(prove_eq(a, b) is False for a, b in zip(inferred.shape, node.meta.shape))
            )
        if wrong:
            raise PassError(
                f"the {name!r} pass left %{node.name} as {node.meta}, but {node.target.name} of "
                f"its inputs is {inferred}"
            )


def optimize(
    graph: Graph,
    options: dict | None = None,
    records: list | None = None,
    dump_dir: Path | None = None,
) -> list[PassRecord]:
    """Functionalize and clean up ``graph`` in place (stage "optimized"); returns the pass records."""
    records = [] if records is None else records
    steps = select(OPTIMIZE, options)
    once = [step for step in steps if step[0] in _ONCE]
    repeated = [step for step in steps if step[0] not in _ONCE]
    PassManager(once, records=records, dump_dir=dump_dir).run(graph)
    PassManager(repeated, repeat=True, records=records, dump_dir=dump_dir).run(graph)
    return records


def fuse_graph(
    graph: Graph,
    options: dict | None = None,
    records: list | None = None,
    dump_dir: Path | None = None,
) -> list[PassRecord]:
    """Fuse ``graph`` in place (stage "fused"); returns the pass records.

    ``options["max_kernel_ops"]`` caps the ops per kernel (default 64).
    """
    cap = (options or {}).get("max_kernel_ops", MAX_KERNEL_OPS)
    steps = [
        (name, functools.partial(step, max_kernel_ops=cap) if step is fuse else step)
        for name, step in select(FUSE, options)
    ]
    manager = PassManager(steps, records=records, dump_dir=dump_dir)
    manager.run(graph)
    return manager.records


def run_pipeline(
    graph: Graph, stage: str, options: dict | None = None, dump_dir: Path | None = None
) -> list[PassRecord]:
    """Bring a traced graph to ``stage`` (``"traced"``, ``"optimized"`` or ``"fused"``) in place."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; stages are {list(STAGES)}")
    records: list[PassRecord] = []
    if stage in ("optimized", "fused"):
        optimize(graph, options, records, dump_dir)
    if stage == "fused":
        fuse_graph(graph, options, records, dump_dir)
    return records
