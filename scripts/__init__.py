"""Not part of the installed package: the asv benchmark suite (benchmarks) and the
developers' tools (tools), run from the repository's root as python -m scripts.X.Y."""
