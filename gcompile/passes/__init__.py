"""Graph-to-graph passes. Each is a function ``(Graph) -> bool`` that edits the graph through its methods."""
