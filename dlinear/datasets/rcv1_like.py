"""Deterministic synthetic data shaped like rcv1 (sparse tf-idf text, planted linear labels).

`make_rcv1_like(n_samples, ...)` returns a `Problem` whose rows look like rcv1's: each row
is a bag of words drawn from a Zipf-Mandelbrot vocabulary (so a few features occur in
most rows and most features in few) plus words of two latent topics, valued
(1 + ln tf) * idf and scaled to unit L2 norm. Labels come from a planted sparse linear
model over the topic words (sign of X w for 2 classes, argmax of X W for k) with a little
score noise and a fraction `label_noise` of flipped labels, so a linear SVM learns the
problem well but not perfectly (LinearSVC on 20k default rows: ~95% test accuracy).

Determinism. Every random number comes from PCG64 streams keyed by
`SeedSequence(seed, spawn_key=(purpose, block))`, where a block is a fixed run of
`ROWS_PER_BLOCK` rows; rows are drawn block by block, so the output never depends on how
much is generated at once (nor on the thread count: nothing here runs in parallel).
Only `Generator.random()` / `integers()` / `permutation()` are used, whose streams are
plain bit manipulation. Past the draws, floating-point values are computed with IEEE
basic operations only (+ - * / sqrt, in fixed order inside Numba kernels compiled without
fastmath); the logarithms are a short series of those, not libm's or NumPy's SIMD `log`,
whose last bits differ between CPUs. Same arguments, same NumPy -> bit-identical arrays.

Train and test sets: `make_rcv1_like_split(n_train, n_test, ...)` draws both from one
planted model (vocabulary, idf, true weights, class offsets); the train part equals
`make_rcv1_like(n_train, ...)` and the test rows come from a stream of their own.

Command line: `main(argv)` (`python -m dlinear make-data`) writes LIBSVM text files.
"""
from __future__ import annotations

import argparse
import math
import numbers
import sys
from dataclasses import dataclass

import numpy as np
from numba import njit

from .click_like import CLICK_NONZEROS_PER_ROW, click_like_parts, make_click_like_split
from ..data.libsvm_reader import Problem
from ..errors import DlinearError

# Rows drawn from one random stream. Fixed forever: changing it changes every data set.
ROWS_PER_BLOCK = 4096

# Rows of the reference corpus that fixes idf and the class offsets (rcv1's idf came from
# its ~23k training documents).
CALIBRATION_ROWS = 4 * ROWS_PER_BLOCK

# Word rank r (0-based) is drawn with probability proportional to 1 / (r + 1 + offset):
# Zipf's law with exponent 1 and a Mandelbrot offset flattening the very top ranks.
ZIPF_OFFSET = 10.0

# Distinct words per row: log-logistic of shape 4, median * (u / (1 - u))**(1/4) with u
# uniform, a lognormal-like spread (coefficient of variation ~0.5) that
# needs only square roots. Its mean / median is (pi / 4) / sin(pi / 4):
_ROW_LENGTH_MEAN_OVER_MEDIAN = math.pi / (2.0 * math.sqrt(2.0))

# A row stops drawing words after this many tokens per wanted distinct word (plus a
# constant), so a row asking for nearly the whole vocabulary cannot run for ever.
TOKENS_PER_WORD_BUDGET = 64
TOKENS_EXTRA_BUDGET = 4096

# Topics make the data learnable the way text is: TOPIC_TOKEN_SHARE of a row's tokens are
# words of two random topics, the rest background Zipf words. The row's main topic gets a
# share 1 - u**2 / 2 (u uniform) of the topic tokens, so most rows have a clear topic and
# a few mix two nearly evenly (the hard cases near the planted boundary). A topic owns
# TOPIC_WORDS_FRACTION of the vocabulary (at least MIN_TOPIC_WORDS words), drawn from the
# mid-frequency ranks (below the top 1%, above the rarest 3/4), like the content words of
# an rcv1 category. The planted weights live on these words only.
TOPICS_PER_CLASS = 8
TOPIC_TOKEN_SHARE = 0.3
TOPIC_WORDS_FRACTION = 0.002
MIN_TOPIC_WORDS = 8

# Gaussian-like score noise, as a fraction of the clean scores' standard deviation.
SCORE_NOISE = 0.05

# Stream purposes (first spawn-key word).
_MODEL, _CALIBRATION, _TRAIN, _TEST = 0, 1, 2, 3

_LN2 = 0.6931471805599453
_SQRT_HALF = 0.7071067811865476
_SQRT_3 = 1.7320508075688772


# --------------------------------------------------------------------------- kernels

@njit(cache=True, nogil=True)
def _portable_log(x):
    """ln(x) for finite x > 0 from IEEE basic operations only (about 1 ulp), so that
    every machine gets the same bits."""
    mantissa, exponent = math.frexp(x)          # exact: x = mantissa * 2**exponent
    if mantissa < _SQRT_HALF:                   # keep mantissa in [sqrt(1/2), sqrt(2))
        mantissa *= 2.0
        exponent -= 1
    s = (mantissa - 1.0) / (mantissa + 1.0)     # |s| <= 0.172
    s2 = s * s
    term = s
    total = s
    for k in range(3, 41, 2):                   # ln m = 2 atanh(s) = 2 (s + s^3/3 + ...)
        term *= s2
        total += term / k
    return exponent * _LN2 + 2.0 * total


@njit(cache=True, nogil=True)
def _portable_log_array(x):
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = _portable_log(x[i])
    return out


@njit(cache=True, nogil=True)
def _zipf_tables(n_features, offset):
    """Cumulative rank probabilities and a guide table mapping floor(u * n) to the first
    rank whose cumulative probability exceeds u / n, for O(1) inverse-CDF sampling."""
    cdf = np.empty(n_features)
    total = 0.0
    for r in range(n_features):
        total += 1.0 / (r + 1.0 + offset)
        cdf[r] = total
    for r in range(n_features):
        cdf[r] /= total
    cdf[n_features - 1] = 1.0                   # every u in [0, 1) lands on a rank
    guide = np.empty(n_features, np.int64)
    r = 0
    for g in range(n_features):
        threshold = g / n_features
        while cdf[r] <= threshold:
            r += 1
        guide[g] = r
    return cdf, guide


@njit(cache=True, nogil=True)
def _draw_bags_of_words(rng, distinct_wanted, row_topics, row_mix, topic_words, topic_share,
                        cdf, guide, rank_to_column, tokens_per_word, tokens_extra):
    """Each row draws word tokens until it holds `distinct_wanted[i]` distinct words (or
    runs out of token budget). A token is, with probability topic_share, a uniform word of
    topic row_topics[i, 0] (share row_mix[i] of those tokens) or row_topics[i, 1], else a
    background Zipf word; one uniform decides it all. Returns CSR indptr, sorted column
    ids and term counts."""
    n_rows = distinct_wanted.shape[0]
    n_features = cdf.shape[0]
    words_per_topic = topic_words.shape[1]
    capacity = 0
    for i in range(n_rows):
        capacity += distinct_wanted[i]
    indptr = np.zeros(n_rows + 1, np.int64)
    columns = np.empty(capacity, np.int32)
    counts = np.empty(capacity, np.int32)
    row_last_seen = np.full(n_features, -1, np.int64)   # avoids clearing a mask per row
    slot_of_column = np.empty(n_features, np.int64)
    pos = 0
    for i in range(n_rows):
        start = pos
        wanted = distinct_wanted[i]
        budget = tokens_per_word * wanted + tokens_extra
        tokens = 0
        while pos - start < wanted and tokens < budget:
            u = rng.random()
            if u < topic_share:
                v = u / topic_share                     # uniform in [0, 1) again
                mix = row_mix[i]
                if v < mix or mix >= 1.0:               # (v may round up to 1.0)
                    topic = row_topics[i, 0]
                    word = int(v / mix * words_per_topic)
                else:
                    topic = row_topics[i, 1]
                    word = int((v - mix) / (1.0 - mix) * words_per_topic)
                col = topic_words[topic, min(word, words_per_topic - 1)]
            else:
                v = (u - topic_share) / (1.0 - topic_share)
                rank = guide[min(int(v * n_features), n_features - 1)]
                while cdf[rank] <= v and rank < n_features - 1:   # v may round to 1.0
                    rank += 1
                col = rank_to_column[rank]
            if row_last_seen[col] != i:
                row_last_seen[col] = i
                slot_of_column[col] = pos
                columns[pos] = col
                counts[pos] = 1
                pos += 1
            else:
                counts[slot_of_column[col]] += 1
            tokens += 1
        # sort the row by column, carrying the counts along in the low 32 bits
        keys = np.empty(pos - start, np.int64)
        for t in range(pos - start):
            keys[t] = (np.int64(columns[start + t]) << 32) | np.int64(counts[start + t])
        keys.sort()
        for t in range(pos - start):
            columns[start + t] = np.int32(keys[t] >> 32)
            counts[start + t] = np.int32(keys[t] & 0xFFFFFFFF)
        indptr[i + 1] = pos
    return indptr, columns[:pos].copy(), counts[:pos].copy()


@njit(cache=True, nogil=True)
def _tfidf_unit_rows(indptr, columns, counts, idf):
    """(1 + ln tf) * idf, each row scaled to unit L2 norm (sequential sums: fixed order)."""
    data = np.empty(columns.shape[0])
    for i in range(indptr.shape[0] - 1):
        squares = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            value = (1.0 + _portable_log(float(counts[p]))) * idf[columns[p]]
            data[p] = value
            squares += value * value
        if squares > 0.0:
            norm = math.sqrt(squares)
            for p in range(indptr[i], indptr[i + 1]):
                data[p] /= norm
    return data


@njit(cache=True, nogil=True)
def _linear_scores(indptr, columns, data, weights):
    """X @ weights for CSR X and dense weights (n_features x n_outputs), fixed order."""
    n_rows = indptr.shape[0] - 1
    n_outputs = weights.shape[1]
    scores = np.zeros((n_rows, n_outputs))
    for i in range(n_rows):
        for p in range(indptr[i], indptr[i + 1]):
            for c in range(n_outputs):
                scores[i, c] += data[p] * weights[columns[p], c]
    return scores


@njit(cache=True, nogil=True)
def _standard_deviation(values):
    total = 0.0
    for v in values:
        total += v
    mean = total / values.shape[0]
    squares = 0.0
    for v in values:
        squares += (v - mean) * (v - mean)
    return math.sqrt(squares / values.shape[0])


# --------------------------------------------------------------------------- model

def _stream(seed: int, purpose: int, block: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(purpose, block)))


def _approx_standard_normal(rng: np.random.Generator, size) -> np.ndarray:
    """Irwin-Hall: a sum of 4 uniforms, centred and scaled to unit variance. Good enough
    for noise and weights, and free of the libm calls inside NumPy's normal sampler."""
    u = rng.random((4,) + tuple(np.atleast_1d(size)))
    return (u[0] + u[1] + u[2] + u[3] - 2.0) * _SQRT_3


@dataclass
class _PlantedModel:
    seed: int
    n_features: int
    n_classes: int
    nnz_per_row: float
    label_noise: float
    cdf: np.ndarray               # word-rank cumulative probabilities
    guide: np.ndarray             # guide table into cdf
    rank_to_column: np.ndarray    # int32: popularity rank -> feature id
    topic_words: np.ndarray       # int32, n_topics x words_per_topic feature ids
    idf: np.ndarray               # per feature id
    weights: np.ndarray           # n_features x (1 if binary else n_classes)
    offsets: np.ndarray           # added to the scores to balance the classes
    noise_scale: float            # standard deviation of the score noise


def _distinct_words_wanted(rng, n_rows, nnz_per_row, n_features) -> np.ndarray:
    median = nnz_per_row / _ROW_LENGTH_MEAN_OVER_MEDIAN
    u = rng.random(n_rows)
    spread = np.sqrt(np.sqrt(u / (1.0 - u)))    # (u / (1 - u)) ** (1 / 4)
    wanted = np.floor(median * spread + 0.5).astype(np.int64)
    return np.clip(wanted, 1, n_features)


def _draw_rows_structure(model: _PlantedModel, rng, n_rows):
    wanted = _distinct_words_wanted(rng, n_rows, model.nnz_per_row, model.n_features)
    row_topics = rng.integers(0, model.topic_words.shape[0], (n_rows, 2))
    u = rng.random(n_rows)
    row_mix = 1.0 - 0.5 * (u * u)        # main topic's share of the topic tokens
    return _draw_bags_of_words(rng, wanted, row_topics, row_mix, model.topic_words,
                               TOPIC_TOKEN_SHARE, model.cdf, model.guide,
                               model.rank_to_column, TOKENS_PER_WORD_BUDGET,
                               TOKENS_EXTRA_BUDGET)


def _noisy_scores(model: _PlantedModel, rng, indptr, columns, data) -> np.ndarray:
    scores = _linear_scores(indptr, columns, data, model.weights)
    noise = _approx_standard_normal(rng, scores.shape)
    return scores + model.noise_scale * noise


def _labels_from_scores(model: _PlantedModel, rng, scores) -> np.ndarray:
    n_rows = scores.shape[0]
    flip = rng.random(n_rows) < model.label_noise
    if model.n_classes == 2:
        positive = scores[:, 0] + model.offsets[0] > 0.0
        y = np.where(positive != flip, 1.0, -1.0)
    else:
        shifted = np.empty(n_rows, np.int64)   # class to move to when flipped: never the same
        shifted[:] = rng.integers(1, model.n_classes, n_rows)
        klass = np.argmax(scores + model.offsets, axis=1)
        klass = np.where(flip, (klass + shifted) % model.n_classes, klass)
        y = (klass + 1).astype(np.float64)
    return y


def _balance_offsets(scores: np.ndarray, n_classes: int) -> np.ndarray:
    """Offsets making the classes about equally frequent on the calibration rows."""
    if n_classes == 2:
        return np.array([-np.median(scores[:, 0])])
    offsets = np.zeros(n_classes)
    step = _standard_deviation(scores.ravel())
    target = 1.0 / n_classes
    for _ in range(300):
        shares = np.bincount(np.argmax(scores + offsets, axis=1),
                             minlength=n_classes) / scores.shape[0]
        offsets -= step * (shares - target)
        step *= 0.98
    return offsets


def _build_model(seed, n_features, n_classes, nnz_per_row, label_noise) -> _PlantedModel:
    rng = _stream(seed, _MODEL, 0)
    cdf, guide = _zipf_tables(n_features, ZIPF_OFFSET)
    rank_to_column = rng.permutation(n_features).astype(np.int32)
    n_outputs = 1 if n_classes == 2 else n_classes

    # Topic vocabularies: random mid-frequency words (topics may share words when the
    # vocabulary is small).
    n_topics = TOPICS_PER_CLASS * n_classes
    first_rank = n_features // 100
    band = max(1, n_features // 4 - first_rank)
    words_per_topic = min(band, max(MIN_TOPIC_WORDS,
                                    int(TOPIC_WORDS_FRACTION * n_features)))
    topic_words = np.empty((n_topics, words_per_topic), np.int32)
    for topic in range(n_topics):
        ranks = first_rank + rng.permutation(band)[:words_per_topic]
        topic_words[topic] = rank_to_column[ranks]

    # The planted weights: topic t speaks for class t mod n_classes; for two classes that
    # is +1 for even t and -1 for odd t on a single weight vector.
    magnitudes = 0.5 + rng.random((n_topics, words_per_topic))
    weights = np.zeros((n_features, n_outputs))
    for topic in range(n_topics):
        if n_classes == 2:
            sign = 1.0 if topic % 2 == 0 else -1.0
            np.add.at(weights[:, 0], topic_words[topic], sign * magnitudes[topic])
        else:
            np.add.at(weights[:, topic % n_classes], topic_words[topic], magnitudes[topic])

    model = _PlantedModel(seed, n_features, n_classes, float(nnz_per_row), float(label_noise),
                          cdf, guide, rank_to_column, topic_words, np.ones(n_features),
                          weights,
                          np.zeros(n_outputs), 0.0)

    # A reference corpus fixes idf (smoothed, as in scikit-learn) and the class balance.
    streams, parts = [], []
    for block in range(CALIBRATION_ROWS // ROWS_PER_BLOCK):
        streams.append(_stream(seed, _CALIBRATION, block))
        parts.append(_draw_rows_structure(model, streams[-1], ROWS_PER_BLOCK))
    document_frequency = np.zeros(n_features, np.int64)
    for _, columns, _ in parts:
        document_frequency += np.bincount(columns, minlength=n_features)
    model.idf = 1.0 + _portable_log_array(
        (CALIBRATION_ROWS + 1.0) / (document_frequency + 1.0))
    clean, noisy = [], []
    for rng_block, (indptr, columns, counts) in zip(streams, parts):
        data = _tfidf_unit_rows(indptr, columns, counts, model.idf)
        scores = _linear_scores(indptr, columns, data, weights)
        clean.append(scores)
        noisy.append((scores, _approx_standard_normal(rng_block, scores.shape)))
    model.noise_scale = SCORE_NOISE * _standard_deviation(np.concatenate(clean).ravel())
    noisy_scores = np.concatenate([s + model.noise_scale * z for s, z in noisy])
    model.offsets = _balance_offsets(noisy_scores, n_classes)
    return model


def _draw_rows(model: _PlantedModel, purpose: int, n_rows: int, blocks=None) -> Problem:
    """Rows of the first n_rows, those of `blocks` (a range of block numbers; default all)."""
    if blocks is None:
        blocks = range(math.ceil(n_rows / ROWS_PER_BLOCK))
    indptr_parts, column_parts, data_parts, label_parts = [], [], [], []
    nnz_before = 0
    for block in blocks:
        first_row = block * ROWS_PER_BLOCK
        rng = _stream(model.seed, purpose, block)
        indptr, columns, counts = _draw_rows_structure(
            model, rng, min(ROWS_PER_BLOCK, n_rows - first_row))
        data = _tfidf_unit_rows(indptr, columns, counts, model.idf)
        label_parts.append(_labels_from_scores(
            model, rng, _noisy_scores(model, rng, indptr, columns, data)))
        indptr_parts.append(indptr[1:] + nnz_before)
        nnz_before += int(indptr[-1])
        column_parts.append(columns)
        data_parts.append(data)
    indptr_all = np.concatenate([np.zeros(1, np.int64)] + indptr_parts)
    return Problem(
        indptr=indptr_all,
        indices=np.concatenate(column_parts) if column_parts else np.zeros(0, np.int32),
        data=np.concatenate(data_parts) if data_parts else np.zeros(0),
        y=np.concatenate(label_parts) if label_parts else np.zeros(0),
        n_features=model.n_features,
    )


def _check_arguments(counts: dict, n_features, n_classes, nnz_per_row, label_noise, seed):
    for name, value in counts.items():
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
            raise DlinearError(f"{name} must be a non-negative integer, got {value!r}")
    if not isinstance(n_features, numbers.Integral) or n_features < 1 or n_features >= 2**31:
        raise DlinearError(f"n_features must be an integer in [1, 2**31), got {n_features!r}")
    if not isinstance(n_classes, numbers.Integral) or n_classes < 2:
        raise DlinearError(f"n_classes must be an integer >= 2, got {n_classes!r}")
    if not isinstance(nnz_per_row, numbers.Real) or not 1 <= nnz_per_row <= n_features:
        raise DlinearError(f"nnz_per_row must be in [1, n_features={n_features}], "
                           f"got {nnz_per_row!r}")
    if not isinstance(label_noise, numbers.Real) or not 0.0 <= label_noise <= 1.0:
        raise DlinearError(f"label_noise must be in [0, 1], got {label_noise!r}")
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
        raise DlinearError(f"seed must be a non-negative integer, got {seed!r}")


# --------------------------------------------------------------------------- public API

def make_rcv1_like(n_samples: int, n_features: int = 47236, n_classes: int = 2,
                   nnz_per_row: float = 75, label_noise: float = 0.02,
                   seed: int = 0) -> Problem:
    """`n_samples` rcv1-like rows (see the module docstring).

    Labels are exactly +1.0 / -1.0 for n_classes == 2, else 1.0 .. n_classes. The rows hold
    `nnz_per_row` distinct features on average (at least 1, at most n_features), column
    ids sorted, values tf-idf with unit L2 norm per row. Same arguments -> bit-identical
    arrays.
    """
    return make_rcv1_like_split(n_samples, 0, n_features=n_features, n_classes=n_classes,
                                nnz_per_row=nnz_per_row, label_noise=label_noise,
                                seed=seed)[0]


def make_rcv1_like_split(n_train: int, n_test: int, n_features: int = 47236,
                         n_classes: int = 2, nnz_per_row: float = 75,
                         label_noise: float = 0.02, seed: int = 0) -> tuple[Problem, Problem]:
    """(train, test): two samples of one planted model. The train part equals
    `make_rcv1_like(n_train, ...)` with the same keywords; the test rows come from their
    own random stream, so they do not change with n_train."""
    _check_arguments({"n_train": n_train, "n_test": n_test}, n_features, n_classes,
                     nnz_per_row, label_noise, seed)
    model = _build_model(int(seed), int(n_features), int(n_classes), nnz_per_row, label_noise)
    return _draw_rows(model, _TRAIN, int(n_train)), _draw_rows(model, _TEST, int(n_test))


def rcv1_like_parts(n_train: int, n_test: int, part_rows: int, n_features: int = 47236,
                    n_classes: int = 2, nnz_per_row: float = 75, label_noise: float = 0.02,
                    seed: int = 0) -> tuple:
    """(train parts, test parts): make_rcv1_like_split's rows as two iterators of Problems
    of about `part_rows` rows each (whole blocks of ROWS_PER_BLOCK), drawn as they are
    taken, so that a set larger than memory can be written part by part."""
    _check_arguments({"n_train": n_train, "n_test": n_test}, n_features, n_classes,
                     nnz_per_row, label_noise, seed)
    model = _build_model(int(seed), int(n_features), int(n_classes), nnz_per_row, label_noise)
    per_part = max(1, int(part_rows) // ROWS_PER_BLOCK)

    def parts(purpose, n_rows):
        n_blocks = math.ceil(n_rows / ROWS_PER_BLOCK)
        for first in range(0, n_blocks, per_part):
            yield _draw_rows(model, purpose, n_rows,
                             range(first, min(n_blocks, first + per_part)))
    return parts(_TRAIN, int(n_train)), parts(_TEST, int(n_test))


def round_values(problem: Problem, decimals: int) -> Problem:
    """A copy with the feature values rounded to `decimals` decimal places (at least
    10**-decimals, so no stored zeros appear): short LIBSVM text, rows unit norm only to
    about 10**-decimals, as in the files rcv1 is distributed in."""
    if not isinstance(decimals, numbers.Integral) or not 1 <= decimals <= 15:
        raise DlinearError(f"decimals must be an integer in [1, 15], got {decimals!r}")
    data = np.maximum(np.round(problem.data, int(decimals)), 10.0 ** -int(decimals))
    return Problem(indptr=problem.indptr.copy(), indices=problem.indices.copy(), data=data,
                   y=problem.y.copy(), n_features=problem.n_features)


# --------------------------------------------------------------------------- command line

def _argument_parser(prog: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Write a deterministic rcv1-like or click-log-like data set in LIBSVM "
                    "format: OUT_PREFIX.train and, with --test-rows, OUT_PREFIX.test.")
    parser.add_argument("out_prefix", metavar="OUT_PREFIX")
    parser.add_argument("--shape", choices=("rcv1", "click"), default="rcv1",
                        help="rcv1: tf-idf text (default); click: 13 counts and 26 "
                             "categorical fields hashed into 2**hash-bits columns "
                             "(--features, --classes, --nnz-per-row and --label-noise "
                             "do not apply)")
    parser.add_argument("--hash-bits", type=int, default=24,
                        help="--shape click: columns = 2**hash-bits (default 24)")
    parser.add_argument("--rows", type=int, required=True, help="training rows")
    parser.add_argument("--test-rows", type=int, default=0,
                        help="test rows from the same planted model (default 0: no test file)")
    parser.add_argument("--features", type=int, default=47236, help="default 47236")
    parser.add_argument("--classes", type=int, default=2, help="default 2 (labels +1/-1)")
    parser.add_argument("--nnz-per-row", type=float, default=75.0,
                        help="mean distinct features per row (default 75)")
    parser.add_argument("--label-noise", type=float, default=0.02,
                        help="fraction of labels flipped (default 0.02)")
    parser.add_argument("--seed", type=int, default=0, help="default 0")
    parser.add_argument("--decimals", type=int, default=None,
                        help="round values to this many decimal places for smaller files "
                             "(default: full precision, exact round trip)")
    parser.add_argument("--binary", action="store_true",
                        help="write binary dataset directories OUT_PREFIX.train.bin (and "
                             "OUT_PREFIX.test.bin) instead of text, a part at a time: sets "
                             "larger than memory")
    parser.add_argument("--float32", action="store_true",
                        help="--binary: store 4-byte values (and 2-byte column ids where "
                             "the columns fit)")
    return parser


def main(argv=None, prog: str = "dlinear make-data") -> int:
    """The `make-data` command: writes OUT_PREFIX.train (and OUT_PREFIX.test). Returns the
    exit status: 0, or 1 after a one-line message on stderr for a user error."""
    args = _argument_parser(prog).parse_args(argv)
    from ..data.libsvm_reader import write_libsvm
    try:
        if args.float32 and not args.binary:
            raise DlinearError("--float32 applies to --binary output only")
        if args.binary:
            _write_binary(args)
            return 0
        if args.shape == "click":
            train, test = make_click_like_split(args.rows, args.test_rows,
                                                hash_bits=args.hash_bits, seed=args.seed)
        else:
            train, test = make_rcv1_like_split(
                args.rows, args.test_rows, n_features=args.features, n_classes=args.classes,
                nnz_per_row=args.nnz_per_row, label_noise=args.label_noise, seed=args.seed)
        outputs = [(f"{args.out_prefix}.train", train)]
        if args.test_rows > 0:
            outputs.append((f"{args.out_prefix}.test", test))
        for path, problem in outputs:
            if args.decimals is not None:
                problem = round_values(problem, args.decimals)
            write_libsvm(path, problem)
            print(f"wrote {path}: {problem.n_samples} rows, {problem.n_features} features, "
                  f"{problem.nnz} nonzeros")
    except DlinearError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 1
    return 0


def _write_binary(args) -> None:
    """make-data --binary: each set drawn and written a part of about PART_TEXT_BYTES'
    worth of nonzeros at a time (float64 values and int32 ids: 12 bytes a nonzero)."""
    from ..data.binary_format import PART_TEXT_BYTES, write_binary_dataset
    if args.shape == "click":
        part_rows = PART_TEXT_BYTES // (12 * CLICK_NONZEROS_PER_ROW)
        train, test = click_like_parts(args.rows, args.test_rows, part_rows,
                                       hash_bits=args.hash_bits, seed=args.seed)
    else:
        part_rows = int(PART_TEXT_BYTES // (12 * args.nnz_per_row))
        train, test = rcv1_like_parts(
            args.rows, args.test_rows, part_rows, n_features=args.features,
            n_classes=args.classes, nnz_per_row=args.nnz_per_row,
            label_noise=args.label_noise, seed=args.seed)
    outputs = [(f"{args.out_prefix}.train.bin", train)]
    if args.test_rows > 0:
        outputs.append((f"{args.out_prefix}.test.bin", test))
    for path, parts in outputs:
        if args.decimals is not None:
            parts = (round_values(part, args.decimals) for part in parts)
        parts = (_as_read(part) for part in parts)
        header = write_binary_dataset(path, parts,
                                      np.float32 if args.float32 else np.float64)
        print(f"wrote {path}: {header.rows} rows, {header.n_features} features, "
              f"{header.nnz} nonzeros")


def _as_read(part: Problem) -> Problem:
    """part with the column count a LIBSVM reader gives its text (the largest column id
    used, 1-based), so that the dataset equals the text's converted one."""
    used = int(part.indices.max()) + 1 if part.nnz else 0
    return Problem(indptr=part.indptr, indices=part.indices, data=part.data, y=part.y,
                   n_features=used)


if __name__ == "__main__":
    sys.exit(main())
