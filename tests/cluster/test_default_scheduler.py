"""dlinear's clients leave Dask's default scheduler as they found it, however they close."""
import threading

import dask
import dask.array
import pytest

distributed = pytest.importorskip("distributed")

from dlinear.cluster import cluster_client  # noqa: E402


@pytest.mark.cluster
def test_clients_closing_out_of_order_restore_the_default_scheduler():
    before = dask.config.get("scheduler", None)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster:
        first_open, second_open, first_closed = (threading.Event() for _ in range(3))

        def first():
            with cluster_client(cluster.scheduler_address):
                first_open.set()
                second_open.wait(30)
            first_closed.set()

        thread = threading.Thread(target=first)
        thread.start()
        assert first_open.wait(30)
        with cluster_client(cluster.scheduler_address):     # opened second, closed last
            second_open.set()
            assert first_closed.wait(30)
        thread.join(30)
    assert dask.config.get("scheduler", None) == before
    assert dask.array.ones(3).sum().compute() == 3          # no Client needed


def _periodic_settings():
    return (dask.config.get("distributed.worker.profile.enabled"),
            dask.config.get("distributed.admin.tick.interval"))


@pytest.mark.cluster
def test_the_local_cluster_runs_fewer_of_dasks_periodic_callbacks():
    before = _periodic_settings()
    with cluster_client(n_workers=1) as client:
        on_workers = list(client.run(_periodic_settings).values())
        tick = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler._tick_interval)
    assert on_workers == [(False, "1s")]
    assert tick == pytest.approx(1.0)
    assert _periodic_settings() == before           # the caller's config as it was
