"""Test-suite settings: every graph the compiler builds is verified after every pass, and compiled
kernels go to a cache of the test suite's own (not the user's), kept between local runs."""

import os
import tempfile

os.environ.setdefault("GCOMPILE_VERIFY", "1")
os.environ.setdefault(
    "GCOMPILE_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"gcompile-tests-{os.getuid()}")
)
