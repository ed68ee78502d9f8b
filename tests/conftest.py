"""Test-suite settings: every graph the compiler builds is verified after every pass."""

import os

os.environ.setdefault("GCOMPILE_VERIFY", "1")
