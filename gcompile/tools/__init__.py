"""Tools on top of the compiler: comparison reports (and, later, drawings and explain())."""
