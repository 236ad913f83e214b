"""Run the input fuzzer (tests/cli/test_fuzz_inputs.py) for longer than the test suite does.

    python scripts/tools/fuzz_inputs.py --cases 2000 [--seed S] [--hang-seconds T] [-k EXPR]

Each fuzz test runs `--cases` cases (mutated training, model and weight files, option
lists, through dlinear-train and dlinear-predict in process). Prints pytest's output and
the number of cases run; exits with pytest's status. A hang ends the run with every
thread's stack (faulthandler), a crash with the stack of the crashing thread.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

FUZZ_TESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                          "tests", "cli", "test_fuzz_inputs.py")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000, help="cases per fuzz test")
    parser.add_argument("--seed", type=int, default=None,
                        help="Hypothesis seed (default: the tests' fixed seed)")
    parser.add_argument("--hang-seconds", type=float, default=120.0,
                        help="a case running longer than this is reported as a hang")
    parser.add_argument("-k", default=None, help="pytest -k expression: which fuzz tests")
    args = parser.parse_args(argv)
    # not in the working directory (the repository's root, often): the system's temporary one
    last = os.path.join(tempfile.gettempdir(), "dlinear_fuzz_last_case.txt")
    env = dict(os.environ, DLINEAR_FUZZ_CASES=str(args.cases),
               DLINEAR_FUZZ_HANG_SECONDS=str(args.hang_seconds), DLINEAR_FUZZ_LAST=last)
    if args.seed is not None:
        env["DLINEAR_FUZZ_SEED"] = str(args.seed)
    # --capture=sys: a hang's stacks (faulthandler, on file descriptor 2) reach the output
    command = [sys.executable, "-m", "pytest", FUZZ_TESTS, "-q", "-p", "no:cacheprovider",
               "--capture=sys", "--hypothesis-show-statistics"] + (["-k", args.k] if args.k else [])
    run = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    sys.stdout.write(run.stdout)
    # Hypothesis's statistics: "- 1000 passing, 0 failing, and 81 invalid test cases"
    counted = sum(int(p) + int(f) for p, f in re.findall(r"(\d+) passing, (\d+) failing",
                                                        run.stdout))
    print(f"fuzz cases run: {counted} (pytest exit status {run.returncode})")
    if run.returncode != 0 and os.path.exists(last):
        print(f"the last case started (a hang or crash ends the run there) is in {last}")
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
