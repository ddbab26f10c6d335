"""An answer whose op, lowered again, makes an output of another shape than the function's
is refuted by the check that runs it (it used to be left unchecked). Found by
tools/fuzz_soundness.py: a convolution's stride read off ``v_yy * 1`` over an output axis of
one element, where the shapes need a stride of 2 or more."""
import numpy as np

import opinfo
import tir
from opinfo.verify import verify_op


def _conv(stride_text: str):
    f = tir.topi.lower("nn.conv2d", [((1, 2, 4, 5), "float32"), ((4, 2, 3, 1), "float32")], strides=(2, 1))
    text = tir.to_script(f)
    assert text.count("v_yy * T.int64(2)") == 2
    return tir.parse(text.replace("v_yy * T.int64(2)", stride_text))


def test_the_conv_as_lowered_is_named_with_its_stride():
    (op,) = opinfo.analyze(_conv("v_yy * T.int64(2)")).ops
    assert op.name == "nn.conv2d" and list(dict(op.attrs)["strides"]) == [2, 1]


def test_a_stride_the_shapes_cannot_have_is_refused():
    # one output row of four input rows: the edited loops compute what the stride-2
    # convolution does, but a stride of 1 would make two rows
    func = _conv("v_yy")
    assert opinfo.analyze(func).ops == ()
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(1, 2, 4, 5)).astype("float32"), rng.normal(size=(4, 2, 3, 1)).astype("float32")
    np.testing.assert_allclose(tir.run(func, x, w), tir.run(_conv("v_yy * T.int64(2)"), x, w), rtol=1e-6)


def test_verify_op_refutes_an_answer_of_another_output_shape():
    func = _conv("v_yy * T.int64(2)")
    (op,) = opinfo.analyze(func).ops
    attrs = dict(op.attrs)
    attrs["strides"] = [1, 1]
    import attrs as _attrs

    wrong = _attrs.evolve(op, attrs=attrs)
    assert verify_op(func, op) is True
    assert verify_op(func, wrong) is False
