"""dlinear on a Dask cluster: the data read on the workers, the solvers run where the data is.

This package is the only one of dlinear that imports dask.distributed. A session:

.. code-block:: python

    from distributed import Client
    import dlinear
    from dlinear.cluster import Dataset

    client = Client("tcp://scheduler:8786")
    data = Dataset.from_libsvm("/shared/rcv1.train", client)   # read on the workers
    model = dlinear.train(data, dlinear.Params(solver_type=1))
"""
__all__ = ["Dataset", "train_on_cluster", "cross_validation_on_cluster", "cluster_client",
           "make_security"]

# loaded on first use: a command reads the session's constants (dlinear.cluster.session)
# before it knows whether it needs Dask at all
_HOME = {"Dataset": ".dataset", "train_on_cluster": ".engine",
         "cross_validation_on_cluster": ".engine", "cluster_client": ".session",
         "make_security": ".session"}


def __getattr__(name):
    import importlib
    if name not in _HOME:
        try:        # a module of the package not imported yet
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(_HOME[name], __name__), name)
    globals()[name] = value
    return value
