"""Data in and out: LIBSVM text (read and written), the binary dataset format, opening local
and remote inputs, atomic output files, and the occurring-columns view of wide data."""
from ..problem import Problem
from .binary_format import convert_libsvm, read_binary
from .libsvm_reader import read_libsvm
from .libsvm_writer import write_libsvm

__all__ = ["Problem", "read_libsvm", "write_libsvm", "read_binary", "convert_libsvm"]
