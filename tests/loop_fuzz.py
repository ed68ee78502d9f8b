"""Differential fuzzing of loop programs: random NumPy programs with ``for`` loops, written as
Python source, run eagerly and compiled; results and the final state of every array argument
must agree (issue 19, point 2).

The generator
-------------
``loop_cases()`` draws a ``Case``: the arguments first (``A`` and ``B``, float64 arrays of one or
two dimensions with sizes 3..7, sometimes of different shapes, sometimes the SAME array or ``B``
a reversed view of ``A``; a float ``x`` in [-1, 1]; a static int ``n`` in 1..9; for a third of
the programs the ``unroll_loops`` pass disabled, which otherwise unrolls loops of few fixed trips
such as ``range(n)``), then the source
of ``def prog(A, B, x, n):`` built for exactly those shapes. Statements: views of arguments and
of locals made before or inside loops (``V[1:]``, ``V[:-1]``, ``V[::2]``, ``V[1::2]``,
``V[1:V.shape[0]-1]``, ``V[::-1]``, ``V[j:]``, ``V[:j+1]``, ``V[:V.shape[0]-j]``, ``V.T``,
``V[None]``, ``V[:, None]``, ``V.reshape(-1)``, ``V[:, 0]``, ``V[0]``, ``V[j]``, ``V[:, j]``,
``V[1:, :-1]``, ...), in-place updates through views and bases (``+=``, ``-=``, ``*=``,
``[...] =``, ``np.add(t, e, out=t)``, element and row writes ``V[j] = ...``), elementwise chains
(``+ - *``, ``np.sin``, ``np.cos``, ``np.exp(-np.abs(.))``, ``np.sqrt(np.abs(.) + 1.0)``,
``np.maximum``, ``np.minimum``), reductions (``.sum()``, ``.max()``, ``.min()``, ``np.mean``,
axis reductions with and without ``keepdims``) as carried scalars or broadcast into arrays,
fresh locals (``np.zeros_like``, ``.copy()``), carried arrays (``t = t * 0.5 + e``), and loops
two deep: ``range(n)``, ``range(1, V.shape[0])``, ``range(V.shape[0] - 1)``, reversed
``range(V.shape[0] - 1, 0, -1)``, triangular ``range(j, V.shape[0])`` and ``for r in V``.

Shapes are consistent by construction: every array value has a tracked shape whose sizes are
``Lin`` forms (an int plus integer multiples of loop indices, e.g. ``5 - j``), and an operand is
only used where its shape broadcasts to the target's (equal forms, or 1). An index or a slice
that involves a loop index is only made where the index's range (known exactly: the shapes are
known) keeps it in bounds and every size at least 1. A program must still run eagerly: the
callers ``assume`` away the rare one that raises.

Values stay bounded: ``x`` is in [-1, 1] and arguments in [-1, 1]; a product always has one
factor bounded by 1 (a constant of magnitude at most 1, ``x``, ``np.sin``/``np.cos`` of a
``np.tanh``, ``np.exp(-|.|)``: ``BOUNDED_FACTORS``), carried values decay (``s * 0.5 + ...``), and the functions are Lipschitz (no
``sqrt`` of a value near 0, no division). Loops run at most 9 * 9 or 9 * 7 trips; an in-place
``v += v`` in both still grows values geometrically, but far from overflow (the largest magnitude
in 2000 programs was 1.3e12, the median 1.5), and the tolerance below scales with it.

Comparison (why the tolerance is sound)
---------------------------------------
Types, dtypes and shapes must be equal, non-float leaves equal. A float element of the result or
of an argument afterwards passes if it is within ``ulps`` units in the last place of eager's
value (0 for the interpreter, ``NUMBA_ULPS`` for Numba), OR within ``rel * scale`` where
``scale`` is the largest magnitude of any float the EAGER run held in a variable at any line
(tracked with ``sys.settrace``: intermediate values, not just the final ones), with
``rel = 2**-30`` (~1e-9, about 1e7 units of roundoff) for Numba, ``2**-40`` (~1e-12) for the
interpreter. The second clause is what no change of summation order or of libm can break:
every op here is Lipschitz with constant at most ~1 times the magnitude of its other operand, so
each evaluation, including a sum of n terms in any order, perturbs a value by at most a few ulps of
the largest magnitude around (``(n-1) u sum|x_i| <= n^2 u scale`` for a sum) and a
program performs at most a few thousand of them: ``rounding * ops * scale`` stays below
``1e-12 * scale`` even where results cancel to near 0 (where a pure ulp rule would fail). It is
a tolerance on absolute error at the program's scale, so it still catches what the bugs of this
kind do (a stale value read through a view or base is off by a sizable fraction of the scale).
The interpreter runs the same NumPy ops, so it is normally bit-exact; its small ``rel`` only
admits a NumPy reduction summed in a different order because its operand has another layout.

Checking
--------
``check_program(source, backend, args)`` imports the source from a file of its own (loops are
captured from the function's source, so ``inspect.getsource`` must work), runs it eagerly and
compiled on fresh copies of the arguments (aliasing between arguments preserved), and raises
``ProgramFailure`` (an ``AssertionError``, the source in its message) on a mismatch, on an
internal error (a warning containing "a gcompile bug", or an exception from the compiled call
that eager mode does not raise), or on a fallback whose warning is not a stated refusal
(``gcompile runs prog eagerly: gcompile does not support ...``; a warning that a kernel or a
loop "runs in the interpreter: <reason>" is a stated partial fallback too). It returns an
``Outcome``: the refusal, if the call fell back, the interpreter warnings, and what became of the
loops.
"""

from __future__ import annotations

import atexit
import importlib.util
import itertools
import re
import shutil
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st

import gcompile
from tests.support import INTERPRETED, NUMBA_ULPS, assert_same_value

_DIR = Path(tempfile.mkdtemp(prefix="gcompile-loopfuzz-"))
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)
_COUNT = itertools.count()

ULPS = {"interpreter": 0, "numba": NUMBA_ULPS}
REL = {"interpreter": 2.0**-40, "numba": 2.0**-30}
REFUSAL = re.compile(r"gcompile runs \w+ eagerly: gcompile does not support (.*)")
BUG = "a gcompile bug"
INTERPRETER_LEFT = re.compile(r"runs in the interpreter: \S")
# a statement run in Python between compiled regions, with its reason: a stated partial fallback
GRAPH_BREAK = re.compile(r"gcompile breaks the graph of \w+: ")
# Factors of magnitude at most 1 whose absolute error stays within a few ulp whatever the size
# of their argument: sin and cos of a value near 1e11 would turn its last-bit rounding (a sum
# in another valid order) into an error of order 1e-5 in a factor that multiplies values of that
# size (``tanh`` bounds the argument, and its slope vanishes where the argument is large).
BOUNDED_FACTORS = ["np.sin(np.tanh({}))", "np.cos(np.tanh({}))", "np.exp(-np.abs({}))"]


# -- shapes ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lin:
    """A size: ``const + sum(coef * index)`` over loop indices (``terms``: sorted pairs)."""

    const: int
    terms: tuple = ()

    def plus(self, k: int = 0, var: str | None = None, coef: int = 1) -> Lin:
        terms = dict(self.terms)
        if var is not None:
            terms[var] = terms.get(var, 0) + coef
        return Lin(self.const + k, tuple(sorted((v, c) for v, c in terms.items() if c)))

    @property
    def fixed(self) -> bool:
        return not self.terms

    def low(self, ranges: dict) -> int:
        """A lower bound over the ranges of the loop indices (each ``(lo Lin, hi Lin)``, hi
        exclusive)."""
        total = self.const
        for var, coef in self.terms:
            lo, hi = ranges[var]
            total += coef * (lo.low(ranges) if coef > 0 else hi.high(ranges) - 1)
        return total

    def high(self, ranges: dict) -> int:
        total = self.const
        for var, coef in self.terms:
            lo, hi = ranges[var]
            total += coef * (hi.high(ranges) - 1 if coef > 0 else lo.low(ranges))
        return total


def fixed(k: int) -> Lin:
    return Lin(k)


def broadcasts_to(shape: tuple, target: tuple) -> bool:
    """Whether an operand of ``shape`` broadcasts to exactly ``target``."""
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(shape), reversed(target)):
        if s != t and s != Lin(1):
            return False
    return True


# -- the generator --------------------------------------------------------------------------------
@dataclass
class Env:
    arrays: dict  # name -> shape (tuple of Lin)
    scalars: list  # names of float scalars
    ranges: dict  # loop index -> (lo Lin, hi Lin), hi exclusive
    indices: list  # loop indices in scope, innermost last
    locals_: set  # names assigned in this function (not arguments)

    def child(self) -> Env:
        return Env(
            dict(self.arrays),
            list(self.scalars),
            dict(self.ranges),
            list(self.indices),
            set(self.locals_),
        )


class Generator:
    """Writes one program for arguments of known shapes; ``draw`` is hypothesis's."""

    MAX_DEPTH = 2  # loops nested two deep

    def __init__(self, draw, shapes: dict):
        self.draw = draw
        self.names = itertools.count()
        self.env = Env(
            arrays={k: tuple(fixed(d) for d in s) for k, s in shapes.items()},
            scalars=["x", "s"],
            ranges={},
            indices=[],
            locals_={"s"},
        )
        self.loops = 0

    # small helpers
    def pick(self, options):
        return self.draw(st.sampled_from(options))

    def chance(self, p: float) -> bool:
        return self.draw(st.integers(0, 99)) < int(p * 100)

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{next(self.names)}"

    def positive(self, dim: Lin, env: Env, at_least: int = 1) -> bool:
        return dim.low(env.ranges) >= at_least

    def index_ok(self, index: str, dim: Lin, env: Env, offset: int = 0) -> bool:
        """Whether ``index + offset`` stays within ``[0, dim)`` for its whole range."""
        lo, hi = env.ranges[index]
        return lo.low(env.ranges) + offset >= 0 and hi.high(env.ranges) - 1 + offset < dim.low(
            env.ranges
        )

    # views ----------------------------------------------------------------------------------
    def views(self, name: str, shape: tuple, env: Env) -> list:
        """``(source, shape)`` of views of the array ``name`` (one step)."""
        out = []
        pos = lambda d, k=1: self.positive(d, env, k)  # noqa: E731
        if len(shape) == 1:
            (d,) = shape
            if pos(d, 2):
                out += [(f"{name}[1:]", (d.plus(-1),)), (f"{name}[:-1]", (d.plus(-1),))]
            if d.fixed:
                out.append((f"{name}[::2]", (fixed((d.const + 1) // 2),)))
                if d.const >= 2:
                    out.append((f"{name}[1::2]", (fixed(d.const // 2),)))
            if pos(d, 3):
                out.append((f"{name}[1:{name}.shape[0]-1]", (d.plus(-2),)))
            out += [
                (f"{name}[::-1]", (d,)),
                (f"{name}[None]", (fixed(1), d)),
                (f"{name}[:, None]", (d, fixed(1))),
            ]
            for j in env.indices:
                if self.index_ok(j, d, env):
                    out += [
                        (f"{name}[{j}:]", (d.plus(0, j, -1),)),
                        (f"{name}[:{j}+1]", (fixed(1).plus(0, j, 1),)),
                        (f"{name}[:{name}.shape[0]-{j}]", (d.plus(0, j, -1),)),
                    ]
        elif len(shape) == 2:
            r, c = shape
            if pos(r, 2):
                out += [(f"{name}[1:]", (r.plus(-1), c)), (f"{name}[:-1]", (r.plus(-1), c))]
            if pos(c, 2):
                out += [(f"{name}[:, 1:]", (r, c.plus(-1))), (f"{name}[:, :-1]", (r, c.plus(-1)))]
            if pos(r, 2) and pos(c, 2):
                out += [
                    (f"{name}[1:, :-1]", (r.plus(-1), c.plus(-1))),
                    (f"{name}[:-1, 1:]", (r.plus(-1), c.plus(-1))),
                ]
            if pos(r, 3):
                out.append((f"{name}[1:{name}.shape[0]-1, :]", (r.plus(-2), c)))
            if r.fixed:
                out.append((f"{name}[::2]", (fixed((r.const + 1) // 2), c)))
            if c.fixed:
                out.append((f"{name}[:, ::2]", (r, fixed((c.const + 1) // 2))))
            if r.fixed and c.fixed:
                out.append((f"{name}.reshape(-1)", (fixed(r.const * c.const),)))
            out += [
                (f"{name}.T", (c, r)),
                (f"{name}[:, 0]", (r,)),
                (f"{name}[:, -1]", (r,)),
                (f"{name}[0]", (c,)),
                (f"{name}[-1]", (c,)),
                (f"{name}[None]", (fixed(1), r, c)),
                (f"{name}[::-1]", (r, c)),
            ]
            for j in env.indices:
                if self.index_ok(j, r, env):
                    out += [
                        (f"{name}[{j}]", (c,)),
                        (f"{name}[{j}:]", (r.plus(0, j, -1), c)),
                        (f"{name}[:{j}+1]", (fixed(1).plus(0, j, 1), c)),
                    ]
                if self.index_ok(j, c, env):
                    out.append((f"{name}[:, {j}]", (r,)))
        elif len(shape) == 3:
            out.append((f"{name}[0]", shape[1:]))
        return out

    def reductions(self, name: str, shape: tuple) -> list:
        """``(source, shape)`` of axis reductions of ``name`` (arrays)."""
        if len(shape) != 2:
            return []
        r, c = shape
        return [
            (f"{name}.sum(axis=0)", (c,)),
            (f"{name}.max(axis=1)", (r,)),
            (f"np.mean({name}, axis=0)", (c,)),
            (f"{name}.sum(axis=1, keepdims=True)", (r, fixed(1))),
            (f"{name}.min(axis=0, keepdims=True)", (fixed(1), c)),
        ]

    def candidates(self, env: Env, reductions: bool = True) -> list:
        """Every array operand: names, one-step views of names, axis reductions of names."""
        out = []
        for name, shape in env.arrays.items():
            out.append((name, shape))
            out += self.views(name, shape, env)
            if reductions:
                out += self.reductions(name, shape)
        return out

    # expressions ----------------------------------------------------------------------------
    def scalar(self, env: Env, depth: int = 0) -> str:
        """A float scalar expression (bounded by a small multiple of the values around)."""
        kind = self.pick(["leaf", "leaf", "leaf", "reduce", "reduce", "element", "op", "fn"])
        if depth >= 2:
            kind = self.pick(["leaf", "reduce", "element"])
        if kind == "reduce":
            name = self.pick(sorted(env.arrays))
            form = self.pick(["{}.sum()", "{}.max()", "{}.min()", "np.mean({})", "np.sum({})"])
            source = form.format(name)
            return f"{source} * 0.25" if "sum" in form else source
        if kind == "element":
            options = []
            for name, shape in env.arrays.items():
                if len(shape) == 1:
                    options += [f"{name}[0]", f"{name}[-1]"]
                    for j in env.indices:
                        if self.index_ok(j, shape[0], env):
                            options.append(f"{name}[{j}]")
                        if self.index_ok(j, shape[0], env, -1):
                            options.append(f"{name}[{j} - 1]")
                elif len(shape) == 2:
                    options.append(f"{name}[0, -1]")
                    for j in env.indices:
                        if self.index_ok(j, shape[0], env):
                            options.append(f"{name}[{j}, 0]")
                        if self.index_ok(j, shape[1], env):
                            options.append(f"{name}[-1, {j}]")
            if options:
                return self.pick(options)
            kind = "leaf"
        if kind == "op":
            left, right = self.scalar(env, depth + 1), self.scalar(env, depth + 1)
            op = self.pick(["+", "-", "*"])
            if op == "*":
                right = self.bounded_scalar(env, depth + 1)
            return f"({left} {op} {right})"
        if kind == "fn":
            fn = self.pick(["np.sin({})", "np.cos({})", "np.exp(-np.abs({}))", "np.maximum({}, x)"])
            return fn.format(self.scalar(env, depth + 1))
        leaves = list(env.scalars) + ["0.5", "-0.75", "2.0", "n * 0.25"]
        leaves += [f"{j} * 0.5" for j in env.indices]
        return self.pick(leaves)

    def bounded_scalar(self, env: Env, depth: int = 0) -> str:
        """A scalar of magnitude at most 1."""
        kind = self.pick(["const", "x", "fn"])
        if kind == "const" or depth >= 3:
            return self.pick(["0.5", "-0.5", "0.25", "0.75", "-1.0"])
        if kind == "x":
            return "x"
        fn = self.pick(BOUNDED_FACTORS)
        return fn.format(self.scalar(env, depth + 1))

    def array(self, target: tuple, env: Env, depth: int = 0) -> str:
        """An expression whose value broadcasts to ``target`` (maybe a scalar, at the leaves)."""
        kinds = ["leaf", "leaf", "unary", "binary", "binary", "scaled"]
        kind = self.pick(kinds) if depth < 3 else "leaf"
        if kind == "leaf":
            operands = [src for src, shape in self.candidates(env) if broadcasts_to(shape, target)]
            if operands and not self.chance(0.15):
                return self.pick(operands)
            return self.scalar(env, 1)
        if kind == "unary":
            fn = self.pick(
                [
                    "np.sin({})",
                    "np.cos({})",
                    "np.exp(-np.abs({}))",
                    "np.sqrt(np.abs({}) + 1.0)",
                    "np.abs({})",
                    "(-{})",
                ]
            )
            return fn.format(self.array(target, env, depth + 1))
        if kind == "scaled":
            return f"({self.array(target, env, depth + 1)} * {self.bounded_scalar(env)})"
        left = self.array(target, env, depth + 1)
        op = self.pick(["+", "-", "*", "max", "min"])
        if op == "*":
            right = self.pick(BOUNDED_FACTORS).format(self.array(target, env, depth + 1))
            return f"({left} * {right})"
        right = self.array(target, env, depth + 1)
        if op in ("max", "min"):
            return f"np.{op}imum({left}, {right})"
        return f"({left} {op} {right})"

    def full_array(self, target: tuple, env: Env) -> str | None:
        """An expression that IS an array of ``target``'s shape (not just broadcasting to it)."""
        exact = [src for src, shape in self.candidates(env, False) if shape == target]
        if not exact:
            return None
        return f"({self.pick(exact)} * 0.5 + {self.array(target, env)})"

    # statements -----------------------------------------------------------------------------
    def block(self, env: Env, indent: int, depth: int, count: tuple = (1, 4)) -> list:
        lines = []
        for _ in range(self.draw(st.integers(*count))):
            lines += self.statement(env, indent, depth)
        return lines

    def statement(self, env: Env, indent: int, depth: int, kind: str | None = None) -> list:
        pad = " " * indent
        if kind is None:
            kinds = ["view", "fresh", "inplace", "inplace", "inplace", "scalar", "scalar"]
            kinds += ["carried"]
            if env.indices:
                kinds += ["element", "element"]
            if depth < self.MAX_DEPTH:
                kinds += ["loop"]
            kind = self.pick(kinds)
        if kind == "view":
            src, shape = self.pick(self.candidates(env, reductions=False))
            if src in env.arrays or self.chance(0.1):  # an alias by assignment, or an axis sum
                reduced = [c for c in self.candidates(env) if c[0] not in env.arrays]
                src, shape = self.pick(reduced)
            name = self.fresh("v")
            env.arrays[name] = shape
            env.locals_.add(name)
            return [f"{pad}{name} = {src}"]
        if kind == "fresh":
            base = self.pick(sorted(env.arrays))
            form = self.pick(
                [
                    "np.zeros_like({})",
                    "{}.copy()",
                    "np.ones_like({}) * x",
                    "np.zeros({}.shape)",
                    "expr",
                ]
            )
            shape = env.arrays[base]
            if form == "expr":
                source = self.full_array(shape, env)
            else:
                source = form.format(base)
            name = self.fresh("w")
            env.arrays[name] = shape
            env.locals_.add(name)
            return [f"{pad}{name} = {source}"]
        if kind == "inplace":
            src, shape = self.pick(self.candidates(env, reductions=False))
            form = self.pick(["+=", "+=", "-=", "*=", "[...] =", "add_out", "mul_out"])
            if ("(" in src or src.endswith(".T")) and form in ("+=", "-=", "*="):  # not assignable
                form = {"+=": "add_out", "-=": "[...] =", "*=": "mul_out"}[form]
            if form == "*=":
                value = (
                    self.bounded_scalar(env)
                    if self.chance(0.5)
                    else self.pick(BOUNDED_FACTORS).format(self.array(shape, env))
                )
                return [f"{pad}{src} *= {value}"]
            if form == "mul_out":
                return [f"{pad}np.multiply({src}, {self.bounded_scalar(env)}, out={src})"]
            value = self.array(shape, env)
            if form == "add_out":
                return [f"{pad}np.add({src}, {value}, out={src})"]
            if form in ("+=", "-=") and self.chance(0.5):
                value = f"0.5 * {value}"
            if form == "[...] =":
                return [f"{pad}{src}[...] = {value}"]
            return [f"{pad}{src} {form} {value}"]
        if kind == "element":
            return self.element(env, pad)
        if kind == "scalar":
            value = self.scalar(env)
            targets = [s for s in env.scalars if s in env.locals_]
            if targets and self.chance(0.7):
                name = self.pick(targets)
                return [f"{pad}{name} = {name} * 0.5 + {value}"]
            name = self.fresh("c")
            env.scalars.append(name)
            env.locals_.add(name)
            return [f"{pad}{name} = {value}"]
        if kind == "carried":
            targets = [a for a in env.arrays if a in env.locals_]
            if not targets:
                return self.statement(env, indent, depth, "fresh")
            name = self.pick(sorted(targets))
            value = self.array(env.arrays[name], env)
            return [f"{pad}{name} = {name} * 0.5 + {value}"]
        return self.loop(env, indent, depth)

    def element(self, env: Env, pad: str) -> list:
        """A write of one element (1-D) or one row or element (2-D) at a loop index."""
        options = []
        for name, shape in env.arrays.items():
            for j in env.indices:
                if self.index_ok(j, shape[0], env) and len(shape) <= 2:
                    options.append((name, shape, j))
        if not options:
            return self.statement(env, len(pad), self.MAX_DEPTH, "inplace")
        name, shape, j = self.pick(options)
        if len(shape) == 1:
            value = self.scalar(env)
            if self.index_ok(j, shape[0], env, -1) and self.chance(0.5):
                value = f"{name}[{j} - 1] * 0.5 + {value}"
            return [f"{pad}{name}[{j}] {self.pick(['=', '+='])} {value}"]
        # a row of a 2-D array, or one element of it
        if self.chance(0.3) and self.index_ok(j, shape[1], env):
            return [f"{pad}{name}[{j}, {j}] = {self.scalar(env)}"]
        value = self.array(shape[1:], env)
        if self.index_ok(j, shape[0], env, -1) and self.chance(0.5):
            value = f"{name}[{j} - 1] * 0.5 + {value}"
        return [f"{pad}{name}[{j}] {self.pick(['=', '+='])} {value}"]

    def loop(self, env: Env, indent: int, depth: int) -> list:
        pad = " " * indent
        inner = env.child()
        index = self.pick("ijk")
        index = f"{index}{next(self.names)}"
        fixed_rows = [(a, s) for a, s in env.arrays.items() if s and s[0].fixed and s[0].const >= 2]
        kinds = ["n", "n"] + (
            ["rows", "rows_up", "rows_all", "rows_down", "over"] if fixed_rows else []
        )
        if env.indices and fixed_rows:
            kinds.append("triangle")
        kind = self.pick(kinds)
        self.loops += 1
        if kind == "n":
            header = f"for {index} in range(n):"
            inner.ranges[index] = (fixed(0), fixed(self.n))
        elif kind == "over":
            two_d = [(a, s) for a, s in fixed_rows if len(s) == 2]
            if not two_d:
                two_d = fixed_rows
            name, shape = self.pick(two_d)
            row = f"r{next(self.names)}"
            inner.arrays[row] = shape[1:]
            if len(shape) == 1:  # iterating a 1-D array gives scalars
                del inner.arrays[row]
                inner.scalars.append(row)
            inner.locals_.add(row)
            header = f"for {row} in {name}:"
        else:
            name, shape = self.pick(fixed_rows)
            d = shape[0]
            if kind == "rows":
                header = f"for {index} in range(1, {name}.shape[0]):"
                inner.ranges[index] = (fixed(1), d)
            elif kind == "rows_up":
                header = f"for {index} in range({name}.shape[0] - 1):"
                inner.ranges[index] = (fixed(0), d.plus(-1))
            elif kind == "rows_all":
                header = f"for {index} in range({name}.shape[0]):"
                inner.ranges[index] = (fixed(0), d)
            elif kind == "rows_down":
                header = f"for {index} in range({name}.shape[0] - 1, 0, -1):"
                inner.ranges[index] = (fixed(1), d)
            else:
                outer = self.pick(env.indices)
                lo, hi = env.ranges[outer]
                if hi.high(env.ranges) > d.const:  # the outer index may pass the rows
                    header = f"for {index} in range({name}.shape[0]):"
                    inner.ranges[index] = (fixed(0), d)
                else:
                    header = f"for {index} in range({outer}, {name}.shape[0]):"
                    inner.ranges[index] = (Lin(0).plus(0, outer, 1), d)
            inner.indices.append(index)
        if kind == "n":
            inner.indices.append(index)
        lines = [f"{pad}{header}"] + self.block(inner, indent + 4, depth + 1)
        # carried names keep their shapes; names made inside stay inside
        return lines


@dataclass
class Case:
    """A program and the recipe of its arguments."""

    source: str
    shapes: dict  # "A"/"B" -> shape
    alias: str  # "", "same" (B is A), "reversed" (B is A[::-1])
    x: float
    n: int
    seed: int
    options: dict | None = None  # compile options (``{"disable": ["unroll_loops"]}``: keep loops)

    def args(self) -> tuple:
        """Fresh arguments (a new copy on every call)."""
        rng = np.random.default_rng(self.seed)
        A = rng.uniform(-1, 1, self.shapes["A"])
        if self.alias == "same":
            B = A
        elif self.alias == "reversed":
            B = A[::-1]
        else:
            B = rng.uniform(-1, 1, self.shapes["B"])
        return A, B, self.x, self.n

    def __repr__(self) -> str:  # hypothesis prints the falsifying example with this
        return (
            f"Case(shapes={self.shapes}, alias={self.alias!r}, x={self.x!r}, n={self.n}, "
            f"seed={self.seed}, options={self.options!r}, source=\n{self.source})"
        )


@st.composite
def loop_cases(draw) -> Case:
    """A random loop program with arguments it runs on."""
    ndim = draw(st.sampled_from([1, 1, 2, 2, 2]))
    size = st.integers(3, 7)
    shape_a = tuple(draw(size) for _ in range(ndim))
    # aliased arguments, one program in eight: written ones are refused (a stated fallback)
    alias = draw(st.sampled_from([""] * 14 + ["same", "reversed"]))
    shape_b = shape_a
    if not alias and draw(st.integers(0, 9)) < 3:
        shape_b = tuple(draw(size) for _ in range(ndim))
    x = draw(st.floats(-1, 1, allow_nan=False).map(lambda v: v if abs(v) >= 1e-3 else 0.0))
    n = draw(st.sampled_from([1, 2, 3, 3, 5, 9]))
    seed = draw(st.integers(0, 2**16))
    gen = Generator(draw, {"A": shape_a, "B": shape_b})
    gen.n = n
    env = gen.env
    lines = ["import numpy as np", "", "", "def prog(A, B, x, n):"]
    lines.append(
        f"    s = {draw(st.sampled_from(['0.0', 'x * 0.5', 'A.sum() * 0.0', 'np.float64(0.0)']))}"
    )
    lines += gen.block(env, 4, 0, (0, 2))
    lines += gen.statement(env, 4, 0, "loop")
    lines += gen.block(env, 4, 0, (0, 2))
    returned = ["s"]
    local_arrays = sorted(a for a in env.arrays if a in env.locals_)
    for _ in range(draw(st.integers(0, 2))):
        if local_arrays:
            returned.append(draw(st.sampled_from(local_arrays)))
    if draw(st.integers(0, 9)) == 0:
        lines.append("    return None")
    else:
        lines.append(f"    return {', '.join(dict.fromkeys(returned))}")
    source = "\n".join(lines) + "\n"
    compile(source, "<loop program>", "exec")  # the generator writes valid Python
    # a loop of few fixed trips (``range(n)``) is unrolled by a pass; a third of the programs
    # disable that pass, so their loops stay loops
    options = draw(st.sampled_from([None, None, {"disable": ["unroll_loops"]}]))
    return Case(source, {"A": shape_a, "B": shape_b}, alias, x, n, seed, options)


# -- running --------------------------------------------------------------------------------------
def load(source: str, name: str = "prog"):
    """The function ``name`` of ``source``, imported from a file of its own."""
    path = _DIR / f"loop_program_{next(_COUNT)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def copy_args(args: tuple) -> tuple:
    """Copies of ``args`` that keep arguments aliased as they were (the same array, or a view of
    another argument's memory); each array copied C-contiguous (the generator's are)."""
    copies: list = []
    for value in args:
        if not isinstance(value, np.ndarray):
            copies.append(value)
            continue
        for original, copy in zip(args, copies):
            if isinstance(original, np.ndarray) and np.shares_memory(original, value):
                if original is value:
                    copies.append(copy)
                    break
                if original.flags.c_contiguous:  # ``value`` a view into ``original``
                    start = (
                        value.__array_interface__["data"][0]
                        - original.__array_interface__["data"][0]
                    ) // value.itemsize
                    flat = copy.reshape(-1)
                    copies.append(
                        np.lib.stride_tricks.as_strided(
                            flat[start:], value.shape, value.strides, writeable=True
                        )
                    )
                    break
        else:
            copies.append(value.copy())
    return tuple(copies)


class ProgramFailure(AssertionError):
    """Compiled and eager disagree (``kind``: "mismatch", "internal", "fallback")."""

    def __init__(self, kind: str, message: str, source: str):
        self.kind = kind
        self.detail = message
        super().__init__(f"{kind}: {message}\n--- program ---\n{source}")


class EagerError(Exception):
    """The program raises when run eagerly (the generator's fault: callers skip it)."""


@dataclass
class Outcome:
    fallback: str | None = None  # the refused construct, when the call ran eagerly
    loops: list = field(default_factory=list)  # "rolled" or the reason, per loop the tracer met
    warnings: list = field(default_factory=list)  # parts left to the interpreter, with reasons
    scale: float = 0.0


def _magnitude(value: Any) -> float:
    if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size:
        finite = value[np.isfinite(value)]
        return float(np.max(np.abs(finite))) if finite.size else 0.0
    if isinstance(value, (float, np.floating)) and np.isfinite(value):
        return abs(float(value))
    if isinstance(value, (tuple, list)):
        return max((_magnitude(v) for v in value), default=0.0)
    return 0.0


def run_eager(fn, args: tuple) -> tuple[Any, float]:
    """``fn(*args)`` and the largest magnitude of any float it held in a variable."""
    largest = [_magnitude(args)]
    code = fn.__code__

    def local_trace(frame, event, arg):
        if event in ("line", "return"):
            largest[0] = max(largest[0], max(map(_magnitude, frame.f_locals.values()), default=0))
        return local_trace

    def global_trace(frame, event, arg):
        return local_trace if frame.f_code is code else None

    previous = sys.gettrace()
    sys.settrace(global_trace)
    try:
        with np.errstate(all="ignore"):
            result = fn(*args)
    finally:
        sys.settrace(previous)
    return result, max(largest[0], _magnitude(result))


def _bound_like(value: Any, bound: float) -> Any:
    """A ``bound`` structure shaped like ``value`` (for ``assert_same_value``)."""
    if isinstance(value, (tuple, list)):
        return type(value)(_bound_like(v, bound) for v in value)
    if isinstance(value, np.ndarray):
        return np.full(value.shape, bound)
    return np.float64(bound)


def check_program(source: str, backend: str, args, *, fn=None, options=None) -> Outcome:
    """Run ``source``'s ``prog`` eagerly and compiled with ``backend`` on fresh copies of
    ``args`` (a tuple, or a callable returning fresh arguments); compare results and
    arguments afterwards (see the module docstring for the tolerance). Raises ``EagerError``
    when eager raises, ``ProgramFailure`` when compiled disagrees."""
    fresh = args if callable(args) else (lambda: copy_args(args))
    fn = fn or load(source)
    eager_args = fresh()
    try:
        expected, scale = run_eager(fn, eager_args)
    except Exception as error:
        raise EagerError(f"{type(error).__name__}: {error}") from error
    compiled = gcompile.compile(fn, backend=backend, options=options)
    run_args = fresh()
    outcome = Outcome(scale=scale)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", gcompile.GcompileWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            with np.errstate(all="ignore"):
                actual = compiled(*run_args)
        except Exception as error:
            raise ProgramFailure(
                "internal", f"the compiled call raised {type(error).__name__}: {error}", source
            ) from error
    messages = [str(w.message) for w in caught if issubclass(w.category, gcompile.GcompileWarning)]
    for message in messages:
        if BUG in message:
            raise ProgramFailure("internal", message, source)
    refusals = [m for m in messages if REFUSAL.match(m)]
    breaks = [m for m in messages if GRAPH_BREAK.match(m)]
    outcome.warnings = [m for m in messages if not (REFUSAL.match(m) or m in breaks)]
    for message in outcome.warnings:
        # a kernel or a loop left to the interpreter, with its reason: a stated partial fallback
        if not (INTERPRETED.search(message) or INTERPRETER_LEFT.search(message)):
            raise ProgramFailure("internal", f"unexpected warning: {message}", source)
    if compiled.stats["fallbacks"]:
        if not refusals:
            raise ProgramFailure(
                "fallback", f"fell back without a stated reason: {messages}", source
            )
        construct = compiled.refusals[0].construct if compiled.refusals else refusals[0]
        outcome.fallback = construct.split("\n")[0]
    elif breaks:
        outcome.fallback = breaks[0].split("\n")[0]
    for entry in compiled.entries:
        if entry.graph is not None:
            outcome.loops += [
                "rolled" if note.rolled else f"unrolled: {note.reason}"
                for note in entry.graph.notes.loops
            ]
    bound = REL[backend] * max(scale, np.finfo(np.float64).tiny) / 2  # assert_same_value: 2 * bound
    ulps = ULPS[backend] or 0.5  # 0.5: exact, but keeps the bound rule on
    try:
        assert_same_value(
            expected, actual, ulps, f"{backend} result", None, _bound_like(expected, bound)
        )
        assert_same_value(
            tuple(eager_args),
            tuple(run_args),
            ulps,
            f"{backend} arguments after the call",
            None,
            _bound_like(tuple(eager_args), bound),
        )
    except AssertionError as error:
        raise ProgramFailure(
            "mismatch", f"{error}\n(scale {scale:.3g}, tolerance {2 * bound:.3g})", source
        ) from None
    return outcome


def check_case(case: Case, backend: str) -> Outcome:
    return check_program(case.source, backend, case.args, options=case.options)


# -- shrinking (for reports) ----------------------------------------------------------------------
def signature(failure: ProgramFailure) -> str:
    """What a failure is, without the names and numbers that vary between programs."""
    first = failure.detail.strip().split("\n")[0]
    if failure.kind == "mismatch":  # "numba result[1]: 3.0 ulp apart" -> "result: ulp apart"
        first = re.sub(r"^(interpreter|numba) ", "", first)
        return "mismatch: " + re.sub(r"\[\d+\]|(?<![\w.])-?\d[\d.]*(e-?\d+)?", "", first)[:120]
    first = first.split("please report it): ")[-1]
    if "failed verification" in failure.detail:  # which check: the rule, not the node
        problem = failure.detail.split("\n  - ", 1)[-1].split("\n")[0]
        rule = re.search(r"differs from (\w+)'s rule", problem)
        if rule:
            what = "layout" if re.search(r"layout='(\w)'.*layout='(?!\1)", problem) else "shape"
            first += f" the {what} of {rule.group(1)} differs from its rule"
        else:
            first += " " + problem[:80]
    first = re.sub(r"'[^']*'|%\w+|\d+", "", first)
    return f"{failure.kind}: {first[:160]}"


def _statements(lines: list) -> list:
    """``(start, end)`` line spans of the statements of the function body (a ``for`` with its
    body), innermost last, skipping the ``def`` line and the imports."""
    spans = []
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith(("import ", "def ")):
            continue
        indent = len(line) - len(line.lstrip())
        end = i + 1
        if stripped.startswith("for "):
            while end < len(lines) and (
                not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent
            ):
                end += 1
        spans.append((i, end))
    return spans


def shrink(case: Case, backend: str, failure: ProgramFailure, budget: int = 300) -> Case:
    """A smaller program (whole statements removed, loops replaced by their body's first
    trip, the return dropped) and simpler arguments that fail the same way."""
    import dataclasses

    wanted = signature(failure)
    tries = [0]

    def fails(candidate: Case) -> bool:
        if tries[0] >= budget:
            return False
        tries[0] += 1
        try:
            compile(candidate.source, "<candidate>", "exec")
            check_case(candidate, backend)
        except ProgramFailure as again:
            return signature(again) == wanted
        except Exception:
            return False
        return False

    for field_, value in (("n", 1), ("x", 0.5), ("alias", ""), ("options", None)):
        candidate = dataclasses.replace(case, **{field_: value})
        if getattr(case, field_) != value and fails(candidate):
            case = candidate
    changed = True
    while changed and tries[0] < budget:
        changed = False
        lines = case.source.split("\n")
        for start, end in reversed(_statements(lines)):
            options = [lines[:start] + lines[end:]]
            header = lines[start].strip()
            if header.startswith("return"):
                options = [
                    lines[:start] + [lines[start].split("return")[0] + "return None"] + lines[end:]
                ]
                if header == "return None":
                    continue
            if header.startswith("for ") and " in range(" in header:
                # the loop's first trip only: ``i = start`` then the body, dedented
                indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
                target, _, rest = header[4:].partition(" in range(")
                first = rest.rsplit(")", 1)[0].split(",")
                begin = first[0] if len(first) > 1 else "0"
                body = [line[4:] if line.strip() else line for line in lines[start + 1 : end]]
                options.append(
                    lines[:start] + [f"{indent}{target} = {begin.strip()}"] + body + lines[end:]
                )
            for option in options:
                source = "\n".join(option)
                if re.search(r"^( +)for [^\n]*:\n(?!\1 )", source + "\n", re.M):
                    continue  # a loop left without a body
                candidate = dataclasses.replace(case, source=source)
                if fails(candidate):
                    case, changed = candidate, True
                    break
            if changed:
                break
    return case
