#!/usr/bin/env python
"""Train dlinear on a Slurm cluster: dask-jobqueue starts the Dask workers as Slurm jobs.

    python deploy/slurm/slurm_cluster.py --jobs 8 --queue normal --walltime 02:00:00 \\
        --memory 8GB [--account ACCOUNT] [--interface ib0] [--job-extra "--constraint=X"] \\
        [--dry-run] [LIBLINEAR train options] /shared/train.svm /shared/model

Run it on a login node (or in a batch job of its own): the Dask scheduler runs in this
process, each Slurm job is one Dask worker process with one thread (cores=1), and
`cluster.scale(jobs=N)` submits N of them. Once all N workers have joined, the training
file is read on the workers (one task per byte range), dlinear trains on the cluster and
the model is written by dlinear.save_model (atomically). The training file, the model's
directory and this Python environment must be on the file system that the compute nodes
share, at the same paths. The jobs end when this script does (or at their walltime).

The train options are dlinear-train's (parsed by dlinear.cli.train_predict.parse_train_args), except
-v, -C, --workers and --scheduler: this script makes its own cluster and writes a model.
--dry-run prints the job script the workers would be started with and submits nothing.
"""
from __future__ import annotations

import os
import sys
import warnings

# this script's own options; everything else goes to dlinear.cli.train_predict.parse_train_args
OPTIONS = {"--jobs": "4", "--queue": None, "--walltime": "01:00:00", "--memory": "4GB",
           "--account": None, "--interface": None, "--job-extra": None}


def make_cluster(queue: str | None = None, walltime: str = "01:00:00", memory: str = "4GB",
                 account: str | None = None, interface: str | None = None,
                 job_extra=(), **kwargs):
    """A dask_jobqueue.SLURMCluster of single-threaded workers, one per Slurm job (no job
    is submitted until it is scaled). Extra keywords go to SLURMCluster."""
    from dask_jobqueue import SLURMCluster
    return SLURMCluster(
        cores=1,                  # one thread per worker: dlinear runs one solver per thread
        processes=1,              # one worker process per job
        memory=memory,            # #SBATCH --mem and the worker's --memory-limit
        walltime=walltime,        # #SBATCH -t
        queue=queue,              # #SBATCH -p (the partition)
        account=account,          # #SBATCH -A
        interface=interface,      # network interface of the workers, e.g. ib0
        job_name="dlinear-worker",
        job_extra_directives=list(job_extra),
        **kwargs)


def parse_args(argv: list[str]):
    """-> (options of this script, Params, train options, training file, model file)."""
    from dlinear.cli.train_predict import UsageError, parse_train_args
    own = {k: v for k, v in OPTIONS.items()}
    own["--job-extra"] = []
    dry_run = False
    rest, i = [], 0
    while i < len(argv):
        arg = argv[i]
        if "=" in arg and arg.split("=", 1)[0] in OPTIONS:     # --option=value
            arg, value = arg.split("=", 1)
            argv = argv[:i] + [arg, value] + argv[i + 1:]
        if arg == "--dry-run":
            dry_run = True
            i += 1
        elif arg in OPTIONS:
            if i + 1 >= len(argv):
                raise UsageError(f"option {arg} needs a value")
            if arg == "--job-extra":
                own[arg].append(argv[i + 1])
            else:
                own[arg] = argv[i + 1]
            i += 2
        else:
            rest.append(arg)
            i += 1
    try:
        own["--jobs"] = int(own["--jobs"])
    except ValueError:
        raise UsageError(f"option --jobs needs an integer, got {own['--jobs']!r}") from None
    if own["--jobs"] < 1:
        raise UsageError("--jobs needs a number >= 1")
    own["--dry-run"] = dry_run
    params, opts, train_file, model_file = parse_train_args(rest)
    for option, used in (("-v", opts["nr_fold"]), ("-C", opts["find_C"]),
                         ("--workers", opts["workers"] is not None),
                         ("--scheduler", opts["scheduler"])):
        if used:
            raise UsageError(f"{option} is not available here: this script starts its own "
                             "cluster and writes a model")
    return own, params, opts, os.path.abspath(train_file), os.path.abspath(model_file)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        (sys.stdout if argv else sys.stderr).write(__doc__)
        return 0 if argv else 1
    from dlinear import save_model, train
    from dlinear.cli.train_predict import UsageError
    from dlinear.errors import ConvergenceWarning, DlinearError
    from dlinear.params import check_parameter

    def say(line):
        if not opts["quiet"]:
            print(line, flush=True)

    try:
        own, params, opts, train_file, model_file = parse_args(argv)
        check_parameter(params)
        if not os.path.isfile(train_file):
            raise DlinearError(f"can't open input file {train_file}")
    except UsageError as e:
        sys.stderr.write(f"ERROR: {e} (run with -h for the usage)\n")
        return 1
    except DlinearError as e:
        sys.stderr.write(f"ERROR: {e}\n")
        return 1

    from distributed import Client
    from dlinear.cluster import Dataset

    cluster = make_cluster(queue=own["--queue"], walltime=own["--walltime"],
                           memory=own["--memory"], account=own["--account"],
                           interface=own["--interface"], job_extra=own["--job-extra"])
    try:
        if own["--dry-run"]:
            print(cluster.job_script())
            return 0
        n = own["--jobs"]
        cluster.scale(jobs=n)
        with Client(cluster) as client:
            say(f"dlinear: waiting for {n} Slurm jobs to start their workers "
                f"(scheduler {cluster.scheduler_address}, dashboard {cluster.dashboard_link})")
            client.wait_for_workers(n)
            say(f"dlinear: {n} workers; reading {train_file} on them")
            data = Dataset.from_libsvm(train_file, client)
            with warnings.catch_warnings():
                # the log carries LIBLINEAR's warning lines already
                warnings.simplefilter("ignore", ConvergenceWarning)
                model = train(data, params, log=say)
            save_model(model_file, model)
            say(f"dlinear: model written to {model_file}")
        return 0
    except DlinearError as e:
        sys.stderr.write(f"ERROR: {e}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        cluster.close()           # cancels the Slurm jobs


if __name__ == "__main__":
    sys.exit(main())
