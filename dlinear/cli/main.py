"""python -m dlinear: the train, predict, convert and make-data commands under one name,
and `convert` (a LIBSVM file parsed once into a binary dataset directory)."""
from __future__ import annotations

import sys

import numpy as np

from ..data.binary_format import convert_libsvm
from .train_predict import parse_storage_option, predict_main, train_main
from .exit import UsageError, _HelpRequested, _print_usage, command_line, exit_status
from .inputs import read_weight_file


MAIN_USAGE = (
    "usage: python -m dlinear {train,predict,convert,make-data} ...\n"
    "  train      train a model (as dlinear-train; train -h for its options)\n"
    "  predict    predict with a model (as dlinear-predict; predict -h)\n"
    "  convert    parse a LIBSVM file once into a binary dataset (convert -h)\n"
    "  make-data  write a synthetic LIBSVM data set (make-data -h)\n"
    "  --version  print dlinear's version\n"
)


CONVERT_USAGE = (
    "Usage: python -m dlinear convert [options] libsvm_file dataset_directory\n"
    "Parses a LIBSVM file once into a binary dataset directory (NumPy arrays and a JSON\n"
    "header) that dlinear-train, dlinear-predict and the cluster read without parsing.\n"
    "options:\n"
    "-W weight_file : instance weights, one per line, stored with the rows\n"
    "--float32 : store the values in 4 bytes instead of 8, and the column indices in 2\n"
    "\tinstead of 4 where the columns fit (at most 65,536), as dlinear-train --float32\n"
    "\treads text; dlinear-train reads the dataset with float32 values\n"
    "--storage-option key=value : an fsspec option for an s3://, gs://... libsvm_file\n"
    "-q : quiet mode (no outputs)\n"
)


def convert_main(argv=None) -> int:
    return command_line(argv, _convert_command, "dlinear", CONVERT_USAGE)


def _convert_command(argv: list[str]) -> int:
    quiet, weight_file, storage_options, dtype, i = False, None, {}, np.float64, 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        if argv[i] in ("-h", "--help"):
            raise _HelpRequested
        if argv[i] == "-q":
            quiet, i = True, i + 1
        elif argv[i] == "--float32":
            dtype, i = np.float32, i + 1
        elif argv[i] in ("-W", "--storage-option") and i + 1 < len(argv):
            if argv[i] == "-W":
                weight_file = argv[i + 1]
            else:
                parse_storage_option(argv[i + 1], storage_options)
            i += 2
        else:
            raise UsageError(f"unknown option or missing value: {argv[i]}")
    if len(argv) - i != 2:
        raise UsageError("expected: libsvm_file dataset_directory")
    source, target = argv[i:]
    weights = read_weight_file(weight_file) if weight_file else None
    header = convert_libsvm(source, target, weights=weights,
                            storage_options=storage_options or None, dtype=dtype)
    if not quiet:
        print(f"{target}: {header.rows} rows, {header.nnz} nonzeros, "
              f"{header.n_features} features ({header.occurring_columns} occurring), "
              f"{len(header.parts)} parts, {header.label_type} labels, "
              f"{header.dtype('data').name} values, {header.dtype('indices').name} indices"
              + (", weights" if header.weights else ""))
    return 0


def main(argv=None) -> int:
    """python -m dlinear train|predict|convert|make-data ..."""
    argv = sys.argv[1:] if argv is None else argv
    commands = {"train": train_main, "predict": predict_main, "convert": convert_main}
    if argv and argv[0] in ("-h", "--help"):
        return _print_usage(MAIN_USAGE, 0)
    if argv and argv[0] == "--version":
        from .. import __version__
        print(f"dlinear {__version__}")
        return 0
    if not argv or argv[0] not in ("train", "predict", "convert", "make-data"):
        return _print_usage(MAIN_USAGE, 1)
    if argv[0] == "make-data":
        from ..datasets.rcv1_like import main as make_data_main
        return exit_status(lambda: make_data_main(argv[1:]) or 0)
    return commands[argv[0]](argv[1:])
