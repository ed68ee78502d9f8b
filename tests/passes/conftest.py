"""The pass tests verify the graph after every pass that changed it (``GCOMPILE_VERIFY=each``),
its metas checked against their ops' inference: a failure names the pass. The rest of the
suite verifies at the end of each pass pipeline (``tests/conftest.py``)."""

import pytest


@pytest.fixture(autouse=True)
def _verify_each_pass(monkeypatch):
    monkeypatch.setenv("GCOMPILE_VERIFY", "each")
