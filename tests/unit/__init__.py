"""Functions, classes and modules of the package, each on its own and mostly in process (a
few tests also run on a local cluster: they carry the `cluster` marker)."""
