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
from .dataset import Dataset
from .engine import cross_validation_on_cluster, train_on_cluster
from .session import cluster_client, make_security

__all__ = ["Dataset", "train_on_cluster", "cross_validation_on_cluster", "cluster_client",
           "make_security"]
