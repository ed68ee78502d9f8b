"""A list comprehension bound to a name becomes a loop appending to it
(``capture/comprehension_loops``): the converted function computes what the original does, and
rows predicted one by one compile as one rolled loop."""

import numpy as np

import gcompile
from gcompile.ir.control import ForRange
from gcompile.ir.subgraph import walk

from ..support import check
from .test_convert import same


def nearest_label(train, labels, x):
    distances = np.sqrt(np.sum((train - x) ** 2, axis=1))
    return np.bincount(labels[np.argsort(distances)[:3]]).argmax()


def predict_rows(train, labels, queries):
    predictions = [nearest_label(train, labels, q) for q in queries]
    return np.array(predictions)


def targets_stay_local(n):
    x = 5
    rows = [x * 2 for x in range(n)]
    pairs = [(i, v) for i, v in enumerate(range(n))]
    return x, np.array(rows), np.asarray(pairs)


def kept_when_raising(values):
    quotients = np.zeros(1)
    for _ in range(2):
        try:
            quotients = [10 // v for v in values]  # (bound once complete, as written)
        except ZeroDivisionError:
            pass
    return np.array(quotients)


def reads_itself(rows):
    rows = [r * 2 for r in rows]  # (the list a name held before: left as written)
    nested = [[x + y for y in rows] for x in range(2)]  # (a nested scope reads the target)
    total = 0
    for row in nested:
        total += sum(row)
    return rows, nested, total


def joined_texts(n):
    names = [str(i) for i in range(n)]  # (a list read as a list: left as written)
    return "-".join(names), len(names)


def test_the_converted_comprehension_loops_compute_what_comprehensions_do():
    converted = same(targets_stay_local, 4)
    assert "__gc_x_c" in converted.source and "__gc_i_c" in converted.source
    converted = same(kept_when_raising, [1, 2, 0, 3])
    assert "__gc_quotients_list" in converted.source
    converted = same(reads_itself, [1, 2, 3])
    assert "__gc_r_c" not in converted.source and "__gc_x_c" not in converted.source
    same(joined_texts, 3)


def test_rows_predicted_one_by_one_compile_as_one_rolled_loop():
    rng = np.random.default_rng(3)
    train = rng.standard_normal((60, 4))
    labels = (train[:, 0] > 0).astype(np.int64)
    queries = rng.standard_normal((25, 4))
    check(predict_rows, train, labels, queries)
    graph = gcompile.trace(predict_rows, train, labels, queries)
    loops = [v.node for v in walk(graph) if isinstance(getattr(v.node, "target", None), ForRange)]
    assert len(loops) == 1
