"""The text and table forms: deterministic, aligned, literals printed as documented."""

from __future__ import annotations

import numpy as np

import gcompile


def test_text_form_of_the_issue_example():
    graph = gcompile.trace(lambda x: np.exp(x) * 2, np.ones(3))
    assert str(graph) == (
        "graph lambda(x: f64[s0]):\n"
        "  %exp_1      : f64[s0] = exp(%x)\n"
        "  %multiply_1 : f64[s0] = multiply(%exp_1, 2)\n"
        "  return %multiply_1"
    )


def test_literals_constants_indices_and_weak_scalars():
    weights = np.arange(3.0)
    small = np.array([1.0, 2.0])

    def f(x, dt: float):
        y = x[1:-1, ::2, None, ...] * dt + weights
        return y.astype(np.float32), x[0, 0] + small, dt * 2.0, {"s": np.float32(1.5) * x}

    text = str(gcompile.trace(f, np.ones((5, 6)), 0.5))
    assert "graph f(x: f64[s0,s1], dt: float):" in text
    assert "%getitem_1  : f64[s0-2,(s1+1)//2,1] = getitem(%x, index=[1:-1, ::2, None, ...])" in text
    assert "const<f64[3]>[0., 1., 2.]" in text and "const<f64[2]>[1., 2.]" in text
    assert "%multiply_2 : float" in text  # Python arithmetic on a float input stays a weak float
    assert "astype(%add_1, dtype=float32)" in text
    assert "multiply(f32(1.5), %x)" in text
    assert text.endswith("return (%astype_1, %add_2, %multiply_2, {'s': %multiply_3})")


def test_text_is_deterministic_across_traces():
    def f(x):
        return np.sum(x * x, axis=(0, 1), keepdims=True) - x.mean()

    a = np.ones((2, 3, 4))
    assert str(gcompile.trace(f, a)) == str(gcompile.trace(f, a))


def test_tabular_form_lists_every_node_with_its_source():
    def f(x):
        return np.tanh(x) + 1

    table = gcompile.trace(f, np.ones(4, np.float32)).tabular()
    lines = table.splitlines()
    assert lines[0].split() == ["opcode", "name", "target", "args", "kwargs", "meta", "source"]
    assert lines[2].split()[:2] == ["placeholder", "x"]
    tanh_line = next(line for line in lines if line.startswith("call") and "tanh" in line)
    assert (
        "%x" in tanh_line
        and "f32[s0]" in tanh_line
        and f"test_printer.py:{f.__code__.co_firstlineno + 1}" in tanh_line
    )
    assert lines[-1].startswith("output")


def test_large_constants_print_only_their_type():
    table = np.arange(100.0)
    text = str(gcompile.trace(lambda x: x + table, np.ones(100)))
    assert "%const_1 : f64[100] = const<f64[100]>\n" in text
