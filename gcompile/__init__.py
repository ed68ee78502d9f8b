"""gcompile: a graph-capture compiler for NumPy code.

import gcompile, numpy as np

@gcompile.compile
def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)

print(gcompile.trace(softmax, np.ones((4, 8), np.float32)))
"""

from . import config
from .api import CompiledFunction, compile, trace
from .archive.loaded import LoadedFunction, load
from .archive.writer import export
from .backends import register_backend
from .deferred.scope import lazy
from .errors import GcompileWarning, UnsupportedError
from .tools.compare import compare
from .tools.explain import explain

__version__ = "0.1.0"

__all__ = [
    "CompiledFunction",
    "GcompileWarning",
    "UnsupportedError",
    "compare",
    "compile",
    "config",
    "explain",
    "export",
    "lazy",
    "LoadedFunction",
    "load",
    "register_backend",
    "trace",
]

from .tools import install_graph_methods as _install

_install()
