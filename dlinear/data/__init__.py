"""Data in and out: LIBSVM text (read and written), the binary dataset format, opening local
and remote inputs, atomic output files, and the occurring-columns view of wide data."""

__all__ = ["Problem", "read_libsvm", "write_libsvm", "read_binary", "convert_libsvm"]

# loaded on first use: dlinear.data.fileio (atomic outputs, a command's first check) needs
# none of the Numba readers
_HOME = {"Problem": "..problem", "read_libsvm": ".libsvm_reader",
         "write_libsvm": ".libsvm_writer", "read_binary": ".binary_format",
         "convert_libsvm": ".binary_format"}


def __getattr__(name):
    import importlib
    if name not in _HOME:
        try:        # a module of the package not imported yet
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(_HOME[name], __name__), name)
    globals()[name] = value
    return value
