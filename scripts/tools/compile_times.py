"""Which Numba functions a `dlinear` command compiles, and what each costs.

    python -m scripts.tools.compile_times [--passes] train -s 1 examples/rcv1_small.train /tmp/m

runs the command in this process with an empty Numba cache (a temporary NUMBA_CACHE_DIR,
unless one is set) and prints, for every compilation (a function and one signature of its
arguments), its CPU seconds without the compilations nested in it, then the total. A
function listed twice was compiled for two signatures: read-only and writeable arrays,
int32 and int64 indices, a literal constant argument (Literal[int](0)) or an omitted
optional argument each make a new one. A kernel made by a factory (one source, two
kernels) shows its closure's constants: parse_into[general=False]. --passes adds the slowest compiler passes.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict


def function_name(func) -> str:
    """'module.qualname', and for a kernel made by a factory its closure's constants,
    e.g. 'dlinear.kernels.libsvm._libsvm_parser.<locals>.parse_into[general=False]'."""
    name = f"{func.__module__}.{func.__qualname__}"
    if func.__closure__:
        name += "[" + ", ".join(f"{var}={cell.cell_contents!r}" for var, cell
                                in zip(func.__code__.co_freevars, func.__closure__)) + "]"
    return name


def record_compilations(command):
    """[(self CPU seconds, 'module.function', signature)] of running `command` (argv of
    python -m dlinear) in this process, and {pass name: CPU seconds}."""
    from numba.core import event

    stack = []          # [start CPU time, seconds of nested compilations]
    found = []
    passes = defaultdict(float)

    class Compilations(event.Listener):
        def on_start(self, ev):
            stack.append([time.process_time(), 0.0])

        def on_end(self, ev):
            start, nested = stack.pop()
            took = time.process_time() - start
            if stack:
                stack[-1][1] += took
            func = ev.data["dispatcher"].py_func
            found.append((took - nested, function_name(func), str(ev.data["args"])))

    class Passes(event.Listener):
        def __init__(self):
            self.started = []

        def on_start(self, ev):
            self.started.append(time.process_time())

        def on_end(self, ev):
            passes[ev.data["name"].split(" [")[0]] += time.process_time() - self.started.pop()

    event.register("numba:compile", Compilations())
    event.register("numba:run_pass", Passes())
    from dlinear.cli.main import main
    try:
        main(list(command))
    except SystemExit:
        pass
    return found, dict(passes)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passes", action="store_true", help="also the slowest compiler passes")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("command", nargs=argparse.REMAINDER,
                    help="what follows `python -m dlinear`, e.g. train -s 1 FILE MODEL")
    args = ap.parse_args(argv)
    if not os.environ.get("NUMBA_CACHE_DIR"):
        # Numba reads the variable when it is first imported: re-run this module with it set
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            again = [sys.executable, "-m", "scripts.tools.compile_times",
                     *(argv if argv is not None else sys.argv[1:])]
            sys.exit(subprocess.run(again, env=env).returncode)
    started = time.process_time()
    found, passes = record_compilations(args.command)
    total = time.process_time() - started
    found.sort(reverse=True)
    out = sys.stderr
    print(f"{'CPU s':>7}  function [signature]", file=out)
    for seconds, name, signature in found[:args.top]:
        print(f"{seconds:7.2f}  {name} {signature[:160]}", file=out)
    print(f"{sum(f[0] for f in found):7.2f}  compiling, {len(found)} compilations "
          f"({sum(1 for f in found if f[1].startswith('dlinear.'))} of dlinear's); "
          f"{total:.2f} s CPU for the whole command", file=out)
    if args.passes:
        for name, seconds in sorted(passes.items(), key=lambda kv: -kv[1])[:args.top]:
            print(f"{seconds:7.2f}  pass {name}", file=out)


if __name__ == "__main__":
    main()
