"""Getting a Dask client: a local multiprocessing cluster, or an existing scheduler."""
from __future__ import annotations

import logging
import os
import signal
import threading
import warnings
from contextlib import contextmanager

from ..errors import DlinearError
from ..threads import available_cores

SCHEDULER_ENV = "DLINEAR_SCHEDULER"
CONNECT_TIMEOUT = 5.0     # seconds to reach a scheduler before giving up (--connect-timeout)


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
                   security=None, log=None, connect_timeout: float = CONNECT_TIMEOUT,
                   process_ends_on_interrupt: bool = False):
    """A context manager yielding a ``distributed.Client``.

    With a scheduler it connects to that cluster, giving up after `connect_timeout`
    seconds, and leaves it running; otherwise it starts a LocalCluster of
    single-threaded worker processes and closes it afterwards.

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
    connect_timeout : float, optional
        Seconds to wait for the scheduler (default 5, ``--connect-timeout``).
    process_ends_on_interrupt : bool, optional
        A KeyboardInterrupt leaving the block cancels the client's tasks in any case;
        with True (a command, whose process then ends) a local cluster's workers are
        killed rather than closed, which takes seconds.

    Yields
    ------
    distributed.Client

    Raises
    ------
    DlinearError
        If the scheduler cannot be reached (one line with the reason).
    """
    with _SCHEDULER_DEFAULT:
        with _open_client(scheduler, n_workers, security, log, connect_timeout,
                          process_ends_on_interrupt) as client:
            yield client


class _DefaultScheduler:
    """Puts Dask's default scheduler back as it was once the last open cluster_client
    closes. Dask's Client makes itself the process's default as it opens and restores the
    previous default as it closes, by the order clients opened: clients of several
    threads closing in another order (jobs submitted at once) would otherwise leave
    "dask.distributed" the default, where dask collections then fail to compute."""

    def __init__(self):
        self._lock = threading.Lock()
        self._open = 0
        self._before = None

    def __enter__(self):
        with self._lock:
            if self._open == 0:
                import dask     # in the functions: a run in process never imports dask
                self._before = dask.config.get("scheduler", None)
            self._open += 1

    def __exit__(self, *exc):
        with self._lock:
            self._open -= 1
            if self._open == 0:
                import dask
                dask.config.set(scheduler=self._before)
        return False


_SCHEDULER_DEFAULT = _DefaultScheduler()


# The local cluster dlinear starts for a training runs fewer of Dask's periodic
# callbacks: its event-loop tick (every 20 ms), system monitor (500 ms) and statistical
# profiler (10 ms) cost an idle cluster of 2 workers 2.2 CPU s per 20 s on the
# development machine, 0.67 s without them, and they run on the cores the training
# uses. (The workers take the config their nanny was made with.)
LOCAL_CLUSTER_CONFIG = {"distributed.admin.tick.interval": "1s",
                        "distributed.admin.system-monitor.interval": "5s",
                        "distributed.worker.profile.enabled": False}


@contextmanager
def _open_client(scheduler, n_workers, security, log, connect_timeout, ends_on_interrupt):
    import dask
    from distributed import Client, LocalCluster
    emit = log or (lambda line: None)
    scheduler = scheduler or os.environ.get(SCHEDULER_ENV) or None
    if scheduler:
        # also bounds each later call's new connection (a scheduler gone or restarting)
        with dask.config.set({"distributed.comm.timeouts.connect": f"{connect_timeout}s"}):
            try:
                client = Client(scheduler, security=security, timeout=f"{connect_timeout}s")
            except Exception as e:   # any failure to connect is the user's to fix: one line
                hint = (" (a tls:// scheduler needs --tls-ca-file, --tls-cert and --tls-key)"
                        if scheduler.startswith("tls://") and security is None else "")
                reason = str(e).splitlines()[0] if str(e) else type(e).__name__
                raise DlinearError(f"can't connect to the Dask scheduler at {scheduler}: "
                                   f"{reason}{hint}") from None
            with _quiet_client_logs():
                try:
                    n = len(worker_addresses(client))
                    emit(f"dlinear: using the Dask cluster at {scheduler} ({n} workers)")
                    yield client
                except KeyboardInterrupt:
                    cancel_tasks(client)
                    raise
                except Exception:
                    # a client that found no scheduler within the connect timeout closes
                    # itself; each later call then fails with whatever its closed pool says
                    if client.status in ("closing", "closed"):
                        raise DlinearError(
                            f"lost the Dask scheduler at {scheduler}: it did not come back "
                            f"within {connect_timeout:g} s") from None
                    raise
                finally:
                    client.close()
        return

    n_workers = n_workers or available_cores()
    # workers' own logs stay quiet: errors reach the user through the client, once.
    # ":0": a free port (None means the default 8787, which warns "Port 8787 is already
    # in use" when another cluster runs); without bokeh there is no dashboard, silently
    if ends_on_interrupt:
        _quiet_resource_tracker()
        # a Ctrl-C's never-awaited coroutine can be collected, and warned of, while the
        # interrupt unwinds, before the handler below runs
        _ignore_never_awaited_coroutines()
    with _children_ignore_interrupts(), dask.config.set(LOCAL_CLUSTER_CONFIG):
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=logging.CRITICAL)
    client = Client(cluster)
    try:
        link = f"; dashboard {client.dashboard_link}" if _has_bokeh() else ""
        emit(f"dlinear: started a local Dask cluster of {n_workers} worker processes{link}")
        yield client
    except KeyboardInterrupt:
        # what the interrupt left pending in the event loop ("Task exception was never
        # retrieved", logged as the cluster closes, and the never-awaited coroutine of a
        # result it interrupted, warned of when collected) is not the user's business
        logging.getLogger("asyncio").disabled = True
        _ignore_never_awaited_coroutines()
        cancel_tasks(client)
        if ends_on_interrupt:
            _kill_workers(cluster)
            cluster = None
        raise
    finally:
        if cluster is not None:
            client.close()
            cluster.close()


def _ignore_never_awaited_coroutines() -> None:
    warnings.filterwarnings("ignore", message="coroutine .* was never awaited",
                            category=RuntimeWarning)


# how long an interrupted run waits for the scheduler to take its cancellation
CANCEL_TIMEOUT = 0.5


def cancel_tasks(client) -> None:
    """Cancels every task and actor `client` holds (a run's, when Ctrl-C stops it), so that
    the workers stop on them. Waits at most CANCEL_TIMEOUT: an interrupted command must
    answer at once, also where the scheduler is slow to reply."""
    from distributed import Future
    keys = list(client.futures)
    if not keys:
        return
    futures = [Future(key, client) for key in keys]

    def cancel():
        try:
            client.cancel(futures, force=True)
        except Exception:       # the scheduler gone: nothing left to cancel
            pass
    worker = threading.Thread(target=cancel, name="dlinear-cancel", daemon=True)
    worker.start()
    worker.join(CANCEL_TIMEOUT)


def _kill_workers(cluster) -> None:
    """A local cluster's worker processes, killed: this process ends next and takes the
    scheduler and the nannies (which run in it) along; its workers, children that
    ignore SIGINT, would otherwise go on with their tasks."""
    for nanny in list(cluster.workers.values()):
        pid = getattr(nanny, "pid", None)
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


@contextmanager
def _quiet_client_logs():
    """Dask's client logs each try to reach a scheduler that went away (a traceback a
    try, on stderr); a command says what became of it in its own one line instead."""
    loggers = [logging.getLogger(name) for name in ("distributed", "distributed.client")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def _quiet_resource_tracker() -> None:
    """Starts multiprocessing's resource tracker (a process the local cluster's workers
    share) with its warnings off: where killed workers and an ending process leave the
    cluster's semaphores to it, it removes them and would print a "leaked semaphore"
    warning after the command's one line. (It takes the interpreter's -W options, and
    stays as started: this changes nothing where it already runs.)"""
    import sys
    from multiprocessing import resource_tracker
    options = list(sys.warnoptions)
    sys.warnoptions.append("ignore::UserWarning:multiprocessing.resource_tracker")
    try:
        resource_tracker.ensure_running()
    finally:
        sys.warnoptions[:] = options


def _has_bokeh() -> bool:
    try:
        import bokeh  # noqa: F401  (the dashboard needs it)
    except ImportError:
        return False
    return True


@contextmanager
def _children_ignore_interrupts():
    """Processes started meanwhile ignore SIGINT (an ignored signal stays ignored across
    exec): Ctrl-C in a terminal reaches the whole process group, and the interrupt is this
    process's to report, once; closing the cluster ends the workers. A Ctrl-C while the
    cluster starts is ignored too. Signal handlers belong to the main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)

