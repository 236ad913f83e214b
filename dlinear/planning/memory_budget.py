"""The memory budget of a fit in this process, and whether the data fits it.

By default the budget is the memory free to this process: the smaller of the memory
available (/proc/meminfo MemAvailable) and what the memory limit of the process's own
cgroup (v1 memory.limit_in_bytes, v2 memory.max, of its group or an ancestor: what
Docker, Kubernetes and Slurm set) leaves beside the process's resident memory;
dlinear-train --memory SIZE and dlinear.train(..., memory=SIZE) replace it.

A fit holds the CSR arrays (values, column indices, row pointers, labels and weights), a
few vectors a row (dual variables, their diagonal, the order of the rows) and a few a
column (w, the Newton steps' gradient and directions). Data whose estimate exceeds the
budget trains out of core where it can (in_process.out_of_core) and is otherwise
refused in one line before it is read.
"""
from __future__ import annotations

import numbers
import os
import re
from dataclasses import dataclass
from typing import Optional

from ..errors import DlinearError

# The state a fit keeps beside the CSR (float64 vectors): per row, dual CD's alpha, its
# diagonal Q_ii, the permuted row order and the signed label, or Newton's margins, D and
# the Hessian product's row terms (3-4 vectors); per occurring column, w and Newton's
# gradient, direction, residual, CG product and preconditioner (6 vectors) plus the
# column map of a fit on the columns that occur.
ROW_STATE_BYTES = 4 * 8
COLUMN_STATE_BYTES = 8 * 8

# A cgroup limit holds the process as well as the fit: the budget under one leaves the
# process's resident memory and this for what grows beside the fit (kernels loaded or
# compiled on the way, a pass's temporaries)
PROCESS_MARGIN = 64 << 20

# A cgroup limit at or above this is "no limit" (v1 writes 2**63 - 4096 for none).
UNLIMITED = 1 << 60

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*([KMGT]?)(I?B)?\s*$",
                   re.IGNORECASE)


def parse_size(text, option: str = "--memory") -> int:
    """Bytes from a size: a number of bytes, or with a suffix K, M, G or T (powers of
    1024, as Docker's --memory and Slurm's --mem; "B" or "iB" may follow: 800M, 2G,
    1.5GB, 512MiB). A bad size is a DlinearError naming `option`."""
    if isinstance(text, numbers.Integral) and not isinstance(text, bool):
        value = int(text)
    else:
        match = _SIZE.match(str(text)) if isinstance(text, str) else None
        if match is None:
            raise DlinearError(f"option {option} needs a size such as 800M, 2G or 1.5GB "
                               f"(bytes, or K, M, G, T: powers of 1024), got {text!r}")
        value = int(float(match.group(1)) * _UNITS[match.group(2).upper()])
    if value <= 0:
        raise DlinearError(f"option {option} needs a size > 0, got {text!r}")
    return value


def format_size(n: int) -> str:
    """1.5 GiB, 800 MiB: a size for the messages."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def available_ram(root: str = "/") -> Optional[int]:
    """MemAvailable of root/proc/meminfo in bytes (None where there is none)."""
    try:
        with open(os.path.join(root, "proc/meminfo")) as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


@dataclass(frozen=True)
class CgroupLimit:
    bytes: int
    file: str          # the limit file that set it (the smallest on the way up)


def cgroup_limit(root: str = "/") -> Optional[CgroupLimit]:
    """The memory limit of this process's cgroup, the smallest of its group's and its
    ancestors' (a child cannot use more than its parent allows): v1's
    memory.limit_in_bytes and v2's memory.max, found through root/proc/self/cgroup and
    root/proc/self/mountinfo. None without a limit (or a cgroup filesystem to read)."""
    try:
        with open(os.path.join(root, "proc/self/cgroup")) as f:
            groups = [line.rstrip("\n").split(":", 2) for line in f if line.count(":") >= 2]
        with open(os.path.join(root, "proc/self/mountinfo")) as f:
            mounts = [line.split() for line in f]
    except OSError:
        return None
    found = []
    for hierarchy, controllers, group in groups:
        v2 = hierarchy == "0" and controllers == ""
        if not v2 and "memory" not in controllers.split(","):
            continue
        for mount_root, mount_point in _cgroup_mounts(mounts, v2):
            limit = _smallest_limit(root, mount_root, mount_point, group,
                                    "memory.max" if v2 else "memory.limit_in_bytes")
            if limit is not None:
                found.append(limit)
    return min(found, key=lambda c: c.bytes) if found else None


def _cgroup_mounts(mounts, v2: bool):
    """(hierarchy root, mount point) of each mount of the memory controller (v1) or of
    the unified hierarchy (v2). A mountinfo line: id parent dev root point options
    [optional...] - fstype source super_options."""
    for fields in mounts:
        if "-" not in fields:
            continue
        dash = fields.index("-")
        if dash < 5 or len(fields) < dash + 2:
            continue
        fstype = fields[dash + 1]
        options = fields[dash + 3].split(",") if len(fields) > dash + 3 else []
        if v2 and fstype == "cgroup2":
            yield fields[3], fields[4]
        elif not v2 and fstype == "cgroup" and "memory" in options:
            yield fields[3], fields[4]


def _smallest_limit(root, mount_root, mount_point, group, name) -> Optional[CgroupLimit]:
    """The smallest limit file `name` from the group's directory up to the mount point.
    The group's path is relative to the hierarchy's root, of which the mount shows the
    subtree mount_root (a container sees its own group as /)."""
    group = "/" + group.strip("/")
    mount_root = "/" + mount_root.strip("/")
    if mount_root != "/" and group != mount_root and not group.startswith(mount_root + "/"):
        return None
    relative = group[len(mount_root):] if mount_root != "/" else group
    base = os.path.join(root, mount_point.lstrip("/"))
    parts = [p for p in relative.split("/") if p]
    best = None
    for depth in range(len(parts), -1, -1):
        directory = os.path.join(base, *parts[:depth])
        value = _read_limit(os.path.join(directory, name))
        if value is not None and value < UNLIMITED and (best is None or value < best.bytes):
            best = CgroupLimit(value, os.path.join(mount_point, *parts[:depth], name))
    return best


def _read_limit(path) -> Optional[int]:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    if text == "max":
        return None
    try:
        return int(text)
    except ValueError:
        return None


@dataclass(frozen=True)
class Budget:
    """The bytes a fit in this process may hold, and where the number comes from."""
    bytes: int
    source: str

    def describe(self) -> str:
        return f"memory budget {format_size(self.bytes)} ({self.source})"


def memory_budget(requested=None, option: str = "--memory", root: str = "/") -> Budget:
    """The bytes a fit may add to this process: `requested` (a size for parse_size,
    given as `option`), else the smaller of the available RAM and what the cgroup limit
    leaves free (both read under `root`): the limit less the process's resident memory
    and PROCESS_MARGIN."""
    if requested is not None:
        return Budget(parse_size(requested, option), option)
    ram, limit = available_ram(root), cgroup_limit(root)
    if limit is not None:
        # what the limit leaves free, as MemAvailable is what the machine leaves free
        own = process_bytes(root) + PROCESS_MARGIN
        if ram is None or limit.bytes - own <= ram:
            return Budget(max(limit.bytes - own, 0),
                          f"the cgroup limit {limit.file} less {format_size(own)} for "
                          f"this process itself")
    if ram is not None:
        return Budget(ram, "the available RAM")
    return Budget(UNLIMITED, "no limit found")


def process_bytes(root: str = "/") -> int:
    """This process's resident memory now (root/proc/self/statm), 0 where unreadable."""
    try:
        with open(os.path.join(root, "proc/self/statm")) as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def fit_bytes(n_samples: int, nnz: int, occurring_columns: int, value_bytes: int = 8,
              index_bytes: int = 4, weights: bool = False, problems_at_once: int = 1) -> int:
    """Estimated bytes of a fit in this process: the CSR as it holds it (values and
    column indices a nonzero, row pointer, label and weight a row) and the per-row and
    per-column state of `problems_at_once` problems trained at the same time."""
    csr = nnz * (value_bytes + index_bytes) + n_samples * (8 + 8 + 8 * weights) + 8
    state = problems_at_once * (ROW_STATE_BYTES * n_samples
                                + COLUMN_STATE_BYTES * occurring_columns)
    return int(csr + state)


def check_fits(need: int, budget: Budget, what: str, held: int = 0, hint: str = "") -> None:
    """Refuse, in one line, data whose fit needs more than the budget. `held`: bytes of
    it already in this process's memory (data passed in from Python), not counted against
    the available RAM again; `hint`: what else would train it."""
    if need - held <= budget.bytes:
        return
    raise DlinearError(
        f"{what}: training in memory needs about {format_size(need)}, over the "
        f"{budget.describe()}: it needs a budget of at least {format_size(need)} (more "
        f"memory, or --memory or memory= in Python), or a Dask cluster (--scheduler)"
        f"{hint}")
