"""Getting a Dask client: a local multiprocessing cluster, or an existing scheduler."""
from __future__ import annotations

import logging
import os
from contextlib import contextmanager

from ..errors import DlinearError

SCHEDULER_ENV = "DLINEAR_SCHEDULER"
_hinted_bokeh = []     # the hint to install bokeh is given once per process


def worker_addresses(client) -> list:
    """All workers, sorted. (client.scheduler_info() listed at most 5 workers by default in
    some distributed releases; nthreads() lists them all.)"""
    return sorted(client.nthreads())


def make_security(ca_file=None, cert=None, key=None):
    """A ``distributed.Security`` for ``tls://`` schedulers, from certificate files.

    Parameters
    ----------
    ca_file, cert, key : str, optional
        The certificate authority's certificate, the client's certificate and its key
        (``--tls-ca-file``, ``--tls-cert``, ``--tls-key``); the key may be in the
        certificate file.

    Returns
    -------
    distributed.Security or None
        None when no file is given: Dask's configuration (``distributed.comm.tls.*``,
        ``DASK_DISTRIBUTED__COMM__TLS__*``) applies.

    Raises
    ------
    DlinearError
        If the CA file or the certificate is missing, or a file cannot be opened.
    """
    if not (ca_file or cert or key):
        return None
    if not (ca_file and cert):
        raise DlinearError("TLS needs --tls-ca-file and --tls-cert (and --tls-key unless "
                           "the key is in the certificate file)")
    from distributed import Security
    for f in (ca_file, cert, key):
        if f and not os.path.exists(f):
            raise DlinearError(f"can't open TLS file {f}")
    return Security(tls_ca_file=ca_file, tls_client_cert=cert, tls_client_key=key,
                    require_encryption=True)


@contextmanager
def cluster_client(scheduler: str | None = None, n_workers: int | None = None,
                   security=None, log=None):
    """A context manager yielding a ``distributed.Client``.

    With a scheduler it connects to that cluster and leaves it running; otherwise it
    starts a LocalCluster of single-threaded worker processes and closes it afterwards.

    Parameters
    ----------
    scheduler : str, optional
        The scheduler's address (``tcp://host:8786``, ``tls://...``); default
        ``$DLINEAR_SCHEDULER``, else a local cluster.
    n_workers : int, optional
        Workers of the local cluster; default one per core.
    security : distributed.Security, optional
        For a ``tls://`` scheduler (:func:`make_security`).
    log : callable, optional
        Receives the lines saying which cluster is used.

    Yields
    ------
    distributed.Client

    Raises
    ------
    DlinearError
        If the scheduler cannot be reached (one line with the reason).
    """
    from distributed import Client, LocalCluster
    emit = log or (lambda line: None)
    scheduler = scheduler or os.environ.get(SCHEDULER_ENV) or None
    if scheduler:
        try:
            client = Client(scheduler, security=security, timeout="20s")
        except Exception as e:   # any failure to connect is the user's to fix: say it in one line
            hint = (" (a tls:// scheduler needs --tls-ca-file, --tls-cert and --tls-key)"
                    if scheduler.startswith("tls://") and security is None else "")
            reason = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise DlinearError(f"can't connect to the Dask scheduler at {scheduler}: "
                               f"{reason}{hint}") from None
        try:
            n = len(worker_addresses(client))
            emit(f"dlinear: using the Dask cluster at {scheduler} ({n} workers)")
            yield client
        finally:
            client.close()
        return

    n_workers = n_workers or os.cpu_count() or 1
    try:
        import bokeh  # noqa: F401  (the dashboard needs it)
        dashboard = True
    except ImportError:
        dashboard = False
    # workers' own logs stay quiet: errors reach the user through the client, once.
    # ":0": a free port, also without bokeh (dashboard_address=None means the default
    # 8787, which warns "Port 8787 is already in use" when another cluster runs)
    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.CRITICAL)
    client = Client(cluster)
    try:
        link = f"; dashboard {client.dashboard_link}" if dashboard else ""
        emit(f"dlinear: started a local Dask cluster of {n_workers} worker processes{link}")
        if not dashboard and not _hinted_bokeh:
            _hinted_bokeh.append(True)
            emit("dlinear: install bokeh for the Dask dashboard (pip install bokeh)")
        yield client
    finally:
        client.close()
        cluster.close()
