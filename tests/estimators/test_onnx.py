"""ONNX export (dlinear.onnx): skl2onnx.to_onnx on each fitted estimator, run by
onnxruntime on float32 input, gives predict's labels and predict_proba's /
decision_function's scores within 1e-4."""
import numpy as np
import pytest

skl2onnx = pytest.importorskip("skl2onnx")
onnxruntime = pytest.importorskip("onnxruntime")

import dlinear.onnx  # noqa: E402,F401  (registers the converters)
from dlinear import LinearSVC, LinearSVR, LogisticRegression, OneClassSVM  # noqa: E402
from dlinear.datasets.rcv1_like import make_rcv1_like  # noqa: E402

TOL = 1e-4


def dense(n_classes, seed):
    problem = make_rcv1_like(400, n_features=60, n_classes=n_classes, nnz_per_row=12, seed=seed)
    return problem.to_scipy().toarray().astype(np.float32), problem.y


def run(estimator, X, **options):
    onx = skl2onnx.to_onnx(estimator, X[:1], options=options or None)
    session = onnxruntime.InferenceSession(onx.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: X})


CLASSIFIERS = [
    ("lr-binary", LogisticRegression(C=2.0), 2, "predict_proba"),
    ("lr-ovr", LogisticRegression(C=2.0, multi_class="ovr"), 4, "predict_proba"),
    ("lr-multinomial", LogisticRegression(C=2.0, multi_class="multinomial"), 4, "predict_proba"),
    ("lr-l1", LogisticRegression(C=2.0, l1_ratio=1.0, solver="liblinear"), 2, "predict_proba"),
    ("svc-binary", LinearSVC(C=0.5), 2, "decision_function"),
    ("svc-ovr", LinearSVC(C=0.5), 3, "decision_function"),
    ("svc-crammer-singer", LinearSVC(C=0.5, multi_class="crammer_singer"), 3,
     "decision_function"),
]


@pytest.mark.parametrize("name, estimator, n_classes, scores", CLASSIFIERS,
                         ids=[c[0] for c in CLASSIFIERS])
def test_classifier_labels_and_scores(name, estimator, n_classes, scores):
    X, y = dense(n_classes, seed=n_classes)
    estimator.fit(X, y)
    labels, values = run(estimator, X, zipmap=False)
    assert np.array_equal(labels, estimator.predict(X))
    expected = getattr(estimator, scores)(X)
    if expected.ndim == 1:              # binary decision values: scikit-learn's [-s, s]
        expected = np.column_stack([-expected, expected])
    np.testing.assert_allclose(values, expected, atol=TOL, rtol=0)


def test_string_labels_and_the_zipmap():
    X, y = dense(3, seed=9)
    names = np.array(["ant", "bee", "cat"])[y.astype(int) - 1]
    estimator = LogisticRegression(C=1.0, multi_class="ovr").fit(X, names)
    labels, probabilities = run(estimator, X)
    assert list(labels) == list(estimator.predict(X))
    expected = estimator.predict_proba(X)
    for row, p in zip(probabilities[:20], expected[:20]):
        assert list(row) == list(estimator.classes_)
        np.testing.assert_allclose([row[c] for c in estimator.classes_], p, atol=TOL)


def test_regressor_predictions():
    X, _ = dense(2, seed=4)
    target = X @ np.linspace(-1, 1, X.shape[1]) + 0.5
    estimator = LinearSVR(C=1.0, epsilon=0.0).fit(X, target)
    (values,) = run(estimator, X)
    np.testing.assert_allclose(values[:, 0], estimator.predict(X), atol=TOL, rtol=0)


def test_oneclass_labels_and_scores():
    X, _ = dense(2, seed=5)
    estimator = OneClassSVM(nu=0.2).fit(X)
    labels, scores = run(estimator, X)
    assert np.array_equal(labels, estimator.predict(X))
    assert set(labels) <= {-1, 1} and (labels == -1).any()
    np.testing.assert_allclose(scores[:, 0], estimator.decision_function(X), atol=TOL, rtol=0)


def test_float64_input_keeps_double_scores():
    X, y = dense(2, seed=6)
    estimator = LinearSVC(C=0.5).fit(X, y)
    labels, values = run(estimator, X.astype(np.float64), zipmap=False)
    assert values.dtype == np.float64
    assert np.array_equal(labels, estimator.predict(X))
