"""Fuzzed inputs through the real entry points (issue #25, part 4).

Hypothesis mutates valid LIBSVM training files, model files, weight files (-W) and
option lists, and runs them through dlinear.cli's train_main and predict_main in this
process and through dlinear.data.libsvm_reader.read_libsvm and dlinear.model.load_model. The contract
for every case: exit 0, or exit 1 with ONE line on stderr ("ERROR: ..." naming the file
and line, or the option, at fault); no traceback, no crash, no hang, and after an error
no file besides the inputs (no model, no output, no temporary file).

The tests run a fixed number of cases from a fixed seed; scripts/tools/fuzz_inputs.py runs them
for longer (DLINEAR_FUZZ_CASES cases per test, DLINEAR_FUZZ_SEED, DLINEAR_FUZZ_HANG_SECONDS;
DLINEAR_FUZZ_LAST names a file that holds the case running, for a hang or a crash).
"""
from __future__ import annotations

import contextlib
import faulthandler
import io
import os
import re
import sys
import tempfile
import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from dlinear.cli.train_predict import predict_main, train_main  # noqa: E402
from dlinear.data.libsvm_reader import read_libsvm  # noqa: E402
from dlinear.errors import DlinearError  # noqa: E402
from dlinear.model import load_model  # noqa: E402

CASES = int(os.environ.get("DLINEAR_FUZZ_CASES", "60"))
SEED = int(os.environ.get("DLINEAR_FUZZ_SEED", "20251124"))
# A case that runs longer than this is a hang: faulthandler prints every thread's stack
# and ends the process (a Numba kernel in a loop cannot be interrupted by a signal).
HANG_SECONDS = float(os.environ.get("DLINEAR_FUZZ_HANG_SECONDS", "120"))

FUZZ = settings(max_examples=CASES, deadline=None, database=None, derandomize=False,
                suppress_health_check=list(HealthCheck), print_blob=True)


def fuzz(test):
    return hypothesis.seed(SEED)(FUZZ(test))


@pytest.fixture(autouse=True, scope="module")
def _no_cluster():
    """The fuzzed options never reach a cluster: no scheduler from the environment."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("DLINEAR_SCHEDULER", raising=False)
        yield


# ------------------------------------------------------------------ the contract

def _record_case(argv):
    """DLINEAR_FUZZ_LAST=path: the case about to run (its arguments and the files they
    name), so that a hang or a crash, which end the process, leave it behind."""
    path = os.environ.get("DLINEAR_FUZZ_LAST")
    if not path:
        return
    with open(path, "w") as f:
        f.write(repr(argv) + "\n")
        for arg in argv:
            if os.path.isfile(arg):
                f.write(f"--- {arg}\n{open(arg, 'rb').read()!r}\n")


def run(main, argv):
    """main(argv) with stdout and stderr captured: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    _record_case(argv)
    # to the process's own stderr: pytest's capture would lose it when the process ends
    faulthandler.dump_traceback_later(HANG_SECONDS, exit=True, file=sys.__stderr__)
    try:
        # a warning the CLI lets through would be Python's display on its stderr
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code = main(argv)
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert not caught, [str(w.message) for w in caught]
    return code, out.getvalue(), err.getvalue()


def check_outcome(code, out, err, directory, inputs, names=()):
    """Exit 0, or exit 1 with one "ERROR: " line naming one of `names` (file names or
    options; any of them) and nothing left in `directory` besides `inputs`."""
    assert "Traceback" not in out + err, err
    # LIBLINEAR's warnings are lines of their own, not Python's warning display
    assert not re.search(r"\.py:\d+: \w*Warning", err), err
    assert code in (0, 1), (code, err)
    if code == 1:
        lines = err.splitlines()
        # no arguments at all: the usage text, as LIBLINEAR's train and predict
        if err.startswith("Usage: "):
            return code
        assert len(lines) == 1 and lines[0].startswith("ERROR: "), err
        if names:
            assert any(name in lines[0] for name in names), (names, lines[0])
        left = sorted(set(os.listdir(directory)) - set(inputs))
        assert not left, f"left behind after an error: {left}"
    return code


def check_file_error(message, path):
    """A reader's error about a file's content names the file, a line and the problem."""
    assert path in message, message
    if "can't open" not in message:
        assert re.search(rf"{re.escape(path)}: (line \d+: )?\S", message), message


# ------------------------------------------------------------------ mutations

def _tokens(*groups):
    return [t for g in groups for t in g]


INDEX_TEXT = ["0", "1", "2", "3", "7", "-1", "+2", "01", "1.0", "1e1", "0x2", "2147483646",
              "2147483647", "2147483648", "4294967297", "99999999999999999999", "", " 1",
              "١", "1_0"]
VALUE_TEXT = ["0", "1", "-1", "0.5", "-0", "+3", ".5", "5.", "1e-3", "nan", "NaN", "inf",
              "-inf", "Infinity", "1e308", "1e309", "-1e400", "1e-320", "4.9e-324",
              "2.2250738585072014e-308", "123456789012345678901234567890", "0x1p3", "1_000",
              ".", "-", "+", "e", "1e", "1e+", "--1", "1,5", "1..2", ""]
EXTRA_TEXT = ["qid:3", "qid:x", "qid:", "#", "# comment", ":", "::", "1::2", "1:2:3", "\t",
              "\r", "\r\n", "\n", "\n\n", "\x00", "\x0b", "\x0c", "\xe9", " ", "  "]


@st.composite
def feature_token(draw):
    return f"{draw(st.sampled_from(INDEX_TEXT))}:{draw(st.sampled_from(VALUE_TEXT))}"


TOKEN = st.one_of(feature_token(), st.sampled_from(VALUE_TEXT), st.sampled_from(EXTRA_TEXT))

# A mutation: (kind, position, argument); positions are taken modulo the text's size.
MUTATION = st.one_of(
    st.tuples(st.just("replace_token"), st.integers(0, 10**6), TOKEN),
    st.tuples(st.just("insert_token"), st.integers(0, 10**6), TOKEN),
    st.tuples(st.just("delete_token"), st.integers(0, 10**6), st.none()),
    st.tuples(st.just("replace_byte"), st.integers(0, 10**6), st.integers(0, 255)),
    st.tuples(st.just("insert_bytes"), st.integers(0, 10**6), st.binary(min_size=1,
                                                                          max_size=4)),
    st.tuples(st.just("delete_span"), st.integers(0, 10**6), st.integers(1, 12)),
    st.tuples(st.just("duplicate_line"), st.integers(0, 10**6), st.none()),
    st.tuples(st.just("swap_lines"), st.integers(0, 10**6), st.integers(0, 10**6)),
    st.tuples(st.just("truncate"), st.integers(0, 10**6), st.none()),
)


def mutate(text: bytes, mutations) -> bytes:
    """text with the mutations applied in order (tokens are blank-separated runs)."""
    for kind, at, arg in mutations:
        if kind in ("replace_token", "insert_token", "delete_token"):
            spans = [m.span() for m in re.finditer(rb"[^ \t\n]+", text)]
            if not spans:
                text += arg.encode("utf-8") if arg is not None else b""
                continue
            start, end = spans[at % len(spans)]
            new = b"" if arg is None else arg.encode("utf-8")
            if kind == "replace_token":
                text = text[:start] + new + text[end:]
            elif kind == "insert_token":
                text = text[:start] + new + b" " + text[start:]
            else:
                text = text[:start] + text[end:]
        elif kind == "replace_byte" and text:
            i = at % len(text)
            text = text[:i] + bytes([arg]) + text[i + 1:]
        elif kind == "insert_bytes":
            i = at % (len(text) + 1)
            text = text[:i] + arg + text[i:]
        elif kind == "delete_span" and text:
            i = at % len(text)
            text = text[:i] + text[i + arg:]
        elif kind == "duplicate_line":
            lines = text.split(b"\n")
            i = at % len(lines)
            text = b"\n".join(lines[:i + 1] + lines[i:])
        elif kind == "swap_lines":
            lines = text.split(b"\n")
            i, j = at % len(lines), arg % len(lines)
            lines[i], lines[j] = lines[j], lines[i]
            text = b"\n".join(lines)
        elif kind == "truncate":
            text = text[:at % (len(text) + 1)]
    return text


MUTATIONS = st.lists(MUTATION, min_size=0, max_size=5)


@st.composite
def libsvm_text(draw, kind="classification"):
    """A valid LIBSVM file of 2 to 10 rows over features 1..6."""
    n_rows = draw(st.integers(2, 10))
    lines = []
    for _ in range(n_rows):
        if kind == "regression":
            label = draw(st.sampled_from(["0.5", "-1.25", "3", "0", "2e-2"]))
        else:
            label = draw(st.sampled_from(["1", "-1", "2", "3"]))
        features = draw(st.lists(st.integers(1, 6), unique=True, max_size=6))
        values = [draw(st.sampled_from(["1", "-1", "0.5", "0.25", "-2", "0", "3e-1"]))
                  for _ in features]
        lines.append(" ".join([label] + [f"{j}:{v}" for j, v in zip(sorted(features),
                                                                      values)]))
    return ("\n".join(lines) + "\n").encode("ascii")


# Solvers with the options a mutated training file meets (all valid and fast on 10 rows).
SOLVER_OPTIONS = [["-s", "0"], ["-s", "0", "-B", "1", "-R"], ["-s", "1"], ["-s", "1", "-B", "1"],
                  ["-s", "1", "-B", "1", "-R"], ["-s", "2"], ["-s", "2", "--primal-cd"],
                  ["-s", "3", "--cd-block", "2"], ["-s", "3", "--online"], ["-s", "4"],
                  ["-s", "5"], ["-s", "6", "-B", "1"], ["-s", "7"], ["-s", "11"], ["-s", "12"],
                  ["-s", "13"], ["-s", "21"], ["-s", "0", "--multinomial"], ["-s", "2", "-v", "3"],
                  ["-s", "1", "-C"], ["-s", "0", "-w1", "2", "-w3", "0.5"],
                  ["-s", "6", "--l1-ratio", "0.5"]]
REGRESSION = {"11", "12", "13"}


def write(directory, name, content: bytes) -> str:
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(content)
    return path


def check_problem(problem):
    """What the kernels may assume of a Problem read_libsvm returns."""
    l = problem.n_samples
    assert problem.indptr[0] == 0 and len(problem.y) == l
    assert np.all(np.diff(problem.indptr) >= 0)
    nnz = problem.nnz
    assert len(problem.indices) == len(problem.data) == nnz
    assert np.all(np.isfinite(problem.data)) and np.all(np.isfinite(problem.y))
    if nnz:
        assert problem.indices.min() >= 0 and problem.indices.max() < problem.n_features
    for i in range(l):
        row = problem.indices[problem.indptr[i]:problem.indptr[i + 1]]
        assert np.all(np.diff(row) > 0)


def read_checked(path):
    """read_libsvm(path): a Problem that holds the kernels' assumptions, or a DlinearError
    naming the file and line; None after an error."""
    try:
        problem = read_libsvm(path)
    except DlinearError as e:
        check_file_error(str(e), path)
        return None
    check_problem(problem)
    return problem


# ------------------------------------------------------------------ the fuzz tests

@fuzz
@given(base=st.one_of(libsvm_text("classification"), libsvm_text("regression")),
       mutations=MUTATIONS, options=st.sampled_from(SOLVER_OPTIONS))
def test_mutated_training_files(base, mutations, options):
    with tempfile.TemporaryDirectory() as d:
        train = write(d, "train.txt", mutate(base, mutations))
        problem = read_checked(train)
        if problem is not None and problem.n_features > 10**6:
            # KNOWN (not fixed): a feature index near 2^31 makes a model of as many weights;
            # -s 4 then loops over all of them every iteration and any model file has
            # that many lines. Only the reader is checked on such a file.
            return
        model = os.path.join(d, "model")
        code = check_outcome(*run(train_main, ["-q"] + options + [train, model]), d,
                             ["train.txt"], names=[train])
        if problem is None:
            assert code == 1
        if code == 0 and os.path.exists(model):
            load_model(model)
            out = os.path.join(d, "out")
            # the training file is a good test file for its own model
            assert check_outcome(*run(predict_main, ["-q", train, model, out]), d,
                                 ["train.txt", "model"]) == 0
            assert len(open(out).read().splitlines()) == problem.n_samples


@pytest.fixture(scope="module")
def trained_models():
    """Model files of the solvers' kinds (binary, multiclass, Crammer-Singer, regression,
    one-class, multinomial, with and without bias): {name: file text}."""
    data = ("1 1:0.5 3:1\n-1 2:1 3:-0.5\n2 1:1 2:0.25 4:2\n-1 3:2\n2 1:-1 4:1\n"
            "1 2:0.5\n")
    binary = "1 1:0.5 3:1\n-1 2:1 3:-0.5\n1 1:1 2:0.25 4:2\n-1 3:2\n"
    models = {}
    with tempfile.TemporaryDirectory() as d:
        multi, two = write(d, "multi", data.encode()), write(d, "two", binary.encode())
        for name, argv in {"lr_binary_bias": ["-s", "0", "-B", "1", two],
                           "svc_multi": ["-s", "1", multi], "cs": ["-s", "4", multi],
                           "svr_bias": ["-s", "11", "-B", "1", multi],
                           "oneclass": ["-s", "21", two],
                           "multinomial": ["-s", "0", "--multinomial", multi],
                           "lr_multi": ["-s", "0", multi]}.items():
            path = os.path.join(d, name)
            assert train_main(["-q"] + argv + [path]) == 0
            models[name] = open(path, "rb").read()
    return models


MODEL_TOKENS = ["solver_type", "nr_class", "label", "nr_feature", "bias", "rho", "w",
                "L2R_LR", "L2R_L2LOSS_SVC_DUAL", "MCSVM_CS", "ONECLASS_SVM", "L2R_LR_MULTINOMIAL",
                "L2R_L2LOSS_SVR", "NOT_A_SOLVER", "0", "1", "2", "3", "-1", "-2", "1e9",
                "99999999999999999999", "2147483648", "nan", "inf", "-inf", "1e309", "0.5",
                "x", "", "\n", "\n\n", "\t", "\r", "\x00", "\xe9"]
MODEL_MUTATION = st.one_of(MUTATION, st.tuples(st.sampled_from(["replace_token",
                                                                "insert_token"]),
                                               st.integers(0, 10**6),
                                               st.sampled_from(MODEL_TOKENS)))


@fuzz
@given(which=st.sampled_from(["lr_binary_bias", "svc_multi", "cs", "svr_bias", "oneclass",
                              "multinomial", "lr_multi"]),
       mutations=st.lists(MODEL_MUTATION, max_size=4),
       test=libsvm_text("classification"), probability=st.sampled_from([[], ["-b", "1"]]))
def test_mutated_model_files(trained_models, which, mutations, test, probability):
    with tempfile.TemporaryDirectory() as d:
        model_path = write(d, "model", mutate(trained_models[which], mutations))
        test_path = write(d, "test.txt", test)
        try:
            model = load_model(model_path)
        except DlinearError as e:
            check_file_error(str(e), model_path)
            model = None
        if model is not None:
            assert model.w.shape == (model.w_size, model.nr_w)
        out = os.path.join(d, "out")
        code = check_outcome(*run(predict_main, ["-q"] + probability
                                  + [test_path, model_path, out]),
                             d, ["model", "test.txt"], names=[model_path, "probability"])
        if model is None:
            assert code == 1
        if code == 0:
            n_rows = test.count(b"\n")
            assert len(open(out).read().splitlines()) == n_rows + bool(probability)


@fuzz
@given(base=libsvm_text("classification"), mutations=MUTATIONS,
       solver=st.sampled_from([["-s", "0"], ["-s", "1"], ["-s", "3", "-B", "1", "-R"],
                               ["-s", "4"], ["-s", "5"], ["-s", "11"], ["-s", "21"],
                               ["-s", "2", "-v", "2"]]))
def test_mutated_weight_files(base, mutations, solver):
    n_rows = base.count(b"\n")
    weights = "".join(f"{v}\n" for v in np.resize([1, 0.5, 2, 0, 1e-3, 10], n_rows))
    with tempfile.TemporaryDirectory() as d:
        train = write(d, "train.txt", base)
        weight_file = write(d, "weights", mutate(weights.encode(), mutations))
        model = os.path.join(d, "model")
        check_outcome(*run(train_main, ["-q", "-W", weight_file] + solver + [train, model]),
                      d, ["train.txt", "weights"], names=[weight_file])


NUMBERS = ["0", "1", "2", "3", "5", "-1", "0.5", "1e-3", "1e3", "1e300", "1e-300", "1e309",
           "nan", "inf", "-inf", "x", "", "2.5", "0x10", "9223372036854775808",
           "99999999999999999999999", "-9223372036854775809"]
VALUED = {"-s": ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13",
                 "21", "-1", "99", "x", "1.5", "", "4294967296"],
          "-c": NUMBERS, "-p": NUMBERS, "-n": NUMBERS, "-e": NUMBERS,
          "-B": NUMBERS, "-v": ["2", "3", "100", "1", "0", "-2", "x", "1e9"],
          "-w1": NUMBERS, "-w-1": NUMBERS, "-w2": NUMBERS, "-wx": NUMBERS, "-w": NUMBERS,
          "-w99999999999999999999": ["1"],
          "--seed": NUMBERS, "--max-iter": ["1", "2", "30", "0", "-5", "x", "1.5",
                                            "9223372036854775808", "99999999999999999999"],
          "--cd-block": ["1", "2", "3", "0", "x"],
          "--max-updates": ["0", "10", "1000", "-1", "x", "9223372036854775808"],
          "--newton": ["linesearch", "tron", "x", ""],
          "--partition-rule": ["adaptive", "linesearch", "cocoa", "x"],
          "--l1-ratio": ["0", "0.5", "1", "1.5", "-0.1", "nan", "x"],
          "--workers": ["0", "-1", "x", "0.5"],
          "--storage-option": ["a=1", "=1", "a", "key={", "auto_mkdir=true"],
          "-W": ["@weights", "@missing"]}
FLAGS = ["-q", "-R", "-C", "--primal-cd", "--online", "--multinomial", "--partition",
         "--no-partition", "-x", "--bogus", "-", "--", "-h", "--version"]

OPTION = st.one_of(st.tuples(st.sampled_from(sorted(VALUED))).flatmap(
    lambda k: st.tuples(st.just(k[0]), st.sampled_from(VALUED[k[0]]))),
    st.tuples(st.sampled_from(FLAGS)))


@fuzz
@given(options=st.lists(OPTION, max_size=6),
       positional=st.sampled_from([["@train", "@model"], ["@train"], [], ["@train", "@model",
                                                                          "extra"],
                                   ["@missing", "@model"], ["@train", "@dir/model"]]),
       base=libsvm_text("classification"))
def test_fuzzed_train_options(options, positional, base):
    with tempfile.TemporaryDirectory() as d:
        train = write(d, "train.txt", base)
        weights = write(d, "weights", "1\n".encode() * base.count(b"\n"))
        paths = {"@train": train, "@model": os.path.join(d, "model"),
                 "@weights": weights, "@missing": os.path.join(d, "missing"),
                 "@dir/model": os.path.join(d, "no_dir", "model")}
        argv = ["-q"] + [paths.get(t, t) for option in options for t in option]
        argv += [paths.get(t, t) for t in positional]
        with contextlib.chdir(d):     # the default model file is written here
            code, out, err = run(train_main, argv)
        check_outcome(code, out, err, d, ["train.txt", "weights"])


PREDICT_OPTIONS = st.lists(st.sampled_from(["-b", "0", "1", "2", "x", "-q", "-h", "--version",
                                            "-x", "-", "nan", "@test", "@model", "@out"]),
                           max_size=7)


@fuzz
@given(argv=PREDICT_OPTIONS)
def test_fuzzed_predict_options(trained_models, argv):
    with tempfile.TemporaryDirectory() as d:
        paths = {"@test": write(d, "test.txt", b"1 1:1\n-1 2:1\n"),
                 "@model": write(d, "model", trained_models["lr_binary_bias"]),
                 "@out": os.path.join(d, "out")}
        check_outcome(*run(predict_main, [paths.get(t, t) for t in argv]), d,
                      ["test.txt", "model"])
