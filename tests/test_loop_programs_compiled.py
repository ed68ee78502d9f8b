"""Every loop program of bench/loop_programs.py compiled: results and in-place argument updates
agree with eager NumPy (through ``check``: the interpreter exactly, Numba within the error
bounds of any summation order) at two sizes, with every loop kept (or unrolled by the pass,
never by the tracer) and no loop left to the interpreter."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gcompile
from bench.loop_programs import PROGRAMS

from .support import check

_FIXED = ("steps", "k")  # time steps and filter widths keep their tiny values


def _inputs(program, grow: int) -> tuple:
    params = {
        key: value if key in _FIXED else value + grow
        for key, value in program.sizes["tiny"].items()
    }
    return program.inputs(np.random.default_rng(3), **params)


@pytest.mark.parametrize("grow", [0, 5])
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_compiled_loop_program_matches_eager(program, grow):
    with warnings.catch_warnings():
        warnings.simplefilter("error", gcompile.GcompileWarning)  # no interpreter fallback
        check(program.function, *_inputs(program, grow))


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_no_loop_is_unrolled_by_the_tracer(program):
    graph = gcompile.trace(program.function, *_inputs(program, 0))
    declined = [note for note in graph.notes.loops if not note.rolled]
    assert not declined, [note.reason for note in declined]
