"""Soak test of dlinear-submit / dlinear-status (issue #25 part 3): 30 jobs submitted at
once to a 2-worker cluster on loopback; meanwhile one worker is killed and started again,
and the scheduler is killed and started again on its address. The promise
(docs/guide/jobs_reliability.rst): every job ends `done` with its exact model, or
`failed` with a reason dlinear-status shows, or (its scheduler restarted) dlinear-status
says there is no such job and it is submitted again by name. No job hangs, no job is
reported done without its model, and no model file is ever partial."""
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import dlinear
from dlinear.cli.train_predict import parse_train_args
from dlinear.cli.jobs import status_main, submit_main
from dlinear.cluster.jobs import current_state
from dlinear.datasets.rcv1_like import make_rcv1_like
from tests.support.clusters import scheduler_workers

N_JOBS = 30
LATE_JOBS = 10          # submitted while the workers are paused: unfinished at the restart
DEADLINE = 420          # seconds for the whole test: a hang fails it instead of stalling CI
OPTIONS = [["-s", "1", "-c", "0.5", "-B", "1"], ["-s", "3", "-c", "2"],
           ["-s", "1", "-c", "0.1", "-w1", "2"]]


def _command(name):
    """The console script installed next to this Python."""
    path = shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)
    assert path, f"{name} is not installed (pip install -e .)"
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Supervised:
    """`dask scheduler` on a fixed loopback port and `dask worker --no-nanny` processes,
    started again when asked (as systemd or Kubernetes would); logs in `directory`."""

    def __init__(self, directory: Path, n_workers: int):
        self.directory = directory
        self.address = f"tcp://127.0.0.1:{_free_port()}"
        self.env = dict(os.environ)
        self.env.pop("DLINEAR_SCHEDULER", None)
        self.scheduler = None
        self.workers = [None] * n_workers
        self.starts = 0

    def _start(self, args, log_name):
        self.starts += 1
        with open(self.directory / f"{log_name}.{self.starts}.log", "w") as log:
            return subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=log,
                                    stderr=subprocess.STDOUT, env=self.env,
                                    cwd=self.directory, start_new_session=True)

    def start_scheduler(self):
        port = self.address.rsplit(":", 1)[1]
        self.scheduler = self._start(["scheduler", "--host", "127.0.0.1", "--port", port,
                                      "--no-dashboard"], "scheduler")

    def start_worker(self, i):
        self.workers[i] = self._start(["worker", self.address, "--nthreads", "1",
                                       "--no-nanny", "--host", "127.0.0.1", "--no-dashboard",
                                       "--name", f"w{i}", "--local-directory",
                                       str(self.directory)], f"worker{i}")

    def restart_exited_workers(self):
        for i, p in enumerate(self.workers):
            if p.poll() is not None:
                self.start_worker(i)

    def wait_for_workers(self, timeout=90, status="running", pause=False):
        """Until the scheduler has every worker in `status`, starting again those that
        end; with `pause`, every worker is paused first (as Dask's memory monitor pauses
        one: it runs no new task; it ends with its scheduler)."""
        from distributed import Client
        deadline = time.monotonic() + timeout
        # not the default client: clients open at once in this process (this one, the
        # poller's, dlinear-status on a thread) would restore Dask's config out of order
        with Client(self.address, timeout=f"{timeout}s", set_as_default=False) as client:
            def paused(dask_worker):     # nested: sent by value, not by module
                from distributed.core import Status
                # else its memory monitor resumes it, being below the pause fraction
                dask_worker.memory_manager.memory_pause_fraction = False
                dask_worker.status = Status.paused
            while True:
                self.restart_exited_workers()
                workers = scheduler_workers(client)
                if sum(w["status"] == status for w in workers.values()) >= len(self.workers):
                    return
                running = [a for a, w in workers.items() if w["status"] == "running"]
                if pause and running:       # (one started again may join later)
                    client.run(paused, workers=running)
                assert time.monotonic() < deadline, f"the workers are not {status}"
                time.sleep(0.2)

    @staticmethod
    def kill(p, sig=signal.SIGKILL):
        if p.poll() is None:
            os.killpg(p.pid, sig)
        p.wait(timeout=30)

    def stop(self):
        for p in [*self.workers, self.scheduler]:
            if p is not None and p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def _job_states(address, names):
    """{name: recorded state (None: unknown)}, or None while the scheduler is away."""
    from distributed import Client
    try:
        with Client(address, timeout="3s", set_as_default=False) as client:
            return {name: current_state(client, name) for name in names}
    except Exception:      # noqa: BLE001  (down or restarting: asked again later)
        return None


def _quiet(fn, argv):
    """Runs a command's main function in this process; returns (exit status, stdout,
    stderr) as a string pair."""
    import io
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = fn(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.slow
@pytest.mark.cluster
def test_thirty_jobs_through_a_killed_worker_and_a_restarted_scheduler(tmp_path):
    start = time.monotonic()
    data_dir, cluster_dir = tmp_path / "data", tmp_path / "cluster"
    data_dir.mkdir()
    cluster_dir.mkdir()
    files = []
    for k in range(3):
        path = data_dir / f"train{k}.svm"
        dlinear.write_libsvm(path, make_rcv1_like(4000 + 1000 * k, n_features=1000,
                                                  n_classes=2 + k, nnz_per_row=30, seed=k))
        files.append(path)
    # the reference models, trained here (first: the workers then load the kernels
    # compiled here from Numba's cache)
    jobs, reference = {}, {}
    for j in range(N_JOBS):
        name = f"job{j:02d}"
        options, train = OPTIONS[j % len(OPTIONS)], files[(j // len(OPTIONS)) % len(files)]
        jobs[name] = (options, train, data_dir / f"{name}.model")
        key = (tuple(options), train)
        if key not in reference:
            params = parse_train_args([*options, str(train), "m"])[0]
            target = data_dir / f"reference{len(reference)}.model"
            dlinear.save_model(target, dlinear.train(dlinear.read_libsvm(train), params))
            reference[key] = target.read_bytes()
    expected = {name: reference[(tuple(o), t)] for name, (o, t, _) in jobs.items()}

    cluster = Supervised(cluster_dir, 2)
    seen_done, events = set(), []

    def check_models(states):
        """No model file is ever partial; a job reported done has its exact model."""
        for name, (_, _, model) in jobs.items():
            if model.exists():
                assert model.read_bytes() == expected[name], f"{name}: a wrong or partial model"
        for name, state in (states or {}).items():
            if state and state.startswith("done "):
                assert state.startswith(f"done {jobs[name][2]} in "), state
                assert jobs[name][2].read_bytes() == expected[name], f"{name} done, no model"
                seen_done.add(name)

    def submit(name):
        options, train, model = jobs[name]
        code, _, err = _quiet(submit_main, ["--scheduler", cluster.address, "--name", name,
                                            "-q", *options, str(train), str(model)])
        assert code == 0 and err == "", err

    def submit_quietly(name):
        """dlinear-submit -q from a thread (no output to catch: it says nothing)."""
        options, train, model = jobs[name]
        return submit_main(["--scheduler", cluster.address, "--name", name, "-q", *options,
                            str(train), str(model)])

    def watch_until(condition, what, limit):
        deadline = min(time.monotonic() + limit, start + DEADLINE)
        while True:
            cluster.restart_exited_workers()
            states = _job_states(cluster.address, jobs)
            check_models(states)
            if states is not None and condition(states):
                return states
            assert time.monotonic() < deadline, f"timed out waiting for {what}: {states}"
            time.sleep(0.5)

    def ended(state):
        return state is not None and state.split(" ", 1)[0] in ("done", "failed")

    try:
        cluster.start_scheduler()
        for i in range(len(cluster.workers)):
            cluster.start_worker(i)
        cluster.wait_for_workers()
        early, late = list(jobs)[:-LATE_JOBS], list(jobs)[-LATE_JOBS:]
        with ThreadPoolExecutor(8) as pool:       # at once: 8 dlinear-submit at a time
            codes = list(pool.map(submit_quietly, early))
        assert codes == [0] * len(early)
        events.append(f"submitted {len(early)} jobs at {time.monotonic() - start:.0f} s")

        # a worker killed mid-run and started again
        watch_until(lambda s: sum(map(ended, s.values())) >= 1, "a job to end", 180)
        cluster.kill(cluster.workers[0])
        cluster.start_worker(0)
        events.append(f"killed and restarted worker 0 at {time.monotonic() - start:.0f} s")

        # the scheduler killed and started again on its address, with jobs still to run:
        # the last ones submitted to paused workers (the early ones could all have ended
        # between two looks at their states)
        watch_until(lambda s: sum(map(ended, s.values())) >= 5, "5 jobs to end", 180)
        cluster.wait_for_workers(status="paused", pause=True)
        with ThreadPoolExecutor(8) as pool:
            codes = list(pool.map(submit_quietly, late))
        assert codes == [0] * len(late)
        events.append(f"paused the workers, submitted {len(late)} more jobs at "
                      f"{time.monotonic() - start:.0f} s")
        states = watch_until(lambda s: True, "the jobs' states", 60)
        unfinished = [n for n, s in states.items() if not ended(s)]
        assert set(late) <= set(unfinished), states
        # a dlinear-status --wait on a job that the restart will lose
        waiting = subprocess.Popen(
            [_command("dlinear-status"), late[0], "--scheduler", cluster.address,
             "--wait", "300", "--connect-timeout", "2"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cluster.env)
        time.sleep(1.0)
        cluster.kill(cluster.scheduler)
        # meanwhile dlinear-status fails in bounded time, in one line
        code, _, err = _quiet(status_main, ["job00", "--scheduler", cluster.address,
                                            "--connect-timeout", "1"])
        assert code == 3 and err.startswith("ERROR: can't connect") and err.count("\n") == 1
        cluster.start_scheduler()
        events.append(f"restarted the scheduler at {time.monotonic() - start:.0f} s with "
                      f"{len(unfinished)} jobs unfinished")
        # a worker ends when its scheduler goes away; the supervisor starts it again (one
        # started just before the restart may join the new scheduler instead)
        watch_until(lambda s: True, "the new scheduler", 60)
        cluster.wait_for_workers()

        # the waiting dlinear-status ends (in one line) rather than wait for a lost job
        out, err = waiting.communicate(timeout=120)
        # its job, queued on paused workers, was lost: "no such job" once it reached the new
        # scheduler, "can't connect" if it first asked as the old one went, "lost the Dask
        # scheduler" if its client gave up on the old one; one line each way, no log of
        # Dask's tries to reconnect
        assert waiting.returncode == 3, (out, err)
        assert out == "" and err.startswith("ERROR: ") and err.count("\n") == 1, err
        events.append(f"a waiting dlinear-status ended with {waiting.returncode}: "
                      f"{(out + err).strip()[:90]}")

        # after the restart: each job is done, failed with a reason, or unknown (then
        # submitted again by name)
        verdicts = {}
        for name in jobs:
            code, out, err = _quiet(status_main, [name, "--scheduler", cluster.address])
            if code == 3:
                assert f"no such job '{name}'" in err, err
                submit(name)
            else:
                assert code in (0, 1, 2), (name, code, out, err)
            verdicts[name] = code
        events.append("after the restart: " + ", ".join(
            f"{sum(v == c for v in verdicts.values())} {label}"
            for c, label in ((0, "done"), (1, "failed"), (2, "running"), (3, "resubmitted"))))

        # every job ends, none hangs
        watch_until(lambda s: all(map(ended, s.values())), "every job to end",
                    DEADLINE)
        for name in jobs:
            code, out, err = _quiet(status_main, [name, "--scheduler", cluster.address])
            state = out.strip()
            if code == 0:
                assert state.startswith(f"done {jobs[name][2]} in ")
                assert jobs[name][2].read_bytes() == expected[name]
            else:
                assert code == 1, (name, code, out, err)
                assert state.startswith("failed ") and len(state) > len("failed ") + 10
                assert "\n" not in state
            verdicts[name] = state.split(" ", 1)[0]
        check_models(None)
        events.append(f"in the end: {sum(v == 'done' for v in verdicts.values())} done, "
                      f"{sum(v == 'failed' for v in verdicts.values())} failed, "
                      f"{time.monotonic() - start:.0f} s")
    finally:
        cluster.stop()
    print("\n".join(events))
    leftovers = sorted(p.name for p in data_dir.glob(".*.part"))
    print(f"temporary files left by killed writers: {leftovers}")
    assert all(not p.name.endswith(".model") or p.name.startswith(("job", "reference"))
               for p in data_dir.iterdir())
