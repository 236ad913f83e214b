"""LIBLINEAR-style command line: dlinear-train and dlinear-predict.

Options, defaults and messages follow LIBLINEAR 2.50's train and predict. User errors
print one line on stderr and exit 1 without a traceback, and leave no output file behind.
"""
from __future__ import annotations

import os
import sys
import warnings
from dataclasses import replace

import math

# Only light modules here: options and output paths are checked before Numba, SciPy and
# Dask load (seconds), so that a mistake answers at once; the functions that train import them.
from ..cluster.session import CONNECT_TIMEOUT, SCHEDULER_ENV
from ..errors import ConvergenceWarning, DataError, DlinearError, WarmStartError
from .path_models import path_models_directory, write_path_models
from .startup import give_back_freed_arrays
from .exit import UsageError, _HelpRequested, _VersionRequested, answering_ctrl_c, command_line
from ..data.fileio import SAVE_FAILURE, check_writable, write_text_atomically
from ..planning.memory_budget import parse_size
from ..params import Params, check_parameter
from ..progress import quiet as quiet_progress
from ..solver_table import SOLVERS, solver_ids, solvers_text
from ..threads import available_cores
from .solver_help import ids as _ids, solver_lines as _solver_lines


TRAIN_USAGE = (
    "Usage: dlinear-train [options] training_set_file [model_file]\n"
    "options:\n"
    "-s type : set type of solver (default 1; without -s, 1 or its primal 2 by the\n"
    "\tdata's scale, said on stderr)\n"
    "  for multi-class classification\n" + _solver_lines("classification") +
    "  for regression\n" + _solver_lines("regression") +
    "  for outlier detection\n" + _solver_lines("oneclass") +
    "-c cost : set the parameter C (default 1)\n"
    "-p epsilon : set the epsilon in loss function of SVR (default 0.1)\n"
    "-n nu : set the parameter nu of one-class SVM (default 0.5)\n"
    "-e epsilon : set tolerance of termination criterion\n"
    "\t-s 0 and 2\n"
    "\t\t|f'(w)|_2 <= eps*min(pos,neg)/l*|f'(w0)|_2,\n"
    "\t\twhere f is the primal function and pos/neg are # of\n"
    "\t\tpositive/negative data (default 0.01)\n"
    "\t-s 11\n"
    "\t\t|f'(w)|_2 <= eps*|f'(w0)|_2 (default 0.0001)\n"
    "\t-s 1, 3, 4, 7, and 21\n"
    "\t\tDual maximal violation <= eps; similar to libsvm (default 0.1 except 0.01 for -s 21)\n"
    "\t-s 5 and 6\n"
    "\t\t|f'(w)|_1 <= eps*min(pos,neg)/l*|f'(w0)|_1,\n"
    "\t\twhere f is the primal function (default 0.01)\n"
    "\t-s 12 and 13\n"
    "\t\t|f'(alpha)|_1 <= eps |f'(alpha0)|,\n"
    "\t\twhere f is the dual function (default 0.1)\n"
    "-B bias : if bias >= 0, instance x becomes [x; bias]; if < 0, no bias term added (default -1)\n"
    "-R : not regularize the bias; must with -B 1 to have the bias; DON'T use this unless you know what it is\n"
    f"\t(for -s {_ids(lambda s: s.regularize_bias_optional and not s.dual)}; with "
    f"{solvers_text(lambda s: s.regularize_bias_optional and s.dual, 'or')}, a true bias: "
    "the dual with y^T alpha = 0)\n"
    "-wi weight: weights adjust the parameter C of different classes (see README for details)\n"
    "-W weight_file: set instance weights, one per line (multiply each instance's C)\n"
    "-v n: n-fold cross validation mode\n"
    f"-C : find parameters (C for -s {_ids(lambda s: s.search and s.kind == 'classification')}"
    f" and C, p for -s {_ids(lambda s: s.search and s.kind == 'regression')})\n"
    "-i initial_model_file : warm start from this model (same labels, bias and kind of\n"
    f"\tsolver, at most the data's features; -s {_ids(lambda s: s.init_sol)})\n"
    "-q : quiet mode (no outputs)\n"
    "-m nr_thread : read and train in this process on nr_thread threads (default: one per\n"
    "\tcore); the model is the same for any number, but for the dual CD of a large\n"
    "\t-s 1, 3, 7 problem: the same for the same number, 1 giving LIBLINEAR's\n"
    "dlinear options:\n"
    "training_set_file may be a binary dataset directory (python -m dlinear convert)\n"
    "--workers n : start a local Dask cluster of n single-threaded worker processes;\n"
    "\t0 trains in this process (default: in this process, or a local cluster with one\n"
    "\tworker per core for -s 0, 2, 11 where a cost model predicts it faster)\n"
    "--scheduler address : train on the Dask cluster at address (tcp://host:8786, tls://...;\n"
    "\tdefault $DLINEAR_SCHEDULER); the data file must be readable by its workers\n"
    "--tls-ca-file f, --tls-cert f, --tls-key f : certificates for a tls:// scheduler\n"
    "--connect-timeout seconds : give up reaching the scheduler after this long (default 5)\n"
    "--storage-option key=value : an fsspec option for an s3://, gs://, hdfs://, https://...\n"
    "\ttraining file, e.g. endpoint_url=http://minio:9000 (repeatable; a value is read as JSON\n"
    "\twhen it parses, else as text)\n"
    "--seed n : seed of the random permutations and CV folds (default 1)\n"
    "--path-models dir : with -C, write every C's model on the whole set as dir/model.C=<C>\n"
    "--max-iter n : outer-iteration cap of the dual solvers (default 300, as LIBLINEAR)\n"
    f"--cd-block k : -s {_ids(lambda s: s.two_variable_cd)}: dual CD on k = 1 (default) or 2 variables at a time\n"
    f"--primal-cd : -s {_ids(lambda s: s.primal_cd)} by primal coordinate descent (Chang, Hsieh and Lin 2008; passes capped by --max-iter)\n"
    f"--online : -s {_ids(lambda s: s.online)} and -s {_ids(lambda s: s.primal_cd)} --primal-cd: random coordinates with replacement, no shrinking\n"
    "--max-updates n : update budget of --online (default max-iter x #variables)\n"
    "--float32 : store the feature values in 4 bytes instead of 8 (sums stay float64;\n"
    "\tobjectives within 1e-6 relative of the float64 fit)\n"
    "--memory size : the memory a training in this process may use, e.g. 800M, 2G, 1.5GB\n"
    "\t(K, M, G, T: powers of 1024; default: the smaller of the available RAM and the\n"
    "\tprocess's cgroup memory limit); data whose fit needs more is refused before it is read\n"
    "--newton {linesearch,tron} : -s " + _ids(lambda s: s.newton) + " by line-search (default) or trust-region Newton\n"
    f"--multinomial : -s {_ids(lambda s: s.multinomial)}: multinomial (softmax) logistic regression instead of one-vs-rest;\n"
    "\tthe model file says L2R_LR_MULTINOMIAL, which LIBLINEAR's predict refuses\n"
    f"--l1-ratio r : -s {_ids(lambda s: s.elastic_net)}: elastic net, min r*|w|_1 + (1-r)/2*|w|_2^2 + C*sum loss, 0 <= r <= 1\n"
    "\t(default 1: LIBLINEAR's L1; 0: pure L2, by the same newGLMNET; the model file is -s 6's)\n"
    f"--partition : on a cluster, -s {_ids(lambda s: s.partitioned_dual_cd)} by partitioned dual CD: each worker\n"
    "\tsolves its own rows, no copy of the data per worker (default: when the data does not\n"
    f"\tfit one worker's memory); -s {_ids(lambda s: s.partitioned and s.newton)}: Newton "
    "map-reduced over the parts (the\n"
    "\tdefault, except one-vs-rest with 3+ classes on data that fits one worker);\n"
    f"\t-s {_ids(lambda s: s.partitioned_owlqn)}: OWL-QN map-reduced over the parts (default: when the data does not fit one\n"
    "\tworker); --no-partition: a copy per worker, classes in parallel\n"
    "--partition-rule {adaptive,linesearch,cocoa} : how --partition combines the workers'\n"
    "\tsteps: a line search on subproblems scaled between the next two (default), the\n"
    "\tblock-diagonal approximation with a line search, or CoCoA+ adding\n"
    "--keep-duals : -s 1, 3: write the duals beside the model (model_file.duals.npz); -i\n"
    "\twith the model starts its rows from them (docs: warm_start)\n"
    "--checkpoint dir : save the solver's state in dir every --checkpoint-every s seconds\n"
    "\t(default 10) and resume from it when run again (docs: checkpoints)\n"
    "--version : print dlinear's version\n"
    "-h, --help : show this help\n"
    "Solvers available in this version: "
    + ", ".join(f"-s {sid}" for sid in solver_ids()) + "\n"
)

PREDICT_USAGE = (
    "Usage: dlinear-predict [options] test_file model_file output_file\n"
    "options:\n"
    "-b probability_estimates: whether to output probability estimates, 0 or 1 (default 0); "
    "currently for logistic regression only\n"
    "-q : quiet mode (no outputs)\n"
    "--version : print dlinear's version\n"
)


def parse_storage_option(text: str, options: dict) -> None:
    """--storage-option key=value into options; the value as JSON when it parses
    (numbers, true/false, objects), else as text."""
    import json
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise UsageError(f"option --storage-option needs key=value, got {text!r}")
    try:
        options[key] = json.loads(value)
    except ValueError:
        options[key] = value


def _number(option: str, text: str, kind=float):
    try:
        value = kind(text)
    except ValueError:
        raise UsageError(f"option {option} needs a{'n integer' if kind is int else ' number'}, "
                         f"got {text!r}") from None
    if kind is float and not math.isfinite(value):
        raise UsageError(f"option {option} needs a finite number, got {text!r}")
    return value


def parse_train_args(argv: list[str]):
    """-> (Params, options dict, training file, model file)."""
    params = Params()
    opts = {"quiet": False, "nr_fold": 0, "find_C": False, "workers": None, "weight_file": None,
            "threads": None, "initial_model": None,
            "scheduler": None, "tls-ca-file": None, "tls-cert": None, "tls-key": None,
            "storage_options": {}, "connect_timeout": CONNECT_TIMEOUT, "dtype": "float64",
            "memory": None, "path_models": None,
            "given": set()}     # which of -s, -c, -p were given (for -C)
    i = 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        arg = argv[i]
        if arg in ("-h", "--help"):
            raise _HelpRequested
        if arg == "--version":
            raise _VersionRequested
        if arg in ("-q", "-R", "-C"):
            if arg == "-q":
                opts["quiet"] = True
            elif arg == "-R":
                params.regularize_bias = False
            else:
                opts["find_C"] = True
            i += 1
            continue
        if arg == "--float32":
            opts["dtype"] = "float32"
            i += 1
            continue
        if arg in ("--partition", "--no-partition"):
            params.partition = arg == "--partition"
            i += 1
            continue
        if arg in ("--primal-cd", "--online", "--multinomial", "--keep-duals"):
            setattr(params, arg[2:].replace("-", "_"), True)
            i += 1
            continue
        if i + 1 >= len(argv):
            raise UsageError(f"option {arg} needs a value")
        value = argv[i + 1]
        if arg in ("-s", "-c", "-p"):
            opts["given"].add(arg)
        if arg == "-s":
            params.solver_type = _number(arg, value, int)
            if params.solver_type not in SOLVERS:
                raise UsageError(f"unknown solver type -s {params.solver_type}")
        elif arg == "-c":
            params.C = _number(arg, value)
        elif arg == "-p":
            params.p = _number(arg, value)
        elif arg == "-n":
            params.nu = _number(arg, value)
        elif arg == "-e":
            params.eps = _number(arg, value)
        elif arg == "-B":
            params.bias = _number(arg, value)
        elif arg == "-v":
            opts["nr_fold"] = _number(arg, value, int)
            if opts["nr_fold"] < 2:
                raise UsageError("n-fold cross validation: n must >= 2")
        elif arg == "-W":
            opts["weight_file"] = value
        elif arg == "-i":
            opts["initial_model"] = value
        elif arg == "--path-models":
            opts["path_models"] = path_models_directory(value, argv)
        elif arg == "-m":
            opts["threads"] = _number(arg, value, int)
            if opts["threads"] < 1:
                raise UsageError("-m needs a number of threads >= 1")
        elif arg.startswith("-w") and len(arg) > 2:
            params.class_weights.append((_number(arg, arg[2:], int), _number(arg, value)))
        elif arg == "--workers":
            opts["workers"] = _number(arg, value, int)
            if opts["workers"] < 0:
                raise UsageError("--workers needs a number >= 0")
        elif arg in ("--scheduler", "--tls-ca-file", "--tls-cert", "--tls-key"):
            opts[arg[2:]] = value
        elif arg == "--connect-timeout":
            opts["connect_timeout"] = _number(arg, value)
            if opts["connect_timeout"] <= 0:
                raise UsageError("--connect-timeout needs a number of seconds > 0")
        elif arg == "--storage-option":
            parse_storage_option(value, opts["storage_options"])
        elif arg == "--memory":
            try:
                opts["memory"] = parse_size(value, arg)
            except DlinearError as e:
                raise UsageError(str(e)) from None
        elif arg == "--seed":
            params.seed = _number(arg, value, int)
        elif arg == "--max-iter":
            params.max_iter = _number(arg, value, int)
        elif arg == "--cd-block":
            params.cd_block = _number(arg, value, int)
        elif arg == "--newton":
            if value not in ("linesearch", "tron"):
                raise UsageError(f"option --newton needs linesearch or tron, got {value!r}")
            params.newton = value
        elif arg == "--partition-rule":
            if value not in ("adaptive", "linesearch", "cocoa"):
                raise UsageError(f"option --partition-rule needs adaptive, linesearch or "
                                 f"cocoa, got {value!r}")
            params.partition_rule = value
        elif arg == "--max-updates":
            params.max_updates = _number(arg, value, int)
        elif arg == "--l1-ratio":
            params.l1_ratio = _number(arg, value)
        elif arg in ("--checkpoint", "--checkpoint-every"):
            setattr(params, arg[2:].replace("-", "_"),
                    value if arg == "--checkpoint" else _number(arg, value))
        else:
            raise UsageError(f"unknown option: {arg}")
        i += 2
    rest = argv[i:]
    if not rest or len(rest) > 2:
        raise UsageError("expected: training_set_file [model_file]")
    train_file = rest[0]
    model_file = rest[1] if len(rest) == 2 else os.path.basename(train_file) + ".model"
    return params, opts, train_file, model_file


UNKNOWN_WEIGHT_LABEL = "WARNING: class label "    # LIBLINEAR writes it on stderr, even with -q


def _say(quiet: bool, before=None):
    """What LIBLINEAR's train prints: stdout, nothing with -q, except its warning about a
    -wi label not in the data, which goes to stderr as LIBLINEAR's does (also with -q).
    before() runs ahead of the first line printed (a deferred note)."""
    def say(line: str) -> None:
        warning = line.startswith(UNKNOWN_WEIGHT_LABEL)
        if warning or not quiet:
            if before is not None:
                before()
            print(line, file=sys.stderr if warning else sys.stdout, flush=True)
    return say


def _note(quiet: bool):
    """dlinear's own lines (where it trains, the cluster): stderr, so that stdout stays
    what LIBLINEAR's train prints; nothing with -q."""
    if quiet:
        return lambda line: None
    return lambda line: print(line, file=sys.stderr, flush=True)


def _deferred(note, *lines: str):
    """Notes said once, when the returned function is first called: in-process training
    says where and how it trains only once the data has passed the checks that run as
    training starts (labels, folds), so that bad input gives one line."""
    pending = list(lines)

    def say_it() -> None:
        while pending:
            note(pending.pop(0))
    return say_it


def _default_formulation(params, opts, problem):
    """(params, Formulation or None): without -s (and without -C, whose default is the
    primal already, or -i, which continues its model's solver), the squared hinge trains
    as dual CD or as its Newton primal, chosen by the data's scale
    (dlinear.planning.formulation); options only the dual takes (--cd-block 2, --online,
    ...) keep the dual."""
    from ..planning.formulation import choose_formulation, problem_scale
    spec = params.spec
    if ("-s" in opts["given"] or opts["find_C"] or spec.fallback is None
            or opts.get("initial_model") is not None):
        return params, None
    primal = replace(params, solver_type=spec.fallback)
    try:
        check_parameter(primal)
    except DlinearError:
        return params, None
    if params.online or params.cd_block != 1 or params.partition:
        return params, None
    chosen = choose_formulation(params.solver_type, problem_scale(problem, params))
    return (primal if chosen.primal else params), chosen


def _cluster_asked(opts) -> bool:
    """--scheduler (or its environment variable) or --workers n > 0."""
    return bool(opts["scheduler"] or os.environ.get(SCHEDULER_ENV)
                or (opts["workers"] or 0) > 0)


def _backend(opts, params, train_file, data=None):
    """Where dlinear-train trains (Mode.CLUSTER or Mode.IN_PROCESS): --scheduler (or its
    environment variable) and --workers n > 0 ask for a cluster, --workers 0 for this
    process; otherwise modes.choose decides whether a local cluster pays (its cost model,
    on the data's shape `data`, read here when not given: a binary dataset's header, or a
    timed sample of the text): a planning.modes.Choice."""
    from ..planning.modes import Cluster, Data, choose, is_map_reduce
    from .inputs import input_shape
    if _cluster_asked(opts):
        cluster = Cluster(running=False)
    elif opts["workers"] is not None or params.checkpoint:
        cluster = None          # --workers 0; a checkpoint: in this process
    else:
        cluster = Cluster(running=False, asked=False, workers=available_cores())
    job = "search" if opts["find_C"] else "cv" if opts["nr_fold"] else "train"
    shape = Data()
    if cluster is not None and not cluster.asked and job == "train" and is_map_reduce(params):
        shape = data if data is not None else input_shape(train_file,
                                                          opts["storage_options"] or None)
    # the process's threads as training will use them (-m, default one per core)
    return choose(params, shape, cluster, job=job,
                  n_threads=opts["threads"] or available_cores())


def train_main(argv=None) -> int:
    return command_line(argv, _train_command, "dlinear-train", TRAIN_USAGE)


def _train_command(argv: list[str]) -> int:
    params, opts, train_file, model_file = parse_train_args(argv)
    give_back_freed_arrays()
    try:
        return _run_training(params, opts, train_file, model_file)
    except DataError as e:          # the content of the training file: name it
        raise DlinearError(f"{train_file}: {e}") from None
    except WarmStartError as e:     # the -i model does not fit: name it
        raise DlinearError(f"{opts['initial_model']}: {e}") from None


def _run_training(params, opts, train_file, model_file) -> int:
    """What dlinear-train's options ask for (training, -v or -C), in this process or on
    a cluster (_backend)."""
    if opts["find_C"]:
        _prepare_search(params, opts)
    if opts["initial_model"] is not None:
        if opts["find_C"] or opts["nr_fold"]:
            raise DlinearError("-i (warm start) trains one model: it cannot be combined "
                               "with -v or -C")
        from ..model import load_model_and_duals
        params.init_sol = load_model_and_duals(opts["initial_model"])
    check_parameter(params)
    if not (opts["find_C"] or opts["nr_fold"]):     # -v and -C write no model
        check_writable(model_file, SAVE_FAILURE)
    import numpy as np
    opts["dtype"] = np.dtype(opts["dtype"]).type      # np.float64, np.float32
    from ..planning.modes import Data, Mode
    from .inputs import input_shape, memory_plan
    from .on_cluster import cluster_dataset
    say, note = _say(opts["quiet"]), _note(opts["quiet"])
    storage_options = opts["storage_options"] or None
    # the data's shape, unless a cluster is asked for: for the cost model and the budget
    shape = Data() if _cluster_asked(opts) else input_shape(train_file, storage_options)
    backend = _backend(opts, params, train_file, shape)
    if backend.reason is not None and backend.mode is Mode.CLUSTER and memory_plan(
            shape, params, opts, train_file)[1]:    # local workers share this machine's RAM
        backend = _backend({**opts, "workers": 0}, params, train_file, shape)
    if backend.mode is not Mode.CLUSTER:
        budget, out_of_core = memory_plan(shape, params, opts, train_file)
        return answering_ctrl_c(lambda: _train_in_process(
            params, opts, train_file, model_file, backend, budget, out_of_core))
    if backend.reason is not None:      # the cost model chose the local cluster
        note(f"dlinear: {backend.describe()} (--workers 0 trains in this process)")
    with cluster_dataset(params, opts, train_file, note) as (data, params, mode):
        _solver_note(opts)
        if not opts["quiet"]:
            sys.stderr.write(f"dlinear: {mode}\n")
        return _train_and_save(data, params, opts, model_file, say)


def _train_in_process(params, opts, train_file, model_file, backend, budget,
                      out_of_core) -> int:
    """Reading, training and saving in this process (on a worker thread: answering_ctrl_c);
    out of core (memory_plan), a binary dataset's rows are read a block at a time."""
    from ..api import train_given_problem
    from ..data.binary_format import read_dataset
    from ..in_process.out_of_core import train_out_of_core
    from ..planning.class_plan import first_appearance
    from .compile_notice import CompileNotice
    from .inputs import check_model_size, check_weight_count, read_weight_file
    note = _note(opts["quiet"])
    storage_options = opts["storage_options"] or None
    if out_of_core:
        note(f"dlinear: -s {params.solver_type} out of core: the data does not fit the "
             f"{budget.describe()}; its rows are read from {train_file} a block at a time")
        return _train_and_save(None, params, opts, model_file, _say(opts["quiet"]),
                               fit=lambda log: train_out_of_core(
                                   train_file, params, budget.bytes, log,
                                   n_threads=opts["threads"]))
    # a progress note on a terminal only (as git's): piped stderr keeps results and errors
    compiling = CompileNotice(note if sys.stderr.isatty() else (lambda line: None),
                              f"-s {params.solver_type}")
    weights = read_weight_file(opts["weight_file"]) if opts["weight_file"] else None
    with compiling:
        problem = read_dataset(train_file, storage_options=storage_options,
                               dtype=opts["dtype"], n_threads=opts["threads"])
    if weights is not None:
        problem.sample_weight = check_weight_count(weights, problem.n_samples,
                                                   opts["weight_file"], train_file)
    nr_class = 1
    if params.spec.kind == "classification":
        # on the whole file, before any fold or search: the error names its instance
        nr_class = len(first_appearance(problem.y))
    check_model_size(problem.n_features, nr_class, params, problem)
    _solver_note(opts)
    lines = []
    if opts["workers"] is None:
        lines.append(f"dlinear: {backend.describe()} (--workers n starts a local "
                     f"cluster); {budget.describe()}")
    params, formulation = _default_formulation(params, opts, problem)
    if formulation is not None:
        lines.append(f"dlinear: {formulation.describe()}")
    where = _deferred(note, *lines)
    with compiling:
        return _train_and_save(problem, params, opts, model_file,
                               _say(opts["quiet"], before=where), before_saving=where,
                               fit=lambda log: train_given_problem(problem, params, log,
                                                                   opts["threads"]))


def _prepare_search(params, opts) -> None:
    """-C as LIBLINEAR's train: 5 folds unless -v, -s 2 unless -s (said on stderr), and
    only the solvers with a warm-start search."""
    from ..in_process.model_selection import SEARCH_SOLVER_ERROR
    if not opts["nr_fold"]:
        opts["nr_fold"] = 5
    if "-s" not in opts["given"]:
        opts["solver_note"] = True      # said once the input is good: errors stay one line
        params.solver_type = 2
    elif params.spec.search is None:
        raise UsageError(SEARCH_SOLVER_ERROR)


def _solver_note(opts) -> None:
    """-C without -s: LIBLINEAR's note (even with -q), once the input is known good."""
    if opts.get("solver_note"):
        sys.stderr.write("Solver not specified. Using -s 2\n")


def _find_parameters(data, params, opts, say) -> int:
    """-C: LIBLINEAR's lines (the first and last even with -q, as its train); like
    LIBLINEAR, it writes no model file."""
    from ..api import find_parameters
    nr_fold = opts["nr_fold"]
    print(f"Doing parameter search with {nr_fold}-fold cross validation.", flush=True)
    start_C = params.C if "-c" in opts["given"] else None
    start_p = params.p if "-p" in opts["given"] else None
    best_C, best_p, best_score = find_parameters(data, params, nr_fold, start_C, start_p,
                                                 log=say, n_threads=opts["threads"])
    write_path_models(data, params, opts, start_C, start_p, best_p)
    if params.spec.kind == "regression":
        print("Best C = %g Best p = %g  CV MSE = %g" % (best_C, best_p, best_score))
    else:
        print("Best C = %g  CV accuracy = %g%%" % (best_C, 100.0 * best_score))
    return 0


def _train_and_save(data, params, opts, model_file, say, before_saving=lambda: None,
                    fit=None) -> int:
    """Cross-validation or training on a Problem or a cluster Dataset (or fit(log) ->
    Model, training the model another way); before_saving() runs once the result is
    there."""
    from ..api import cross_validation, train
    from ..model import save_model
    from ..predict import evaluate
    with warnings.catch_warnings(), quiet_progress(opts["quiet"]):   # -q: no progress bar either
        # the log lines carry LIBLINEAR's warning text already (its "WARNING: ..." lines)
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.filterwarnings("ignore", message="WARNING: ", category=UserWarning)
        if opts["find_C"]:
            code = _find_parameters(data, params, opts, say)
            before_saving()
            return code
        if opts["nr_fold"]:
            target = cross_validation(data, params, opts["nr_fold"], log=say,
                                      n_threads=opts["threads"])
            before_saving()
            y = data.y.compute() if hasattr(data.y, "compute") else data.y   # Dask
            acc, mse, scc = evaluate(y, target)
            if params.spec.kind == "regression":
                print(f"Cross Validation Mean squared error = {mse:g}")
                print(f"Cross Validation Squared correlation coefficient = {scc:g}")
            else:
                print(f"Cross Validation Accuracy = {acc:g}%")
            return 0
        model = (fit(say) if fit is not None else
                 train(data, params, log=say, n_threads=opts["threads"]))
        before_saving()
    save_model(model_file, model, keep_duals=params.keep_duals)
    return 0


OUTPUT_FAILURE = "can't open output file"      # LIBLINEAR's predict's words


def predict_main(argv=None) -> int:
    return command_line(argv, _predict_command, "dlinear-predict", PREDICT_USAGE)


def _predict_command(argv: list[str]) -> int:

    probability, quiet, i = 0, False, 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        if argv[i] in ("-h", "--help"):
            raise _HelpRequested
        if argv[i] == "--version":
            raise _VersionRequested
        if argv[i] == "-q":
            quiet, i = True, i + 1
        elif argv[i] == "-b" and i + 1 < len(argv):
            probability = _number("-b", argv[i + 1], int)
            if probability not in (0, 1):
                raise UsageError("-b takes 0 or 1")
            i += 2
        else:
            raise UsageError(f"unknown option: {argv[i]}")
    if len(argv) - i != 3:
        raise UsageError("expected: test_file model_file output_file")
    test_file, model_file, output_file = argv[i:]
    check_writable(output_file, OUTPUT_FAILURE)     # before reading, as LIBLINEAR's predict
    import numpy as np
    from ..data.binary_format import read_dataset
    from ..model import load_model
    from ..predict import (decision_values, evaluate, labels_from_decision_values,
                          probabilities_from_decision_values)
    model = load_model(model_file)
    if probability and not model.is_probability:
        raise DlinearError("probability output is only supported for logistic regression")
    problem = read_dataset(test_file)
    dec = decision_values(model, problem)
    labels = labels_from_decision_values(model, dec)
    if probability:
        probs = probabilities_from_decision_values(model, dec)
        header = "labels " + " ".join(str(int(v)) for v in model.label) + "\n"
        row = "%.17g" + " %g" * probs.shape[1] + "\n"
        body = (row * len(labels)) % tuple(np.column_stack([labels, probs]).ravel().tolist())
        text = header + body
    else:
        text = ("%.17g\n" * len(labels)) % tuple(labels.tolist())
    write_text_atomically(output_file, text, OUTPUT_FAILURE)
    if not quiet:
        acc, mse, scc = evaluate(problem.y, labels)
        if model.is_regression:
            print(f"Mean squared error = {mse:g} (regression)")
            print(f"Squared correlation coefficient = {scc:g} (regression)")
        else:
            correct = int(np.sum(problem.y == labels))
            print(f"Accuracy = {acc:g}% ({correct}/{len(labels)})")
    return 0
