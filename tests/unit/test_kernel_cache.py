"""The kernels' on-disk cache: a kernel's cached machine code holds what it calls and
inlines from other files, so its stamp covers every kernel source, not just its own."""
import inspect

from dlinear.kernels import KERNELS_DIR, DlinearCacheLocator, kernel_sources_digest
from dlinear.kernels.dual_cd_lr import one_variable_newton
from dlinear.kernels.local_dual_cd import lr_local_sweep_part


def test_the_digest_follows_every_source_file(tmp_path):
    digest = kernel_sources_digest.__wrapped__
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    (tmp_path / "notes.txt").write_text("not a source\n")
    before = digest(str(tmp_path))
    (tmp_path / "notes.txt").write_text("changed, still not a source\n")
    assert digest(str(tmp_path)) == before
    (tmp_path / "b.py").write_text("y = 3\n")
    assert digest(str(tmp_path)) != before


def test_a_kernel_is_stamped_with_the_sources_it_inlines():
    # lr_local_sweep_part inlines one_variable_newton, defined in another file
    assert inspect.getfile(one_variable_newton.py_func) != \
        inspect.getfile(lr_local_sweep_part.py_func)
    func = lr_local_sweep_part.py_func
    locator = DlinearCacheLocator.from_function(func, inspect.getfile(func))
    own_file, sources = locator.get_source_stamp()
    assert sources == kernel_sources_digest(KERNELS_DIR)
    assert own_file    # Numba's own stamp of the defining file stays part of it


def test_the_stamp_holds_under_numba_cache_dir_too(tmp_path, monkeypatch):
    """NUMBA_CACHE_DIR moves the cache; the kernels are still stamped with every source."""
    from numba.core import config
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path))
    func = lr_local_sweep_part.py_func
    locator = DlinearCacheLocator.from_function(func, inspect.getfile(func))
    assert locator.get_cache_path().startswith(str(tmp_path))
    assert locator.get_source_stamp()[1] == kernel_sources_digest(KERNELS_DIR)


def test_every_kernel_has_its_own_name():
    """Numba names a kernel's cached machine code and environment after its qualified name
    and a per-process counter: two kernels of one name compiled in different runs clash
    when both are loaded from the cache into one process (the reader's general and
    fast-path parsers did: a SystemError on reading)."""
    import importlib
    import pkgutil

    import dlinear.kernels
    from numba.core.registry import CPUDispatcher
    names = {}
    for info in pkgutil.iter_modules(dlinear.kernels.__path__):
        module = importlib.import_module(f"dlinear.kernels.{info.name}")
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__:
                key = (module.__name__, value.py_func.__qualname__)
                names.setdefault(key, set()).add(id(value))
    assert ("dlinear.kernels.libsvm", "_libsvm_parser.<locals>.parse_into_general") in names
    assert {key: len(ids) for key, ids in names.items() if len(ids) > 1} == {}
