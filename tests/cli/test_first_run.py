"""The first run (an empty Numba cache) says on stderr, once, that it is compiling, when
stderr is a terminal, and compiles only what the run needs."""
import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from numba import njit

from dlinear.cli.compile_notice import CompileNotice

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "rcv1_small.train"
NOTICE = "dlinear: compiling the kernels for -s 1 (first run only"
# the reader's kernel in the cache's file names: what every training run calls first
READER_CACHE_NAME = "libsvm._libsvm_parser.locals.parse_into_fast_path"


# a child's program that runs `python -m dlinear ARGS` and prints, last, the functions it
# compiled as JSON [[function, signature], ...] (scripts.tools.compile_times' record)
RECORDING = ("import json, sys\n"
             "from scripts.tools.compile_times import record_compilations\n"
             "found, _ = record_compilations(sys.argv[1:])\n"
             "print(json.dumps([[name, signature] for _, name, signature in found]))\n")


def train(cache_dir, tmp_path, *options, terminal=True, recording=False):
    """dlinear train on the example, its stderr a pseudo-terminal (or a pipe); recording:
    through RECORDING (run from the repository, which it imports)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    program = ["-c", RECORDING] if recording else ["-m", "dlinear"]
    command = [sys.executable, *program, "train", *options, str(EXAMPLE),
               str(tmp_path / "model")]
    cwd = REPO if recording else tmp_path
    if not terminal:
        r = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, r.stderr
        return r
    reader, writer = pty.openpty()
    try:
        r = subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=writer, text=True, timeout=600)
        os.close(writer)
        writer = None
        err = b""
        while True:
            try:
                chunk = os.read(reader, 4096)
            except OSError:         # the terminal is closed and drained
                break
            if not chunk:
                break
            err += chunk
    finally:
        os.close(reader)
        if writer is not None:
            os.close(writer)
    stderr = err.decode().replace("\r\n", "\n")
    assert r.returncode == 0, stderr
    return SimpleNamespace(stdout=r.stdout, stderr=stderr)


def cache_missing_one_kernel(warm_cache, tmp_path, name):
    """A copy of warm_cache without the kernel `name` (module.function): a run from it
    compiles that kernel alone, a cold run at a fraction of a whole cold compile's cost."""
    cache = shutil.copytree(warm_cache, tmp_path / f"without_{name}")
    removed = [f for f in cache.rglob(f"{name}-*") if f.suffix in (".nbi", ".nbc")]
    assert removed, f"no cached {name} in {warm_cache}"
    for f in removed:
        f.unlink()
    return cache, removed


@pytest.fixture(scope="module")
def cold_s1(tmp_path_factory):
    """A cold `train -s 1` of the example, its stderr a terminal: (what it compiled, its
    output, the cache it left). One cold run serves every test of a first run."""
    tmp_path = tmp_path_factory.mktemp("cold_s1")
    cold = train(tmp_path / "cache", tmp_path, "-s", "1", recording=True)
    *printed, compiled = cold.stdout.splitlines()
    found = [(name, signature) for name, signature in json.loads(compiled)
             if name.startswith("dlinear.")]
    return found, SimpleNamespace(stdout="\n".join(printed), stderr=cold.stderr), \
        tmp_path / "cache"


@pytest.mark.slow
def test_a_cold_run_says_it_compiles_once_a_warm_quiet_or_piped_run_does_not(cold_s1,
                                                                            tmp_path):
    _, cold, cold_cache = cold_s1
    lines = cold.stderr.splitlines()
    assert sum(NOTICE in line for line in lines) == 1, cold.stderr
    assert f"cached in {cold_cache}" in lines[0]
    assert NOTICE not in cold.stdout
    shutil.copytree(cold_cache, tmp_path / "cache")
    warm = train(tmp_path / "cache", tmp_path, "-s", "1")
    assert NOTICE not in warm.stderr
    # quiet or piped, a run that compiles (one kernel, the reader's: it is cached again)
    # says nothing of it
    for options, terminal in ((["-q"], True), ([], False)):
        cache, removed = cache_missing_one_kernel(tmp_path / "cache", tmp_path / str(terminal),
                                                  READER_CACHE_NAME)
        run = train(cache, tmp_path, *options, terminal=terminal)
        assert NOTICE not in run.stderr and (terminal is False or run.stderr == "")
        assert all(f.exists() for f in removed)


def _function_of_module(module):
    def twice(x):
        return 2 * x
    twice.__module__ = module
    return njit(cache=False)(twice)


def test_the_notice_speaks_for_dlinear_functions_only_and_only_inside_its_block():
    said = []
    notice = CompileNotice(said.append, "-s 6")
    _function_of_module("dlinear.kernels.fake")(1)      # compiled outside the block
    with notice:
        _function_of_module("numba.np.fake")(1)
    assert said == []
    with notice:
        _function_of_module("dlinear.kernels.fake")(1)
        _function_of_module("dlinear.kernels.other")(1)
    assert len(said) == 1 and said[0].startswith("dlinear: compiling the kernels for -s 6")


def compiled_functions(cache_dir, *command):
    """[(function, signature)] of dlinear's functions that `python -m dlinear *command`
    compiles with the Numba cache in cache_dir (in a child process: Numba reads
    NUMBA_CACHE_DIR when it is imported)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    r = subprocess.run([sys.executable, "-c", RECORDING, *command], env=env, cwd=REPO,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return [(name, signature) for name, signature in json.loads(r.stdout.splitlines()[-1])
            if name.startswith("dlinear.")]


# What a cold `train -s 1` of the small example needs: the LIBSVM reader's fast-path
# kernel (the example's numbers all take Clinger's fast path) and the serial dual CD
# kernel with its random permutations. Not the general reader (Eisel-Lemire, qid, the
# error paths), not the column bitmaps (a small block is sorted), not the threaded or
# cluster variants.
S1_KERNELS = {"dlinear.kernels.libsvm._libsvm_parser.<locals>.parse_into_fast_path[general=False]",
              "dlinear.kernels.libsvm._number_scanner.<locals>"
              ".scan_number_fast_path[general=False]",
              "dlinear.kernels.libsvm._skip_to_newline",
              "dlinear.kernels.dual_cd_svc.dual_cd_svc", "dlinear.kernels.rng.shuffle_prefix"}


@pytest.mark.slow
def test_a_cold_s1_run_compiles_the_fast_path_reader_and_the_serial_kernel_once_each(cold_s1):
    found, _, _ = cold_s1
    names = [name for name, _ in found]
    assert set(names) == S1_KERNELS, found
    # one signature each: a second one (read-only or literal arguments, int32 against
    # int64) is a whole compilation more
    assert len(names) == len(set(names)), found


@pytest.mark.slow
def test_a_file_outside_the_fast_path_compiles_the_general_reader_too(cold_s1, tmp_path):
    data = tmp_path / "long.train"
    data.write_text("1 1:0.5 2:1\n-1 1:0.30000000000000004\n")
    cache = shutil.copytree(cold_s1[2], tmp_path / "cache")
    found = compiled_functions(cache, "train", "-q", "-s", "1", str(data),
                               str(tmp_path / "model"))
    names = {name for name, _ in found}
    assert {"dlinear.kernels.libsvm._libsvm_parser.<locals>.parse_into_general[general=True]",
            "dlinear.kernels.decimal.eisel_lemire"} <= names, found
    # what the example's run compiled is loaded from its cache, not compiled again
    assert not names & S1_KERNELS, found


def test_a_run_leaves_scipy_linalg_unimported_and_numba_still_calls_blas(tmp_path):
    """dlinear.kernels loads Numba's array support without its scipy.linalg probe; a
    kernel that does use BLAS (np.dot) still gets it, importing scipy.linalg then."""
    code = ("import sys\n"
            "import numpy as np\n"
            "from numba import njit\n"
            "from dlinear.data.libsvm_reader import parse_libsvm_bytes\n"
            "p = parse_libsvm_bytes(b'1 1:2 3:4\\n', 'mem')\n"
            "assert 'scipy.linalg' not in sys.modules\n"
            "dot = njit(lambda a, b: np.dot(a, b))\n"
            "a = np.arange(30.0)\n"
            "assert dot(a, a) == a @ a\n"
            "assert 'scipy.linalg' in sys.modules\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
