"""Peak RSS of a whole `dlinear-train` process against the bytes of the CSR it trains on.

    python -m scripts.benchmarks.peak_memory [--dataset-dir DIR] [--phases] SOLVER:TEXT ...
        for each SOLVER:TEXT (e.g. 2:/tmp/click.train, 1:/tmp/rcv1.train), four runs of
        `dlinear-train -q -s SOLVER --workers 0`: from the text and from its binary dataset
        (`python -m dlinear convert`, made in DIR when missing), float64 and --float32.
        Prints each run's peak RSS (the child's maximum resident set, as /usr/bin/time -v
        reports it), the CSR's bytes (values, indices, row pointers and labels, from the
        dataset's header) and peak / CSR, and the goal of issue 34: peak <= 1.2 x CSR +
        200 MB. With --phases, each run also prints the RSS (and its peak so far) after
        each step of the fit: read, compaction to the occurring columns, fit, model, save.

Each writes its rows as JSON (--json) and prints a table.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

from dlinear.data.binary_format import read_header

from . import harness

MB = 1e6
GOAL_SCALE, GOAL_EXTRA = 1.2, 200 * MB

# Run in the child with --phases: the CLI's own steps, each followed by a line of the
# process's VmRSS and VmHWM (peak so far) on stderr.
_PHASES = r"""
import sys
import dlinear.cli.train_predict as cli
import dlinear.data.binary_format as reader
import dlinear.in_process.train as fit
import dlinear.model as model


def status():
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return (int(fields["VmRSS"].split()[0]) // 1024, int(fields["VmHWM"].split()[0]) // 1024)


def after(name, fn):
    def step(*args, **kwargs):
        value = fn(*args, **kwargs)
        sys.stderr.write("phase %s rss=%d MiB peak=%d MiB\n" % ((name,) + status()))
        return value
    return step


sys.stderr.write("phase start rss=%d MiB peak=%d MiB\n" % status())
# train_main imports these two when it runs: patched in their own modules
reader.read_dataset = after("read", reader.read_dataset)
fit.compact_problem = after("compaction", fit.compact_problem)
fit._fit_in_mode = after("fit", fit._fit_in_mode)
fit.assemble_model = after("model", fit.assemble_model)
model.save_model = after("save", model.save_model)
sys.exit(cli.train_main(sys.argv[1:]))
"""


def peak_rss(command, env=None) -> tuple[int, str]:
    """(the child's peak resident set in bytes, its stderr); exits if it fails."""
    with tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        err.seek(0)
        stderr = err.read()
    if os.waitstatus_to_exitcode(status):
        sys.exit(f"{' '.join(command)} failed: {stderr.strip()}")
    return usage.ru_maxrss * 1024, stderr


def csr_bytes(dataset) -> int:
    """The bytes of the CSR a fit holds: values and indices a nonzero, row pointer and
    label a row (as the binary dataset stores them, and the text reader makes them)."""
    h = read_header(dataset)
    return (h.nnz * (h.dtype("data").itemsize + h.dtype("indices").itemsize)
            + (h.rows + 1) * 8 + h.rows * 8)


def dataset_of(text, float32: bool, directory) -> str:
    name = os.path.basename(text).rsplit(".", 1)[0] + ("-f32" if float32 else "-f64")
    path = os.path.join(directory, name)
    if not os.path.exists(path):
        subprocess.run([sys.executable, "-m", "dlinear", "convert", "-q",
                        *(["--float32"] if float32 else []), text, path], check=True)
    return path


def run(args, report):
    os.makedirs(args.dataset_dir, exist_ok=True)
    env = None
    if args.code:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(args.code))
        report.note(f"dlinear from {env['PYTHONPATH']}")
    for case in args.cases:
        solver, text = case.split(":", 1)
        for float32 in [v == "float32" for v in args.values]:
            dataset = dataset_of(text, float32, args.dataset_dir)
            csr = csr_bytes(dataset)
            for source, path in [(s, text if s == "text" else dataset) for s in args.sources]:
                with tempfile.TemporaryDirectory() as tmp:
                    options = ["-q", "-s", solver, "--workers", "0",
                               *(["--float32"] if float32 and source == "text" else []),
                               path, os.path.join(tmp, "model")]
                    command = ([sys.executable, "-c", _PHASES, *options] if args.phases else
                               [sys.executable, "-m", "dlinear", "train", *options])
                    with harness.benchmark_lock(args.lock):
                        peak, stderr = peak_rss(command, env)
                phases = "; ".join(line[len("phase "):] for line in stderr.splitlines()
                                   if line.startswith("phase "))
                goal = GOAL_SCALE * csr + GOAL_EXTRA
                report.add(solver=solver, file=os.path.basename(text),
                           values="float32" if float32 else "float64", source=source,
                           csr_mb=csr / MB, peak_mb=peak / MB, peak_over_csr=peak / csr,
                           goal_mb=goal / MB, within_goal=peak <= goal,
                           **({"phases": phases} if args.phases else {}))
    return ["solver", "file", "values", "source", "csr_mb", "peak_mb", "peak_over_csr",
            "goal_mb", "within_goal"]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m scripts.benchmarks.peak_memory",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="+", metavar="SOLVER:TEXT")
    parser.add_argument("--dataset-dir", default=os.path.join(tempfile.gettempdir(),
                                                              "dlinear-peak-memory"),
                        help="where the binary datasets are (made when missing)")
    parser.add_argument("--code", default=None, metavar="ROOT",
                        help="run the dlinear package under ROOT (default: this one)")
    parser.add_argument("--values", nargs="+", choices=["float64", "float32"],
                        default=["float64", "float32"])
    parser.add_argument("--sources", nargs="+", choices=["text", "binary"],
                        default=["text", "binary"])
    parser.add_argument("--phases", action="store_true",
                        help="also the RSS after each step of the fit")
    harness.add_output_arguments(parser)
    args = parser.parse_args(argv)
    report = harness.Report("peak_memory", args)
    report.note("peak RSS of the whole dlinear-train process (the child's ru_maxrss)")
    report.finish(run(args, report))


if __name__ == "__main__":
    main()
