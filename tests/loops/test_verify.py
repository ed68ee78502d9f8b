"""The loop IR's lint (``loops/verify.py``), run before and after the rewrites."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gcompile.loops.nodes import Let, Var
from gcompile.loops.rewrite import apply_rewrites
from gcompile.loops.verify import LoopIRError, verify
from tests.loops.helpers import PIPELINE, context, lowered


def test_lowered_and_rewritten_kernels_verify():
    kernel = lowered(lambda x: np.sin(x).sum(axis=-1) / x.max(axis=-1), np.ones((4, 300)))
    verify(kernel)
    verify(apply_rewrites(kernel, context(parallel=True), PIPELINE))


def test_a_variable_read_before_it_is_set_is_an_error_naming_it():
    kernel = lowered(lambda x: x * 2.0, np.ones(8))
    broken = dataclasses.replace(kernel, body=(Let(Var("y"), Var("nowhere")),) + kernel.body)
    with pytest.raises(LoopIRError, match="nowhere is read before it is set"):
        verify(broken)

    def rewrite(kernel, ctx):
        return broken

    with pytest.raises(LoopIRError, match="kernel fused_1"):  # the error shows the kernel
        apply_rewrites(kernel, context(), [("breaks", rewrite)])
