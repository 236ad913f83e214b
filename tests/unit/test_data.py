"""LIBSVM text I/O: read_libsvm, parse_libsvm_bytes, line_aligned_ranges, write_libsvm."""
import os
import random

import numpy as np
import pytest
import scipy.sparse as sp

from dlinear.data.libsvm_reader import (
    MAX_FEATURE_INDEX,
    Problem,
    line_aligned_ranges,
    parse_libsvm_bytes,
    read_libsvm,
    write_libsvm,
)
from dlinear.errors import DlinearError
from tests.support.problems import (assert_same_problem, chunk_test_text, concatenate,
                                    mixed_file_text, same_bits)


def write_text(tmp_path, text, name="data.svm"):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(path)


# ------------------------------------------------------------------ accepted input


def test_basic_file_gives_csr_arrays(tmp_path):
    path = write_text(tmp_path, "1 1:0.5 3:2\n-1 2:1.5\n")
    p = read_libsvm(path)
    assert p.indptr.dtype == np.int64 and p.indices.dtype == np.int32
    assert p.data.dtype == np.float64 and p.y.dtype == np.float64
    assert p.indptr.tolist() == [0, 2, 3]
    assert p.indices.tolist() == [0, 2, 1]
    assert p.data.tolist() == [0.5, 2.0, 1.5]
    assert p.y.tolist() == [1.0, -1.0]
    assert p.n_features == 3


@pytest.mark.parametrize("label, value", [
    ("+1", 1.0), ("-1", -1.0), ("3", 3.0), ("2.5", 2.5), ("1e0", 1.0), ("-0.5E1", -5.0),
    ("0", 0.0), ("7.", 7.0),
])
def test_label_forms(tmp_path, label, value):
    p = read_libsvm(write_text(tmp_path, f"{label} 1:1\n"))
    assert p.y.tolist() == [value]


@pytest.mark.parametrize("text, value", [
    (".5", 0.5), ("-0.25", -0.25), ("1e-3", 1e-3), ("1E+2", 100.0), ("+3", 3.0),
    ("5.", 5.0), ("0", 0.0), ("-0", -0.0), ("0.0123456789", 0.0123456789), ("1e30", 1e30),
])
def test_value_forms(tmp_path, text, value):
    p = read_libsvm(write_text(tmp_path, f"1 4:{text}\n"))
    assert same_bits(p.data, [value])
    assert p.indices.tolist() == [3]


def test_tabs_and_repeated_separators(tmp_path):
    p = read_libsvm(write_text(tmp_path, "  1\t1:2 \t  3:4\t \n-1\t\t2:5   \n"))
    assert p.indptr.tolist() == [0, 2, 3]
    assert p.data.tolist() == [2.0, 4.0, 5.0]


def test_comments_blank_lines_and_label_only_lines(tmp_path):
    text = ("# header comment\n"
            "\n"
            "1 1:2 # trailing comment 9:9\n"
            "   \t \n"
            "-1# comment right after the label\n"
            "2 2:3#comment right after a value\n"
            "  # indented comment-only line\n"
            "3\n")
    p = read_libsvm(write_text(tmp_path, text))
    assert p.y.tolist() == [1.0, -1.0, 2.0, 3.0]
    assert p.indptr.tolist() == [0, 1, 1, 2, 2]
    assert p.indices.tolist() == [0, 1]
    assert p.n_features == 2


def test_qid_is_ignored(tmp_path):
    p = read_libsvm(write_text(tmp_path, "1 qid:3 1:2 4:1\n-1 qid:12 2:1\n"))
    assert p.indptr.tolist() == [0, 2, 3]
    assert p.indices.tolist() == [0, 3, 1]


def test_crlf_line_ends(tmp_path):
    p = read_libsvm(write_text(tmp_path, "1 1:2\r\n\r\n-1 2:3\r\n"))
    assert p.y.tolist() == [1.0, -1.0]
    assert p.data.tolist() == [2.0, 3.0]


def test_missing_final_newline(tmp_path):
    p = read_libsvm(write_text(tmp_path, "1 1:2\n-1 2:3"))
    assert p.indptr.tolist() == [0, 1, 2]
    assert p.data.tolist() == [2.0, 3.0]
    p = read_libsvm(write_text(tmp_path, "1 1:2\n-1", "b.svm"))
    assert p.indptr.tolist() == [0, 1, 1]


def test_n_features_argument(tmp_path):
    path = write_text(tmp_path, "1 1:2\n\n-1 3:1\n")
    assert read_libsvm(path).n_features == 3
    assert read_libsvm(path, n_features=10).n_features == 10
    with pytest.raises(DlinearError) as info:
        read_libsvm(path, n_features=2)
    assert str(info.value) == f"{path}: line 3: feature index 3 is larger than n_features=2"


def test_largest_allowed_index(tmp_path):
    p = read_libsvm(write_text(tmp_path, f"1 {MAX_FEATURE_INDEX}:1\n"))
    assert p.indices.tolist() == [MAX_FEATURE_INDEX - 1]
    assert p.n_features == MAX_FEATURE_INDEX


@pytest.mark.parametrize("codec, name", [("gzip", "t.gz"), ("gzip", "t.svm"), ("gzip", "t"),
                                         ("bz2", "t.txt"), ("lzma", "t")])
def test_compressed_input_is_known_by_its_first_bytes(tmp_path, codec, name):
    """gzip, bz2 and xz files are read through their codec whatever they are named, and
    a file named .gz that is plain text is read as text."""
    import bz2
    import gzip
    import lzma
    text = b"1 1:0.5 3:2\n-1 2:1\n"
    compress = {"gzip": gzip.compress, "bz2": bz2.compress, "lzma": lzma.compress}[codec]
    (tmp_path / name).write_bytes(compress(text))
    (tmp_path / "plain.gz").write_bytes(text)
    expected = parse_libsvm_bytes(text, "t")
    for path in (tmp_path / name, tmp_path / "plain.gz"):
        assert_same_problem(read_libsvm(str(path)), expected)


def test_missing_file_message(tmp_path):
    path = str(tmp_path / "nope.svm")
    with pytest.raises(DlinearError, match=r"^can't open input file .*nope\.svm$"):
        read_libsvm(path)
    with pytest.raises(DlinearError, match="can't open input file"):
        line_aligned_ranges(path, 2)


def test_parse_bytes_from_memory():
    text = b"1 1:2\n-1 2:3\n"
    from_bytes = parse_libsvm_bytes(text, "mem")
    from_array = parse_libsvm_bytes(np.frombuffer(text, dtype=np.uint8).copy(), "mem")
    assert_same_problem(from_bytes, from_array)
    with pytest.raises(DlinearError, match=r"^mem: line 7: label 'x' is not a number$"):
        parse_libsvm_bytes(b"1 1:2\nx 1:1\n", "mem", first_line=6)


# Lines the fast-path kernel leaves to the general one, from the line they are on.
UNUSUAL_LINES = ["1 qid:3 1:2", "-1 +2:0.5", "1 1:0.12345678901234567", "1 1:1e300",
                 "0.30000000000000004 2:1", "1 1:2e-30 4:1"]


@pytest.mark.parametrize("unusual", UNUSUAL_LINES)
def test_fast_path_kernel_stops_at_the_line_it_cannot_parse_and_the_general_goes_on(unusual):
    from dlinear.kernels import libsvm as kernel
    plain = ["1 1:0.5 3:2", "", "# comment 1:1", "-1 2:1.25e3", "  2 1:-7 2:.5"]
    lines = plain + [unusual] + plain + ["1 2:1"]
    text = "\n".join(lines) + "\n"
    buf = np.frombuffer(text.encode(), dtype=np.uint8)
    indptr = np.zeros(len(lines) + 2, dtype=np.int64)
    result = kernel.parse_fast_path_into(
        buf, MAX_FEATURE_INDEX, indptr, np.empty(20, dtype=np.int32), np.empty(20),
        np.empty(len(lines) + 1), 0, np.empty((64, 4), dtype=np.int64))
    error, line, start, n_rows, nnz = (result[0], result[1], result[2], result[5], result[6])
    assert error == kernel.NEEDS_GENERAL and line == len(plain)
    assert start == text.index("\n" + unusual + "\n") + 1
    assert (n_rows, nnz) == (3, 5)
    # the whole text parses as its lines one at a time do
    whole = parse_libsvm_bytes(text.encode(), "mem")
    one_by_one = [parse_libsvm_bytes((line + "\n").encode(), "mem", allow_empty=True)
                  for line in lines]
    assert_same_problem(whole, concatenate([p for p in one_by_one if p.n_samples]))
    # an error after the handover names its own line
    with pytest.raises(DlinearError, match=rf"^mem: line {len(lines) + 1}: label 'x'"):
        parse_libsvm_bytes((text + "x 1:1\n").encode(), "mem")


def test_empty_block_allowed_on_request():
    p = parse_libsvm_bytes(b"# only a comment\n\n", "block", allow_empty=True)
    assert p.n_samples == 0 and p.nnz == 0 and p.n_features == 0
    assert p.indptr.tolist() == [0]


# ------------------------------------------------------------------ rejected input


@pytest.mark.parametrize("text, line, problem", [
    ("1 1:2\n2 1:3\n\nabc 1:2\n", 4, "label 'abc' is not a number"),
    ("1 1:2\n1e 1:2\n", 2, "label '1e' is not a number"),
    ("1:2 3:4\n", 1, "label '1:2' is not a number"),
    ("1 1:2\n# comment\n1 1:x\n", 3, "value 'x' of feature 1 is not a number"),
    ("1 1:2 2:3x\n", 1, "value '3x' of feature 2 is not a number"),
    ("1 1:2\n1 4:\n", 2, "value '' of feature 4 is not a number"),
    ("1 1:2:3\n", 1, "value '2:3' of feature 1 is not a number"),
    ("1 1:0x10\n", 1, "value '0x10' of feature 1 is not a number"),
    ("1 1:2\n\n\n1 0:1\n", 4, "feature index 0 is less than 1 (indices are 1-based)"),
    ("1 -3:1\n", 1, "feature index -3 is less than 1 (indices are 1-based)"),
    ("1 1.5:2\n", 1, "feature index '1.5' is not an integer"),
    ("1 1:1\n1 a:2\n", 2, "feature index 'a' is not an integer"),
    ("1 :2\n", 1, "feature index '' is not an integer"),
    ("1 5:1 3:2\n", 1, "feature index 3 is not larger than the previous index 5"),
    ("1 1:1\n1 2:1 2:1\n", 2, "feature index 2 is not larger than the previous index 2"),
    ("nan 1:2\n", 1, "label 'nan' is NaN or infinity"),
    ("1 1:1\n-inf 1:2\n", 2, "label '-inf' is NaN or infinity"),
    ("1e999 1:2\n", 1, "label '1e999' is NaN or infinity"),
    ("1 1:NaN\n", 1, "value 'NaN' of feature 1 is NaN or infinity"),
    ("1 3:Infinity\n", 1, "value 'Infinity' of feature 3 is NaN or infinity"),
    ("1 1:1\n1 2:-1e400\n", 2, "value '-1e400' of feature 2 is NaN or infinity"),
    ("1 1:2 3\n", 1, "feature '3' has no ':' (expected index:value)"),
    ("1 1:1\n1 foo\n", 2, "feature 'foo' has no ':' (expected index:value)"),
    (f"1 {MAX_FEATURE_INDEX + 1}:1\n", 1, f"feature index {MAX_FEATURE_INDEX + 1} is larger than {MAX_FEATURE_INDEX}"),
    ("1 99999999999999999999:1\n", 1, f"feature index 99999999999999999999 is larger than {MAX_FEATURE_INDEX}"),
    ("1 1:2 qid:3\n", 1, "'qid:3': qid must come right after the label"),
    ("1 qid:x 1:2\n", 1, "'qid:x' is not an integer qid"),
    ("", 1, "file has no data"),
    ("# just a comment\n\n   \n", 1, "file has no data"),
])
def test_rejected_input_names_file_and_line(tmp_path, text, line, problem):
    path = write_text(tmp_path, text)
    with pytest.raises(DlinearError) as info:
        read_libsvm(path)
    message = str(info.value)
    assert message == f"{path}: line {line}: {problem}"
    assert "\n" not in message


def test_first_error_in_file_order_wins(tmp_path):
    # An overflowing value (found after the kernel, by float()) on line 2 comes before a
    # syntax error on line 3 (found by the kernel).
    path = write_text(tmp_path, "1 1:1\n1 1:1e999\n1 1:x\n")
    with pytest.raises(DlinearError, match=r": line 2: value '1e999'"):
        read_libsvm(path)


# ------------------------------------------------------------------ byte ranges


@pytest.mark.parametrize("n_parts", [1, 2, 3, 7])
def test_ranges_concatenate_to_whole_file(tmp_path, n_parts):
    text = mixed_file_text(300)
    path = write_text(tmp_path, text)
    ranges = line_aligned_ranges(path, n_parts)
    assert 1 <= len(ranges) <= n_parts
    assert ranges[0][0] == 0 and ranges[-1][1] == len(text)
    for (start, end, first_line), following in zip(ranges, ranges[1:] + [None]):
        assert start < end
        assert start == 0 or text[start - 1] == "\n"
        assert first_line == text.count("\n", 0, start) + 1
        if following is not None:
            assert following[0] == end
    parts = [read_libsvm(path, start=s, end=e, first_line=f, allow_empty=True) for s, e, f in ranges]
    assert_same_problem(concatenate(parts), read_libsvm(path))


def test_more_parts_than_lines(tmp_path):
    path = write_text(tmp_path, "1 1:1\n2 2:2\n")
    ranges = line_aligned_ranges(path, 50)
    assert ranges == [(0, 6, 1), (6, 12, 2)]
    assert line_aligned_ranges(write_text(tmp_path, "", "empty.svm"), 4) == [(0, 0, 1)]


def test_error_line_numbers_in_second_range_are_file_absolute(tmp_path):
    lines = mixed_file_text(200).splitlines()
    lines[150] = "1 3:1 2:1"
    path = write_text(tmp_path, "\n".join(lines) + "\n")
    (s1, e1, f1), (s2, e2, f2) = line_aligned_ranges(path, 2)
    assert f2 < 151
    read_libsvm(path, start=s1, end=e1, first_line=f1)
    expected = f"{path}: line 151: feature index 2 is not larger than the previous index 3"
    with pytest.raises(DlinearError) as info:
        read_libsvm(path, start=s2, end=e2, first_line=f2)
    assert str(info.value) == expected
    with pytest.raises(DlinearError) as info:
        read_libsvm(path)
    assert str(info.value) == expected


def test_range_must_lie_on_line_boundaries(tmp_path):
    path = write_text(tmp_path, "1 1:1\n2 2:2\n")
    with pytest.raises(DlinearError, match="does not start at a line start"):
        read_libsvm(path, start=2, end=12)
    with pytest.raises(DlinearError, match="does not end at a line end"):
        read_libsvm(path, start=0, end=4)
    with pytest.raises(DlinearError, match="not inside the file"):
        read_libsvm(path, start=0, end=100)


# ------------------------------------------------------------------ exact floats


TRICKY_TOKENS = [
    "0.1", "0.2", "0.3", "1e-320", "4.9e-324", "2e-324", "123456789012345678901234567890",
    "2.2250738585072014e-308", "2.2250738585072011e-308", "1.7976931348623157e308",
    "9007199254740993", "9007199254740992", "9007199254740991.5", "1e22", "1e23",
    "8.98846567431158e307", "0.000000000000000000000000000000000000001",
    "3.14159265358979323846264338327950288", "1.00000000000000011102230246251565",
    "123456789.123456789e-5", "-0.0", "0e999", "1e-400", "5e-324", "7.2057594037927933e16",
]


def test_tricky_tokens_equal_python_float(tmp_path):
    text = "".join(f"{t} 1:{t}\n" for t in TRICKY_TOKENS)
    p = read_libsvm(write_text(tmp_path, text))
    expected = [float(t) for t in TRICKY_TOKENS]
    assert same_bits(p.data, expected)
    assert same_bits(p.y, expected)


def random_decimal_token(rng):
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 21)))
    point = rng.randint(0, len(digits))
    token = rng.choice(["", "-", "+"]) + digits[:point] + "." + digits[point:]
    if rng.random() < 0.5:
        token += rng.choice("eE") + rng.choice(["", "-", "+"]) + str(rng.randint(0, 40))
    return token


def test_random_decimal_tokens_equal_python_float():
    rng = random.Random(7)
    tokens = [random_decimal_token(rng) for _ in range(30000)]
    rows = [tokens[i:i + 30] for i in range(0, len(tokens), 30)]
    text = "".join("0 " + " ".join(f"{j + 1}:{t}" for j, t in enumerate(row)) + "\n" for row in rows)
    p = parse_libsvm_bytes(text.encode(), "random")
    assert same_bits(p.data, [float(t) for t in tokens])


def special_doubles():
    return np.array([0.0, -0.0, 1.0, -1.0, 0.1, 1 / 3, 2.0**53, 2.0**53 + 2, 1e22, 1e23, 5e-324,
                     2.2250738585072014e-308, 1.7976931348623157e308, -123456.789, 1e-7, 1e16,
                     0.0123456789])


def test_random_doubles_round_trip_bit_identical(tmp_path):
    rng = np.random.default_rng(3)
    bits = rng.integers(0, 2**63, 20000, dtype=np.int64)
    from_bits = bits.view(np.float64)
    from_bits = from_bits[np.isfinite(from_bits)] * rng.choice([-1.0, 1.0], len(from_bits[np.isfinite(from_bits)]))
    values = np.concatenate([special_doubles(), from_bits, rng.random(20000),
                             np.round(rng.normal(size=5000), 4), rng.integers(-1000, 1000, 1000) * 1.0])
    n_rows = 1000
    indptr = np.linspace(0, len(values), n_rows + 1).astype(np.int64)
    indices = np.concatenate([np.arange(indptr[i + 1] - indptr[i]) * 3 for i in range(n_rows)]).astype(np.int32)
    labels = np.concatenate([special_doubles(), rng.random(n_rows - len(special_doubles()))])
    original = Problem(indptr, indices, values, labels, int(indices.max()) + 1)
    path = str(tmp_path / "round.svm")
    write_libsvm(path, original)
    assert_same_problem(read_libsvm(path), original)


def test_writer_formats_integers_as_integers(tmp_path):
    path = str(tmp_path / "w.svm")
    X = sp.csr_matrix(np.array([[1.0, 0.0, 2.5], [0.0, -3.0, 0.0], [0.0, 0.0, 0.0]]))
    write_libsvm(path, X, [1.0, -1.0, 2.5])
    assert open(path).read() == "1 1:1 3:2.5\n-1 2:-3\n2.5\n"


def test_writer_is_atomic_and_overwrites(tmp_path):
    path = tmp_path / "out.svm"
    path.write_text("old content\n")
    write_libsvm(str(path), np.array([[0.25, 0.0], [0.0, 1e-300]]), np.array([1, 2]))
    assert path.read_text() == "1 1:0.25\n2 2:1e-300\n"
    assert sorted(os.listdir(tmp_path)) == ["out.svm"]


def test_writer_rejects_bad_input(tmp_path):
    path = str(tmp_path / "bad.svm")
    with pytest.raises(DlinearError):
        write_libsvm(path, np.array([[np.nan]]), [1.0])
    with pytest.raises(DlinearError):
        write_libsvm(path, np.eye(2))  # no y
    unsorted = Problem(np.array([0, 2]), np.array([3, 1], dtype=np.int32), np.ones(2), np.ones(1), 4)
    with pytest.raises(DlinearError, match="not strictly increasing"):
        write_libsvm(path, unsorted)
    with pytest.raises(DlinearError, match="can't write output file .*no-such-dir"):
        write_libsvm(str(tmp_path / "no-such-dir" / "x.svm"), np.eye(2), [1, 2])
    assert os.listdir(tmp_path) == []


# ------------------------------------------------------------------ agreement with sklearn


def test_agrees_with_sklearn_load_svmlight_file(tmp_path):
    load_svmlight_file = pytest.importorskip("sklearn.datasets").load_svmlight_file
    rng = random.Random(11)
    lines = []
    for _ in range(500):
        columns = sorted(rng.sample(range(1, 2000), rng.randint(1, 40)))
        formats = ["{:.10f}", "{:.6g}", "{:.3e}", "{:d}", "{!r}"]
        features = []
        for c in columns:
            fmt = rng.choice(formats)
            v = rng.randint(-9, 9) if fmt == "{:d}" else rng.uniform(-100, 100)
            features.append(f"{c}:{fmt.format(v)}")
        lines.append(rng.choice(["1", "-1", "3", "0.5"]) + " " + " ".join(features))
    path = write_text(tmp_path, "\n".join(lines) + "\n")
    X, y = load_svmlight_file(path, zero_based=False, dtype=np.float64)
    X = sp.csr_matrix(X)
    X.sort_indices()
    ours = read_libsvm(path)
    assert np.array_equal(ours.indptr, X.indptr.astype(np.int64))
    assert np.array_equal(ours.indices, X.indices.astype(np.int32))
    assert same_bits(ours.data, X.data)
    assert same_bits(ours.y, y)
    assert ours.n_features == X.shape[1]


def test_line_aligned_ranges_across_read_chunks(tmp_path, monkeypatch):
    """Line starts and line numbers are right wherever the read chunks split the file."""
    import dlinear.data.libsvm_reader as data_module

    def reference(buf, n_parts):
        size = len(buf)
        starts = []
        for target in [k * size // n_parts for k in range(1, n_parts)]:
            s = target
            while s < size and not (s == 0 or buf[s - 1] == 10):
                s += 1
            starts.append(s)
        bounds = [0] + starts + [size]
        firsts = [1] + [buf[:s].count(b"\n") + 1 for s in starts]
        return [(bounds[i], bounds[i + 1], firsts[i]) for i in range(len(firsts))
                if bounds[i] < bounds[i + 1]]

    rng = np.random.default_rng(0)
    path = tmp_path / "f"
    for _ in range(60):
        buf = bytes(rng.choice([10, 49, 32, 58], size=int(rng.integers(1, 120)),
                               p=[0.2, 0.5, 0.2, 0.1]).astype(np.uint8))
        path.write_bytes(buf)
        for chunk in (1, 7, 1 << 20):
            monkeypatch.setattr(data_module, "_ALIGN_CHUNK_BYTES", chunk)
            for parts in (1, 2, 5, 40):
                assert line_aligned_ranges(path, parts) == reference(buf, parts)


def test_from_arrays_leaves_the_callers_matrix_alone():
    import scipy.sparse as sp
    X = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]), np.array([0, 3])),
                      shape=(1, 3))              # unsorted, with a duplicate column
    before = (X.data.copy(), X.indices.copy())
    problem = Problem.from_arrays(X, [1.0])
    np.testing.assert_array_equal(problem.indices, [0, 2])
    np.testing.assert_array_equal(problem.data, [2.0, 4.0])
    np.testing.assert_array_equal(X.data, before[0])
    np.testing.assert_array_equal(X.indices, before[1])


# ------------------------------------------------------------------ chunked reading


@pytest.mark.parametrize("chunk_bytes", [1, 5, 64, 1000, 1 << 20])
def test_chunked_read_equals_whole_buffer_parse(tmp_path, chunk_bytes):
    text = chunk_test_text()
    path = write_text(tmp_path, text)
    whole = parse_libsvm_bytes(text.encode(), path)
    assert_same_problem(read_libsvm(path, chunk_bytes=chunk_bytes), whole)
    # byte ranges of the same file, read in chunks, make up the same arrays
    ranges = line_aligned_ranges(path, 3)
    parts = [read_libsvm(path, start=s, end=e, first_line=f, allow_empty=True,
                         chunk_bytes=chunk_bytes) for s, e, f in ranges]
    assert_same_problem(concatenate(parts), whole)


@pytest.mark.parametrize("chunk_bytes", [3, 64, 1000])
@pytest.mark.parametrize("bad_line, replacement, problem", [
    (350, "1 4:1 2:1", "feature index 2 is not larger than the previous index 4"),
    (377, "1 1:1e999", "value '1e999' of feature 1 is NaN or infinity"),
    (398, "z 1:1", "label 'z' is not a number"),
])
def test_errors_across_chunks_name_file_and_line(tmp_path, chunk_bytes, bad_line, replacement,
                                                 problem):
    lines = chunk_test_text().split("\n")
    lines[bad_line - 1] = replacement
    path = write_text(tmp_path, "\n".join(lines) + "\n")
    expected = f"{path}: line {bad_line}: {problem}"
    with pytest.raises(DlinearError) as info:
        read_libsvm(path, chunk_bytes=chunk_bytes)
    assert str(info.value) == expected
    start, end, first_line = line_aligned_ranges(path, 2)[1]
    assert first_line < bad_line
    with pytest.raises(DlinearError) as info:
        read_libsvm(path, start=start, end=end, first_line=first_line, chunk_bytes=chunk_bytes)
    assert str(info.value) == expected


def test_reader_memory_is_the_arrays_plus_one_chunk(tmp_path):
    """Peak of everything NumPy and Python allocate while reading (tracemalloc sees
    NumPy's buffers): the result's arrays plus about one chunk, not the file's text."""
    import tracemalloc

    rng = np.random.default_rng(0)
    X = sp.random(20_000, 3_000, density=0.02, format="csr", random_state=rng)
    X.data = rng.uniform(0.01, 0.1, X.nnz)
    path = str(tmp_path / "big.svm")
    write_libsvm(path, X, np.where(rng.random(20_000) < 0.5, 1.0, -1.0))
    chunk = 256 << 10
    read_libsvm(path, chunk_bytes=chunk)          # compile outside the measurement
    tracemalloc.start()
    try:
        p = read_libsvm(path, chunk_bytes=chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    result = p.indptr.nbytes + p.indices.nbytes + p.data.nbytes + p.y.nbytes
    text = os.path.getsize(path)
    assert text > result            # the text alone would break the bound below
    assert p.nnz == X.nnz
    assert peak < 1.1 * result + 2 * chunk + (1 << 20), (peak, result, text)


def test_small_and_large_inputs_count_rows_alike(tmp_path, monkeypatch):
    """A small input sizes the arrays by NumPy's counts, a large one by the kernel's: the
    same problem either way, also when the text grows the arrays chunk by chunk."""
    import dlinear.data.libsvm_reader as data_module

    path = tmp_path / "f"
    path.write_text("".join(f"{i % 3 - 1} {i % 7 + 1}:0.5 {i % 7 + 9}:-2e-3 # c:\n\n"
                            for i in range(3000)))
    monkeypatch.setattr(data_module, "READ_CHUNK_BYTES", 1000)
    small = read_libsvm(path)
    monkeypatch.setattr(data_module, "_NUMPY_COUNT_BYTES", 0)
    assert_same_problem(read_libsvm(path), small)
    assert small.n_samples == 3000 and small.nnz == 6000
