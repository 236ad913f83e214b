"""The trained model and LIBLINEAR's text model file, read and written."""
from __future__ import annotations

import hashlib
import io
import os
from dataclasses import dataclass, field

import numpy as np

from .errors import DlinearError
from .data.fileio import SAVE_FAILURE, atomic_output
from .solver_table import SOLVER_BY_NAME, SOLVERS


@dataclass
class Model:
    """LIBLINEAR's model, as :func:`dlinear.train` returns it and the model files hold it.

    Parameters
    ----------
    solver_type : int
        The ``-s`` number that trained it.
    nr_class : int
        The number of classes (2 for regression and one-class models).
    label : numpy.ndarray of int64 or None
        The class labels in LIBLINEAR's order (by first appearance; a binary set whose
        first label is -1 is swapped so that +1 is the positive class); None for
        regression.
    nr_feature : int
        The number of features, without the bias.
    bias : float
        The bias feature's value (``-B``); below 0, no bias.
    w : numpy.ndarray of float64, shape (w_size, nr_w)
        Row j holds the weights of feature j + 1; the last row is the bias weight when
        bias >= 0. nr_w is 1 for binary and regression models (except Crammer-Singer)
        and nr_class otherwise.
    rho : float, default 0.0
        The offset of a one-class SVM.
    n_iter : tuple of int
        Iterations per binary problem (not saved in the file).
    multinomial : bool, default False
        Multinomial (softmax) logistic regression: one column per class, also for two
        classes; its file names the solver ``L2R_LR_MULTINOMIAL``.
    fit_stats : dict or None
        How a cluster fit ran (mode, class groups or rounds and their traffic, workers);
        None in process. Not saved in the file.
    """

    solver_type: int
    nr_class: int
    label: np.ndarray | None     # int64 class labels in LIBLINEAR's order; None for regression
    nr_feature: int
    bias: float
    w: np.ndarray
    rho: float = 0.0             # one-class SVM only
    n_iter: tuple = ()           # per binary problem; not saved in the file
    # multinomial (softmax) logistic regression: w has one column per class (also for 2
    # classes), probabilities are the softmax; the file names it MULTINOMIAL_SOLVER_NAME
    multinomial: bool = False
    # how a cluster fit ran (dlinear.cluster.engine: mode, class groups or actor rounds and
    # their traffic, workers); None in process; not saved in the file
    fit_stats: dict | None = field(default=None, compare=False, repr=False)
    # the rows of the full (w_size, nr_w) weights that w holds, increasing, every other row
    # 0: a fit on wide data's occurring columns as dlinear-train saves it, with no w on all
    # the columns (train_in_process(full_w=False)); None (always, in the public API): w
    # holds every row
    rows: np.ndarray | None = field(default=None, compare=False, repr=False)
    # Newton solvers: ||grad f(0)|| / C per binary problem, () where a fit does not report
    # it; what a fit at another C on the same data takes (Params.gnorm0_per_C); not saved
    gnorm0_per_C: tuple = field(default=(), compare=False, repr=False)
    # with Params.keep_duals, a dual CD fit's duals per binary problem (rows in the data's
    # order): a path of C's starts the next fit from them (Params.init_duals), and so
    # does a warm start from this model; saved beside the model file by save_model
    duals: tuple = field(default=(), compare=False, repr=False)

    @property
    def spec(self):
        """The solver's ``SolverSpec`` in :data:`dlinear.SOLVERS`."""
        return SOLVERS[self.solver_type]

    @property
    def is_regression(self) -> bool:
        """True for an SVR model (-s 11, 12, 13)."""
        return self.spec.kind == "regression"

    @property
    def is_oneclass(self) -> bool:
        """True for a one-class SVM model (-s 21)."""
        return self.spec.kind == "oneclass"

    @property
    def is_probability(self) -> bool:
        """True for a logistic regression model, which gives probabilities."""
        return self.spec.probability

    @property
    def nr_w(self) -> int:
        """The number of weight columns."""
        return self.nr_class if self.multinomial else nr_w_of(self.solver_type, self.nr_class)

    @property
    def w_size(self) -> int:
        """The number of weight rows: the features, plus one with a bias."""
        return self.nr_feature + (1 if self.bias >= 0 else 0)


# The solver_type of a multinomial model's file. LIBLINEAR's load_model does not know the
# name, so its `predict` refuses the file ("can't open model file") instead of reading
# the K softmax columns as one-vs-rest ones (its argmax would agree, its -b 1
# probabilities would not). Everything else is LIBLINEAR's format, K weight columns.
MULTINOMIAL_SOLVER_NAME = "L2R_LR_MULTINOMIAL"


def nr_w_of(solver_type: int, nr_class: int) -> int:
    """Weight columns: one for two classes, except for a solver of all classes at once."""
    return 1 if nr_class == 2 and not SOLVERS[solver_type].all_classes else nr_class


# save_model formats this many rows of weights at a time
_SAVE_BLOCK_ROWS = 1 << 16


def save_model(path, model: Model, keep_duals: bool = False) -> None:
    """Write a model in LIBLINEAR's text format (LIBLINEAR 2.50's save_model, %.17g).

    The file is written atomically: a temporary file in the target directory is renamed
    over the target, so a failure leaves no partial model.

    Parameters
    ----------
    path : str or os.PathLike
        The model file.
    model : Model or fitted dlinear estimator
        An estimator's file holds the classes as given to ``fit`` (see its
        ``save_liblinear``).
    keep_duals : bool
        Also write the duals of a ``-s 1`` / ``-s 3`` fit with ``Params(keep_duals=True)``
        beside the file (``path`` + ``.duals.npz``), for a warm start after more rows.

    Raises
    ------
    DlinearError
        If the file cannot be written, or keep_duals is asked of a model that kept none
        (then nothing is written).
    """
    if not isinstance(model, Model) and hasattr(model, "liblinear_model"):
        model = model.liblinear_model()
    if keep_duals and not model.duals:
        raise DlinearError(f"--keep-duals: this fit kept no duals for {os.fspath(path)} "
                           f"(-s 1 and -s 3 do, trained in this process)")
    _save_text(path, model)
    if keep_duals:
        _save_duals(path, model)


def _save_text(path, model: Model) -> None:
    name = MULTINOMIAL_SOLVER_NAME if model.multinomial else model.spec.name
    lines = [f"solver_type {name}", f"nr_class {model.nr_class}"]
    if model.label is not None:
        lines.append("label " + " ".join(str(int(v)) for v in model.label))
    lines.append(f"nr_feature {model.nr_feature}")
    lines.append(f"bias {model.bias:.17g}")
    if model.is_oneclass:
        lines.append(f"rho {model.rho:.17g}")
    lines.append("w")
    row_format = "%.17g " * model.nr_w + "\n"
    with atomic_output(path, SAVE_FAILURE) as f:
        f.write(("\n".join(lines) + "\n").encode("ascii"))
        # a block of rows at a time: the text of all the weights at once (and their
        # Python floats) took 5x the weights' bytes, the peak of a wide fit
        for block in _weight_blocks(model):
            f.write(((row_format * block.shape[0]) % tuple(block.ravel().tolist()))
                    .encode("ascii"))


def _weight_blocks(model: Model):
    """The (w_size, nr_w) float64 weights, _SAVE_BLOCK_ROWS rows at a time; a model that
    holds some rows only (Model.rows) is filled in with zeros a block at a time."""
    rows = model.rows
    w = np.asarray(model.w, dtype=np.float64).reshape(
        model.w_size if rows is None else len(rows), model.nr_w)
    for a in range(0, model.w_size, _SAVE_BLOCK_ROWS):
        b = min(a + _SAVE_BLOCK_ROWS, model.w_size)
        if rows is None:
            yield w[a:b]
            continue
        lo, hi = np.searchsorted(rows, [a, b])
        block = np.zeros((b - a, model.nr_w))
        block[rows[lo:hi] - a] = w[lo:hi]
        yield block


def load_model(path) -> Model:
    """Read a model file written by LIBLINEAR or dlinear (any solver).

    Only numbers and keywords are parsed; nothing in the file is executed.

    Parameters
    ----------
    path : str or os.PathLike
        The model file.

    Returns
    -------
    Model

    Raises
    ------
    DlinearError
        If the file cannot be read or is not a model file; the message names the line.
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        raise DlinearError(f"can't open model file {path}") from None
    if not raw.isascii():
        raise DlinearError(f"{path}: not a LIBLINEAR model file (non-ASCII bytes)")

    header = {}
    line_no = 0
    for line_no, line, body_start in _header_lines(raw):
        tokens = line.split()
        if not tokens:
            continue
        key = tokens[0]
        if key == "w":
            break

        def bad(what, line_no=line_no):
            return DlinearError(f"{path}: line {line_no}: {what}")

        if key not in ("solver_type", "nr_class", "label", "nr_feature", "bias", "rho"):
            raise bad(f"unknown text in model file: [{key}]")
        if key == "label":
            try:
                header["label"] = np.array([int(t) for t in tokens[1:]], dtype=np.int64)
            except ValueError:
                raise bad("labels must be integers") from None
            continue
        if len(tokens) != 2:
            raise bad(f"'{key}' takes exactly one value")
        value = tokens[1]
        try:
            if key == "solver_type" and value == MULTINOMIAL_SOLVER_NAME:
                header[key] = next(s.id for s in SOLVERS.values() if s.multinomial)
                header["multinomial"] = True
            elif key == "solver_type":
                if value not in SOLVER_BY_NAME:
                    raise bad(f"unknown solver type {value}")
                header[key] = SOLVER_BY_NAME[value].id
            elif key in ("nr_class", "nr_feature"):
                header[key] = int(value)
            else:
                header[key] = float(value)
        except ValueError:
            raise bad(f"'{key}' has a bad value {value!r}") from None
    else:
        raise DlinearError(f"{path}: no 'w' line: not a LIBLINEAR model file")

    for key in ("solver_type", "nr_class", "nr_feature", "bias"):
        if key not in header:
            raise DlinearError(f"{path}: the header has no '{key}'")
    solver_type, nr_class = header["solver_type"], header["nr_class"]
    nr_feature, bias = header["nr_feature"], header["bias"]
    if nr_class < 1 or nr_feature < 0:
        raise DlinearError(f"{path}: nr_class or nr_feature out of range")
    label = header.get("label")
    if label is not None and len(label) != nr_class:
        raise DlinearError(f"{path}: nr_class is {nr_class} but {len(label)} labels are given")
    if label is None and SOLVERS[solver_type].kind == "classification":
        raise DlinearError(f"{path}: a classification model needs a 'label' line")

    multinomial = header.get("multinomial", False)
    nr_w = nr_class if multinomial else nr_w_of(solver_type, nr_class)
    w_size = nr_feature + (1 if bias >= 0 else 0)
    try:
        w = _numbers(raw, body_start)
    except ValueError:
        raise DlinearError(f"{path}: the weights after line {line_no} are not all numbers") from None
    if w.size != w_size * nr_w:
        raise DlinearError(f"{path}: expected {w_size * nr_w} weights "
                           f"({w_size} rows x {nr_w}), found {w.size}")
    return Model(solver_type=solver_type, nr_class=nr_class, label=label,
                 nr_feature=nr_feature, bias=bias, w=w.reshape(w_size, nr_w),
                 rho=header.get("rho", 0.0), multinomial=multinomial)


def _header_lines(raw: bytes):
    """(line number, line, offset of the next line) of the lines of a model file, read
    one at a time: the header is a few lines before the weights."""
    start, line_no = 0, 0
    while start < len(raw):
        end = raw.find(b"\n", start)
        end = len(raw) if end < 0 else end
        line_no += 1
        yield line_no, raw[start:end].decode("ascii"), end + 1
        start = end + 1


def _numbers(raw: bytes, start: int) -> np.ndarray:
    """The whitespace-separated numbers of raw[start:] as float64 (ValueError on a token
    that is not one): the tokens "0" found in bulk (dlinear.kernels.model_text), the
    others converted by float."""
    from .kernels.model_text import nonzero_tokens
    body = memoryview(raw)[start:]
    count, index, starts, ends = nonzero_tokens(np.frombuffer(body, dtype=np.uint8))
    w = np.zeros(count)
    w[index] = [float(bytes(body[a:b])) for a, b in zip(starts.tolist(), ends.tolist())]
    return w


# dlinear-train --keep-duals writes a -s 1 / -s 3 model's duals (Model.duals) beside its
# file, in the checkpoints' format (NumPy's .npz, written atomically), for the next -i:
# the rows the model saw start from their duals. LIBLINEAR's tools ignore the file.
DUALS_SUFFIX = ".duals.npz"


def _weights_digest(model: Model) -> str:
    """A digest of the model's nonzero weights in order: the same for the model in memory
    (also one holding only its occurring rows) and as read back from its file (%.17g)."""
    w = np.ascontiguousarray(model.w, dtype=np.float64).ravel()
    return hashlib.blake2b(w[w != 0.0].tobytes(), digest_size=16).hexdigest()


def _save_duals(path, model: Model) -> None:
    """model.duals to path + DUALS_SUFFIX, tied to the model's weights by their digest."""
    buffer = io.BytesIO()
    np.savez(buffer, weights=np.array(_weights_digest(model)),
             **{f"problem_{k}": np.asarray(a, dtype=np.float64)
                for k, a in enumerate(model.duals)})
    with atomic_output(os.fspath(path) + DUALS_SUFFIX, SAVE_FAILURE) as f:
        f.write(buffer.getbuffer())


def load_duals(path, model: Model) -> tuple:
    """The duals saved beside the model file `path` (save_model's keep_duals) when they belong to
    `model`, as read from that file: one array per binary problem; () where there is no
    such file or it was written for other weights."""
    try:
        with np.load(os.fspath(path) + DUALS_SUFFIX, allow_pickle=False) as saved:
            if str(saved["weights"]) != _weights_digest(model):
                return ()
            n = sum(1 for name in saved.files if name.startswith("problem_"))
            return tuple(saved[f"problem_{k}"] for k in range(n))
    except FileNotFoundError:
        return ()
    except (OSError, ValueError, KeyError) as e:
        raise DlinearError(f"{os.fspath(path) + DUALS_SUFFIX} can't be read: {e}") from None


def load_model_and_duals(path) -> Model:
    """load_model, with Model.duals from the duals saved beside the file (load_duals)."""
    model = load_model(path)
    model.duals = load_duals(path, model)
    return model
