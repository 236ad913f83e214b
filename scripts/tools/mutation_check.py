"""Mutation check of the parity tests: would they notice a solver that stops early?

Runs each parity test file with every dlinear solver stopping at FACTOR (default 10) times
the tolerance it is asked for (pytest option --solver-eps-scale, tests/conftest.py; it
wraps the fit functions bound to the registry rows, SolverSpec.fit; LIBLINEAR is
untouched), and prints per file how many tests fail. Every file must have failures: a
parity file that still passes with solvers 10x too loose does not check the precision the
solvers reach. Exit status 1 if some file has none.

The scaling reaches the solvers run in the pytest process only: a test comparing an
in-process model with one trained by a `dlinear` subprocess or on Dask workers (which run
at the asked eps) also fails, for that mismatch; -v lists the failed tests to tell them
apart.

    python scripts/tools/mutation_check.py                 # every file of tests/parity/, eps x 10
    python scripts/tools/mutation_check.py --factor 100 tests/parity/test_newton.py
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parity_files() -> list:
    """Every test file under tests/parity/, relative to the repository root."""
    return sorted(os.path.relpath(path, ROOT) for path in
                  glob.glob(os.path.join(ROOT, "tests", "parity", "**", "test_*.py"),
                            recursive=True))


def counts(summary: str) -> dict:
    """{'passed': n, 'failed': n, ...} from pytest's last line."""
    return {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", summary)}


def run(path: str, factor: float) -> tuple:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path]
    if factor != 1:
        cmd += ["--solver-eps-scale", repr(factor)]
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True).stdout
    lines = out.strip().splitlines()
    failed = sorted({line[len("FAILED "):].split(" - ")[0] for line in lines
                     if line.startswith("FAILED ")})
    return counts(lines[-1] if lines else ""), failed, time.perf_counter() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="test files (default: every file of tests/parity/)")
    ap.add_argument("--factor", type=float, default=10.0)
    ap.add_argument("-v", "--verbose", action="store_true", help="list the failed tests")
    args = ap.parse_args(argv)
    args.files = args.files or parity_files()
    if not args.files:
        print("no test files: tests/parity/ holds none", file=sys.stderr)
        return 1
    print(f"every dlinear solver at {args.factor:g} x the eps asked")
    print(f"{'file':<32} {'failed':>6} {'passed':>6} {'seconds':>8}")
    quiet = []
    for path in args.files:
        c, failed, seconds = run(path, args.factor)
        n_failed = c.get("failed", 0) + c.get("error", 0) + c.get("errors", 0)
        print(f"{os.path.basename(path):<32} {n_failed:>6} {c.get('passed', 0):>6} "
              f"{seconds:8.0f}", flush=True)
        if args.verbose:
            for name in failed:
                print(f"    {name}")
        if n_failed == 0:
            quiet.append(path)
    if quiet:
        print("no test failed in: " + ", ".join(quiet))
        return 1
    print("every file has failures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
