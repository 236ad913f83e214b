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

TRAIN_ONCE = """
import numpy as np, scipy.sparse as sp, dlinear
from dlinear.kernels import dual_cd_svc
X = sp.random(40, 10, density=0.3, format="csr", random_state=0)
y = np.where(np.arange(40) % 2, 1.0, -1.0)
dlinear.train(dlinear.Problem.from_arrays(X, y), dlinear.Params(solver_type=1))
print(dual_cd_svc.__file__)
"""


@pytest.mark.slow
def test_kernel_cache_goes_to_the_user_cache_dir_not_the_package(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    before = {p: p.stat().st_mtime for p in PACKAGE_DIR.rglob("*.nb[ic]")}
    r = subprocess.run([sys.executable, "-c", TRAIN_ONCE], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    cached = list((tmp_path / "dlinear" / "numba").rglob("*.nbi"))
    assert any(p.name.startswith("dual_cd_svc.") for p in cached), cached
    after = {p: p.stat().st_mtime for p in PACKAGE_DIR.rglob("*.nb[ic]")}
    assert after == before, "Numba wrote cache files into the package directory"


@pytest.mark.slow
def test_numba_cache_dir_set_by_the_user_still_wins(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "mine"),
               XDG_CACHE_HOME=str(tmp_path / "xdg"))
    r = subprocess.run([sys.executable, "-c", TRAIN_ONCE], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert list((tmp_path / "mine").rglob("dual_cd_svc.*.nbi"))
    assert not (tmp_path / "xdg" / "dlinear").exists()
