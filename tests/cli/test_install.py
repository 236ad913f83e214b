"""Where dlinear's compiled kernels are cached: never inside the installed package.

Numba's default cache sits next to the sources. After `pip install .`, those files are not
in the wheel's RECORD, so uninstalling (as `pip install -e .` does) leaves a
site-packages/dlinear/ behind that shadows the editable install (issue #13).
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import dlinear

PACKAGE_DIR = Path(dlinear.__file__).resolve().parent

# one of dlinear's kernels run once (a small one: a training run compiles for seconds)
KERNEL_ONCE = """
import dlinear
from dlinear.kernels.rng import seed_state
seed_state(1)
"""


@pytest.mark.slow
def test_kernel_cache_goes_to_the_user_cache_dir_not_the_package(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    before = {p: p.stat().st_mtime for p in PACKAGE_DIR.rglob("*.nb[ic]")}
    r = subprocess.run([sys.executable, "-c", KERNEL_ONCE], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    cached = list((tmp_path / "dlinear" / "numba").rglob("*.nbi"))
    assert any(p.name.startswith("rng.seed_state-") for p in cached), cached
    after = {p: p.stat().st_mtime for p in PACKAGE_DIR.rglob("*.nb[ic]")}
    assert after == before, "Numba wrote cache files into the package directory"


@pytest.mark.slow
def test_numba_cache_dir_set_by_the_user_still_wins(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "mine"),
               XDG_CACHE_HOME=str(tmp_path / "xdg"))
    r = subprocess.run([sys.executable, "-c", KERNEL_ONCE], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert list((tmp_path / "mine").rglob("rng.seed_state-*.nbi"))
    assert not (tmp_path / "xdg" / "dlinear").exists()
