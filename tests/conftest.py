"""Test-suite settings: every graph the compiler builds is verified after every pass, compiled
kernels go to a cache of the test suite's own (not the user's), kept between local runs, and
under CI (``CI`` set) hypothesis draws the same examples on every run, so a CI result depends on
the commit alone; a local run explores new examples each time."""

import os
import tempfile

from hypothesis import settings

os.environ.setdefault("GCOMPILE_VERIFY", "1")
os.environ.setdefault(
    "GCOMPILE_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"gcompile-tests-{os.getuid()}")
)

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
