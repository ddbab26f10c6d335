"""Ops of networks imported by TVM's Relax ONNX frontend beyond the CNN zoo (helper 50):
shape_to_tensor, the frontend's 1-D take(axis=0, mode="wrap"), and the attributes a
network's importer settles differently from Relax's defaults (opinfo.network_conventions)."""
from __future__ import annotations

import tir
from opinfo.api import analyze, analyze_module

HEAD = "# from tvm.script import tirx as T\n\n@T.prim_func(private=True, s_tir=True)\n"

SHAPE_TO_TENSOR = HEAD + '''def shape_to_tensor(shape_to_tensor: T.Buffer((T.int64(3),), "int64")):
    T.func_attr({"tirx.noalias": True})
    for i in range(T.int64(3)):
        with T.sblock("BLOCK"):
            v_i = T.axis.spatial(T.int64(3), i)
            T.reads()
            T.writes(shape_to_tensor[v_i])
            shape_to_tensor[v_i] = T.if_then_else(v_i == T.int64(0), T.int64(2), T.if_then_else(v_i == T.int64(1), T.int64(65), T.if_then_else(v_i == T.int64(2), T.int64(16), T.int64(0))))
'''

# TVM's ONNX frontend reads the extent of a Gather's axis from a shape tensor this way
WRAP_TAKE = HEAD + '''def take(lv38: T.Buffer((T.int64(3),), "int64"), B: T.Buffer((), "int64"), T_take: T.Buffer((), "int64")):
    T.func_attr({"tirx.noalias": True})
    with T.sblock("T_take"):
        vi = T.axis.spatial(T.int64(1), T.int64(0))
        T.reads(lv38[T.truncmod(T.truncmod(B[()], T.int64(3)) + T.int64(3), T.int64(3))], B[()])
        T.writes(T_take[()])
        T_take[()] = lv38[T.truncmod(T.truncmod(B[()], T.int64(3)) + T.int64(3), T.int64(3))]
'''


def _in_network(func):
    """analyze with the context of a network's main (several calls)."""
    from opinfo.graph_context import FuncContext
    return analyze(func, context=FuncContext(calls=(), unused=(), network=True))


def _parse(text):
    got = tir.parse(text)
    return got if not hasattr(got, "prim_funcs") else got.prim_funcs()[0][1]


def test_shape_to_tensor_by_its_tag_and_its_literals():
    (op,) = analyze(_parse(SHAPE_TO_TENSOR.replace("BLOCK", "shape_to_tensor"))).ops
    assert op.name == "shape_to_tensor" and dict(op.attrs) == {} and op.operands == ()
    assert op.output.buffer == "shape_to_tensor" and op.assumed == ()


def test_shape_to_tensor_needs_the_tag():
    # the same constants under another tag may be another creation op: abstain
    assert analyze(_parse(SHAPE_TO_TENSOR.replace("BLOCK", "T_arange"))).ops == ()


def test_shape_to_tensor_needs_int64_output():
    text = SHAPE_TO_TENSOR.replace("BLOCK", "shape_to_tensor").replace('"int64")', '"int32")') \
        .replace("T.int64(2), T.if", "T.int32(2), T.if").replace("T.int64(65)", "T.int32(65)") \
        .replace("T.int64(16), T.int64(0)", "T.int32(16), T.int32(0)")
    assert analyze(_parse(text)).ops == ()


def test_one_d_wrap_take_is_axis_0_only_in_a_network():
    f = _parse(WRAP_TAKE)
    assert analyze(f).ops == ()  # on its own axis=None and axis=0 print the same
    (op,) = _in_network(f).ops
    assert op.name == "take" and dict(op.attrs) == {"axis": 0, "mode": "wrap"} and op.assumed == ("axis",)


WRAP_TAKE_2D = HEAD + '''def take(x: T.Buffer((T.int64(2), T.int64(3)), "float32"), B: T.Buffer((), "int64"), T_take: T.Buffer((T.int64(2),), "float32")):
    T.func_attr({"tirx.noalias": True})
    for ax0 in range(T.int64(2)):
        with T.sblock("T_take"):
            v_ax0 = T.axis.spatial(T.int64(2), ax0)
            T.reads(x[v_ax0, T.truncmod(T.truncmod(B[()], T.int64(3)) + T.int64(3), T.int64(3))], B[()])
            T.writes(T_take[v_ax0])
            T_take[v_ax0] = x[v_ax0, T.truncmod(T.truncmod(B[()], T.int64(3)) + T.int64(3), T.int64(3))]
'''


def test_two_d_wrap_take_needs_no_convention():
    (op,) = analyze(_parse(WRAP_TAKE_2D)).ops
    assert dict(op.attrs) == {"axis": 1, "mode": "wrap"} and op.assumed == ()


def _resize(method, mode="half_pixel"):
    return tir.topi.lower("image.resize2d", [((1, 2, 4, 4), "float32")], size=[8, 8], layout="NCHW",
                          method=method, coordinate_transformation_mode=mode, rounding_method="round")


def test_interpolating_resize_rounding_follows_the_onnx_importer_in_a_network():
    for method in ("linear", "cubic"):
        f = _resize(method)
        (alone,) = analyze(f).ops
        assert alone.attrs["rounding_method"] == "round" and alone.assumed == ()
        (net,) = _in_network(f).ops
        assert net.attrs["rounding_method"] == "round_prefer_floor" and net.assumed == ("rounding_method",)
        assert {k: v for k, v in net.attrs.items() if k != "rounding_method"} == \
            {k: v for k, v in alone.attrs.items() if k != "rounding_method"}


def test_nearest_resize_rounding_is_read_from_the_loops_everywhere():
    f = tir.topi.lower("image.resize2d", [((1, 2, 4, 4), "float32")], size=[8, 8], layout="NCHW",
                       method="nearest_neighbor", coordinate_transformation_mode="asymmetric",
                       rounding_method="floor")
    (alone,) = analyze(f).ops
    (net,) = _in_network(f).ops
    assert alone == net and net.attrs["rounding_method"] == "floor"


def _slice(end, stride, n=10):
    # one axis, the one sliced: an axis read whole leaves `axes` open (see below)
    return tir.topi.lower("strided_slice", [((n,), "float32")], axes=[0], begin=[0], end=[end], strides=[stride])


def test_strided_slice_end_short_of_the_axis_is_open_in_a_network():
    f = _slice(9, 2)  # reads 0, 2, .., 8: end 9 or 10 (or a sentinel) give the same loops
    (alone,) = analyze(f).ops
    assert list(alone.attrs["end"]) == [9]
    assert _in_network(f).ops == ()


def test_strided_slice_to_the_axis_end_and_unit_strides_stay_in_a_network():
    for end in (4, 8):
        (op,) = _in_network(_slice(end, 1)).ops
        assert list(op.attrs["end"]) == [end] and list(op.attrs["strides"]) == [1]
    (op,) = _in_network(_slice(9, 2, n=9)).ops  # last element 8 is the axis' last
    assert list(op.attrs["end"]) == [9]


def _network(func_text: str, name: str, calls: int, x: str, y: str) -> str:
    body = "\n".join("    " + line for line in func_text.splitlines()[2:])
    lines = [f"            lv{i} = R.call_tir(cls.{name}, (x,), out_ty={y})" for i in range(calls)]
    out = "lv0" if calls == 1 else f"R.tuple({', '.join(f'lv{i}' for i in range(calls))})"
    ret = y if calls == 1 else f"R.Tuple({', '.join([y] * calls)})"
    return ("# from tvm.script import ir as I\n# from tvm.script import tirx as T\n"
            "# from tvm.script import relax as R\n\n@I.ir_module\nclass Module:\n" + body + f"""

    @R.function
    def main(x: {x}) -> {ret}:
        cls = Module
        with R.dataflow():
""" + "\n".join(lines) + f"""
            gv: {ret} = {out}
            R.output(gv)
        return gv
""")


def test_network_context_applies_the_conventions():
    text = tir.to_script(_resize("linear")).replace("def main(", "def resize(")
    x, y = 'R.Tensor((1, 2, 4, 4), dtype="float32")', 'R.Tensor((1, 2, 8, 8), dtype="float32")'
    (alone,) = analyze_module(tir.parse(_network(text, "resize", 1, x, y)))["resize"].ops
    assert alone.attrs["rounding_method"] == "round"
    (net,) = analyze_module(tir.parse(_network(text, "resize", 2, x, y)))["resize"].ops
    assert net.attrs["rounding_method"] == "round_prefer_floor" and net.assumed == ("rounding_method",)
    text = tir.to_script(_slice(9, 2)).replace("def main(", "def sl(")
    x, y = 'R.Tensor((1, 10), dtype="float32")', 'R.Tensor((1, 5), dtype="float32")'
    assert len(analyze_module(tir.parse(_network(text, "sl", 1, x, y)))["sl"].ops) == 1
    assert analyze_module(tir.parse(_network(text, "sl", 2, x, y)))["sl"].ops == ()


def test_a_slice_reading_a_constant_axis_whole_is_named_only_in_a_network():
    """Listed with begin 0 and end the extent, or not listed: the same loops. Alone the slice
    abstains, in a network it is reported without the axis; a symbolic axis read whole was
    not listed (a listed one shows TVM's clamps), so it leaves nothing open."""
    f = tir.topi.lower("strided_slice", [((3, 4), "float32")], axes=[1], begin=[1], end=[3], strides=[1])
    assert analyze(f).ops == ()
    (op,) = _in_network(f).ops
    assert list(op.attrs["axes"]) == [1] and list(op.attrs["begin"]) == [1] and list(op.attrs["end"]) == [3]
    n = tir.SizeVar("n", tir.dtype.int64)
    g = tir.topi.lower("strided_slice", [((n, 6), "float32")], axes=[1], begin=[1], end=[3], strides=[1])
    (alone,) = analyze(g).ops
    assert list(alone.attrs["axes"]) == [1]


def test_concat_along_the_last_axis_is_withheld_in_a_network():
    # a network writes the last axis as -1 as often as rank - 1 (the loops are the same,
    # the importer passes what was written); the channel axis of an NCHW concat is reported
    from tir import topi

    last = topi.lower("concat", [((2, 3, 4), "float32"), ((2, 3, 5), "float32")], axis=2)
    (op,) = analyze(last).ops  # on its own: Relax's reading, axis 2
    assert op.name == "concat" and dict(op.attrs) == {"axis": 2}
    assert _in_network(last).ops == ()
    channel = topi.lower("concat", [((1, 3, 4, 4), "float32"), ((1, 5, 4, 4), "float32")], axis=1)
    (op,) = _in_network(channel).ops
    assert op.name == "concat" and dict(op.attrs) == {"axis": 1}
