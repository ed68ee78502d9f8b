"""The named rewrites of the loop IR, each on a small kernel: the text before and after it (the
rewrites before it in the pipeline applied first), and the combinations the pipeline makes."""

from __future__ import annotations

import numpy as np

from gcompile.loops.printer import format_kernel
from tests.loops.helpers import before_after, golden, lowered, through


def logsumexp(x):
    m = np.max(x, axis=-1, keepdims=True)
    return m + np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))


def test_split_lanes_stores_a_blocks_values_and_reduces_them_by_lanes():
    before, after = before_after(
        lowered(lambda x: x.max(axis=-1), np.ones((4, 300), np.float32)), "split_lanes"
    )
    assert before == golden(
        """
        kernel fused_1(out0, nd_x, n0, n1, st0):
          x = flat_C(nd_x)
          for i0 in range(n0) [kept]:
            init acc_amax_1 = f32(-inf)
            for i1 in range(n1) [reduce]:
              # %amax_1 : f32[s0] = amax(%x, axis=-1)
              ld0 = x[st0*i0 + i1]
              acc_amax_1 max= ld0
            amax_1 = acc_amax_1
            out0[i0] = amax_1
        """
    )
    assert after == golden(
        """
        kernel fused_1(out0, nd_x, n0, n1, st0):
          x = flat_C(nd_x)
          for i0 in range(n0) [kept]:
            init acc_amax_1 = f32(-inf)
            lane_amax_1 = stack[128] f32
            for b1 in range(0, n1, 128) [block]:
              e1 = n1 if b1 + 128 > n1 else b1 + 128
              for i1 in range(b1, e1) [reduce]:
                # %amax_1 : f32[s0] = amax(%x, axis=-1)
                ld0 = x[st0*i0 + i1]
                lane_amax_1[i1 - b1] = ld0
              acc_amax_1 max= lane_max(lane_amax_1, e1 - b1)
            amax_1 = acc_amax_1
            out0[i0] = amax_1
        """
    )


def test_a_loop_with_an_accumulator_without_lanes_is_not_split():
    before, after = before_after(
        lowered(lambda x: x.prod(axis=-1) + x.max(axis=-1), np.ones((4, 300))), "split_lanes"
    )
    assert after == before and "lane_" not in after


def test_blocked_sums_sum_blocks_then_groups_of_blocks():
    kernel = lowered(lambda x: (x * 2.0).prod(axis=-1) + x.sum(axis=-1), np.ones((4, 300)))
    _, after = before_after(kernel, "blocked_sums")
    assert after == golden(
        """
        kernel fused_1(out0, nd_x, n0, n1, st0):
          x = flat_C(nd_x)
          for i0 in range(n0) [kept]:
            init acc_prod_1 = f64(1.0)
            init acc_sum_1 = f64(0.0)
            init mid_sum_1 = f64(0.0)
            blocks = 0
            for b1 in range(0, n1, 128) [block]:
              e1 = n1 if b1 + 128 > n1 else b1 + 128
              init blk_sum_1 = f64(0.0)
              for i1 in range(b1, e1) [reduce]:
                # %multiply_1 : f64[s0,s1] = multiply(%x, 2.0)
                ld0 = x[st0*i0 + i1]
                multiply_1 = multiply(ld0, f64(2.0))
                # %prod_1 : f64[s0] = prod(%multiply_1, axis=-1)
                acc_prod_1 *= multiply_1
                # %sum_1 : f64[s0] = sum(%x, axis=-1)
                blk_sum_1 += ld0
              blocks += 1
              mid_sum_1 += blk_sum_1
              if blocks & 127 == 0:
                acc_sum_1 += mid_sum_1
                init mid_sum_1 = f64(0.0)
            prod_1 = f64(acc_prod_1)
            acc_sum_1 += mid_sum_1
            sum_1 = f64(acc_sum_1)
            # %add_1 : f64[s0] = add(%prod_1, %sum_1)
            add_1 = add(prod_1, sum_1)
            out0[i0] = add_1
        """
    )


def test_float32_sums_are_not_blocked():
    before, after = before_after(
        lowered(lambda x: x.sum(axis=-1), np.ones((4, 300), np.float32)), "blocked_sums"
    )
    assert after == before and "mid_" not in after


def test_online_pair_computes_the_max_and_the_sum_of_exps_in_one_pass():
    before, after = before_after(lowered(logsumexp, np.ones((4, 300))), "online_pair")
    assert "init acc_sum_1 = f64(0.0)  (of exp(x - amax_1))" in before
    assert after == golden(
        """
        kernel fused_1(out0, nd_x, n0, n1, st0):
          x = flat_C(nd_x)
          for i0 in range(n0) [kept]:
            init acc_amax_1 = f64(-inf)
            lane_amax_1 = stack[128] f64
            init acc_sum_1 = f64(0.0)  (of exp(x - amax_1))
            init mid_sum_1 = f64(0.0)
            lane_sum_1 = stack[128] f64
            # amax_1 and sum_1 in one pass: exps against a lagging max ref_sum_1 (online.py)
            ref_sum_1 = f64(f64(-inf))
            blocks = 0
            for b1 in range(0, n1, 128) [block]:
              e1 = n1 if b1 + 128 > n1 else b1 + 128
              if ref_sum_1 > f64(-inf):
                for i1 in range(b1, e1) [reduce]:
                  # %amax_1 : f64[s0,1] = amax(%x, axis=-1, keepdims=True)
                  ld0 = x[st0*i0 + i1]
                  lane_amax_1[i1 - b1] = ld0
                  # %sum_1 : f64[s0,1] = sum(%exp_1, axis=-1, keepdims=True)
                  lane_sum_1[i1 - b1] = exp(subtract(ld0, ref_sum_1))
              else:
                for i1 in range(b1, e1) [reduce]:
                  # %amax_1 : f64[s0,1] = amax(%x, axis=-1, keepdims=True)
                  ld0 = x[st0*i0 + i1]
                  lane_amax_1[i1 - b1] = ld0
              top_sum_1 = lane_max(lane_amax_1, e1 - b1)
              acc_amax_1 max= top_sum_1
              if top_sum_1 <= ref_sum_1 + f64(2.0) and ref_sum_1 > f64(-inf):
                blk_sum_1 = lane_sum(lane_sum_1, e1 - b1, f64(0.0))
              elif f64(-inf) < top_sum_1 < f64(inf):
                shrink_sum_1 = exp(f64(ref_sum_1) - f64(top_sum_1))
                acc_sum_1 *= shrink_sum_1
                mid_sum_1 *= shrink_sum_1
                ref_sum_1 = top_sum_1
                shifted_exp(lane_amax_1, lane_sum_1, e1 - b1, ref_sum_1)
                blk_sum_1 = lane_sum(lane_sum_1, e1 - b1, f64(0.0))
              else:
                blk_sum_1 = f64(0.0)
              blocks += 1
              mid_sum_1 += blk_sum_1
              if blocks & 127 == 0:
                acc_sum_1 += mid_sum_1
                init mid_sum_1 = f64(0.0)
            amax_1 = acc_amax_1
            acc_sum_1 += mid_sum_1
            acc_sum_1 = rescaled_total(acc_sum_1, ref_sum_1, acc_amax_1)
            sum_1 = f64(acc_sum_1)
            # %log_1 : f64[s0,1] = log(%sum_1)
            log_1 = log(sum_1)
            # %add_1 : f64[s0,1] = add(%amax_1, %log_1)
            add_1 = add(amax_1, log_1)
            out0[i0, 0] = add_1
        """
    )


def test_an_online_float32_sum_adds_each_block_to_its_total():
    after = format_kernel(through(lowered(logsumexp, np.ones((4, 300), np.float32)), "online_pair"))
    assert "\n      acc_sum_1 += blk_sum_1\n" in after and "mid_sum_1" not in after


def test_range_fixups_flag_a_block_out_of_range_and_recompute_it_exactly():
    before, after = before_after(lowered(lambda x: np.sin(x) * 2.0, np.ones(300)), "range_fixups")
    assert before == golden(
        """
        kernel fused_1(out0, nd_x, n0):
          x = flat_C(nd_x)
          for i0 in range(n0) [reduce]:
            # %sin_1 : f64[s0] = sin(%x)
            ld0 = x[i0]
            sin_1 = sin(ld0)
            # %multiply_1 : f64[s0] = multiply(%sin_1, 2.0)
            multiply_1 = multiply(sin_1, f64(2.0))
            out0[i0] = multiply_1
        """
    )
    assert after == golden(
        """
        kernel fused_1(out0, nd_x, n0):
          x = flat_C(nd_x)
          for b0 in range(0, n0, 128) [block]:
            e0 = n0 if b0 + 128 > n0 else b0 + 128
            bad = False
            for i0 in range(b0, e0) [reduce]:
              # %sin_1 : f64[s0] = sin(%x)
              ld0 = x[i0]
              sin_1 = sin(ld0)
              # %multiply_1 : f64[s0] = multiply(%sin_1, 2.0)
              multiply_1 = multiply(sin_1, f64(2.0))
              out0[i0] = multiply_1
              bad = bad | (abs(ld0) > f64(35184372088832.0))
            if bad:
              for i0 in range(b0, e0) [fixup]:
                # %sin_1 : f64[s0] = sin(%x)
                ld0 = x[i0]
                sin_1 = sin.exact(ld0)
                # %multiply_1 : f64[s0] = multiply(%sin_1, 2.0)
                multiply_1 = multiply.exact(sin_1, f64(2.0))
                out0[i0] = multiply_1
        """
    )


def test_a_fixup_restores_the_counter_of_stashed_values():
    def row(x):
        s = np.sin(x)
        return s / s.sum(axis=-1, keepdims=True)

    after = format_kernel(through(lowered(row, np.ones((4, 300))), "range_fixups"))
    assert "cnt0 = cnt" in after and "cnt = cnt0" in after


def test_split_blocked_and_flagged_compose_in_one_block():
    kernel = through(lowered(lambda x: np.sin(x).sum(axis=-1), np.ones((4, 300))), "range_fixups")
    assert format_kernel(kernel) == golden(
        """
        kernel fused_1(out0, nd_x, n0, n1, st0):
          x = flat_C(nd_x)
          for i0 in range(n0) [kept]:
            init acc_sum_1 = f64(0.0)
            init mid_sum_1 = f64(0.0)
            lane_sum_1 = stack[128] f64
            blocks = 0
            for b1 in range(0, n1, 128) [block]:
              e1 = n1 if b1 + 128 > n1 else b1 + 128
              bad = False
              for i1 in range(b1, e1) [reduce]:
                # %sin_1 : f64[s0,s1] = sin(%x)
                ld0 = x[st0*i0 + i1]
                sin_1 = sin(ld0)
                # %sum_1 : f64[s0] = sum(%sin_1, axis=-1)
                lane_sum_1[i1 - b1] = sin_1
                bad = bad | (abs(ld0) > f64(35184372088832.0))
              if bad:
                for i1 in range(b1, e1) [fixup]:
                  # %sin_1 : f64[s0,s1] = sin(%x)
                  ld0 = x[st0*i0 + i1]
                  sin_1 = sin.exact(ld0)
                  # %sum_1 : f64[s0] = sum(%sin_1, axis=-1)
                  lane_sum_1[i1 - b1] = sin_1
              blk_sum_1 = lane_sum(lane_sum_1, e1 - b1, f64(0.0))
              blocks += 1
              mid_sum_1 += blk_sum_1
              if blocks & 127 == 0:
                acc_sum_1 += mid_sum_1
                init mid_sum_1 = f64(0.0)
            acc_sum_1 += mid_sum_1
            sum_1 = f64(acc_sum_1)
            out0[i0] = sum_1
        """
    )


def test_chunk_total_reduces_chunks_in_parallel_and_combines_them_in_order():
    kernel = lowered(lambda x: np.argmin(x), np.ones((30, 7)))
    _, after = before_after(kernel, "chunk_total", parallel=True)
    test = (
        "part_at_argmin_1[c] >= 0 and (at_argmin_1 < 0 or best_argmin_1 == best_argmin_1 and "
        "(part_best_argmin_1[c] < best_argmin_1 or part_best_argmin_1[c] != part_best_argmin_1[c]))"
    )
    assert after == golden(
        f"""
        kernel fused_1(out0, nd_x, n0, n1, st0):
          x = flat_C(nd_x)
          part_best_argmin_1 = alloc[16] f64
          part_at_argmin_1 = alloc[16] i64 = -1
          for c in prange(16) [chunk]:
            lo = n0 * c // 16
            hi = n0 * (c + 1) // 16
            init best_argmin_1, at_argmin_1
            cnt = lo * n1
            for i0 in range(lo, hi) [reduce]:
              for i1 in range(n1) [reduce]:
                # %argmin_1 : i64[] = argmin(%x)
                ld0 = x[st0*i0 + i1]
                best_argmin_1, at_argmin_1 argmin= ld0 at cnt
                cnt += 1
            if hi > lo:
              part_best_argmin_1[c] = best_argmin_1
              part_at_argmin_1[c] = at_argmin_1
          best_argmin_1 = part_best_argmin_1[0]
          at_argmin_1 = part_at_argmin_1[0]
          for c in range(1, 16) [combine]:
            if {test}:
              best_argmin_1 = part_best_argmin_1[c]
              at_argmin_1 = part_at_argmin_1[c]
          argmin_1 = at_argmin_1
          out0[0] = argmin_1
        """
    )


def test_a_chunked_blocked_sum_adds_its_pending_block_sums_to_its_part():
    kernel = through(lowered(lambda x: x.sum(), np.ones((30, 7))), "chunk_total", parallel=True)
    text = format_kernel(kernel)
    assert "    part_sum_1[c] = acc_sum_1 + mid_sum_1\n" in text
    combined = (
        "\n  init acc_sum_1 = f64(0.0)\n  for c in range(16) [combine]:\n"
        "    acc_sum_1 += part_sum_1[c]\n  sum_1 = f64(acc_sum_1)\n  out0[0] = sum_1\n"
    )
    assert text.endswith(combined)
    assert kernel.parallel


def test_chunk_total_leaves_serial_kernels_and_row_kernels_alone():
    total = lowered(lambda x: x.sum(), np.ones((30, 7)))
    assert through(total, "chunk_total") == through(total, "range_fixups")
    rows = through(lowered(lambda x: x.sum(axis=1), np.ones((30, 7))), "range_fixups")
    assert through(rows, "chunk_total", parallel=True, first="chunk_total") == rows


def test_parallel_loops_make_the_outer_kept_loop_a_prange():
    before, after = before_after(
        lowered(lambda x: x * 2.0, np.ones((4, 300))), "parallel_loops", parallel=True
    )
    assert "for i0 in range(n0) [kept]:" in before
    assert "for i0 in prange(n0) [kept]:" in after and "prange(n1)" not in after


def test_parallel_loops_run_the_blocks_of_a_flat_flagged_loop_in_parallel():
    _, after = before_after(
        lowered(lambda x: np.sin(x) * 2.0, np.ones(300)), "parallel_loops", parallel=True
    )
    assert after.startswith(
        golden(
            """
            kernel fused_1(out0, nd_x, n0):
              x = flat_C(nd_x)
              for c0 in prange((n0 + 127) // 128) [block]:
                b0 = c0 * 128
                e0 = n0 if b0 + 128 > n0 else b0 + 128
            """
        )
    )


def test_small_kernels_stay_serial():
    kernel = through(lowered(lambda x: x * 2.0, np.ones((4, 300))), "parallel_loops")
    assert not kernel.parallel and "prange" not in format_kernel(kernel)
