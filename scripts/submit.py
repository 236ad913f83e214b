#!/usr/bin/env python
"""Send a whole dlinear training job to a running Dask cluster and disconnect.

    python scripts/submit.py --scheduler tcp://host:8786 --name JOB \\
        [--tls-ca-file ca.pem --tls-cert client.pem --tls-key client.key] \\
        [LIBLINEAR train options] training_file model_file
    python scripts/job_status.py --scheduler tcp://host:8786 JOB [--wait SECONDS]

The options mean what they mean for dlinear-train (they are parsed by
dlinear.cli.parse_train_args); a bad option fails here, on one line, with exit status 1.
The job is ONE task, key `dlinear-job-JOB`, released with fire_and_forget: it runs on a
worker, which reads the training file as a cluster Dataset (one task per byte range),
trains on the cluster, and writes the model with dlinear.save_model (atomic: the model
file appears whole or not at all). Both paths are made absolute here and must name the
same files on the workers (shared storage).

The job's state is kept on the scheduler in distributed.Variable("dlinear-job-JOB"):
"queued" (set here), "running", "done <model path> <seconds>" or
"failed <one-line message>". It lasts as long as the scheduler does.
"""
from __future__ import annotations

import os
import re
import sys
import time

STATE_PREFIX = "dlinear-job-"        # Variable name and task key: dlinear-job-JOB
JOB_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")

USAGE = ("usage: python scripts/submit.py --scheduler ADDRESS --name JOB "
         "[--tls-ca-file F --tls-cert F --tls-key F] [train options] training_file model_file\n"
         "(train options as for dlinear-train -h, except -v, -C and --workers)\n")


def job_key(name: str) -> str:
    return STATE_PREFIX + name


def run_job(name: str, params, train_file: str, model_file: str) -> str:
    """The job's task, run on a worker. Returns (and records) its final state."""
    import logging
    import warnings

    from distributed import Variable, worker_client

    import dlinear
    from dlinear.cluster import Dataset
    from dlinear.errors import ConvergenceWarning, DlinearError

    log = logging.getLogger("distributed.worker.dlinear")
    start = time.perf_counter()
    # worker_client secedes from the worker's thread pool: the job's own tasks (reading
    # the byte ranges, the classes) can run on this worker too while this one waits
    with worker_client() as client:
        state = Variable(job_key(name), client=client)
        state.set("running")
        try:
            dataset = Dataset.from_libsvm(train_file, client)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)   # it is in the log
                model = dlinear.train(dataset, params,
                                      log=lambda line: log.info("dlinear job %s: %s", name, line))
            dlinear.save_model(model_file, model)
            result = f"done {model_file} {time.perf_counter() - start:.3f}"
        except DlinearError as e:
            result = "failed " + _one_line(str(e))
        except Exception as e:  # noqa: BLE001  (recorded for job_status, logged in full)
            log.exception("dlinear job %s failed", name)
            result = "failed " + _one_line(f"{type(e).__name__}: {e}")
        state.set(result)
        log.info("dlinear job %s: %s", name, result)
        return result


def _one_line(text: str, limit: int = 500) -> str:
    text = " ".join(text.split()) or "(no message)"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _take_option(argv: list[str], option: str):
    """(value of `option` VALUE among the options in front, argv without it)."""
    rest, value, i = [], None, 0
    while i < len(argv):
        if argv[i] == option:
            if i + 1 >= len(argv):
                raise ValueError(f"option {option} needs a value")
            value = argv[i + 1]
            i += 2
        else:
            rest.append(argv[i])
            i += 1
    return value, rest


def parse_submit_args(argv: list[str]):
    """-> (job name, Params, options dict, absolute training file, absolute model file).
    Raises dlinear's DlinearError (UsageError) for anything wrong."""
    from dlinear.cli import UsageError, parse_train_args
    from dlinear.cluster.session import SCHEDULER_ENV
    from dlinear.params import check_parameter

    try:
        name, argv = _take_option(argv, "--name")
    except ValueError as e:
        raise UsageError(str(e)) from None
    if name is None:
        raise UsageError("--name JOB is required")
    if not JOB_NAME.fullmatch(name):
        raise UsageError(f"job name {name!r}: use letters, digits, '.', '_' and '-' "
                         "(at most 100, starting with a letter or digit)")
    params, opts, train_file, model_file = parse_train_args(argv)
    if opts["nr_fold"]:
        raise UsageError("-v (cross validation) is not available for submitted jobs: "
                         "a job writes a model")
    if opts["find_C"]:
        raise UsageError("-C (parameter search) writes no model; run it with dlinear-train -C, "
                         "then submit the training with the best -c")
    if opts["workers"] is not None:
        raise UsageError("--workers starts a local cluster; a submitted job runs on the "
                         "cluster at --scheduler")
    opts["scheduler"] = opts["scheduler"] or os.environ.get(SCHEDULER_ENV) or None
    if not opts["scheduler"]:
        raise UsageError(f"--scheduler ADDRESS is required (or ${SCHEDULER_ENV})")
    check_parameter(params)
    return name, params, opts, os.path.abspath(train_file), os.path.abspath(model_file)


def submit(client, name: str, params, train_file: str, model_file: str) -> str:
    """Records "queued", sends the job's task and lets it go. Returns the task key.

    run_job travels by value (cloudpickle) only from this file run as a program
    (`__main__`); if this file is imported as a module, the scheduler and workers must
    be able to import it too."""
    from distributed import Variable, fire_and_forget

    from dlinear.errors import DlinearError

    key = job_key(name)
    state = Variable(key, client=client)
    if task_state(client, key) is not None:      # (a Variable read of an unset name
        previous = read_state(client, name)      # would log a timeout on the scheduler)
        raise DlinearError(f"job {name} is still on this cluster ({previous or 'submitted'}); "
                           "choose another --name or wait for it to end")
    state.set("queued")
    future = client.submit(run_job, name, params, train_file, model_file, key=key,
                           pure=False)
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
            state.set("failed " + problem)
            raise DlinearError(problem)
        time.sleep(0.05)
    return key


def read_state(client, name: str, timeout: float = 0.5):
    """The job's recorded state, or None if the scheduler has no job of that name."""
    from distributed import Variable
    from distributed.utils import TimeoutError as DaskTimeoutError
    try:
        return Variable(job_key(name), client=client).get(timeout=timeout)
    except (TimeoutError, DaskTimeoutError):
        return None


def task_state(client, key: str):
    """The scheduler's state of a task ("processing", "erred", ...), None if unknown."""
    return client.sync(client.scheduler.get_task_status, keys=[key]).get(key)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        (sys.stdout if argv else sys.stderr).write(USAGE)
        return 0 if argv else 1
    from dlinear.cli import UsageError, _HelpRequested
    from dlinear.errors import DlinearError
    try:
        name, params, opts, train_file, model_file = parse_submit_args(argv)
        from dlinear.cluster import cluster_client, make_security
        security = make_security(opts["tls-ca-file"], opts["tls-cert"], opts["tls-key"])
        with cluster_client(opts["scheduler"], security=security) as client:
            key = submit(client, name, params, train_file, model_file)
    except _HelpRequested:
        sys.stdout.write(USAGE)
        return 0
    except UsageError as e:
        sys.stderr.write(f"ERROR: {e} (run with -h for the usage)\n")
        return 1
    except DlinearError as e:
        sys.stderr.write(f"ERROR: {e}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    if not opts["quiet"]:
        tls = "".join(f" --{k} {opts[k]}" for k in ("tls-ca-file", "tls-cert", "tls-key")
                      if opts[k])
        print(f"submitted job {name} (task {key}) to {opts['scheduler']}: "
              f"{train_file} -> {model_file}")
        status = os.path.join(os.path.dirname(sys.argv[0]) or ".", "job_status.py")
        print(f"status: python {status} --scheduler {opts['scheduler']}{tls} {name} "
              "--wait 3600")
    return 0


if __name__ == "__main__":
    sys.exit(main())
