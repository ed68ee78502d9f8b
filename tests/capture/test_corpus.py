"""Ordinary NumPy code (``corpus.py``) never makes gcompile fail internally (issue 19, point 3).

Every corpus function either traces, and then compiles (interpreter backend) to what eager
NumPy computes, results and arguments afterwards; or is refused with an ``UnsupportedError``
naming the construct and the user's ``file:line``.
"""

from __future__ import annotations

import re
import traceback
import warnings
from pathlib import Path

import numpy as np
import pytest

import gcompile
from gcompile import GcompileWarning, UnsupportedError
from gcompile.errors import source_text
from tests.capture import corpus
from tests.capture.corpus import CASES, Call
from tests.support import assert_same_value, copy_args, quiet

CORPUS_FILE = str(Path(corpus.__file__).resolve())
LOCATION = re.compile(r"^(?P<path>.+):(?P<line>\d+)$")
SEED = 19


def make_call(make_args) -> tuple[tuple, dict]:
    """Fresh positional and keyword arguments from a case's ``make_args``."""
    made = make_args(np.random.default_rng(SEED))
    if isinstance(made, Call):
        return made.args, made.kwargs
    return tuple(made), {}


_OUTCOMES: dict[str, object] = {}


def outcome_of(fn, make_args):
    """``("ran", result, arguments after)`` of ``fn`` compiled whole (interpreter backend,
    ``fullgraph``: traced once), or ``("refused", UnsupportedError)``; anything else propagates
    (cached per function)."""
    if fn.__name__ not in _OUTCOMES:
        args, kwargs = copy_args(*make_call(make_args))
        compiled = gcompile.compile(fn, backend="interpreter", fullgraph=True)
        try:
            with quiet(), warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", GcompileWarning)
                result = compiled(*args, **kwargs)
        except UnsupportedError as err:
            _OUTCOMES[fn.__name__] = ("refused", err)
        else:
            # it compiled, so nothing may fall back: an eager run would make the check vacuous
            problems = [str(w.message) for w in caught if issubclass(w.category, GcompileWarning)]
            assert not problems, f"{fn.__name__}: {problems}"
            _OUTCOMES[fn.__name__] = ("ran", result, (args, kwargs))
    return _OUTCOMES[fn.__name__]


def check_refusal(name: str, err: UnsupportedError) -> None:
    """The refusal names a construct and a line of the corpus, and its message shows both."""
    assert err.construct, f"{name}: refusal names no construct: {err!s}"
    assert err.source, f"{name}: refusal of {err.construct!r} names no line: {err!s}"
    where = LOCATION.match(err.source)
    assert where, f"{name}: refusal location {err.source!r} is not file:line"
    assert str(Path(where["path"]).resolve()) == CORPUS_FILE, (
        f"{name}: refusal of {err.construct!r} points outside the user's code: {err.source}"
    )
    n_lines = len(Path(CORPUS_FILE).read_text().splitlines())
    assert 1 <= int(where["line"]) <= n_lines, f"{name}: no such line {err.source}"
    assert source_text(err.source), f"{name}: refusal points at a blank line: {err.source}"
    assert f"at {err.source}" in str(err), f"{name}: message lacks the location: {err!s}"


@pytest.mark.parametrize(("fn", "make_args"), CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_corpus_function(fn, make_args):
    name = fn.__name__
    try:
        outcome = outcome_of(fn, make_args)
    except Exception as err:  # noqa: BLE001 - any other exception is an internal error
        inner = err
        while inner.__cause__ or inner.__context__:
            inner = inner.__cause__ or inner.__context__
        detail = "".join(traceback.format_exception(inner)[-6:])
        pytest.fail(
            f"{name}: internal error while compiling: {type(err).__name__}: {err}\n{detail}"
        )
    if outcome[0] == "refused":
        check_refusal(name, outcome[1])
        return
    _, actual, (run_args, run_kwargs) = outcome
    eager_args, eager_kwargs = copy_args(*make_call(make_args))
    with quiet():
        expected = fn(*eager_args, **eager_kwargs)
    assert_same_value(expected, actual, where=f"{name} result")
    assert_same_value(eager_args, run_args, where=f"{name} arguments after the call")
    assert_same_value(eager_kwargs, run_kwargs, where=f"{name} keyword arguments after the call")


def test_corpus_is_large_and_mostly_traced():
    names = [fn.__name__ for fn, _ in CASES]
    assert len(names) >= 100
    assert len(set(names)) == len(names), "corpus function names must be unique (test ids)"
    traced = 0
    for fn, make_args in CASES:
        try:
            outcome = outcome_of(fn, make_args)
        except Exception:  # noqa: BLE001 - counted as not traced; its own test reports it
            continue
        traced += outcome[0] == "ran"
    assert traced >= len(names) / 2, f"only {traced} of {len(names)} corpus functions trace"
