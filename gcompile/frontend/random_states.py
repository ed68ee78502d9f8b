"""Random number generators passed as arguments (``rng=np.random.default_rng(0)``).

Every draw changes a generator's state, so none may be frozen into a graph. A trace gives the
function a stand-in for the generator: its first use (``rng.normal(size=n)``) is refused at the
user's line, that statement runs in Python on every call with the generator itself (a graph
break), and the statements around it compile.
"""

from __future__ import annotations

from typing import Any

from ..ir.meta import RANDOM_STATE_TYPES
from .recorder import current_tracer


class RandomStateArgument:
    """What a trace passes for a generator argument: any use of it is refused."""

    __slots__ = ("_path", "_type")

    def __init__(self, path: str, value: Any):
        self._path = path
        self._type = type(value)

    def __getattr__(self, name: str) -> Any:
        tracer = current_tracer()
        if tracer is None or name.startswith("__") or not hasattr(self._type, name):
            raise AttributeError(name)  # (probes: NumPy's protocols, gcompile's own)
        tracer.refuse(
            f"drawing from {self.described()} inside the function (.{name})",
            hint="each draw changes the generator's state, which a compiled graph would freeze: "
            "the statement runs in Python on every call (a graph break); or draw outside and "
            "pass the arrays in",
        )

    def __repr__(self) -> str:
        return f"<{self.described()}, used in Python>"

    def described(self) -> str:
        """``argument 'rng' (a numpy.random._generator.Generator)``, for messages."""
        return f"argument '{self._path}' (a {self._type.__module__}.{self._type.__name__})"


def stand_in(path: str, value: Any) -> Any:
    """What a trace passes for the static argument ``value`` at ``path``: a stand-in for a
    random number generator, else the value itself."""
    return RandomStateArgument(path, value) if isinstance(value, RANDOM_STATE_TYPES) else value
