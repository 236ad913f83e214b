"""The cluster side of jobs that outlive the client (the dlinear-submit and
dlinear-status commands are in dlinear.cli.jobs): the job's task, run on a worker, and
its state on the scheduler.

A job is ONE task, key `dlinear-job-JOB`, released with fire_and_forget: it runs on a
worker, which reads the training file as a cluster Dataset (one task per byte range),
trains on the cluster, and writes the model with dlinear.save_model (atomic: the model
file appears whole or not at all). The task is pickled by reference: the workers import
this module (they have dlinear installed anyway, to train).

The job's state is kept on the scheduler as the published dataset "dlinear-job-JOB"
(Client.publish_dataset: a lookup of an unknown name answers at once, where a
distributed.Variable's would wait and log a timeout on the scheduler): "queued" (set by
submit), "running", "done <model path> in <seconds> s" or "failed <one-line message>". It
lasts as long as the scheduler does: a restarted scheduler knows no jobs, and the jobs
it had are submitted again by name (docs/guide/jobs_reliability.rst). Beside it,
"dlinear-job-JOB/attempts" lists when each run of the task started: Dask runs the task
again where its worker was lost, and the job's story (the attempts lost, the total time)
is told from these.
"""
from __future__ import annotations

import re
import time

STATE_PREFIX = "dlinear-job-"        # dataset name and task key: dlinear-job-JOB
JOB_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
EXIT = {"done": 0, "failed": 1, "queued": 2, "running": 2}     # dlinear-status's exit status
LIVE_TASK_STATES = ("released", "waiting", "queued", "no-worker", "processing", "memory")


ATTEMPTS_SUFFIX = "/attempts"      # not in a job's name (JOB_NAME)


def job_key(name: str) -> str:
    return STATE_PREFIX + name


def job_names(client) -> list:
    """The names of the jobs the scheduler knows, sorted."""
    return sorted(d[len(STATE_PREFIX):] for d in client.list_datasets()
                  if d.startswith(STATE_PREFIX) and not d.endswith(ATTEMPTS_SUFFIX))


def record_attempt(client, name: str) -> list:
    """Adds a start (the wall clock, time.time()) to the job's attempts; returns them all."""
    starts = list(read_attempts(client, name)) + [time.time()]
    client.publish_dataset(starts, name=job_key(name) + ATTEMPTS_SUFFIX, override=True)
    return starts


def read_attempts(client, name: str) -> list:
    return client.get_dataset(job_key(name) + ATTEMPTS_SUFFIX, default=None) or []


def attempts_story(starts: list, now: float) -> str:
    """"" for a job run once; else what became of its runs: each one before the last was
    lost (its worker died, and Dask ran the task again), and the time since the first."""
    if len(starts) < 2:
        return ""
    lost = ", ".join(f"{b - a:.1f} s" for a, b in zip(starts, starts[1:]))
    return (f" (attempt {len(starts)}: {len(starts) - 1} lost with their worker after "
            f"{lost}; {now - starts[0]:.3f} s since the first started)")


def run_job(name: str, params, train_file: str, model_file: str,
            storage_options: dict | None = None) -> str:
    """The job's task, run on a worker. Returns (and records) its final state."""
    import logging
    import warnings

    from distributed import worker_client

    from ..errors import ConvergenceWarning, DlinearError
    from ..model import save_model
    from ..params import check_parameter
    from .dataset import Dataset
    from .engine import train_on_cluster

    log = logging.getLogger("distributed.worker.dlinear")
    start = time.perf_counter()
    # worker_client secedes from the worker's thread pool: the job's own tasks (reading
    # the byte ranges, the classes) can run on this worker too while this one waits
    with worker_client() as client:
        starts = record_attempt(client, name)
        record_state(client, name, "running")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)   # it is in the log
                check_parameter(params)
                say = lambda line: log.info("dlinear job %s: %s", name, line)  # noqa: E731
                if params.checkpoint is not None:
                    model = _train_on_this_worker(params, train_file, storage_options, say)
                else:
                    dataset = Dataset.from_path(train_file, client,
                                                storage_options=storage_options)
                    model = train_on_cluster(dataset, params.resolved(), client=client,
                                             log=say)
            save_model(model_file, model)
            total = time.perf_counter() - start if len(starts) == 1 else time.time() - starts[0]
            result = f"done {model_file} in {total:.3f} s"
        except DlinearError as e:
            result = "failed " + _one_line(str(e))
        except Exception as e:  # noqa: BLE001  (recorded for dlinear-status, logged in full)
            log.exception("dlinear job %s failed", name)
            result = "failed " + _one_line(f"{type(e).__name__}: {e}")
        result += attempts_story(starts, time.time())
        record_state(client, name, result)
        log.info("dlinear job %s: %s", name, result)
        return result


def _train_on_this_worker(params, train_file: str, storage_options, log):
    """A job with --checkpoint: read and train in this worker's process, whose solver
    saves its state in params.checkpoint (shared storage). After a lost worker the
    scheduler runs the job's task again on another, which resumes from that state
    (docs/guide/checkpoints.rst)."""
    from ..data.binary_format import read_dataset
    from ..in_process.train import train_in_process
    problem = read_dataset(train_file, storage_options=storage_options)
    return train_in_process(problem, params, log=log)


def _one_line(text: str, limit: int = 500) -> str:
    text = " ".join(text.split()) or "(no message)"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def submit(client, name: str, params, train_file: str, model_file: str,
           storage_options: dict | None = None) -> str:
    """Records "queued", sends the job's task and lets it go. Returns the task key."""
    from distributed import fire_and_forget

    from ..errors import DlinearError

    key = job_key(name)
    if task_state(client, key) is not None:
        previous = read_state(client, name)
        raise DlinearError(f"job {name} is still on this cluster ({previous or 'submitted'}); "
                           "choose another --name or wait for it to end")
    client.publish_dataset([], name=key + ATTEMPTS_SUFFIX, override=True)
    record_state(client, name, "queued")
    future = client.submit(run_job, name, params, train_file, model_file, storage_options,
                           key=key, pure=False)
    fire_and_forget(future)
    # return once the scheduler holds the task, so the job outlives this client
    deadline = time.monotonic() + 30
    while task_state(client, key) is None:
        problem = None
        if future.status == "error":
            problem = _one_line(f"the scheduler refused the job: {future.exception()}")
        elif time.monotonic() > deadline:
            problem = f"the scheduler did not register the task {key}"
        if problem:
            record_state(client, name, "failed " + problem)
            raise DlinearError(problem)
        time.sleep(0.05)
    return key


def record_state(client, name: str, state: str) -> None:
    client.publish_dataset(state, name=job_key(name), override=True)


def read_state(client, name: str):
    """The job's recorded state, or None if the scheduler has no job of that name."""
    return client.get_dataset(job_key(name), default=None)


def task_state(client, key: str):
    """The scheduler's state of a task ("processing", "erred", ...), None if unknown."""
    return client.sync(client.scheduler.get_task_status, keys=[key]).get(key)


def current_state(client, name: str):
    """The recorded state; a queued/running job whose task is gone counts as failed. A
    job running again after a lost worker says so (attempts_story)."""
    state = read_state(client, name)
    if state not in ("queued", "running"):
        return state
    if task_state(client, job_key(name)) in LIVE_TASK_STATES:
        return state + attempts_story(read_attempts(client, name), time.time())
    # the task ends by recording its end, then leaves the scheduler: read again
    state = read_state(client, name)
    if state in ("queued", "running"):
        return ("failed the job's task is gone from the scheduler without recording an end "
                "(did its worker die?)" + attempts_story(read_attempts(client, name),
                                                         time.time()))
    return state


