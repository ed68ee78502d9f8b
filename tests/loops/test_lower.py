"""Lowering: a fused kernel as its plain loop nest (``loops/lower.py``), before any rewrite."""

from __future__ import annotations

import numpy as np

from gcompile.loops.printer import format_kernel
from tests.loops.helpers import golden, lowered


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_a_pointwise_kernel_reads_views_through_index_maps():
    kernel = lowered(lambda x, y: x.T * 2.0 + y, np.ones((3, 5)), np.ones(3))
    assert format_kernel(kernel) == golden(
        """
        kernel fused_1(out0, nd_x, nd_y, n0, n1, st0):
          x = flat_C(nd_x)
          y = flat_C(nd_y)
          for i0 in range(n0) [kept]:
            for i1 in range(n1) [kept]:
              # %multiply_1 : f64[s1,s0] = multiply(%transpose_1, 2.0)
              ld0 = x[i0 + st0*i1]
              multiply_1 = multiply(ld0, f64(2.0))
              # %add_1 : f64[s1,s0] = add(%multiply_1, %y)
              ld1 = y[i1]
              add_1 = add(multiply_1, ld1)
              out0[i0, i1] = add_1
        """
    )


def test_offsets_and_strides_are_parameters_and_unit_strides_literal():
    kernel = lowered(lambda x, s: x[1:, ::-1] * s, np.ones((5, 3)), 2.0)
    text = format_kernel(kernel)
    assert text.startswith("kernel fused_1(out0, nd_x, s, n0, n1, o0, st0):\n  x = flat_C(nd_x)\n")
    assert "ld0 = x[o0 + st0*i0 - i1]" in text
    ints = {p.var.name: str(p.argument[1]) for p in kernel.params if p.argument[0] == "int"}
    assert ints == {"n0": "s0-1", "n1": "s1", "o0": "2*s1-1", "st0": "s1"}  # x: f64[s0,s1]
    assert [p.argument[0] for p in kernel.params if p.var.node is not None] == ["base", "scalar"]


def test_a_row_kernel_runs_phases_and_stashes_what_a_later_phase_reads():
    assert format_kernel(lowered(softmax, np.ones((4, 6)))) == golden(
        """
        kernel fused_1(out0, nd_x, n0, n1, st0):
          x = flat_C(nd_x)
          rowlen = n1
          for i0 in range(n0) [kept]:
            buf_exp_1 = alloc[rowlen] f64
            init acc_amax_1 = f64(-inf)
            for i1 in range(n1) [reduce]:
              # %amax_1 : f64[s0,1] = amax(%x, axis=-1, keepdims=True)
              ld0 = x[st0*i0 + i1]
              acc_amax_1 max= ld0
            amax_1 = acc_amax_1
            init acc_sum_1 = f64(0.0)
            cnt = 0
            for i1 in range(n1) [reduce]:
              # %subtract_1 : f64[s0,s1] = subtract(%x, %amax_1)
              ld0 = x[st0*i0 + i1]
              subtract_1 = subtract(ld0, amax_1)
              # %exp_1 : f64[s0,s1] = exp(%subtract_1)
              exp_1 = exp(subtract_1)
              buf_exp_1[cnt] = exp_1
              # %sum_1 : f64[s0,1] = sum(%exp_1, axis=-1, keepdims=True)
              acc_sum_1 += exp_1
              cnt += 1
            sum_1 = f64(acc_sum_1)
            cnt = 0
            for i1 in range(n1) [reduce]:
              # %divide_1 : f64[s0,s1] = divide(%exp_1, %sum_1)
              divide_1 = divide(buf_exp_1[cnt], sum_1)
              out0[i0, i1] = divide_1
              cnt += 1
        """
    )


def test_values_are_named_in_order_reductions_first_then_as_the_body_meets_them():
    kernel = lowered(softmax, np.ones((4, 6)))
    names = [node.name for node in kernel.values]
    assert names == ["amax_1", "sum_1", "exp_1", "x", "subtract_1", "divide_1"]


def test_std_takes_a_mean_pass_then_the_squared_deviations():
    kernel = lowered(lambda x: x.std(axis=1, ddof=1), np.ones((5, 3)))
    assert format_kernel(kernel) == golden(
        """
        kernel fused_1(out0, nd_x, n0, n1, st0):
          x = flat_C(nd_x)
          for i0 in range(n0) [kept]:
            init acc_m_std_1 = f64(0.0)
            for i1 in range(n1) [reduce]:
              # %std_1 : f64[s0] = std(%x, axis=1, ddof=1)
              ld0 = x[st0*i0 + i1]
              acc_m_std_1 += ld0
            mean_std_1 = f64(f64(acc_m_std_1) / f64(n1))
            init acc_std_1 = f64(0.0)
            for i1 in range(n1) [reduce]:
              # %std_1 : f64[s0] = std(%x, axis=1, ddof=1)
              ld0 = x[st0*i0 + i1]
              dev_std_1 = ld0 - mean_std_1
              acc_std_1 += dev_std_1 * dev_std_1
            std_1 = f64(sqrt(f64(f64(acc_std_1) / f64(max(n1 - 1, 0)))))
            out0[i0] = std_1
        """
    )


def test_var_over_leading_axes_takes_two_passes_in_memory_order_as_numpy():
    kernel = lowered(lambda x: (x.mean(axis=0), x.var(axis=0)), np.ones((5, 3)))
    text = format_kernel(kernel)
    passes = text.split("for i0 in range(n0) [columns]:")
    assert len(passes) == 3, text  # the sums, then the squared deviations, row after row
    assert "colmean_var_1[cnt] = mean_var_1" in passes[1], text
    assert "mean_var_1 = colmean_var_1[cnt]" in passes[2], text
    assert "dev_var_1 = ld0 - mean_var_1" in passes[2] and "acc_mean_1" not in passes[2], text


def test_argmax_records_the_position_of_the_best_value():
    kernel = lowered(lambda x: np.argmax(x, axis=1), np.ones((5, 3), np.float32))
    text = format_kernel(kernel)
    assert "best_argmax_1, at_argmax_1 argmax= ld0 at cnt" in text
    assert "argmax_1 = at_argmax_1" in text and "cnt += 1" in text
