"""dlinear-submit and dlinear-status: jobs that outlive the client.

    dlinear-submit --scheduler tcp://host:8786 --name JOB \\
        [--tls-ca-file ca.pem --tls-cert client.pem --tls-key client.key] \\
        [dlinear-train options] training_file model_file
    dlinear-status --scheduler tcp://host:8786 JOB [--wait SECONDS] [--connect-timeout S]
        [--tls-ca-file ca.pem --tls-cert client.pem --tls-key client.key]

dlinear-submit's options mean what they mean for dlinear-train (parsed by
dlinear.cli.train_predict.parse_train_args, --storage-option included); a bad option fails here, on
one line, with exit status 1. Local paths are made absolute here and must name the same
files on the workers (shared storage); an fsspec URL (s3://...) is passed on as it is.
The job runs as described in dlinear.cluster.jobs.

dlinear-status prints the job's state as recorded on the scheduler: "queued", "running",
"done <model path> in <seconds> s" or "failed <message>"; a job that Dask ran again
after its worker was lost adds its story: "running (attempt 2: 1 lost with their worker
after 4.1 s; 9.200 s since the first started)", and done's seconds are the whole job's.
An unknown name is "no such job 'X'", with the scheduler's jobs. Exit status: 0 done, 1 failed,
2 queued or running, 3 no such job, no scheduler or a usage error. With --wait, it waits
up to SECONDS for the job to end first. A job whose task has vanished from the scheduler
without recording an end (its worker died too often, or the scheduler lost it) is
reported as failed.
"""
from __future__ import annotations

import argparse
import os
import time

from ..cluster.session import CONNECT_TIMEOUT
from .train_predict import parse_train_args
from .exit import (UsageError, _HelpRequested, _VersionRequested, command_line, exit_status,
                       version_line)
from ..data.input_files import is_url
from ..errors import DlinearError

USAGE = ("usage: dlinear-submit --scheduler ADDRESS --name JOB "
         "[--tls-ca-file F --tls-cert F --tls-key F] [train options] training_file model_file\n"
         "(train options as for dlinear-train -h, except -v, -C and --workers)\n")


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
    """-> (job name, Params, options dict, training file (absolute, or a URL), absolute
    model file).
    Raises dlinear's DlinearError (UsageError) for anything wrong."""
    from ..cluster.jobs import JOB_NAME
    from ..cluster.session import SCHEDULER_ENV
    from ..params import check_parameter
    from ..solvers.checkpoint import check_checkpoint

    try:
        name, argv = _take_option(argv, "--name")
    except ValueError as e:
        raise UsageError(str(e)) from None
    if "--version" in argv:
        raise _VersionRequested
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
    check_checkpoint(params)
    if params.checkpoint is not None:   # as the worker that runs the job finds it
        params.checkpoint = os.path.abspath(params.checkpoint)
    if not is_url(train_file):
        train_file = os.path.abspath(train_file)
    return name, params, opts, train_file, os.path.abspath(model_file)


def submit_main(argv=None) -> int:
    return command_line(argv, _submit_command, "dlinear-submit", USAGE,
                        usage_hint=" (run with -h for the usage)")


def _submit_command(argv: list[str]) -> int:
    if argv[0] in ("-h", "--help"):
        raise _HelpRequested
    name, params, opts, train_file, model_file = parse_submit_args(argv)
    from ..cluster import cluster_client, make_security
    from ..cluster.jobs import submit
    security = make_security(opts["tls-ca-file"], opts["tls-cert"], opts["tls-key"])
    with cluster_client(opts["scheduler"], security=security,
                        connect_timeout=opts["connect_timeout"]) as client:
        key = submit(client, name, params, train_file, model_file,
                     opts["storage_options"] or None)
    if not opts["quiet"]:
        tls = "".join(f" --{k} {opts[k]}" for k in ("tls-ca-file", "tls-cert", "tls-key")
                      if opts[k])
        print(f"submitted job {name} (task {key}) to {opts['scheduler']}: "
              f"{train_file} -> {model_file}")
        print(f"status: dlinear-status --scheduler {opts['scheduler']}{tls} {name} --wait 3600")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dlinear-status", description="State of a job sent with dlinear-submit "
        "(exit 0 done, 1 failed, 2 queued or running, 3 no such job or no scheduler).")
    parser.add_argument("job", help="the job's --name")
    parser.add_argument("--scheduler", default=os.environ.get("DLINEAR_SCHEDULER"),
                        help="scheduler address, tcp://host:8786 or tls://... "
                        "(default $DLINEAR_SCHEDULER)")
    parser.add_argument("--wait", type=float, default=None, metavar="SECONDS",
                        help="wait up to SECONDS for the job to end")
    parser.add_argument("--connect-timeout", type=float, default=CONNECT_TIMEOUT,
                        metavar="SECONDS", help="give up reaching the scheduler after "
                        f"SECONDS (default {CONNECT_TIMEOUT:g})")
    parser.add_argument("--tls-ca-file")
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--version", action="version", version=version_line("dlinear-status"))
    return parser


def status_main(argv=None) -> int:
    parser = build_parser()
    try:       # argparse exits 2 on a usage error, which here would mean "running"
        args = parser.parse_args(argv)
        if not args.scheduler:
            parser.error("--scheduler ADDRESS is required (or $DLINEAR_SCHEDULER)")
        if not args.connect_timeout > 0:
            parser.error("--connect-timeout needs a number of seconds > 0")
    except SystemExit as e:
        return 3 if e.code else 0

    return exit_status(lambda: _status_command(args), "dlinear-status", error_status=3)


def _status_command(args) -> int:
    from ..cluster import cluster_client, make_security
    from ..cluster.jobs import EXIT, current_state, job_names
    security = make_security(args.tls_ca_file, args.tls_cert, args.tls_key)
    try:
        with cluster_client(args.scheduler, security=security,
                            connect_timeout=args.connect_timeout) as client:
            deadline = time.monotonic() + (args.wait or 0)
            state = current_state(client, args.job)
            while (_word(state) in ("queued", "running") and args.wait is not None
                   and time.monotonic() < deadline):
                time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
                state = current_state(client, args.job)
            known = job_names(client) if state is None else None
    except (OSError, TimeoutError) as e:     # the scheduler went away while we asked
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise DlinearError(f"lost the Dask scheduler at {args.scheduler}: {reason}") from None
    if state is None:
        where = f"no such job '{args.job}' on the scheduler at {args.scheduler}"
        if known:       # a mistyped name, most likely
            raise DlinearError(f"{where}; its jobs: {', '.join(known)}")
        raise DlinearError(f"{where}, which knows no jobs (a restarted scheduler has "
                           "forgotten its jobs: submit it again)")
    print(state)
    return EXIT.get(_word(state), 3)


def _word(state) -> str:
    """A job's state's first word: queued, running, done or failed."""
    return str(state).split(" ", 1)[0]
