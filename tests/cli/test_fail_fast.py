"""Failing fast and answering the user (issue 39): an output path that cannot be written
fails before any data is read, compressed input is known by its first bytes, an unknown
command is named, and Ctrl-C at any point is one line and exit 130."""
import os

import pytest

from dlinear.cli import inputs
from dlinear.cli.main import main


def _never_read(*args, **kwargs):
    raise AssertionError("the data was read before the output path was checked")


@pytest.mark.parametrize("where, reason", [("no-such-dir/m", "No such file or directory"),
                                           ("t/m", "Not a directory"),
                                           (".", "Is a directory")])
def test_an_unwritable_model_path_fails_before_the_data_is_read(tmp_path, capsys, monkeypatch,
                                                                where, reason):
    """LIBLINEAR's order (its `can't open output file`): the model path is checked first,
    so a long read and training are not wasted; one line, exit 1, nothing written."""
    train = tmp_path / "t"
    train.write_text("1 1:1\n-1 2:1\n")
    monkeypatch.setattr("dlinear.data.binary_format.read_dataset", _never_read)
    monkeypatch.setattr(inputs, "sample_libsvm", _never_read)
    model = tmp_path / where
    assert main(["train", str(train), str(model)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == f"ERROR: can't save model to file {model}: {reason}\n"
    assert os.listdir(tmp_path) == ["t"]


# what a command need not load to check its options and output path (seconds on 2 cores)
HEAVY_MODULES = ("numba", "scipy", "dask", "distributed", "numpy", "dlinear.kernels")


def _modules_loaded_at(call: str) -> str:
    """Runs `call` (a dlinear command's main) in a fresh interpreter; its exit status and
    which of HEAVY_MODULES were loaded when it returned."""
    import subprocess
    import sys
    script = ("import sys\n" + call + "\n"
              f"print(code, [m for m in {HEAVY_MODULES!r} if m in sys.modules])")
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("call", [
    "from dlinear.cli.train_predict import train_main\n"
    "code = train_main(['-s', '1', 'no-such-file', '/no-such-dir/m'])",
    "from dlinear.cli.train_predict import predict_main\n"
    "code = predict_main(['no-such-file', 'no-such-model', '/no-such-dir/out'])",
    "import dlinear\ncode = 0",
])
def test_the_output_path_is_checked_before_numba_scipy_and_dask_load(call):
    """The one-line answer to an unwritable model or output path comes before the
    imports that take seconds (Numba, SciPy, Dask, NumPy); `import dlinear` loads none of
    them either (its names load on first use). Which modules are loaded, not how long it
    took: the time is in BENCHMARKS.md."""
    result = _modules_loaded_at(call)
    code = "0" if "import dlinear" in call else "1"
    assert result.stdout == f"{code} []\n", result.stderr
    assert result.stderr in ("", "ERROR: can't save model to file /no-such-dir/m: No such "
                             "file or directory\n", "ERROR: can't open output file "
                             "/no-such-dir/out: No such file or directory\n")


def test_cross_validation_writes_no_model_so_checks_none(tmp_path, capsys):
    train = tmp_path / "t"
    train.write_text("1 1:1\n-1 2:1\n1 1:2\n-1 2:2\n")
    assert main(["train", "-q", "-v", "2", str(train), str(tmp_path / "no-such-dir" / "m")]) == 0
    assert capsys.readouterr().out.startswith("Cross Validation Accuracy = ")


def test_an_unwritable_prediction_output_fails_before_the_model_and_data(tmp_path, capsys,
                                                                         monkeypatch):
    """dlinear-predict checks its output file before it reads the model or the test file,
    with LIBLINEAR predict's words."""
    monkeypatch.setattr("dlinear.data.binary_format.read_dataset", _never_read)
    monkeypatch.setattr("dlinear.model.load_model", _never_read)
    output = tmp_path / "no-such-dir" / "out"
    assert main(["predict", "t", "m", str(output)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == (f"ERROR: can't open output file {output}: "
                                 "No such file or directory\n")
    assert os.listdir(tmp_path) == []


def test_a_gzip_file_named_without_gz_trains(tmp_path, capsys):
    """Compression is known by the file's first bytes, not its name."""
    import gzip
    text = b"".join(b"%d 1:%d 2:1\n" % (1 if i % 2 else -1, i % 2) for i in range(40))
    (tmp_path / "plain").write_bytes(text)
    (tmp_path / "zipped").write_bytes(gzip.compress(text))
    for name in ("plain", "zipped"):
        assert main(["train", "-q", "--workers", "0", str(tmp_path / name),
                     str(tmp_path / f"{name}.model")]) == 0
    assert capsys.readouterr() == ("", "")
    assert (tmp_path / "zipped.model").read_text() == (tmp_path / "plain.model").read_text()


@pytest.fixture(scope="module")
def large_training_file(tmp_path_factory):
    """About 90 MB of rcv1-shaped text: a second or more to read on 2 cores, then -s 1
    training that runs until it is interrupted (a tolerance it never reaches)."""
    from dlinear.cli.main import main as dlinear_main
    directory = tmp_path_factory.mktemp("sigint")
    assert dlinear_main(["make-data", "--rows", "120000", "--test-rows", "10", "--features",
                         "20000", "--nnz-per-row", "30", str(directory / "d")]) == 0
    return directory / "d.train"


@pytest.mark.slow
# importing takes 1 to 3 s, reading the file about 1 s more (its kernels loaded), then the
# training runs until the signal
@pytest.mark.parametrize("delay", [0.3, 1.5, 2.5, 3.5, 5.0])
def test_ctrl_c_at_any_point_is_one_line_and_130(tmp_path, large_training_file, delay):
    """SIGINT from a parent that restores the default handler, as a shell does, at points
    spread over importing, reading (threads, kernels loaded) and training: always exit 130,
    the one line (no traceback, no SystemError from a Numba dispatcher), no model file."""
    import signal
    import subprocess
    import sys
    import time
    model = tmp_path / "m"
    process = subprocess.Popen(
        # a tolerance no sweep reaches: training runs until the signal, however fast
        [sys.executable, "-m", "dlinear", "train", "-q", "-s", "1", "-c", "100", "-e", "1e-300",
         "--max-iter", "100000000", "--workers", "0", str(large_training_file), str(model)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        time.sleep(delay)
        if process.poll() is not None:
            pytest.fail(f"training ended before {delay} s: {process.stderr.read()}")
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
        process.wait()
    assert (process.returncode, out, err) == (130, "", "dlinear: interrupted\n")
    assert os.listdir(tmp_path) == []


def test_a_system_error_caused_by_ctrl_c_is_the_interrupt(capsys):
    """Ctrl-C while Numba's wrapper boxes a kernel's result surfaces as a SystemError
    caused by the KeyboardInterrupt: answered as Ctrl-C; another SystemError is a bug."""
    from dlinear.cli.exit import exit_status

    def dispatch():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as e:
            raise SystemError("CPUDispatcher(...) returned a result with an exception "
                              "set") from e
    assert exit_status(dispatch) == 130
    assert capsys.readouterr().err == "dlinear: interrupted\n"

    def bug():
        raise SystemError("something else")
    with pytest.raises(SystemError):
        exit_status(bug)


def test_a_failing_pass_stops_its_helper_threads_at_their_next_step():
    """Ctrl-C reaches the calling thread only: the helpers end the part they are on at
    its next stop_point, so the pass ends within a step, not a part."""
    import threading
    import time
    from dlinear.threads import PassPool, stop_point
    steps, started = [], threading.Event()

    def part(q):
        if threading.current_thread() is threading.main_thread():
            started.wait(10)
            raise KeyboardInterrupt
        started.set()
        for _ in range(1000):
            stop_point()
            steps.append(q)
            time.sleep(0.01)
    pool = PassPool(2, "test")
    with pytest.raises(KeyboardInterrupt):
        pool.run(part, [(q,) for q in range(4)])
    pool.close()
    assert 0 < len(steps) < 100


def test_work_on_the_worker_thread_returns_and_raises_as_it_would_here():
    import threading
    from dlinear.cli.exit import answering_ctrl_c
    from dlinear.errors import DlinearError
    assert answering_ctrl_c(lambda: threading.current_thread().name) == "dlinear-work"

    def fail():
        raise DlinearError("t: line 3: bad")
    with pytest.raises(DlinearError, match="t: line 3: bad"):
        answering_ctrl_c(fail)


@pytest.mark.slow
def test_ctrl_c_on_a_local_cluster_stops_the_run_with_one_line_and_130(tmp_path,
                                                                       large_training_file):
    """--workers 2: a SIGINT once training has started (its stderr says how it trains)
    cancels the run's tasks, stops the workers and exits 130 with the one line, writing
    no model. The 10 s bound only guards against a hang (closing the cluster instead
    took 4.5 s): the time to answer is measured in BENCHMARKS.md."""
    import signal
    import subprocess
    import sys
    import threading
    import time
    model = tmp_path / "m"
    process = subprocess.Popen(
        [sys.executable, "-m", "dlinear", "train", "-s", "1", "-c", "100", "-e", "1e-300",
         "--max-iter", "100000000", "--workers", "2", str(large_training_file), str(model)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    stdout = []
    reader = threading.Thread(target=lambda: stdout.append(process.stdout.read()))
    reader.start()
    try:
        before = []
        for line in process.stderr:         # dlinear's notes, up to the one said as it trains
            before.append(line)
            if line.startswith("dlinear: -s 1 "):
                break
        else:
            pytest.fail(f"training never started: {''.join(before)}")
        time.sleep(0.5)                     # into the workers' tasks
        signalled = time.monotonic()
        process.send_signal(signal.SIGINT)
        after = process.stderr.read()
        process.wait(timeout=10)
        waited = time.monotonic() - signalled
    finally:
        process.kill()
        process.wait()
        reader.join()
    assert (process.returncode, after) == (130, "dlinear: interrupted\n")
    assert waited < 10
    assert os.listdir(tmp_path) == []


def test_cancel_tasks_cancels_what_a_client_holds(client):
    """What an interrupted cluster run does first: the tasks it submitted are cancelled on
    the scheduler, not left to run to the end."""
    import time

    from dlinear.cluster.session import cancel_tasks
    from tests.support.clusters import held_until_released, release
    try:
        running = client.submit(held_until_released, "cancel-tasks", 60, pure=False)
        waiting = client.submit(held_until_released, "cancel-tasks", 60, pure=False)
        cancel_tasks(client)
        deadline = time.monotonic() + 10
        while (time.monotonic() < deadline
               and {running.status, waiting.status} != {"cancelled"}):
            time.sleep(0.05)
        assert running.status == waiting.status == "cancelled"
    finally:
        release(client, "cancel-tasks")


def _interrupted_as_numba_boxes(*args, **kwargs):
    """What a Ctrl-C landing as Numba boxes a kernel's result raises."""
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt as e:
        raise SystemError("CPUDispatcher(...) returned a result with an exception set") from e


def test_another_system_error_from_a_fit_stays_one(monkeypatch):
    import numpy as np

    import dlinear

    def bug(*args, **kwargs):
        raise SystemError("something else")
    monkeypatch.setattr("dlinear.api.train_in_process", bug)
    with pytest.raises(SystemError):
        dlinear.train(np.eye(2), dlinear.Params(), y=np.array([1.0, -1.0]))


def test_a_library_fit_surfaces_ctrl_c_as_keyboard_interrupt(monkeypatch):
    """dlinear.train (and the estimators' fit, which call it) raise a caller's Ctrl-C as
    KeyboardInterrupt, also where it landed as Numba boxed a result."""
    import numpy as np

    import dlinear
    X, y = np.eye(4), np.array([1.0, -1.0, 1.0, -1.0])
    monkeypatch.setattr("dlinear.api.train_in_process", _interrupted_as_numba_boxes)
    with pytest.raises(KeyboardInterrupt) as raised:
        dlinear.train(X, dlinear.Params(), y=y)
    assert raised.value.__suppress_context__
    pytest.importorskip("sklearn")
    with pytest.raises(KeyboardInterrupt):
        dlinear.LinearSVC().fit(X, y)


@pytest.mark.slow
def test_ctrl_c_during_a_fit_in_python_is_a_keyboard_interrupt(tmp_path):
    """SIGINT into a Python program fitting in a loop (kernels in the main thread, -m 1):
    its traceback ends in KeyboardInterrupt, never in Numba's SystemError."""
    import signal
    import subprocess
    import sys
    import time
    script = (
        "import numpy as np, scipy.sparse as sp, dlinear\n"
        "X = sp.random(20000, 2000, density=0.01, format='csr', random_state=0)\n"
        "y = np.where(np.arange(20000) % 2, 1.0, -1.0)\n"
        "print('fitting', flush=True)\n"
        "while True:\n"
        "    dlinear.train(X, dlinear.Params(solver_type=1, max_iter=20), y=y, n_threads=1)\n")
    for delay in (0.5, 1.3):
        process = subprocess.Popen(
            [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            assert process.stdout.readline() == "fitting\n", process.stderr.read()
            time.sleep(delay)
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=60)
        finally:
            process.kill()
            process.wait()
        assert err.rstrip().splitlines()[-1] == "KeyboardInterrupt"
        assert "SystemError" not in err
