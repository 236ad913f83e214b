"""`python -m dlinear ...` run in this process, for tests about what a command computes
and prints rather than about the process (exit codes of a signal, a fresh interpreter's
first compile): the same `main` the module runs, without starting Python and loading
dlinear's kernels again (a second or more a command)."""
import subprocess


def run_in_process(capsys, *args) -> subprocess.CompletedProcess:
    """main(args) of `python -m dlinear`, its exit status and what it printed, in the
    form subprocess.run(..., capture_output=True, text=True) gives."""
    from dlinear.cli.main import main
    argv = [str(a) for a in args]
    capsys.readouterr()                         # nothing printed before belongs to it
    status = main(argv)
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["dlinear", *argv], status, out, err)
