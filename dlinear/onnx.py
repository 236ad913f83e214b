"""ONNX export of dlinear's fitted estimators through skl2onnx's converter registry.

``import dlinear.onnx`` registers a shape calculator and a converter for each estimator
(LogisticRegression, LinearSVC, LinearSVR, OneClassSVM), after which scikit-learn's usual
``skl2onnx.to_onnx(estimator, X[:1])`` works and onnxruntime serves the model. Needs the
``onnx`` extra (skl2onnx; onnxruntime to run the graphs).

The graphs are a MatMul and an Add (the linear scores, in the input's float type) and what
each estimator's predict makes of them, as dlinear computes it:

- classifiers: labels by the sign of the one score of two classes, else the argmax;
  ``probabilities`` is LogisticRegression's predict_proba (LIBLINEAR's: a sigmoid for two
  classes, one-vs-rest sigmoids normalised to sum 1, softmax for multinomial), and
  LinearSVC's decision values ([-s, s] for two classes, as skl2onnx gives scikit-learn's);
  the ZipMap option (``options={"zipmap": False}``) as for scikit-learn's classifiers;
- LinearSVR: ``variable``, the predictions (n, 1);
- OneClassSVM: ``label`` (+1 inlier / -1 outlier, int64) and ``scores``, its
  decision_function w.x - rho (n, 1).
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto
from skl2onnx import update_registered_converter
from skl2onnx.common.data_types import (DoubleTensorType, FloatTensorType, Int64TensorType,
                                        StringTensorType, guess_tensor_type)

from .estimators import LinearSVC, LinearSVR, LogisticRegression, OneClassSVM

def _float_type(operator):
    """(numpy dtype, ONNX element type) of the operator's input."""
    if isinstance(operator.inputs[0].type, DoubleTensorType):
        return np.float64, TensorProto.DOUBLE
    return np.float32, TensorProto.FLOAT


def _constant(scope, container, name, values, onnx_type):
    values = np.asarray(values)
    unique = scope.get_unique_variable_name(name)
    container.add_initializer(unique, onnx_type, list(values.shape), values.ravel().tolist())
    return unique


def _node(scope, container, op_type, inputs, output=None, **attrs):
    output = output or scope.get_unique_variable_name(op_type.lower())
    container.add_node(op_type, inputs, output,
                       name=scope.get_unique_operator_name(op_type), **attrs)
    return output


def _scores(scope, operator, container):
    """X @ coef_.T + intercept_: (n, rows of coef_)."""
    model = operator.raw_operator
    dtype, onnx_type = _float_type(operator)
    coef = np.atleast_2d(np.asarray(model._dense_coef() if hasattr(model, "_dense_coef")
                                    else model.coef_, dtype=dtype))
    intercept = np.atleast_1d(np.asarray(getattr(model, "intercept_", 0.0), dtype=dtype))
    weights = _constant(scope, container, "coef", coef.T, onnx_type)
    bias = _constant(scope, container, "intercept",
                     np.broadcast_to(intercept, (coef.shape[0],)), onnx_type)
    product = _node(scope, container, "MatMul", [operator.inputs[0].full_name, weights])
    return _node(scope, container, "Add", [product, bias])


def _label_tensor_type(classes):
    if all(isinstance(c, str) for c in classes):
        return StringTensorType, TensorProto.STRING
    if np.issubdtype(np.asarray(classes).dtype, np.integer):
        return Int64TensorType, TensorProto.INT64
    return DoubleTensorType, TensorProto.DOUBLE


def _classifier_shapes(operator):
    model = operator.raw_operator
    n = operator.inputs[0].get_first_dimension()
    label_type, _ = _label_tensor_type(list(model.classes_))
    operator.outputs[0].type = label_type([n])
    score_type = (DoubleTensorType if isinstance(operator.inputs[0].type, DoubleTensorType)
                  else FloatTensorType)
    operator.outputs[1].type = score_type([n, len(model.classes_)])


def _classifier_converter(scope, operator, container):
    model = operator.raw_operator
    scores = _scores(scope, operator, container)
    classes = list(model.classes_)
    _, label_onnx_type = _label_tensor_type(classes)
    label_values = classes if label_onnx_type == TensorProto.STRING else np.asarray(classes)
    if label_onnx_type == TensorProto.STRING:
        name = scope.get_unique_variable_name("classes")
        container.add_initializer(name, TensorProto.STRING, [len(classes)],
                                  [c.encode() for c in classes])
        class_table = name
    else:
        class_table = _constant(scope, container, "classes", label_values, label_onnx_type)
    dtype, onnx_type = _float_type(operator)
    if np.atleast_2d(model._dense_coef()).shape[0] == 1:       # two classes, one score
        zero = _constant(scope, container, "zero", np.zeros(1, dtype=dtype), onnx_type)
        positive = _node(scope, container, "Greater", [scores, zero])
        index = _node(scope, container, "Cast", [positive], to=TensorProto.INT64)
        negated = _node(scope, container, "Neg", [scores])
        two_columns = _node(scope, container, "Concat", [negated, scores], axis=1)
    else:
        index = _node(scope, container, "ArgMax", [scores], axis=1, keepdims=1)
        two_columns = None
    flat = _constant(scope, container, "flat", np.array([-1], dtype=np.int64), TensorProto.INT64)
    index = _node(scope, container, "Reshape", [index, flat])
    _node(scope, container, "Gather", [class_table, index], operator.outputs[0].full_name, axis=0)

    out = operator.outputs[1].full_name
    if not isinstance(model, LogisticRegression):
        _node(scope, container, "Identity", [two_columns or scores], out)
    elif model._multinomial():
        _node(scope, container, "Softmax", [scores], out, axis=1)
    elif two_columns is not None:
        positive = _node(scope, container, "Sigmoid", [scores])
        negative = _node(scope, container, "Sigmoid", [_node(scope, container, "Neg", [scores])])
        _node(scope, container, "Concat", [negative, positive], out, axis=1)
    else:
        each = _node(scope, container, "Sigmoid", [scores])
        axes = _constant(scope, container, "axes", np.array([1], dtype=np.int64), TensorProto.INT64)
        total = _node(scope, container, "ReduceSum", [each, axes], keepdims=1)
        _node(scope, container, "Div", [each, total], out)


def _regressor_shapes(operator):
    n = operator.inputs[0].get_first_dimension()
    score_type = (DoubleTensorType if isinstance(operator.inputs[0].type, DoubleTensorType)
                  else FloatTensorType)
    operator.outputs[0].type = score_type([n, 1])


def _regressor_converter(scope, operator, container):
    scores = _scores(scope, operator, container)
    _node(scope, container, "Identity", [scores], operator.outputs[0].full_name)


def _oneclass_parser(scope, model, inputs, custom_parsers=None):
    operator = scope.declare_local_operator("DlinearOneClassSVM", model)
    operator.inputs = inputs
    operator.outputs.append(scope.declare_local_variable("label", Int64TensorType()))
    operator.outputs.append(scope.declare_local_variable("scores",
                                                         guess_tensor_type(inputs[0].type)))
    return operator.outputs


def _oneclass_shapes(operator):
    n = operator.inputs[0].get_first_dimension()
    operator.outputs[0].type = Int64TensorType([n])
    score_type = (DoubleTensorType if isinstance(operator.inputs[0].type, DoubleTensorType)
                  else FloatTensorType)
    operator.outputs[1].type = score_type([n, 1])


def _oneclass_converter(scope, operator, container):
    model = operator.raw_operator
    dtype, onnx_type = _float_type(operator)
    weights = _constant(scope, container, "coef",
                        np.atleast_2d(np.asarray(model.coef_, dtype=dtype)).T, onnx_type)
    rho = _constant(scope, container, "rho", np.array([model.offset_], dtype=dtype), onnx_type)
    product = _node(scope, container, "MatMul", [operator.inputs[0].full_name, weights])
    scores = _node(scope, container, "Sub", [product, rho], operator.outputs[1].full_name)
    # predict: +1 where the score is > 0, else -1 (dlinear's and LIBLINEAR's -s 21 rule)
    zero = _constant(scope, container, "zero", np.zeros(1, dtype=dtype), onnx_type)
    inlier = _node(scope, container, "Greater", [scores, zero])
    as_int = _node(scope, container, "Cast", [inlier], to=TensorProto.INT64)
    two = _constant(scope, container, "two", np.array([2], dtype=np.int64), TensorProto.INT64)
    one = _constant(scope, container, "one", np.array([1], dtype=np.int64), TensorProto.INT64)
    signed = _node(scope, container, "Sub", [_node(scope, container, "Mul", [as_int, two]), one])
    flat = _constant(scope, container, "flat", np.array([-1], dtype=np.int64), TensorProto.INT64)
    _node(scope, container, "Reshape", [signed, flat], operator.outputs[0].full_name)


def register() -> None:
    """Registers the converters with skl2onnx (done on import; calling again is harmless)."""
    zipmap = {"zipmap": [True, False, "columns"], "nocl": [True, False]}
    update_registered_converter(LogisticRegression, "DlinearLogisticRegression",
                                _classifier_shapes, _classifier_converter, options=zipmap)
    update_registered_converter(LinearSVC, "DlinearLinearSVC",
                                _classifier_shapes, _classifier_converter, options=zipmap)
    update_registered_converter(LinearSVR, "DlinearLinearSVR",
                                _regressor_shapes, _regressor_converter)
    update_registered_converter(OneClassSVM, "DlinearOneClassSVM",
                                _oneclass_shapes, _oneclass_converter, parser=_oneclass_parser)


register()
