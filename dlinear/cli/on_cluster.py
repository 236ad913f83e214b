"""dlinear-train on a Dask cluster (--scheduler, --workers n): the client, the data read on
the workers, and where a Ctrl-C ends such a run (the run's tasks cancelled, a local
cluster's workers stopped, dlinear: interrupted and 130, no model)."""
from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def cluster_dataset(params, opts, train_file, note):
    """Yields (client's Dataset of train_file, params, its training mode) for the options
    `opts` of dlinear-train; the cluster is closed (a local one) or left (a scheduler's)
    when the block ends. A KeyboardInterrupt leaving the block cancels the run's tasks;
    in a command's own process the process then ends at once (exit.interrupted)."""
    from ..cluster import Dataset, cluster_client, make_security
    from ..cluster.dataset import with_sample_weight
    from ..cluster.engine import training_mode
    from . import startup
    from .inputs import check_model_size, check_weight_count, read_weight_file
    security = make_security(opts["tls-ca-file"], opts["tls-cert"], opts["tls-key"])
    with cluster_client(opts["scheduler"], opts["workers"], security, log=note,
                        connect_timeout=opts["connect_timeout"],
                        process_ends_on_interrupt=startup.command_process) as client:
        weights = read_weight_file(opts["weight_file"]) if opts["weight_file"] else None
        data = Dataset.from_path(train_file, client, storage_options=opts["storage_options"]
                                 or None, dtype=opts["dtype"])
        if weights is not None:
            data = with_sample_weight(data, check_weight_count(
                weights, data.n_samples, opts["weight_file"], train_file))
        check_model_size(data.n_features, 1, params)
        params, mode = training_mode(data, params, solver_named="-s" in opts["given"])
        yield data, params, mode
