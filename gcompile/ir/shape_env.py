"""The symbolic sizes of one trace: their hints, where they come from, and the guards taken on them.

A traced function sees symbolic sizes: each dimension of an array argument whose size is 2 or
more becomes a symbol ``s0, s1, ...`` in ``[2, inf)``; sizes 0 and 1 stay ints, because they
change what NumPy does (a size-1 axis broadcasts, an empty reduction may raise), so a trace is
specialised on them and the guard key of the call holds them (``guards.py``).

Tracing, shape inference and the passes ask questions about sizes (``s0 - 2 == s1`` when
broadcasting, ``n > 10`` in the user's Python, ``s0 % 4 == 0`` in a reshape). ``decide``
answers each one:

1. by proof, from the symbols' intervals (``ir/symbolic.py``): no assumption is made;
2. else from a fact recorded earlier in the same trace;
3. else from the *hints*, the sizes of the call being traced, recording a ``Guard``: the
   compiled graph holds only for calls where every guard gives the same answer
   (``check_source`` builds the function that checks them at call time).

A captured loop's index is a symbol too (``loop_symbol``: ``k0, k1, ...``), in the interval of
its range, with bounds that may be expressions of the sizes and of outer loop indices
(``k1`` in ``[k0+1, s0-1]``). It has no hint, since it takes every value of the range: a
question about it is answered for every trip at once or not at all (``SymbolicError``). When
the intervals prove nothing, each index is replaced by the end of its range that is worst for
the question (innermost loop first: ``k0 < s1`` for ``k0`` in ``[0, s0-1]`` becomes
``s0-1 < s1``), which leaves a question about sizes alone, decided as any other (and guarded).
A nominal value of the index (the middle of its range at the hints) serves heuristics only.

A length the data decide (``np.nonzero``, ``x[mask]`` as an array, ``np.unique``) is an
*unbacked* symbol (``data_size``: ``u0, u1, ...``) in ``[lo, hi]`` (``hi`` the most elements
it can have, from its operands' sizes), made where the op is traced and bound at run time from
the value the op returns (``data_size_bindings``). It has no hint either: a question about it
that its interval does not answer (``u0 == s0`` when broadcasting) is refused, since no guard
can stand for it; two values of one such length (``x[m]``, ``y[m]``: one symbol) meet freely.

An equality guard that can be solved for a symbol with coefficient +-1 becomes a
*replacement* (``s2 := s1``): the newer symbol is expressed by older ones from then on, and
``substitute_graph`` rewrites the shapes recorded before it was learned. Hints also serve
heuristics that need a number and cannot change a result (fusion's peak-memory estimate).

The active environment is a context variable: ``Graph.call`` activates its graph's environment
while an op infers its meta, and the tracer keeps its own active while it traces. Without an
active environment a question that cannot be proved raises ``SymbolicError``.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from .symbolic import (
    INF,
    Expr,
    FloorDiv,
    Max,
    Min,
    Sum,
    Symbol,
    evaluate,
    free_symbols,
    is_expr,
    prove_eq,
    prove_nonnegative,
    substitute,
    sym_max,
    to_source,
)

_NOTHING = object()
SIZE_LOW = 2  # symbols stand for sizes >= 2: 0 and 1 are specialised (they broadcast, or empty)
SIZE_END = 2**63  # ... and below this: a size is an int64 (a larger Python int stays static)
_RELATIONS = ("==", "!=", "<", "<=", ">", ">=")


class SymbolicError(Exception):
    """A question about symbolic sizes that could not be answered (no proof, no hint)."""


class DataSizeError(SymbolicError):
    """A question on a length the data decide (an unbacked symbol) that its interval does not
    answer; ``source`` the user's line that asked it, ``symbols`` those lengths."""

    def __init__(self, message: str, source: str | None = None, symbols: tuple = ()):
        super().__init__(message)
        self.source, self.symbols = source, symbols


class IndexQuestion(SymbolicError):
    """A question on loop indices whose answer changes from trip to trip: ``expr == 0`` or
    ``expr >= 0`` (``kind``). A loop may split its range where the answer changes."""

    def __init__(self, message: str, kind: str, expr):
        super().__init__(message)
        self.kind, self.expr = kind, expr


@dataclass(frozen=True)
class Guard:
    """A decision a trace took on its sizes: ``lhs relation rhs`` was ``holds`` at the hints.

    ``reason`` says what needed it (``broadcasting``, ``range()``, ...), ``source`` the user's
    ``file:line`` when known.
    """

    relation: str
    lhs: Any
    rhs: Any
    holds: bool
    reason: str
    source: str | None = None

    def condition(self) -> tuple[str, Any, Any]:
        """``(relation, lhs, rhs)`` that is true when the guard passes."""
        if self.holds:
            return self.relation, self.lhs, self.rhs
        return _NEGATED[self.relation], self.lhs, self.rhs

    def text(self) -> str:
        """``s0-2 != 1 (broadcasting, at f.py:3)``."""
        relation, lhs, rhs = self.condition()
        where = f", at {self.source}" if self.source else ""
        return f"{lhs} {relation} {rhs} ({self.reason}{where})"


_NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def _canonical(relation: str, lhs, rhs) -> tuple[str, Any, bool]:
    """``(kind, expr, negated)``: the relation as ``expr == 0`` or ``expr >= 0``, maybe negated."""
    if relation not in _RELATIONS:
        raise ValueError(f"unknown relation {relation!r}; expected one of {_RELATIONS}")
    if relation in ("==", "!="):
        return "==", lhs - rhs, relation == "!="
    if relation == "<=":
        return ">=", rhs - lhs, False
    if relation == "<":
        return ">=", rhs - lhs - 1, False
    if relation == ">=":
        return ">=", lhs - rhs, False
    return ">=", lhs - rhs - 1, False


def _prove(kind: str, expr) -> bool | None:
    if not is_expr(expr):
        return expr == 0 if kind == "==" else expr >= 0
    return prove_eq(expr, 0) if kind == "==" else prove_nonnegative(expr)


@dataclass
class ShapeEnv:
    """Symbols of one trace with their hints and origins, learned replacements, and guards."""

    symbols: list = field(default_factory=list)
    hints: dict = field(default_factory=dict)
    origins: dict = field(default_factory=dict)  # symbol -> "x.shape[0]"
    # symbol -> (input position, axis); axis None: the input is a Python int (``guards``)
    sources: dict = field(default_factory=dict)
    replacements: dict = field(default_factory=dict)
    guards: list = field(default_factory=list)
    locate: Callable[[], str | None] = field(default=lambda: None, repr=False)
    loops: dict = field(default_factory=dict)  # loop index symbol -> (start, stop, step)
    in_body: int = 0  # how many loop bodies are being traced (frontend/loops.py)
    # unbacked symbol -> what decides it ("np.nonzero at f.py:3"), for messages and explain()
    data_sizes: dict = field(default_factory=dict)
    _nominal: dict = field(default_factory=dict, repr=False)  # loop/data symbol -> int, heuristics
    _remembered: dict = field(default_factory=dict, repr=False)  # (``remembered``)
    _facts: dict = field(default_factory=dict, repr=False)
    _learned_by: dict = field(default_factory=dict, repr=False)  # replaced symbol -> its guard

    # -- symbols ----------------------------------------------------------------------------------
    def size_symbol(self, hint: int, origin: str, source: tuple | None = None) -> Symbol:
        """A new size symbol in ``[2, inf)`` standing for ``origin`` (``"x.shape[0]"``), read
        at call time from axis ``source[1]`` of input ``source[0]``."""
        if hint < SIZE_LOW:
            raise ValueError(f"sizes 0 and 1 are specialised, not symbols ({origin} is {hint})")
        symbol = Symbol(f"s{len(self.symbols)}", SIZE_LOW)
        self.symbols.append(symbol)
        self.hints[symbol] = int(hint)
        self.origins[symbol] = origin
        if source is not None:
            self.sources[symbol] = source
        return symbol

    def loop_symbol(self, start, stop, step: int) -> Symbol:
        """The index of ``for k in range(start, stop, step)`` (``step`` a non-zero int) as a
        symbol in the range's interval, assuming the loop runs; the caller makes sure it can
        (``trip_count`` may be positive)."""
        lo, hi = (start, stop - 1) if step > 0 else (stop + 1, start)
        symbol = Symbol(f"k{len(self.loops)}", lo, hi)
        self.loops[symbol] = (start, stop, step)
        ends = [self.hint(end) for end in (lo, hi)]
        self._nominal[symbol] = (ends[0] + ends[1]) // 2
        return symbol

    def data_size(self, lo, hi, origin: str) -> Symbol:
        """A new unbacked symbol ``u<n>`` in ``[lo, hi]`` (``hi`` None: unbounded): the length
        of a value the data decide, made by ``origin`` (see the module docstring)."""
        symbol = Symbol(f"u{len(self.data_sizes)}", lo, INF if hi is None else hi)
        self.data_sizes[symbol] = origin
        self._nominal[symbol] = max(self.hint(hi) // 2, 1) if hi is not None else 64
        return symbol

    def simplify(self, value):
        """``value`` with the replacements learned so far applied."""
        if not is_expr(value) or not self.replacements:
            return value
        return substitute(value, self.replacements)

    def hint(self, value) -> int:
        """The int ``value`` takes at this trace's sizes (a loop index at its nominal value)."""
        value = self.simplify(value)
        if not is_expr(value):
            return value
        return evaluate(value, {**self.hints, **self._nominal} if self._nominal else self.hints)

    def remembered(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """``compute()``, once per ``key`` in a loop body or outside (``in_body``), for an
        inference rule given the same operand metas and parameters (the key): its questions
        are about the sizes those hold, whose answers this trace keeps (guards taken stay
        taken; a question with no answer for every trip raises and is not remembered). Facts
        learned later could only state the result more simply."""
        key = (bool(self.in_body), *key)
        found = self._remembered.get(key, _NOTHING)
        if found is _NOTHING:
            found = self._remembered[key] = compute()
        return found

    # -- decisions --------------------------------------------------------------------------------
    def decide(self, relation: str, lhs, rhs, reason: str) -> bool:
        """Whether ``lhs relation rhs``: proved, known, or taken from the hints and guarded."""
        lhs, rhs = self.simplify(lhs), self.simplify(rhs)
        kind, expr, negated = _canonical(relation, lhs, rhs)
        proved = _prove(kind, expr)
        if proved is None:
            proved = self._known(kind, expr)
        if proved is None and self.data_sizes and free_symbols(expr) & set(self.data_sizes):
            proved = self._for_every_value(kind, expr, reason)
            if proved is not None:
                self._facts[(kind, expr)] = proved
        if proved is None and self.loops and free_symbols(expr) & set(self.loops):
            proved = self._for_every_trip(kind, expr, f"{lhs} {relation} {rhs}", reason)
            self._facts[(kind, expr)] = proved
        if proved is None:
            proved = self._assume(kind, expr, relation, lhs, rhs, negated, reason)
        return proved != negated

    def _for_every_trip(self, kind: str, expr, question: str, reason: str) -> bool:
        """``expr == 0`` / ``expr >= 0`` where ``expr`` holds loop indices: the answer that holds
        on every trip of the loops, from a condition on the sizes (see the module docstring)."""
        answer = self._for_every_value(kind, expr, reason)
        if answer is None:
            names = ", ".join(sorted(s.name for s in free_symbols(expr) if s in self.loops))
            message = f"{question} ({reason}) depends on the loop index {names}"
            raise IndexQuestion(message, kind, expr)
        return answer

    def _for_every_value(self, kind: str, expr, reason: str) -> bool | None:
        """``expr == 0`` / ``expr >= 0`` for every value of the loop indices and the lengths
        the data decide in ``expr`` (``u0 - u0 // 4 >= 0``), from their intervals; None when
        the answer differs among them."""
        if kind == ">=":
            if self._always_nonnegative(expr, reason):
                return True
            return False if self._always_nonnegative(-expr - 1, reason) else None
        if self._always_nonnegative(expr - 1, reason) or self._always_nonnegative(
            -expr - 1, reason
        ):
            return False
        both = self._always_nonnegative(expr, reason) and self._always_nonnegative(-expr, reason)
        return True if both else None

    def _always_nonnegative(self, expr, reason: str) -> bool:
        """Whether ``expr >= 0`` on every trip: its worst case over the loop indices, a
        question about sizes, holds (decided, maybe guarded); False when it does not hold at the
        hints or cannot be formed. ``min(a, b) >= 0`` holds when both do, ``max(a, b) >= 0``
        when one does (a sufficient condition, tried in order)."""
        if isinstance(expr, Min):
            return all(self._always_nonnegative(arg, reason) for arg in expr.args)
        if isinstance(expr, Max):
            return any(self._always_nonnegative(arg, reason) for arg in expr.args)
        varying = list(self.loops)[::-1] + list(self.data_sizes)
        worst = self.simplify(_worst_case(expr, varying))
        if worst is None or free_symbols(worst) & set(varying):
            return False
        proved = _prove(">=", worst)
        if proved is not None:
            return proved
        if self.hint(worst) < 0:
            return False
        return self.decide(">=", worst, 0, reason)

    def known(self, relation: str, lhs, rhs) -> bool | None:
        """The answer this trace already gave to ``lhs relation rhs`` (proved or guarded), or
        None when it was not asked."""
        kind, expr, negated = _canonical(relation, self.simplify(lhs), self.simplify(rhs))
        answer = _prove(kind, expr)
        answer = self._known(kind, expr) if answer is None else answer
        return None if answer is None else answer != negated

    def _known(self, kind: str, expr) -> bool | None:
        """A recorded answer to ``expr == 0`` / ``expr >= 0``, asked in any of its forms."""
        if (kind, expr) in self._facts:
            return self._facts[(kind, expr)]
        if kind == "==":
            return self._facts.get(("==", -expr))
        opposite = self._facts.get((">=", -expr - 1))  # e >= 0 exactly when not -e-1 >= 0
        return None if opposite is None else not opposite

    def _assume(self, kind, expr, relation, lhs, rhs, negated, reason) -> bool:
        missing = free_symbols(expr) - set(self.hints)
        unbacked = sorted((s for s in missing if s in self.data_sizes), key=lambda s: s.name)
        if unbacked:
            lengths = "; ".join(f"{s.name} is the length of {self.data_sizes[s]}" for s in unbacked)
            raise DataSizeError(
                f"cannot decide {lhs} {relation} {rhs} ({reason}): {lengths}, which the data "
                "decide, so no guard can stand for the answer",
                self.locate(),
                tuple(unbacked),
            )
        if missing:
            names = ", ".join(sorted(s.name for s in missing))
            raise SymbolicError(f"cannot decide {lhs} {relation} {rhs}: no hint for {names}")
        value = evaluate(expr, self.hints)
        holds = value == 0 if kind == "==" else value >= 0
        self._facts[(kind, expr)] = holds
        guard = Guard(relation, lhs, rhs, holds != negated, reason, self.locate())
        self.guards.append(guard)
        if kind == "==" and holds:
            self._learn(expr, guard)
        return holds

    def specialize(self, value, reason: str) -> int:
        """``value`` as the int it is at the hints, guarded (``range(n)`` needs an int)."""
        value = self.simplify(value)
        if not is_expr(value):
            return value
        indices = [s for s in free_symbols(value) if s in self.loops]
        if indices:  # one int for every trip: no split of the range can give that
            raise SymbolicError(f"{reason}: loop index {indices[0]} used as a Python int")
        hint = self.hint(value)
        self.decide("==", value, hint, reason)
        return hint

    def _learn(self, expr, guard: Guard) -> None:
        """From ``expr == 0``, express its newest symbol of coefficient +-1 by the others."""
        order = {symbol: i for i, symbol in enumerate(self.symbols)}
        for symbol in sorted(free_symbols(expr), key=lambda s: -order.get(s, -1)):
            if symbol not in order or symbol in self.loops:  # an index is bound per trip
                continue
            coefficient = _linear_coefficient(expr, symbol)
            if coefficient not in (1, -1):
                continue
            rest = expr - coefficient * symbol
            if symbol in free_symbols(rest):
                continue
            solution = -coefficient * rest
            self.replacements = {
                s: substitute(v, {symbol: solution}) for s, v in self.replacements.items()
            }
            self.replacements[symbol] = solution
            self._learned_by[symbol] = guard
            return

    # -- at call time ----------------------------------------------------------------------------
    def conditions(self) -> list:
        """``(relation, lhs, rhs, text)`` for every assumption of the trace, over the symbols as
        read from the inputs (``sources``): each replacement (``y.shape[0] == s0-1``, which
        stands for the guard it was learned from), then each other guard."""
        found = []
        for symbol, value in self.replacements.items():
            guard = self._learned_by[symbol]
            where = f", at {guard.source}" if guard.source else ""
            text = f"{self.origins[symbol]} == {value} ({guard.reason}{where})"
            found.append(("==", symbol, value, text))
        learned = set(self._learned_by.values())
        for guard in _strongest([g for g in self.guards if g not in learned]):
            relation, lhs, rhs = guard.condition()
            found.append((relation, lhs, rhs, guard.text()))
        return found

    def bind(self, inputs: list) -> dict:
        """The int of each symbol in a call with these inputs (read, not checked)."""
        return {
            s: inputs[i] if axis is None else inputs[i].shape[axis]
            for s, (i, axis) in self.sources.items()
        }


def _strongest(guards: list) -> list:
    """``guards`` without the bounds others imply: of ``base + c >= 0`` for one ``base``, only the
    least ``c`` (a loop unrolled over ``range(n)`` asks ``2 < n``, ``3 < n``, ...: one guard)."""
    best: dict = {}
    keys = []
    for guard in guards:
        kind, expr, negated = _canonical(*guard.condition())
        key = None
        if kind == ">=" and not negated and is_expr(expr):
            const = expr.const if isinstance(expr, Sum) else 0
            key = expr - const
            if key not in best or const < best[key][0]:
                best[key] = (const, guard)
        keys.append(key)
    return [g for g, key in zip(guards, keys) if key is None or best[key][1] is g]


def _worst_case(expr, loops: list):
    """``expr`` with each loop index (``loops``: innermost first) replaced by the end of its
    interval that makes ``expr`` least; None when ``expr`` is not monotone in an index (an index
    may appear as a plain term and inside floor divisions, ``k // 3``, all in one direction)."""
    for symbol in loops:
        if expr is None or symbol not in free_symbols(expr):
            continue
        direction = _direction(expr, symbol)
        end = None if direction is None else symbol.lo if direction > 0 else symbol.hi
        if end is None or end in (INF, -INF):
            return None
        expr = substitute(expr, {symbol: end})
    return expr


def _direction(expr, symbol: Symbol) -> int | None:
    """+1 or -1 when ``expr`` grows (or shrinks) with ``symbol``, None when it is not monotone
    in it by the terms' form: the least and the greatest change of each term when ``symbol``
    grows by one (``c * (a*k + r) // d`` changes by ``c`` times a/d rounded down or up) add up
    to changes of one sign (``k - k // 4`` grows)."""
    terms = dict(expr.terms) if isinstance(expr, Sum) else {expr: 1}
    low = high = 0
    for term, coefficient in terms.items():
        if symbol not in free_symbols(term):
            continue
        if term == symbol:
            low, high = low + coefficient, high + coefficient
        elif isinstance(term, FloorDiv) and _linear_coefficient(term.num, symbol) != 0:
            slope = _linear_coefficient(term.num, symbol)
            if symbol in free_symbols(term.num - slope * symbol):
                return None
            changes = (coefficient * (slope // term.den), coefficient * -(-slope // term.den))
            low, high = low + min(changes), high + max(changes)
        else:
            return None
    if low >= 0:
        return 1
    return -1 if high <= 0 else None


def is_data_size(value: Any) -> bool:
    """Whether ``value`` is an unbacked symbol (``u0``: a length the data decide)."""
    return isinstance(value, Symbol) and value.name.startswith("u")


def data_sizes_in(value: Any) -> set:
    """The unbacked symbols in a literal structure (metas, parameters, sizes)."""
    found: set = set()
    map_symbolic(value, lambda e: found.update(s for s in free_symbols(e) if is_data_size(s)) or e)
    return found


def data_size_bindings(meta: Any) -> list:
    """``(symbol, item, axis)`` for each unbacked symbol that is an axis of a value of ``meta``
    (``item`` the result's position in a tuple of results, else None): where a run reads it
    from (the op making the value binds it)."""
    items = getattr(meta, "items", None)
    found, seen = [], set()
    for item, part in enumerate(items) if items is not None else ((None, meta),):
        for axis, size in enumerate(getattr(part, "shape", ())):
            if is_data_size(size) and size not in seen:
                seen.add(size)
                found.append((size, item, axis))
    return found


def trip_count(start, stop, step: int):
    """How many times ``range(start, stop, step)`` runs its body (an int or an expression)."""
    if step > 0:
        return sym_max(stop - start + step - 1, 0) // step
    return sym_max(start - stop - step - 1, 0) // -step


def _linear_coefficient(expr, symbol: Symbol) -> int:
    """The coefficient of the bare ``symbol`` in the sum ``expr`` (0 when it only appears inside
    a min, max, floor division or product)."""
    terms = getattr(expr, "terms", None)
    if terms is None:
        return 1 if expr == symbol else 0
    return dict(terms).get(symbol, 0)


# -- the active environment -------------------------------------------------------------------------

_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("gcompile_shape_env", default=None)


@contextlib.contextmanager
def using(env: ShapeEnv | None) -> Iterator[ShapeEnv | None]:
    """Make ``env`` the environment that ``decide`` consults inside the ``with`` block."""
    token = _ACTIVE.set(env)
    try:
        yield env
    finally:
        _ACTIVE.reset(token)


def active() -> ShapeEnv | None:
    """The environment ``decide`` consults, if any."""
    return _ACTIVE.get()


def decide_in_loops(relation: str, lhs, rhs, reason: str) -> bool | None:
    """``decide`` for a question asked while a loop body is traced (``ShapeEnv.in_body``) or
    on loop indices, which may have no answer for every trip: None then, and for a question
    on sizes alone outside loop bodies (which the caller keeps symbolic). In a body, simple
    sizes are worth a guard: the body's ops then agree on them and fuse."""
    env = active()
    if env is None or not env.loops:
        return None
    symbols = set()
    for side in (lhs, rhs):
        symbols |= free_symbols(side) if is_expr(side) else set()
    if not symbols & set(env.loops) and not env.in_body:
        return env.known(relation, lhs, rhs)  # (a body's shapes inferred again after tracing)
    try:
        return env.decide(relation, lhs, rhs, reason)
    except SymbolicError:
        return None


def decide(relation: str, lhs, rhs, reason: str) -> bool:
    """``lhs relation rhs`` for sizes (ints or expressions), decided by the active environment.

    Plain ints compare directly; an expression is proved from its intervals when possible,
    else the active ``ShapeEnv`` answers from its hints and records a guard. With no active
    environment an unprovable question raises ``SymbolicError``.
    """
    if not is_expr(lhs) and not is_expr(rhs):
        return _compare(relation, lhs, rhs)
    env = active()
    if env is not None:
        return env.decide(relation, lhs, rhs, reason)
    kind, expr, negated = _canonical(relation, lhs, rhs)
    proved = _prove(kind, expr)
    if proved is None:
        raise SymbolicError(f"cannot decide {lhs} {relation} {rhs} ({reason}) without a trace")
    return proved != negated


def _compare(relation: str, lhs: int, rhs: int) -> bool:
    return {
        "==": lhs == rhs,
        "!=": lhs != rhs,
        "<": lhs < rhs,
        "<=": lhs <= rhs,
        ">": lhs > rhs,
        ">=": lhs >= rhs,
    }[relation]


def hint(value) -> int:
    """The int an expression takes at the active trace's sizes (ints pass through)."""
    if not is_expr(value):
        return value
    env = active()
    if env is None:
        raise SymbolicError(f"no hint for {value}: no trace is active")
    return env.hint(value)


# -- symbolic literals -------------------------------------------------------------------------------


def is_symbolic(value: Any) -> bool:
    """Whether a literal structure (tuples, lists, dicts, slices, metas) holds an expression."""
    found = []
    map_symbolic(value, lambda e: found.append(e) or e)
    return bool(found)


def map_symbolic(value: Any, fn: Callable[[Expr], Any]) -> Any:
    """``value`` with every expression inside it (nested tuples, lists, dicts, slices, named
    tuples, metas) replaced by ``fn(expression)``; everything else is kept as it is."""
    if is_expr(value):
        return fn(value)
    if isinstance(value, slice):
        parts = [map_symbolic(p, fn) for p in (value.start, value.stop, value.step)]
        return slice(*parts)
    if isinstance(value, tuple):
        items = [map_symbolic(v, fn) for v in value]
        return type(value)(*items) if hasattr(type(value), "_fields") else tuple(items)
    if isinstance(value, list):
        return [map_symbolic(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_symbolic(v, fn) for k, v in value.items()}
    remap = getattr(value, "map_sizes", None)
    return remap(fn) if remap is not None else value


def concrete(value: Any, bindings: dict) -> Any:
    """``value`` with every expression evaluated at ``bindings`` (symbol -> int)."""
    return map_symbolic(value, lambda e: evaluate(e, bindings))


def source_of(value, names: dict) -> str:
    """Python source computing an int or an expression, symbols named by ``names``."""
    return to_source(value, names) if is_expr(value) else repr(value)
