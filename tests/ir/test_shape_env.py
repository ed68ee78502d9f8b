"""ShapeEnv: questions about symbolic sizes are proved, remembered, or guarded at the hints."""

from __future__ import annotations

import pytest

from gcompile.ir.shape_env import ShapeEnv, SymbolicError, decide, hint, using
from gcompile.ir.symbolic import Symbol


def env_with(*hints: int) -> tuple:
    env = ShapeEnv()
    symbols = [env.size_symbol(h, f"x.shape[{k}]", (0, k)) for k, h in enumerate(hints)]
    return env, symbols


def test_symbols_stand_for_sizes_of_two_or_more():
    env, (s0,) = env_with(7)
    assert s0 == Symbol("s0", 2) and env.hints[s0] == 7 and env.sources[s0] == (0, 0)
    with pytest.raises(ValueError, match="sizes 0 and 1 are specialised"):
        env.size_symbol(1, "y.shape[0]")


def test_what_the_intervals_prove_needs_no_guard():
    env, (s0, s1) = env_with(5, 9)
    assert env.decide("!=", s0, 1, "broadcasting") is True
    assert env.decide(">=", s0 - 2, 0, "slice") is True
    assert env.decide("<", s0 - 3, s0, "index") is True
    assert env.guards == []


def test_an_open_question_takes_the_hints_answer_and_records_a_guard():
    env, (s0, s1) = env_with(5, 9)
    env.locate = lambda: "prog.py:3"
    assert env.decide(">", s0, 4, "a comparison of sizes") is True
    assert env.decide("==", s0, s1, "broadcasting") is False
    assert [g.text() for g in env.guards] == [
        "s0 > 4 (a comparison of sizes, at prog.py:3)",
        "s0 != s1 (broadcasting, at prog.py:3)",
    ]
    # asked again (in any form), the recorded answer is reused without a new guard
    assert env.decide("<=", s0, 4, "again") is False
    assert env.decide("!=", s1, s0, "again") is True
    assert len(env.guards) == 2


def test_an_equality_becomes_a_replacement_of_the_newer_symbol():
    env, (s0, s1, s2) = env_with(8, 6, 6)
    assert env.decide("==", s2, s0 - 2, "broadcasting") is True
    assert env.replacements == {s2: s0 - 2}
    assert env.simplify(s2 + s1) == s0 - 2 + s1
    assert env.decide("==", s2, s1, "broadcasting") is True  # s1 := s0 - 2 as well
    assert env.replacements == {s2: s0 - 2, s1: s0 - 2}
    texts = [text for _, _, _, text in env.conditions()]
    assert texts == ["x.shape[2] == s0-2 (broadcasting)", "x.shape[1] == s0-2 (broadcasting)"]


def test_specialize_pins_a_value_and_hint_evaluates():
    env, (s0, s1) = env_with(4, 3)
    assert env.hint(2 * s0 + s1) == 11
    assert env.specialize(s0 - 1, "range()") == 3
    assert env.replacements == {s0: 4}
    with using(env):
        assert hint(s1 * s1) == 9


def test_without_an_active_environment_only_proofs_answer():
    s0 = Symbol("s0", 2)
    assert decide(">", s0, 1, "x") is True and decide("==", 3, 3, "x") is True
    with pytest.raises(SymbolicError, match="cannot decide s0 > 4"):
        decide(">", s0, 4, "a comparison")
    with pytest.raises(SymbolicError, match="no trace is active"):
        hint(s0)


def test_bind_reads_each_symbol_from_its_input():
    import numpy as np

    env, (s0, s1) = env_with(4, 3)
    assert env.bind([np.zeros((10, 2))]) == {s0: 10, s1: 2}


def test_conditions_drop_the_bounds_others_imply():
    env, (s0, s1) = env_with(3000, 9)
    for k in range(2, 60):  # a loop unrolled in Python asks k < s0 on every trip
        assert env.decide("<", k, s0, "index bounds") is True
    assert env.decide(">", s1, 4, "a comparison") is True
    assert env.decide("<=", s1, 8, "a comparison") is False  # s1 > 8: the stronger bound on s1
    assert env.decide("!=", s0, s1, "broadcasting") is True
    texts = [text for *_, text in env.conditions()]
    assert texts == [
        "59 < s0 (index bounds)",
        "s1 > 8 (a comparison)",
        "s0 != s1 (broadcasting)",
    ]
    assert len(env.guards) == 61  # recorded; a call checks (and explain shows) the three


def test_inference_remembered_per_operands_and_body_gives_the_rules_answers():
    """``ShapeEnv.remembered`` behind getitem and elementwise inference: the same operands give
    the same meta (one computation), others of equal hash do not (``x + 1`` is not ``x + 1.0``),
    and a loop body keeps its own."""
    from gcompile.ir import ops
    from gcompile.ir.meta import TensorMeta

    env, (s0,) = env_with(6)
    x = TensorMeta((s0, 4), "int8")
    with using(env):
        by_slice = ops.GETITEM.infer(x, index=(slice(1, None),))
        by_int = ops.GETITEM.infer(x, index=(1,))
        added_int, added_float = ops.ADD.infer(x, 1), ops.ADD.infer(x, 1.0)
        again = ops.GETITEM.infer(x, index=(1,))
        env.in_body += 1
        in_body = ops.GETITEM.infer(x, index=(1,))
        env.in_body -= 1
    assert by_slice.shape == (s0 - 1, 4) and by_int.shape == (4,) and again is by_int
    assert added_int.dtype == "int8" and added_float.dtype == "float64"
    assert in_body == by_int and in_body is not by_int  # (computed again in the body)
    assert len(env._remembered) == 5
