"""Ctrl-C during a library fit on the main thread (a notebook cell, a script): the kernel
running stops within a step (dlinear.threads.kernels_stop_on_ctrl_c), the fit ends in a
KeyboardInterrupt well within a second, and the next fit is untouched by it."""
import os
import signal
import threading
import time
import warnings

import numpy as np
import pytest

import dlinear
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.errors import surfacing_interrupts
from dlinear.solvers import l1r, parallel_dual_cd
from dlinear.threads import ctrl_c_seen_at, stop_flag

ANSWER_WITHIN = 1.0       # seconds from the SIGINT to the KeyboardInterrupt (issue 39)
SEND_AFTER = 0.6          # seconds into a fit that would run for several more
# a fit of a few seconds on `data` (bounded: without the stop, the Ctrl-C waits for its end)
LONG = dict(C=100.0, eps=1e-12, max_iter=3000)

# (id, Params options, train options): every solver with a long kernel, and the variants
# of the dual CD with kernels of their own
LONG_FITS = [
    ("s1", dict(solver_type=1), {}),
    ("s3", dict(solver_type=3, max_iter=6000), {}),   # 3000 iterations: about 2 s
    ("s1-checkpointed", dict(solver_type=1), {"checkpoint": True}),
    ("s1-cd-block-2", dict(solver_type=1, cd_block=2), {}),
    ("s3-cd-block-2", dict(solver_type=3, cd_block=2), {}),
    ("s1-true-bias", dict(solver_type=1, bias=1.0, regularize_bias=False), {}),
    ("s3-online", dict(solver_type=3, online=True), {}),
    ("s7", dict(solver_type=7), {}),
    ("s12", dict(solver_type=12), {}),
    ("s13", dict(solver_type=13), {}),
    ("s1-2-threads-local", dict(solver_type=1), {"n_threads": 2}),
    ("s1-2-threads-block", dict(solver_type=1), {"n_threads": 2, "scheme": "block"}),
    ("s1-2-threads-atomic", dict(solver_type=1), {"n_threads": 2, "scheme": "atomic"}),
    ("s7-2-threads-local", dict(solver_type=7), {"n_threads": 2}),
    ("s12-2-threads-atomic", dict(solver_type=12), {"n_threads": 2, "scheme": "atomic"}),
    ("s4", dict(solver_type=4, C=10.0, eps=1e-5), {}),
    ("s5", dict(solver_type=5), {}),
    ("s5-checkpointed", dict(solver_type=5), {"checkpoint": True}),
    ("s5-two-row-parts", dict(solver_type=5), {"row_parts": 2}),
    ("s6", dict(solver_type=6), {}),
    ("s6-l1-ratio", dict(solver_type=6, l1_ratio=0.5), {}),
    ("s2-primal-cd", dict(solver_type=2, primal_cd=True, max_iter=100), {}),
    # Newton (and -s 6 between its Newton iterations, here a fraction of a second each:
    # see the test of its kernel below) returns to Python, where the Ctrl-C is raised
    ("s0", dict(solver_type=0), {"classes": 4}),   # one class's fit is under a second
]


@pytest.fixture(autouse=True)
def pythons_own_ctrl_c_handler():
    """The tests' premise: Python's own SIGINT handler, as in a notebook or a script
    (an import in another test may have left its own: dask_jobqueue's runner module
    installs one that exits), put back as it was after each test."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="module")
def data():
    return make_rcv1_like(30000, 3000, seed=5)


@pytest.fixture(scope="module")
def four_class_data():
    return make_rcv1_like(30000, 3000, n_classes=4, seed=5)


def seconds_to_interrupt(fit, report=None):
    """Seconds from a SIGINT sent SEND_AFTER s into fit() to its KeyboardInterrupt, or
    None if fit() returned first. `report` (a list) gets how the time went."""
    sent = []

    def send():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(SEND_AFTER, send)
    timer.start()
    try:
        fit()
    except KeyboardInterrupt:
        seconds = time.monotonic() - sent[0]
        if report is not None:
            seen = ctrl_c_seen_at()
            report.append(f"the stop flag set {seen - sent[0]:.3f} s after the SIGINT"
                          if seen is not None and seen >= sent[0] else
                          "the stop flag never set")
            report.append("threads: " + ", ".join(t.name for t in threading.enumerate()))
        return seconds
    finally:
        timer.cancel()
    return None


@pytest.mark.parametrize("options,train_options", [c[1:] for c in LONG_FITS],
                         ids=[c[0] for c in LONG_FITS])
def test_a_ctrl_c_stops_the_fit_within_a_second(data, four_class_data, options,
                                                train_options, tmp_path, monkeypatch):
    params = dlinear.Params(**{**LONG, **options})
    train_options = {"n_threads": 1, **train_options}
    classes = train_options.pop("classes", 2)
    if classes == 4:
        data = four_class_data
    if "scheme" in train_options:       # a parallel dual CD scheme other than the default
        monkeypatch.setattr(parallel_dual_cd, "DEFAULT_SCHEME", train_options.pop("scheme"))
    if train_options.pop("checkpoint", False):
        train_options["checkpoint"] = str(tmp_path / "checkpoint")
    row_parts = train_options.pop("row_parts", 1)
    if row_parts > 1:     # -s 5 on threads that meet per column, whatever the cores
        monkeypatch.setattr(l1r, "row_split_threads", lambda *_: row_parts)
        train_options["n_threads"] = row_parts
    # the same kernels compiled first (a Ctrl-C during a compile waits for its end): the
    # same fit on a small set, on as many threads (a dual CD would take one there)
    with monkeypatch.context() as small_fit, warnings.catch_warnings():
        small_fit.setattr(parallel_dual_cd, "MIN_NNZ_PER_THREAD", 1)
        warnings.simplefilter("ignore", dlinear.ConvergenceWarning)
        dlinear.train(make_rcv1_like(300, 100, n_classes=classes, seed=1), params,
                      **{k: v for k, v in train_options.items() if k != "checkpoint"})
    report = []
    seconds = seconds_to_interrupt(lambda: dlinear.train(data, params, **train_options),
                                   report)
    assert seconds is not None, "the fit ended before the Ctrl-C"
    assert seconds < ANSWER_WITHIN, "; ".join(report)
    assert stop_flag()[0] == 0                      # the next fit runs whole
    assert signal.set_wakeup_fd(-1) == -1           # the caller's wakeup fd restored


def dropping_a_ctrl_c(then):
    """A stand-in for train_in_process that meets a Ctrl-C whose KeyboardInterrupt is
    dropped, as in a ctypes callback of Numba's compiler (CPython reports an exception
    there and goes on), and then does `then(real fit)`."""
    from dlinear import api
    fit = api.train_in_process

    def train_in_process(*args, **kwargs):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            pass                                # dropped
        return then(lambda: fit(*args, **kwargs))
    return train_in_process


def test_a_ctrl_c_whose_interrupt_was_dropped_still_ends_the_fit(monkeypatch):
    from dlinear import api
    small = make_rcv1_like(300, 100, seed=1)
    monkeypatch.setattr(api, "train_in_process", dropping_a_ctrl_c(lambda fit: fit()))
    with pytest.raises(KeyboardInterrupt):
        dlinear.train(small, dlinear.Params(solver_type=0), n_threads=1)


def test_a_ctrl_c_a_gc_callback_swallowed_still_stops_the_fit_promptly(capsys):
    """Its KeyboardInterrupt raised inside a gc callback (distributed's GC diagnosis while
    the partitioned rounds of a CLI run on a local cluster wait) is ignored by Python; the
    watcher's stop flag ends the driver at its next step (solvers.requests.serve, as the
    partitioned rounds), and the swallowed one is not printed."""
    import gc

    from dlinear.solvers.requests import serve
    armed, sent = [False], []

    def callback(phase, info):
        if phase == "start" and armed[0]:
            armed[0] = False
            sent.append(time.monotonic())
            signal.raise_signal(signal.SIGINT)      # its KeyboardInterrupt is raised here

    class Workers:
        def round(self):
            time.sleep(0.01)                        # a round on the workers

    def driver():
        for _ in range(int(5 * ANSWER_WITHIN / 0.01)):
            yield "round", ()

    @surfacing_interrupts
    def fit():
        armed[0] = True
        gc.collect(0)       # the youngest generation: a full collection of this process's
        serve(driver(), Workers())                  # heap holds the GIL for seconds

    gc.callbacks.append(callback)
    try:
        with pytest.raises(KeyboardInterrupt):
            fit()
        interrupted = time.monotonic()
    finally:
        gc.callbacks.remove(callback)
    assert len(sent) == 1
    assert interrupted - sent[0] < ANSWER_WITHIN
    assert capsys.readouterr().err == ""


def test_an_error_a_ctrl_c_caused_is_raised_as_the_ctrl_c(monkeypatch):
    """What a Ctrl-C during a kernel's compilation gave: an llvmlite RuntimeError."""
    from dlinear import api
    small = make_rcv1_like(300, 100, seed=1)

    def broken(fit):
        raise RuntimeError("object compilation notification for unknown module")
    monkeypatch.setattr(api, "train_in_process", dropping_a_ctrl_c(broken))
    with pytest.raises(KeyboardInterrupt):
        dlinear.train(small, dlinear.Params(solver_type=0), n_threads=1)
    # without a Ctrl-C the error is the caller's to see
    monkeypatch.setattr(api, "train_in_process", lambda *a, **k: broken(None))
    with pytest.raises(RuntimeError, match="unknown module"):
        dlinear.train(small, dlinear.Params(solver_type=0), n_threads=1)


def test_a_fit_after_an_interrupted_one_is_the_same(data):
    params = dlinear.Params(solver_type=1)
    before = dlinear.train(data, params, n_threads=1)
    assert seconds_to_interrupt(lambda: dlinear.train(
        data, dlinear.Params(solver_type=1, **LONG), n_threads=1)) is not None
    after = dlinear.train(data, params, n_threads=1)
    np.testing.assert_array_equal(before.w, after.w)


def test_off_the_main_thread_a_fit_is_not_stopped_early():
    """Only the main thread's fit watches for Ctrl-C (the CLI runs its fit on a thread of
    its own and ends the process itself); a fit elsewhere runs to its end."""
    flag_seen = []

    def fit():
        dlinear.train(make_rcv1_like(500, 100, seed=2), dlinear.Params(solver_type=1),
                      n_threads=1)
        flag_seen.append(int(stop_flag()[0]))
    worker = threading.Thread(target=fit)
    worker.start()
    worker.join()
    assert flag_seen == [0]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_one_class_kernel_stops_within_a_step():
    """-s 21 ends within seconds on any data here, too soon for a timed SIGINT: with the
    flag set before it starts, its kernel takes no outer iteration."""
    from dlinear.kernels.oneclass import oneclass_svm
    X = make_rcv1_like(2000, 200, seed=3)
    U = np.ones(X.n_samples)

    def run(flag):
        w = np.zeros(X.n_features)
        return oneclass_svm(X.indptr, X.indices, X.data, X.n_features, -1.0, U, 0.5, 1e-6,
                            1000, np.zeros(X.n_samples), w, np.array([flag], np.uint8),
                            False)[0]
    assert run(0) > 0
    assert run(1) == 0


def test_the_l1_logistic_kernel_stops_within_a_newton_iteration(monkeypatch):
    """-s 6 returns to Python between its Newton iterations, which here take well under a
    second: with the flag set (and the driver's raise taken out), its kernel returns
    before its first coordinate step, and the fit takes no Newton iteration. Off the main
    thread, so that no fit's watcher clears the flag."""
    X = make_rcv1_like(2000, 200, seed=3)
    monkeypatch.setattr(l1r, "raise_if_stopped", lambda: None)

    def newton_iterations(flag):
        found = []
        stop_flag()[0] = flag
        try:
            worker = threading.Thread(target=lambda: found.append(dlinear.train(
                X, dlinear.Params(solver_type=6), n_threads=1).n_iter[0]))
            worker.start()
            worker.join()
        finally:
            stop_flag()[0] = 0
        return found[0]
    assert newton_iterations(0) > 0
    assert newton_iterations(1) == 0
