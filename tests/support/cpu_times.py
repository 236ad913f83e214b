"""A pytest plugin, opt in (`-p tests.support.cpu_times`), that measures the CPU seconds of
each test: this process's and those of the processes it started (a cluster's workers, the
command lines a test runs), setup, call and teardown together. On a machine shared with
other work, wall seconds say how busy the machine was; CPU seconds say what a test costs,
which is what the `slow` marker is about.

The `slow` marker goes on a test function: it is over the line when its runs (all its
parametrizations) take more than SLOW_SECONDS together. At the end the plugin lists the
functions over the line that are not marked slow, and those marked slow under it; with
--cpu-times-json FILE it writes every test's CPU and wall seconds."""
import collections
import json
import re
import resource
import time

import psutil
import pytest

SLOW_SECONDS = 3.0      # the `slow` marker's line (pyproject.toml's markers)


def pytest_addoption(parser):
    parser.addoption("--cpu-times-json", metavar="FILE", default=None,
                     help="write each test's CPU and wall seconds to FILE (JSON)")


class CPUMeter:
    """CPU seconds of this process and its descendants between two snapshots."""

    def __init__(self):
        self.process = psutil.Process()

    def snapshot(self):
        """(this process's CPU, its reaped children's, {pid: CPU} of the live descendants)."""
        reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
        descendants = {}
        for child in self.process.children(recursive=True):
            try:
                times = child.cpu_times()
            except psutil.Error:          # ended meanwhile: counted once reaped
                continue
            descendants[child.pid] = times.user + times.system
        return time.process_time(), reaped.ru_utime + reaped.ru_stime, descendants

    @staticmethod
    def seconds(before, after):
        own0, reaped0, live0 = before
        own1, reaped1, live1 = after
        # a descendant still alive: what it used since; one that ended (and was reaped by
        # this process) is in the reaped total with its whole life, less what it had used
        # before the first snapshot
        alive = sum(cpu - live0.get(pid, 0.0) for pid, cpu in live1.items())
        ended_before = sum(cpu for pid, cpu in live0.items() if pid not in live1)
        return (own1 - own0) + alive + max(0.0, (reaped1 - reaped0) - ended_before)


class CPUTimes:
    def __init__(self, config):
        self.config = config
        self.meter = CPUMeter()
        self.results = {}           # nodeid: (CPU seconds, wall seconds, marked slow)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        before, start = self.meter.snapshot(), time.monotonic()
        yield
        cpu = self.meter.seconds(before, self.meter.snapshot())
        self.results[item.nodeid] = (cpu, time.monotonic() - start,
                                     item.get_closest_marker("slow") is not None)

    def pytest_terminal_summary(self, terminalreporter):
        write = terminalreporter.write_line
        total = sum(cpu for cpu, _, _ in self.results.values())
        terminalreporter.section("CPU seconds (this process and the processes it started)")
        write(f"{len(self.results)} tests: {total:.0f} s CPU")
        functions = collections.defaultdict(lambda: [0.0, False])
        for node, (cpu, _, slow) in self.results.items():
            function = functions[re.sub(r"\[.*\]$", "", node)]
            function[0] += cpu
            function[1] |= slow
        unmarked = sorted((cpu, name) for name, (cpu, slow) in functions.items()
                          if cpu > SLOW_SECONDS and not slow)
        overmarked = sorted((cpu, name) for name, (cpu, slow) in functions.items()
                            if cpu <= SLOW_SECONDS and slow)
        for title, rows in ((f"test functions over {SLOW_SECONDS:g} s, not marked slow",
                             unmarked),
                            (f"marked slow, at most {SLOW_SECONDS:g} s", overmarked)):
            write(f"{title}: {len(rows)}")
            for cpu, name in reversed(rows):
                write(f"  {cpu:7.1f} s  {name}")
        path = self.config.getoption("--cpu-times-json")
        if path:
            with open(path, "w") as out:
                json.dump({node: {"cpu": cpu, "wall": wall, "slow": slow}
                           for node, (cpu, wall, slow) in self.results.items()},
                          out, indent=1, sort_keys=True)


def pytest_configure(config):
    config.pluginmanager.register(CPUTimes(config), "cpu_times_report")
