#!/usr/bin/env python
"""State of a job sent with scripts/submit.py.

    python scripts/job_status.py --scheduler tcp://host:8786 JOB [--wait SECONDS]
        [--tls-ca-file ca.pem --tls-cert client.pem --tls-key client.key]

Prints the job's state as recorded on the scheduler: "queued", "running",
"done <model path> <seconds>" or "failed <message>". Exit status: 0 done, 1 failed,
2 queued or running, 3 no such job, no scheduler or a usage error. With --wait, waits
up to SECONDS for the job to end first. A job whose task has vanished from the
scheduler without recording an end (its worker died too often, or the scheduler lost it)
is reported as failed.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from submit import job_key, read_state, task_state  # noqa: E402  (scripts/submit.py)

EXIT = {"done": 0, "failed": 1, "queued": 2, "running": 2}
LIVE_TASK_STATES = ("released", "waiting", "queued", "no-worker", "processing", "memory")


def current_state(client, name: str):
    """The recorded state; a queued/running job whose task is gone counts as failed."""
    state = read_state(client, name)
    if state not in ("queued", "running"):
        return state
    if task_state(client, job_key(name)) in LIVE_TASK_STATES:
        return state
    # the task ends by recording its end, then leaves the scheduler: read again
    state = read_state(client, name)
    if state in ("queued", "running"):
        return ("failed the job's task is gone from the scheduler without recording an end "
                "(did its worker die?)")
    return state


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="job_status.py", description="State of a job sent with scripts/submit.py "
        "(exit 0 done, 1 failed, 2 queued or running, 3 no such job or no scheduler).")
    parser.add_argument("job", help="the job's --name")
    parser.add_argument("--scheduler", default=os.environ.get("DLINEAR_SCHEDULER"),
                        help="scheduler address, tcp://host:8786 or tls://... "
                        "(default $DLINEAR_SCHEDULER)")
    parser.add_argument("--wait", type=float, default=None, metavar="SECONDS",
                        help="wait up to SECONDS for the job to end")
    parser.add_argument("--tls-ca-file")
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    try:       # argparse exits 2 on a usage error, which here would mean "running"
        args = parser.parse_args(argv)
        if not args.scheduler:
            parser.error("--scheduler ADDRESS is required (or $DLINEAR_SCHEDULER)")
    except SystemExit as e:
        return 3 if e.code else 0

    from dlinear.cluster import cluster_client, make_security
    from dlinear.errors import DlinearError
    try:
        security = make_security(args.tls_ca_file, args.tls_cert, args.tls_key)
        with cluster_client(args.scheduler, security=security) as client:
            deadline = time.monotonic() + (args.wait or 0)
            state = current_state(client, args.job)
            while (state in ("queued", "running") and args.wait is not None
                   and time.monotonic() < deadline):
                time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
                state = current_state(client, args.job)
    except DlinearError as e:
        sys.stderr.write(f"ERROR: {e}\n")
        return 3
    except KeyboardInterrupt:
        return 130
    if state is None:
        sys.stderr.write(f"ERROR: no job named {args.job} on the scheduler at "
                         f"{args.scheduler}\n")
        return 3
    print(state)
    return EXIT.get(str(state).split(" ", 1)[0], 3)


if __name__ == "__main__":
    sys.exit(main())
