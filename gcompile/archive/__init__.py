"""Compiled functions saved to one file and loaded without their source (``gcompile.export``,
``gcompile.load``).

The archive (``layout``) is a zip of data and generated sources under a manifest of SHA-256
hashes: ``writer`` makes it from a compiled entry, ``reader`` verifies it (container, hashes,
format and versions, every value decoded by ``codec``, every source through the ``sources``
gate) and ``loaded`` builds the callable: the kernels compiled from their stored sources
through the disk cache, the stored host function run in a namespace the loader builds.
Nothing is unpickled, and no source runs that the gate has not accepted.
"""
