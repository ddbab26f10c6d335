"""Pooling recognition: the ceil_mode/padding reading policy, divisors, guards, packed layouts."""
import pytest

import tir
from opinfo.api import analyze
from opinfo.recognize.pool_readings import Axis, Reading, choose, out_size, readings
from pad_inline import inline_pads
from schedule_helpers import random_schedule


def _ops(func, conventions=True):
    """Names and attributes, with the importers' convention allowed (the pools below test
    reading the loops; ``test_convention_*`` test the policy)."""
    return [(o.name, o.to_json()["attrs"]) for o in analyze(func, conventions=conventions).ops]


def _pool(op, shape, **attrs):
    return tir.topi.lower(op, [(shape, "float32")], **attrs)


def test_out_size_follows_tvm_ceil_correction():
    # the last window would start in the after-padding: TVM drops it
    ax = Axis(12, 6, 2, 2, 1, 0, None, None)
    assert out_size(ax, 1, True) == 6 and out_size(ax, 1, False) == 6


def test_symmetric_plain_reading_is_the_convention():
    # resnet50's max_pool2d: padding 1 both sides, or ceil_mode with padding 0 after
    axes = [Axis(112, 56, 3, 2, 1, 1, 1, None)] * 2
    cands = readings(axes)
    assert Reading(True, (0, 0)) in cands
    assert choose(axes, cands) == (Reading(False, (1, 1)), ("ceil_mode", "padding"))  # by convention


def test_asymmetric_ambiguity_is_a_convention_too():
    axes = [Axis(12, 6, 2, 2, 1, 0, 1, None)]
    assert len(readings(axes)) == 2
    assert choose(axes, readings(axes)) == (Reading(False, (1,)), ("ceil_mode", "padding"))


def test_unique_reading_is_no_convention():
    axes = [Axis(12, 6, 2, 2, 1, 0, 0, None)]  # after-padding 0 as TVM pads: only ceil_mode False
    assert choose(axes, readings(axes)) == (Reading(False, (0,)), ())


def test_convention_only_in_a_network():
    """A pool that ceil_mode=True with less after-padding would lower to the same loops is
    reported (with ``assumed``) only where the importers' convention holds."""
    f = _pool("nn.max_pool2d", (1, 4, 8, 8), pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])
    alone = analyze(f)
    assert alone.ops == ()  # on its own: the loops do not decide it
    # ... but the withheld reading says why (not an answer: "ops" stays empty in JSON)
    (why,) = alone.undecided
    assert why.name == "nn.max_pool2d" and why.assumed == ("ceil_mode", "padding")
    assert alone.to_json()["ops"] == [] and alone.to_json()["undecided"][0]["assumed"] == ["ceil_mode", "padding"]
    (op,) = analyze(f, conventions=True).ops
    assert op.assumed == ("ceil_mode", "padding") and op.to_json()["assumed"] == ["ceil_mode", "padding"]
    assert op.attrs["ceil_mode"] is False and list(op.attrs["padding"]) == [1, 1, 1, 1]
    # a pool the loops decide carries no assumption and needs no convention
    g = _pool("nn.max_pool2d", (1, 4, 8, 8), pool_size=[2, 2], strides=[2, 2], padding=[0, 0, 0, 0])
    decided = analyze(g)
    (op,) = decided.ops
    assert op.assumed == () and "assumed" not in op.to_json()
    assert decided.undecided == () and "undecided" not in decided.to_json()
    assert analyze(f, conventions=True).undecided == ()


def test_convention_from_the_graph_context():
    """analyze_module: a network's main (several calls) allows the convention, a module
    lowering the pool alone does not."""
    from opinfo.api import analyze_module
    f = _pool("nn.max_pool2d", (1, 4, 8, 8), pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])
    func = "\n".join("    " + line for line in tir.to_script(f).splitlines()[2:]).replace("def main(", "def pool(")
    x, y = 'R.Tensor((1, 4, 8, 8), dtype="float32")', 'R.Tensor((1, 4, 4, 4), dtype="float32")'

    def module(calls: int) -> str:
        lines = [f"            lv{i} = R.call_tir(cls.pool, (x,), out_ty={y})" for i in range(calls)]
        out = "lv0" if calls == 1 else f"R.tuple({', '.join(f'lv{i}' for i in range(calls))})"
        ret = y if calls == 1 else f"R.Tuple({', '.join([y] * calls)})"
        return ("# from tvm.script import ir as I\n# from tvm.script import tirx as T\n"
                "# from tvm.script import relax as R\n\n@I.ir_module\nclass Module:\n" + func + f"""

    @R.function
    def main(x: {x}) -> {ret}:
        cls = Module
        with R.dataflow():
""" + "\n".join(lines) + f"""
            gv: {ret} = {out}
            R.output(gv)
        return gv
""")
    assert analyze_module(tir.parse(module(1)))["pool"].ops == ()
    (op,) = analyze_module(tir.parse(module(2)))["pool"].ops
    assert op.name == "nn.max_pool2d" and op.assumed == ("ceil_mode", "padding")


def test_padding_as_large_as_the_window_is_dropped():
    # plain reading would pad 2 >= window 2 after: only the ceil reading remains
    axes = [Axis(12, 6, 2, 2, 1, 0, 2, None)]
    assert readings(axes) == [Reading(True, (1,))]


@pytest.mark.parametrize("attrs", [
    dict(pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]),
    dict(pool_size=[2, 3, 2], strides=[2, 2, 2], padding=[0, 1, 0, 1, 0, 0], ceil_mode=True, layout="NDHWC"),
    dict(pool_size=[3], strides=[2], padding=[2, 2], dilation=[2], layout="NWC"),
])
def test_max_pool_round_trip(attrs):
    nd = len(attrs["pool_size"])
    layout = attrs.get("layout", "NC" + "DHW"[3 - nd:])
    shape = (1, 12) + (8,) * nd if layout.startswith("NC") else (1,) + (8,) * nd + (4,)
    (name, got), = _ops(_pool(f"nn.max_pool{nd}d", shape, **attrs))
    assert name == f"nn.max_pool{nd}d"
    assert all(got[k] == v for k, v in attrs.items())


def test_avg_pool_divisor_settles_ceil_mode():
    # count_include_pad: the divisor names the true after-padding, so ceil_mode follows
    attrs = dict(pool_size=[2], strides=[2], padding=[0, 0], ceil_mode=True, count_include_pad=True)
    (name, got), = _ops(_pool("nn.avg_pool1d", (1, 4, 7), **attrs))
    assert got["ceil_mode"] is True and got["count_include_pad"] is True and got["padding"] == [0, 0]


def test_avg_pool_without_evidence_abstains():
    # [0, 1] without ceil_mode and [0, 0] with it give the same loops and the same divisor
    f = _pool("nn.avg_pool1d", (1, 4, 8), pool_size=[2], strides=[2], padding=[0, 1])
    assert _ops(f, conventions=False) == []
    (name, got), = _ops(f)  # the importers' convention: the default flag, the padding as read
    assert got["ceil_mode"] is False and got["padding"] == [0, 1]


def test_inlined_pad_of_max_pool_is_read_from_the_guard():
    f = _pool("nn.max_pool2d", (1, 4, 8, 8), pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])
    g = inline_pads(random_schedule(f, 1))
    assert _ops(g) == _ops(f) and _ops(f)[0][1]["padding"] == [1, 1, 1, 1]


def test_guard_that_is_not_a_pad_is_refused():
    f = _pool("nn.max_pool2d", (1, 4, 9, 9), pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])
    g = inline_pads(f)

    def shift(n):  # guard tests 2 <= h instead of 1 <= h: not a pad any more
        if isinstance(n, tir.LE) and tir.expr.as_int(n.a) == 1:
            return tir.LE(tir.IntImm(n.a.dtype, 2), n.b)
        return None
    assert _ops(tir.transform(g, shift)) == []


@pytest.mark.parametrize("channels", [4, 8])
@pytest.mark.parametrize("op,pad", [("nn.max_pool2d", 0), ("nn.max_pool2d", 1), ("nn.avg_pool2d", 1)])
def test_packed_pool(channels, op, pad):
    from layout.layout import Layout
    from layout.transform import transform_layout

    f = _pool(op, (2, channels, 6, 9), pool_size=[2, 3], strides=[1, 2], padding=[pad] * 4,
              count_include_pad=True)
    m = Layout.parse("NCHW").index_map_to("NCHW4c")
    for reindex in (False, True):  # as TVM (c // 4, c % 4) and iterating the packed shape
        g = transform_layout(transform_layout(f, 0, m, reindex), 1, m, reindex)
        (name, got), = _ops(g)
        assert name == op and got["layout"] == "NCHW4c" and got["padding"] == [pad] * 4


def test_flag_without_effect_is_the_importers_default():
    """Every stride 1: ceil_mode changes nothing in the loops (an inception branch's 3x3
    pool). Reported, in a network, with ceil_mode=False assumed; on its own it abstains."""
    f = _pool("nn.max_pool2d", (1, 4, 7, 7), pool_size=[3, 3], strides=[1, 1], padding=[1, 1, 1, 1])
    assert analyze(f).ops == ()
    (op,) = analyze(f, conventions=True).ops
    assert op.assumed == ("ceil_mode",) and op.attrs["ceil_mode"] is False
    assert list(op.attrs["padding"]) == [1, 1, 1, 1]
