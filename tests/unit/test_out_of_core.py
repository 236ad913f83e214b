"""Out-of-core training (dlinear.in_process.out_of_core): the dual CD solvers (-s 1, 3, 7,
12, 13) by selective block minimization and Newton (-s 0, 2, 11) by streamed passes, from
a binary dataset under a memory budget that holds a few of its parts at a time, reach the
in-memory fit's optimum."""
import numpy as np
import pytest
import scipy.sparse as sp

from dlinear import DlinearError, Params, predict, train
from dlinear.data.binary_format import convert_libsvm, read_binary
from dlinear.data.libsvm_writer import write_libsvm
from dlinear.datasets.rcv1_like import make_rcv1_like
from dlinear.in_process.out_of_core import Block, resident_bytes, train_out_of_core
from dlinear.in_process.row_cache import RowCache
from dlinear.solvers.primal_objective_values import primal_objective


def dataset(tmp_path, n_classes=2, seed=0, weights=False):
    problem = make_rcv1_like(6000, n_features=800, n_classes=n_classes, nnz_per_row=25,
                             seed=seed)
    text = tmp_path / "train.svm"
    write_libsvm(str(text), problem.to_scipy(), problem.y)
    w = np.random.default_rng(seed).uniform(0.5, 2.0, problem.n_samples) if weights else None
    header = convert_libsvm(str(text), str(tmp_path / "train.bin"), weights=w,
                            part_text_bytes=1 << 16)
    assert len(header.parts) >= 20
    return str(tmp_path / "train.bin"), header


def regression_dataset(tmp_path, path):
    """The rows of the dataset at `path` with real-valued targets, as a binary dataset."""
    rng = np.random.default_rng(1)
    X = read_binary(path).to_scipy()
    target = X @ rng.normal(size=X.shape[1]) + 0.1 * rng.normal(size=X.shape[0])
    text = tmp_path / "regression.svm"
    write_libsvm(str(text), X, target)
    header = convert_libsvm(str(text), str(tmp_path / "regression.bin"),
                            part_text_bytes=1 << 16)
    return str(tmp_path / "regression.bin"), header


def small_budget(header, n_problems=1, blocks=6):
    """A budget of the fit's state and 1 / (0.3 blocks) of the nonzeros' bytes: a
    block (at most LARGEST_BLOCK_SHARE, 0.3, of the rest) holds at most 1/blocks of
    them, and the data does not fit."""
    resident = resident_bytes(header.rows, header.n_features + 1, n_problems)
    return resident + int(header.nnz * 12 / blocks / 0.3)


@pytest.mark.parametrize("solver", [1, 3])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_reaches_the_in_memory_optimum(tmp_path, solver, bias):
    path, header = dataset(tmp_path, seed=solver)
    params = Params(solver_type=solver, C=0.5, eps=1e-3, bias=bias)
    lines = []
    model = train_out_of_core(path, params, small_budget(header), log=lines.append)
    blocks = [line for line in lines if line.startswith("selective block minimization:")]
    assert "blocks of at most" in blocks[0] and int(blocks[0].split()[3]) >= 4, blocks
    problem = read_binary(path)
    reference = train(problem, params)
    f, f_ref = (primal_objective(problem, params, m) for m in (model, reference))
    assert abs(f - f_ref) <= 1e-4 * f_ref, (f, f_ref)
    assert np.mean(predict(model, problem) == predict(reference, problem)) >= 0.99


@pytest.mark.parametrize("solver", [7, 12, 13])
def test_lr_and_svr_duals_reach_the_in_memory_optimum_from_dlinear_train(tmp_path, capsys,
                                                                         solver):
    """-s 7 (three classes, one-vs-rest), -s 12 and -s 13 by selective block minimization:
    several blocks, LIBLINEAR's stopping rule of the solver over all rows at a small -e,
    the in-memory fit's objective; dlinear-train --memory takes that path and saves the
    same model."""
    from dlinear import load_model
    from dlinear.cli.train_predict import train_main
    path, header = dataset(tmp_path, n_classes=3 if solver == 7 else 2, seed=solver)
    if solver != 7:
        path, header = regression_dataset(tmp_path, path)
    n_problems = 3 if solver == 7 else 1
    # -s 13 at C = 1 stops 1e-3 short of its optimum at -e 0.001 on either path (L1-loss
    # SVR's dual CD is slow there); at C = 0.1 both are within 2e-4 of it
    C = 0.1 if solver == 13 else 1.0
    params = Params(solver_type=solver, C=C, eps=1e-3, bias=1.0)
    budget = small_budget(header, n_problems=n_problems)
    lines = []
    model = train_out_of_core(path, params, budget, log=lines.append)
    blocks = next(line for line in lines if line.startswith("selective block minimization:"))
    assert int(blocks.split()[3]) >= 4, blocks
    assert len(model.n_iter) == n_problems and max(model.n_iter) < params.max_iter
    problem = read_binary(path)
    reference = train(problem, params, n_threads=1)
    f, f_ref = (primal_objective(problem, params, m) for m in (model, reference))
    assert abs(f - f_ref) <= 1e-4 * abs(f_ref), (f, f_ref)

    model_file = tmp_path / "m"
    assert train_main(["-s", str(solver), "-c", str(C), "-e", "0.001", "-B", "1",
                       "--memory", str(budget), path, str(model_file)]) == 0
    err = capsys.readouterr().err
    assert f"dlinear: -s {solver} out of core: the data does not fit the memory budget" in err
    assert np.array_equal(load_model(str(model_file)).w, model.w)


@pytest.mark.parametrize("solver,n_classes", [(1, 2), (3, 3)])
def test_visits_on_two_threads_reach_the_in_memory_optimum(tmp_path, monkeypatch, solver,
                                                          n_classes):
    """-s 1 / -s 3 with each visit's rows split between two threads (CoCoA+'s local
    sub-problems, block_duals.SvcDuals; one-vs-rest for three classes): the in-memory
    fit's objective at the same -e, and the same model on a second run (it depends on
    the seed and the number of threads, not on their timing)."""
    from dlinear.in_process import out_of_core
    monkeypatch.setattr(out_of_core, "visit_threads", lambda n_threads, blocks, w_size: 2)
    path, header = dataset(tmp_path, n_classes=n_classes, seed=solver)
    params = Params(solver_type=solver, C=0.5, eps=1e-3, bias=1.0)
    budget = small_budget(header, n_problems=n_classes if n_classes > 2 else 1)
    lines = []
    model = train_out_of_core(path, params, budget, log=lines.append)
    assert any(line.endswith("visits on 2 threads") for line in lines), lines
    assert np.array_equal(train_out_of_core(path, params, budget).w, model.w)
    problem = read_binary(path)
    reference = train(problem, params)
    f, f_ref = (primal_objective(problem, params, m) for m in (model, reference))
    assert abs(f - f_ref) <= 1e-4 * f_ref, (f, f_ref)


@pytest.mark.parametrize("l2_loss", [True, False])
def test_a_cut_back_visit_leaves_alphas_the_step_took_to_a_bound_there(l2_loss):
    """scale_visit after a threaded visit merged at gamma < 1: alphas move back to
    alpha_old + gamma * step, but one the step took to 0 (or to C, hinge loss) stays at
    the bound, and w takes the rest of its step: w = sum alpha_i y_i x_i still."""
    from dlinear.kernels.block_minimization import scale_visit
    from dlinear.kernels.dual_cd_svc import ALPHA, BOUND, Y
    X = sp.random(4, 6, density=0.6, random_state=3, format="csr")
    y = np.array([1.0, -1.0, 1.0, -1.0])
    C = 1.0
    old = np.array([0.4, 0.3, 0.2, 0.5])
    new = np.array([0.0, 0.6, 0.25, C]) if not l2_loss else np.array([0.0, 0.6, 0.25, 0.1])
    gamma = 0.5
    inst = np.zeros((4, 4))
    inst[:, ALPHA], inst[:, Y], inst[:, BOUND] = new, y, C
    w = X.T @ (old * y) + gamma * (X.T @ ((new - old) * y))      # merged at gamma
    empty = np.zeros(0, dtype=np.int64)
    scale_visit(np.arange(4, dtype=np.int64), np.arange(4, dtype=np.int64), new - old, 4,
                gamma, l2_loss, inst, X.indptr.astype(np.int64), X.indices, X.data,
                empty, X.indices[:0], X.data[:0], w, 6, -1.0)
    at_bound = (new == 0.0) | ((new == C) & (not l2_loss))
    expected = np.where(at_bound, new, old + gamma * (new - old))
    assert np.allclose(inst[:, ALPHA], expected)
    assert inst[0, ALPHA] == 0.0
    assert np.allclose(w, X.T @ (inst[:, ALPHA] * y))


def test_a_ctrl_c_stops_a_visit_on_threads(tmp_path, monkeypatch):
    from dlinear.in_process import out_of_core
    from dlinear.threads import stop_flag
    monkeypatch.setattr(out_of_core, "visit_threads", lambda n_threads, blocks, w_size: 2)
    path, header = dataset(tmp_path)
    stop_flag()[0] = 1
    try:
        with pytest.raises(KeyboardInterrupt):
            train_out_of_core(path, Params(solver_type=1), small_budget(header))
    finally:
        stop_flag()[0] = 0


def test_direct_and_plain_reads_give_the_blocks_arrays(tmp_path):
    """BlockReader reads with O_DIRECT where the file system takes it (whole aligned
    pages, each array at its offset inside them) and with plain reads otherwise: the
    dataset's arrays either way, for blocks starting anywhere in the files, its two
    buffers taken in turn over two passes."""
    from dlinear.data.binary_format import read_range
    from dlinear.in_process.out_of_core import ALIGN, BlockReader, plan_blocks
    path, header = dataset(tmp_path)
    problem = read_binary(path)
    modes = []
    for direct in (True, False):
        reader = BlockReader(header, np.array(read_range(header, "indptr", 0, None)), [])
        reader.blocks, _ = plan_blocks(header, reader.bytes_per_nonzero,
                                       small_budget(header), resident_bytes(
                                           header.rows, header.n_features + 1, 1))
        assert len(reader.blocks) >= 4
        assert any(block.nnz[0] * 4 % ALIGN for block in reader.blocks)
        reader.direct = reader.direct and direct
        try:
            for _ in range(2):
                for b, (indptr, indices, data) in reader.pass_over(range(len(reader.blocks))):
                    (r0, r1), (z0, z1) = reader.blocks[b].rows, reader.blocks[b].nnz
                    assert np.array_equal(indptr, problem.indptr[r0:r1 + 1] - z0)
                    assert np.array_equal(indices, problem.indices[z0:z1])
                    assert np.array_equal(data, problem.data[z0:z1])
        finally:
            reader.close()
        modes.append(reader.direct)
    assert modes[1] is False


def test_multiclass_and_instance_weights(tmp_path):
    path, header = dataset(tmp_path, n_classes=3, seed=4, weights=True)
    params = Params(solver_type=1, C=1.0, eps=1e-3)
    model = train_out_of_core(path, params, small_budget(header, n_problems=3))
    problem = read_binary(path)
    reference = train(problem, params)
    assert list(model.label) == list(reference.label)
    f, f_ref = (primal_objective(problem, params, m) for m in (model, reference))
    assert abs(f - f_ref) <= 1e-4 * f_ref, (f, f_ref)


def test_fewer_passes_than_plain_block_minimization_would_take(tmp_path):
    """The cache of support vectors: -s 3 converges in fewer passes over the file than
    the in-memory solver takes iterations (each visit meets the other blocks' support
    vectors, not only their sum in w)."""
    path, header = dataset(tmp_path, seed=7)
    params = Params(solver_type=3, C=1.0, eps=1e-3)
    lines, in_memory = [], []
    train_out_of_core(path, params, small_budget(header), log=lines.append)
    train(read_binary(path), params, log=in_memory.append, n_threads=1)
    passes = float(next(l for l in lines if "passes" in l).split(",")[1].split()[0])
    iterations = int(next(l for l in in_memory if "#iter" in l).split("=")[1])
    assert passes < iterations, (passes, iterations)


def test_the_cache_keeps_each_blocks_support_rows_in_its_own_slot():
    """A refresh rewrites the visited block's slot only: every cached row is a copy of
    its row, the free rows come first, and no slot holds more than its bytes."""
    rng = np.random.default_rng(3)
    blocks, csr = [], []
    for b, n in enumerate((40, 60, 50)):
        lengths = rng.integers(1, 9, n)
        indptr = np.concatenate([[0], np.cumsum(lengths)])
        csr.append((indptr, rng.integers(0, 30, indptr[-1]).astype(np.int32),
                    rng.standard_normal(indptr[-1])))
        r0 = blocks[-1].rows[1] if blocks else 0
        blocks.append(Block((r0, r0 + n), (0, 0)))
    cache = RowCache(3000, blocks, np.int32, np.float64)
    alphas = [rng.choice([0.0, 0.5, 1.0], r1 - r0) for (r0, r1) in (b.rows for b in blocks)]

    def refresh(b):         # -s 3's informative rows: alpha > 0, those below C = 1 first
        cache.refresh(b, csr[b], blocks[b].rows[0], (alphas[b] > 0.0) & (alphas[b] < 1.0),
                      alphas[b] > 0.0)

    for b in range(3):
        refresh(b)
    before = [a.copy() for a in cache.arrays()]
    alphas[1] = rng.choice([0.0, 0.5, 1.0], 60)
    refresh(1)
    bounds, indices, data, rows = cache.arrays()
    assert np.all(rows >= -1)
    for j, row in enumerate(rows):
        if row < 0:         # a hole
            continue
        b = next(b for b, block in enumerate(blocks) if block.rows[0] <= row < block.rows[1])
        indptr, block_indices, block_data = csr[b]
        i = row - blocks[b].rows[0]
        assert alphas[b][i] > 0.0
        z0, z1 = bounds[2 * j], bounds[2 * j + 1]
        assert np.array_equal(indices[z0:z1], block_indices[indptr[i]:indptr[i + 1]])
        assert np.array_equal(data[z0:z1], block_data[indptr[i]:indptr[i + 1]])
    for b in range(3):
        mine = (rows >= blocks[b].rows[0]) & (rows < blocks[b].rows[1])
        taken = np.repeat(mine, 2)
        nnz = np.sum(bounds[taken][1::2] - bounds[taken][0::2])
        assert nnz * 12 + mine.sum() * RowCache.ROW_BYTES <= cache.slot_bytes[b]
        free = alphas[b] == 0.5
        if free.sum() > mine.sum():     # a full slot holds free rows only
            assert np.all(alphas[b][rows[mine] - blocks[b].rows[0]] == 0.5)
    # block 0's and 2's copies were not touched by block 1's refresh
    old_rows, new_rows = before[3], rows
    for b in (0, 2):
        lo, hi = blocks[b].rows
        assert np.array_equal(old_rows[(old_rows >= lo) & (old_rows < hi)],
                              new_rows[(new_rows >= lo) & (new_rows < hi)])


@pytest.mark.parametrize("n_threads", [1, 2])
def test_the_cache_holds_each_blocks_choice_through_many_refreshes(n_threads, monkeypatch):
    """Refreshes that keep most rows, drop some and add others (in place, with holes,
    moved to the end, packed; the copy on n_threads, skipping the rows already in
    place): after each, every block's cached rows are the rows its last refresh chose,
    free ones first, each a copy of its row."""
    from dlinear.in_process import row_cache
    copies, copy = [], row_cache.copy_cache_rows
    monkeypatch.setattr(row_cache, "copy_cache_rows",
                        lambda *a: copies.append((a[6], a[7])) or copy(*a))
    rng = np.random.default_rng(5)
    blocks, csr = [], []
    for n in (30, 50, 40, 20):
        indptr = np.concatenate([[0], np.cumsum(rng.integers(0, 7, n))])
        csr.append((indptr, rng.integers(0, 30, indptr[-1]).astype(np.int32),
                    rng.standard_normal(indptr[-1]).astype(np.float32)))
        r0 = blocks[-1].rows[1] if blocks else 0
        blocks.append(Block((r0, r0 + n), (0, 0)))
    cache = RowCache(2400, blocks, np.int32, np.float32, n_threads)
    alphas = [rng.choice([0.0, 0.5, 1.0], b.rows[1] - b.rows[0]) for b in blocks]
    chosen = [np.zeros(0, dtype=np.int64) for _ in blocks]
    moves, packs, pack = 0, [], cache._pack
    cache._pack = lambda: packs.append(pack())
    for step in range(200):
        b = int(rng.integers(len(blocks)))
        flip = rng.random(len(alphas[b])) < rng.choice([0.02, 0.1, 0.5])
        alphas[b][flip] = rng.choice([0.0, 0.5, 1.0], int(flip.sum()))
        free, support = (alphas[b] > 0.0) & (alphas[b] < 1.0), alphas[b] > 0.0
        before = cache.segment[b]
        cache.refresh(b, csr[b], blocks[b].rows[0], free, support)
        moves += int(cache.segment[b] != before)
        indptr = csr[b][0]
        used, rows = 0, []
        for i in [*np.flatnonzero(free), *np.flatnonzero(support & ~free)]:
            used += (indptr[i + 1] - indptr[i]) * 8 + RowCache.ROW_BYTES
            if used > cache.slot_bytes[b]:
                break
            rows.append(blocks[b].rows[0] + i)
        chosen[b] = np.array(rows, dtype=np.int64)
        bounds, indices, data, cached = cache.arrays()
        for c, block in enumerate(blocks):
            mine = np.flatnonzero((cached >= block.rows[0]) & (cached < block.rows[1]))
            assert np.array_equal(cached[mine], chosen[c])
            for j in mine:
                i = cached[j] - block.rows[0]
                z0, z1 = bounds[2 * j], bounds[2 * j + 1]
                block_indptr, block_indices, block_data = csr[c]
                assert np.array_equal(indices[z0:z1],
                                      block_indices[block_indptr[i]:block_indptr[i + 1]])
                assert np.array_equal(data[z0:z1],
                                      block_data[block_indptr[i]:block_indptr[i + 1]])
        assert np.all((cached == -1) | (cached >= 0))
    assert moves >= 3 and len(packs) >= 3, (moves, len(packs))
    # some refreshes left the slot as it was, some copied from a row past the first
    assert len(copies) < 200 * n_threads and any(j0 > 0 for j0, _ in copies)
    cache.close()


def test_a_budget_too_small_for_one_part_names_the_budget_it_needs(tmp_path):
    path, header = dataset(tmp_path)
    resident = resident_bytes(header.rows, header.n_features + 1, 1)
    with pytest.raises(DlinearError, match=r"leaves no room .* it needs at least"):
        train_out_of_core(path, Params(solver_type=1), resident + 1000)


def test_other_solvers_are_one_clear_error(tmp_path):
    path, _ = dataset(tmp_path)
    with pytest.raises(DlinearError, match=r"-s 5 does not train out of core: -s 1, 3, "
                                           r"7, 12 and 13 .* and -s 0, 2, 11"):
        train_out_of_core(path, Params(solver_type=5), 1 << 30)


@pytest.mark.parametrize("solver", [0, 2, 11])
def test_newton_streams_each_pass_and_reaches_the_in_memory_model(tmp_path, solver):
    path, header = dataset(tmp_path, seed=solver)
    if solver == 11:        # real-valued targets on the same rows
        path, header = regression_dataset(tmp_path, path)
    problem = read_binary(path)
    params = Params(solver_type=solver, C=1.0, eps=1e-4, bias=1.0)
    lines = []
    model = train_out_of_core(path, params, small_budget(header), log=lines.append)
    reference = train(problem, params, n_threads=1)
    f, f_ref = (primal_objective(problem, params, m) for m in (model, reference))
    assert abs(f - f_ref) <= 1e-8 * abs(f_ref), (f, f_ref)
    passes = next(line for line in lines if line.startswith("streamed Newton:") and
                  "passes" in line)
    assert int(passes.split(",")[1].split()[0]) > 3, passes


def test_dlinear_train_goes_out_of_core_when_the_budget_is_exceeded(tmp_path, capsys):
    from dlinear import load_model
    from dlinear.cli.train_predict import train_main
    path, header = dataset(tmp_path, seed=9)
    model_file = tmp_path / "m"
    budget = small_budget(header)
    assert train_main(["-s", "1", "-e", "0.001", "--memory", str(budget), path,
                       str(model_file)]) == 0
    err = capsys.readouterr().err
    assert "dlinear: -s 1 out of core: the data does not fit the memory budget" in err
    model = load_model(str(model_file))
    problem = read_binary(path)
    params = Params(solver_type=1, eps=1e-3)
    f, f_ref = (primal_objective(problem, params, m)
                for m in (model, train(problem, params)))
    assert abs(f - f_ref) <= 1e-4 * f_ref
    # a solver without an out-of-core method: one line, nothing written
    other = tmp_path / "m5"
    assert train_main(["-s", "5", "--memory", str(budget), path, str(other)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "training in memory needs about" in err
    assert "-s 1, 3, 7, 12 and 13 (one-variable dual CD) and -s 0, 2, 11 (Newton) train" in err
    assert not other.exists()


def test_data_over_the_budget_trains_out_of_core_where_a_local_cluster_would_pay(
        tmp_path, capsys, monkeypatch):
    """A local cluster's workers share this machine's memory: where the cost model would
    start one for a Newton fit, data over the budget still trains out of core here."""
    from types import SimpleNamespace

    from dlinear.cli.train_predict import train_main
    from dlinear.planning import modes
    monkeypatch.setattr(modes, "newton_estimate", lambda *a: SimpleNamespace(
        cluster_pays=True, workers=2, describe=lambda: "a local cluster pays"))
    path, header = dataset(tmp_path, seed=10)
    model_file = tmp_path / "m"
    assert train_main(["-s", "0", "--memory", str(small_budget(header)), path,
                       str(model_file)]) == 0
    err = capsys.readouterr().err
    assert "dlinear: -s 0 out of core: the data does not fit the memory budget" in err
    assert "cluster" not in err and model_file.exists()


@pytest.mark.parametrize("solver", [0, 1])
def test_wide_data_fits_on_its_occurring_columns(tmp_path, solver):
    """On hashed-wide data (most columns never occur) the fit's n-vectors take the
    occurring columns only, as in memory: the model has every column, zero where none
    occurs, and is the in-memory one."""
    rng = np.random.default_rng(11)
    n_rows, n_features = 3000, 1 << 18
    columns = rng.choice(n_features, 4000, replace=False)
    X = sp.random(n_rows, 4000, density=0.01, random_state=11, format="csr")
    X.data[:] = 1.0
    X = sp.csr_matrix((X.data, columns[X.indices], X.indptr), shape=(n_rows, n_features))
    X.sort_indices()
    y = np.where(X @ rng.standard_normal(n_features) > 0, 1.0, -1.0)
    write_libsvm(str(tmp_path / "wide.svm"), X, y)
    path = str(tmp_path / "wide.bin")
    header = convert_libsvm(str(tmp_path / "wide.svm"), path, part_text_bytes=1 << 14)
    assert header.occurring_columns < n_features // 2
    params = Params(solver_type=solver, C=1.0, eps=1e-4)
    budget = (resident_bytes(header.rows, header.occurring_columns + 1, 1, solver == 0)
              + (1 << 20) + int(header.nnz * 12 / 4 / 0.3))
    assert budget < resident_bytes(header.rows, n_features + 1, 1, solver == 0)
    model = train_out_of_core(path, params, budget)
    problem = read_binary(path)
    reference = train(problem, params)
    assert model.nr_feature == reference.nr_feature == header.n_features
    assert not model.w[np.setdiff1d(np.arange(header.n_features), columns)].any()
    f, f_ref = (primal_objective(problem, params, m) for m in (model, reference))
    assert abs(f - f_ref) <= 1e-4 * f_ref, (f, f_ref)


@pytest.mark.parametrize("solver", [1, 12])
def test_a_ctrl_c_stops_a_block_visit_within_a_step(tmp_path, monkeypatch, solver):
    """Block minimization's kernels read the Ctrl-C flag (dlinear.threads.stop_flag) a row
    at a time: with the flag set, the fit raises KeyboardInterrupt; with the raise taken
    out, no dual step is taken at all (w stays 0, where both start)."""
    from dlinear.in_process import out_of_core
    from dlinear.threads import stop_flag
    path, header = dataset(tmp_path)
    if solver == 12:
        path, header = regression_dataset(tmp_path, path)
    params = Params(solver_type=solver, max_iter=2)
    stop_flag()[0] = 1
    try:
        with pytest.raises(KeyboardInterrupt):
            train_out_of_core(path, params, small_budget(header))
        monkeypatch.setattr(out_of_core, "raise_if_stopped", lambda: None)
        stopped = train_out_of_core(path, params, small_budget(header))
    finally:
        stop_flag()[0] = 0
    assert not np.any(stopped.w)
    assert np.any(train_out_of_core(path, params, small_budget(header)).w)


def test_the_arrays_read_whole_leave_no_pages_in_the_page_cache(tmp_path, monkeypatch):
    """y and indptr (and the columns' list, on wide data) are copied into memory and their
    files' pages dropped: under a cgroup limit, pages left in the page cache stay charged
    to the process's group beside its budget."""
    import os
    path, header = dataset(tmp_path, weights=True)
    dropped, advise = [], os.posix_fadvise

    def spy(fd, offset, length, advice):
        if advice == os.POSIX_FADV_DONTNEED and offset == 0 and length == 0:
            dropped.append(os.path.realpath(f"/proc/self/fd/{fd}"))
        return advise(fd, offset, length, advice)
    monkeypatch.setattr(os, "posix_fadvise", spy)
    train_out_of_core(path, Params(solver_type=1, eps=0.1), small_budget(header))
    assert {os.path.realpath(header.file(name)) for name in ("y", "indptr", "weights")} \
        <= set(dropped), dropped
