"""The corpus's "layout" variant: ops lowered in NCHW, then re-laid-out with transform_layout.

Every 4-D parameter with C divisible by 4 goes NCHW -> NCHW4c and a convolution's kernel
OIHW -> OIHW4i4o, as TVM's ``transform_layout`` does (block iteration kept, accesses
``x[n, c // 4, h, w, c % 4]``) and re-indexed (blocks iterating the packed shape). The
ground truth is the op of the logical tensors: its attributes as in NCHW, the layout
attributes in packed form. opinfo must give that or nothing; the transformed function must
compute the packed result of the original (checked with the interpreter).
"""
import numpy as np
import pytest

import tir
from layout.index_map import IndexMap
from layout.transform import transform_layout
from opinfo.api import analyze

F = "float32"
NCHW4C = IndexMap.from_func(lambda n, c, h, w: [n, c // 4, h, w, c % 4])
OIHW4I4O = IndexMap.from_func(lambda o, i, h, w: [o // 4, i // 4, h, w, i % 4, o % 4])


def _x(c=8, n=2, h=6, w=7):
    return ((n, c, h, w), F)


CASES = [
    ("nn.conv2d", [_x(8), ((16, 8, 3, 3), F)], dict(padding=[1, 1, 1, 1])),
    ("nn.conv2d", [_x(8), ((16, 8, 3, 3), F)], dict(padding=[1, 0, 2, 1], strides=[2, 1], dilation=[1, 2])),
    ("nn.conv2d", [_x(16), ((16, 4, 3, 3), F)], dict(padding=[1, 1, 1, 1], groups=4)),
    ("nn.conv2d", [_x(8), ((8, 4, 3, 3), F)], dict(padding=[1, 1, 1, 1], groups=2)),
    ("nn.conv2d", [_x(8), ((8, 1, 3, 3), F)], dict(padding=[1, 1, 1, 1], groups=8)),
    ("nn.conv2d", [_x(8), ((8, 2, 3, 3), F)], dict(padding=[0, 1, 2, 1], groups=4, strides=[2, 2])),
    ("nn.conv2d", [_x(4), ((4, 4, 3, 3), F)], dict(padding=[1, 1, 1, 1])),
    ("nn.conv2d", [_x(8), ((4, 8, 1, 1), F)], dict()),
    ("nn.conv2d", [_x(8), ((6, 8, 1, 1), F)], dict()),
    ("nn.conv2d", [_x(6), ((8, 6, 3, 3), F)], dict()),
    ("nn.max_pool2d", [_x(8)], dict(pool_size=[2, 3], strides=[1, 2])),
    ("nn.max_pool2d", [_x(8)], dict(pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], ceil_mode=True)),
    ("nn.max_pool2d", [_x(4)], dict(pool_size=[2, 2], dilation=[2, 1], strides=[2, 1])),
    ("nn.avg_pool2d", [_x(8)], dict(pool_size=[3, 3], padding=[1, 1, 1, 1], strides=[2, 1], count_include_pad=True)),
    ("nn.avg_pool2d", [_x(8)], dict(pool_size=[3, 3], padding=[1, 1, 1, 1], strides=[2, 1], count_include_pad=False)),
    ("nn.avg_pool2d", [_x(8)], dict(pool_size=[2, 2], strides=[2, 2], ceil_mode=True)),
    ("nn.adaptive_avg_pool2d", [_x(8)], dict(output_size=[1, 1])),
    ("nn.adaptive_avg_pool2d", [_x(8)], dict(output_size=[3, 2])),
    ("image.resize2d", [_x(8)], dict(size=[12, 14])),
    ("image.resize2d", [_x(8)], dict(size=[3, 5], method="nearest_neighbor",
                                     coordinate_transformation_mode="asymmetric", rounding_method="floor")),
    ("nn.batch_norm", [_x(8)] + [((8,), F)] * 4, dict(epsilon=1e-3)),
    ("nn.group_norm", [_x(8), ((8,), F), ((8,), F)], dict(num_groups=2, epsilon=1e-5)),
    ("nn.softmax", [_x(8)], dict(axis=1)),
    ("nn.softmax", [_x(8)], dict(axis=-1)),
    ("nn.softmax", [_x(8)], dict(axis=2)),
    ("nn.log_softmax", [_x(8)], dict(axis=1)),
    ("nn.log_softmax", [_x(8)], dict(axis=3)),
    ("sum", [_x(8)], dict(axis=[1], keepdims=True)),
    ("sum", [_x(8)], dict(axis=[2, 3], keepdims=True)),
    ("sum", [_x(8)], dict(axis=[2, 3], keepdims=False)),
    ("mean", [_x(8)], dict(axis=[2, 3], keepdims=True)),
    ("mean", [_x(8)], dict(axis=[1], keepdims=True)),
    ("max", [_x(8)], dict(axis=[3], keepdims=True)),
    ("max", [_x(8)], dict(axis=[1, 2], keepdims=True)),
    ("sum", [_x(8)], dict(axis=None, keepdims=True)),
    ("nn.relu", [_x(8)], dict()),
    ("exp", [_x(8)], dict()),
    ("sigmoid", [_x(8)], dict()),
    ("clip", [_x(8)], dict(min=0.0, max=6.0)),
    ("add", [_x(8), _x(8)], dict()),
    ("multiply", [_x(8), ((1, 8, 1, 1), F)], dict()),
    ("add", [_x(8), ((8, 1, 1), F)], dict()),
    ("subtract", [_x(8), ((1, 1, 1, 7), F)], dict()),
    ("concat", [_x(8), _x(4)], dict(axis=1)),
    ("concat", [_x(8), _x(8)], dict(axis=3)),
    ("concat", [_x(4), _x(4)], dict(axis=1)),
    ("permute_dims", [_x(8)], dict(axes=[0, 2, 3, 1])),
    ("permute_dims", [_x(8, h=4)], dict(axes=[0, 2, 1, 3])),
    ("nn.pad", [_x(8)], dict(pad_width=[0, 0, 0, 0, 1, 1, 2, 2])),
    ("nn.pad", [_x(8)], dict(pad_width=[0, 0, 4, 4, 1, 1, 0, 0])),
    ("nn.pad", [_x(8)], dict(pad_width=[0, 0, 0, 4, 0, 0, 0, 0], pad_value=1.5)),
    ("strided_slice", [_x(8)], dict(axes=[2], begin=[1], end=[5])),
    ("strided_slice", [_x(8)], dict(axes=[1], begin=[0], end=[4])),
    ("strided_slice", [_x(16)], dict(axes=[1], begin=[0], end=[16], strides=[2])),
]

# C = 4: one block of channels; TVM's simplifier folds c // 4 to 0 and c % 4 to c, as in the
# corpus's nn_max_pool2d_1_1 (x[n, 0, h, w, c]).
CASES += [
    ("nn.conv2d", [_x(4), ((4, 4, 3, 3), F)], dict(padding=[1, 0, 2, 1], strides=[2, 1], dilation=[1, 2])),
    ("nn.conv2d", [_x(4), ((4, 2, 3, 3), F)], dict(padding=[1, 1, 1, 1], groups=2)),
    ("nn.avg_pool2d", [_x(4)], dict(pool_size=[3, 3], padding=[1, 1, 1, 1], strides=[2, 1], count_include_pad=False)),
    ("image.resize2d", [_x(4)], dict(size=[12, 14])),
    ("nn.batch_norm", [_x(4)] + [((4,), F)] * 4, dict(epsilon=1e-3)),
    ("nn.softmax", [_x(4)], dict(axis=1)),
    ("nn.log_softmax", [_x(4)], dict(axis=3)),
    ("sum", [_x(4)], dict(axis=[2, 3], keepdims=True)),
    ("mean", [_x(4)], dict(axis=[1], keepdims=True)),
    ("sum", [_x(4)], dict(axis=[2, 3], keepdims=False)),
    ("add", [_x(4), ((1, 4, 1, 1), F)], dict()),
    ("add", [_x(4), ((4, 1, 1), F)], dict()),
    ("concat", [_x(4), _x(4)], dict(axis=3)),
    ("permute_dims", [_x(4)], dict(axes=[0, 2, 3, 1])),
    ("permute_dims", [_x(4, h=4)], dict(axes=[0, 2, 1, 3])),
    ("nn.pad", [_x(4)], dict(pad_width=[0, 0, 0, 4, 1, 1, 0, 0])),
    ("nn.pad", [_x(4)], dict(pad_width=[0, 0, 0, 0, 1, 1, 2, 2])),
    ("strided_slice", [_x(4)], dict(axes=[2], begin=[1], end=[5])),
]

# Cases (index into CASES) opinfo abstains on in TVM's form (reindex=False): the NCHW function
# already abstains (ceil_mode pools, adaptive pool with uneven windows) or the op is not
# recognised on packed buffers (group_norm; permute_dims and strided_slice whose result is not
# packed, which read like a layout_transform; with C = 4, ops whose result is not packed:
# a unit dimension read at 0 may be a broadcast operand's). Every other case is recognised.
ABSTAINED = {11, 15, 17, 21, 46, 52, 62, 63, 67}


def _plan(op: str, func) -> dict:
    """{parameter index: target layout} for the buffers the corpus generator re-lays out."""
    out = {}
    for k, buf in enumerate(func.buffers):
        shape = [tir.expr.as_int(s) for s in buf.shape]
        if len(shape) != 4 or None in shape:
            continue
        if op == "nn.conv2d" and k == 1:
            if shape[0] % 4 == 0 and shape[1] % 4 == 0:
                out[k] = "OIHW4i4o"
        elif shape[1] % 4 == 0:
            out[k] = "NCHW4c"
    return out


def _relayout(func, plan: dict, reindex: bool):
    for k, name in plan.items():
        func = transform_layout(func, k, NCHW4C if name == "NCHW4c" else OIHW4I4O, reindex)
    return func


def _pack(a, name: str):
    """A logical NCHW / OIHW array in the packed layout ``name``."""
    if name == "NCHW4c":
        n, c, h, w = a.shape
        return a.reshape(n, c // 4, 4, h, w).transpose(0, 1, 3, 4, 2).copy()
    o, i, h, w = a.shape
    return a.reshape(o // 4, 4, i // 4, 4, h, w).transpose(0, 2, 4, 5, 3, 1).copy()


def _ops(func):
    # importers' convention allowed: these cases test layouts, not the ceil_mode policy
    return [(o.name, o.to_json()["attrs"]) for o in analyze(func, conventions=True).ops]


def _expected(plain_attrs: dict, plan: dict, n_in: int) -> dict:
    """The ground truth: the NCHW attributes with the layouts of the packed operands."""
    exp = dict(plain_attrs)
    packed = {"data_layout": 0 in plan, "layout": 0 in plan, "kernel_layout": 1 in plan and n_in > 1,
              "out_layout": n_in in plan}
    for key, is_packed in packed.items():
        if key in exp and is_packed:
            exp[key] = "OIHW4i4o" if key == "kernel_layout" else "NCHW4c"
    return exp


def _setup(case, reindex):
    op, ins, attrs = case
    f = tir.topi.lower(op, ins, **attrs)
    plan = _plan(op, f)
    return op, ins, f, plan, _relayout(f, plan, reindex)


def _same_physically(got, g, ins_packed) -> bool:
    """Whether ``got`` (an op named on the packed buffers themselves, as a re-indexed
    function is a genuine 5-D program) re-lowers to the same numbers as ``g``."""
    (name, attrs), = got
    attrs = {k: v for k, v in attrs.items() if k not in ("out_dtype",)}
    try:
        h = tir.topi.lower(name, [(a.shape, F) for a in ins_packed], **attrs)
    except ValueError:
        return False
    return np.allclose(tir.run(h, *ins_packed), tir.run(g, *ins_packed), rtol=1e-4, atol=1e-5)


IDS = [f"{k}-{c[0]}" for k, c in enumerate(CASES)]


@pytest.mark.parametrize("reindex", [False, True])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_relaid_out_function_computes_packed_result(case, reindex):
    op, ins, f, plan, g = _setup(case, reindex)
    if len(f.buffers) != len(ins) + 1:
        pytest.skip("several outputs")
    rng = np.random.default_rng(0)
    arrs = [rng.standard_normal(s).astype(F) for s, _ in ins]
    want = tir.run(f, *arrs)
    if len(ins) in plan:
        want = _pack(want, plan[len(ins)])
    got = tir.run(g, *[_pack(a, plan[k]) if k in plan else a for k, a in enumerate(arrs)])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("reindex", [False, True])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_relaid_out_op_is_right_or_abstains(case, reindex):
    op, ins, f, plan, g = _setup(case, reindex)
    plain = _ops(f)  # opinfo on the NCHW function: checked against tir.topi elsewhere
    got = _ops(g)
    if not got or (plain and got == [(op, _expected(plain[0][1], plan, len(ins)))]):
        return
    # A re-indexed block iterates the packed shape: a genuine 5-D program, which opinfo may
    # name as such (it cannot know the shape was packed) if that op computes the same.
    assert reindex and len(f.buffers) == len(ins) + 1, got
    rng = np.random.default_rng(1)
    packed = [rng.standard_normal([tir.expr.as_int(s) for s in b.shape]).astype(F) for b in g.buffers[:len(ins)]]
    assert _same_physically(got, g, packed), got


@pytest.mark.parametrize("k", sorted(set(range(len(CASES))) - ABSTAINED))
def test_recognised_in_tvm_form(k):
    op, ins, f, plan, g = _setup(CASES[k], False)
    (name, plain), = _ops(f)
    assert _ops(g) == [(op, _expected(plain, plan, len(ins)))]


def _intermediates(func) -> list:
    found = []
    tir.post_order_visit(func.body, lambda n: found.extend(n.alloc_buffers) if isinstance(n, tir.Block) else None)
    return found


GROUPED = [
    ("nn.conv2d", [_x(16), ((16, 8, 3, 3), F)], dict(padding=[1, 1, 1, 1], groups=2)),
    ("nn.conv2d", [_x(16), ((8, 8, 3, 3), F)], dict(padding=[1, 1, 1, 1], groups=2)),
    ("nn.conv2d", [_x(16), ((8, 4, 3, 3), F)], dict(padding=[1, 1, 1, 1], groups=4)),
]


@pytest.mark.parametrize("case", [CASES[k] for k in (0, 2, 3, 13, 14, 48)] + GROUPED)
def test_intermediates_relaid_out_too(case):
    """Pad blocks' buffers re-laid-out as well (when the generator takes every buffer): a
    grouped convolution then reads ``pad[n, o // 8 * 2 + rc // 4, ..., rc % 4]``."""
    op, ins, f, plan, g = _setup(case, False)
    for buf in _intermediates(g):
        if len(buf.shape) == 4 and tir.expr.as_int(buf.shape[1]) % 4 == 0:
            g = transform_layout(g, buf, NCHW4C, False)
    (name, plain), = _ops(f)
    assert _ops(g) == [(op, _expected(plain, plan, len(ins)))]


@pytest.mark.parametrize("src,dst,shape", [("NCHW4c", "NCHW", (2, 2, 5, 5, 4)), ("NCHW4c", "NHWC", (2, 2, 5, 3, 4)),
                                           ("OIHW4i4o", "OIHW", (2, 2, 3, 3, 4, 4))])
def test_layout_transform_from_packed_is_not_a_copy_op(src, dst, shape):
    """``out[n, c, h, w] = x[n, c // 4, h, w, c % 4]`` unpacks to an identity copy (or a
    permutation): it is a layout_transform, never claimed as broadcast_to / permute_dims."""
    f = tir.topi.lower("layout_transform", [(shape, F)], src_layout=src, dst_layout=dst)
    assert [name for name, _ in _ops(f)] in ([], ["layout_transform"])


def test_packed_layout_names():
    from opinfo.unpack import Split, packed_layout

    assert packed_layout("NCHW", (Split(1, 4, 4),)) == "NCHW4c"
    assert packed_layout("OIHW", (Split(0, 5, 4), Split(1, 4, 4))) == "OIHW4i4o"
    assert packed_layout("NCHW", (Split(1, 4, 8, unit=True),)) == "NCHW8c"
    assert packed_layout("NC", (Split(1, 4, 4),)) is None


def test_packed_operand_next_to_logical_one_abstains():
    """``out = x[n, c // 4, h, w, c % 4] + y[n, c, h, w]``: a fused layout_transform and add
    (a re-laid-out add has y and out packed too), not an ``add`` of packed tensors."""
    f = tir.topi.lower("add", [_x(8), _x(8)])
    assert _ops(_relayout(f, {0: "NCHW4c"}, False)) == []
    assert _ops(_relayout(f, {0: "NCHW4c", 2: "NCHW4c"}, False)) == []
    assert [n for n, _ in _ops(_relayout(f, {0: "NCHW4c", 1: "NCHW4c", 2: "NCHW4c"}, False))] == ["add"]


DYNAMIC = [
    ("nn.conv2d", [(8, 6, 7), ((8, 8, 3, 3), F)], dict(padding=[1, 1, 1, 1])),
    ("nn.conv2d", [(4, 6, 7), ((4, 4, 3, 3), F)], dict(padding=[1, 1, 1, 1])),
    ("nn.max_pool2d", [(8, 6, 7)], dict(pool_size=[2, 2], strides=[1, 2])),
    ("nn.softmax", [(4, 6, 7)], dict(axis=1)),
    ("add", [(8, 6, 7), ((1, 8, 1, 1), F)], dict()),
]


@pytest.mark.parametrize("op,ins,attrs", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_symbolic_batch(op, ins, attrs):
    """A symbolic batch is only moved by the maps: the op is recognised as with a constant one."""
    n = tir.SizeVar("n", tir.dtype.int64)
    ins = [((n, *ins[0]), F)] + ins[1:]
    f = tir.topi.lower(op, ins, **attrs)
    plan = {k: "OIHW4i4o" if op == "nn.conv2d" and k == 1 else "NCHW4c" for k, b in enumerate(f.buffers)
            if len(b.shape) == 4 and tir.expr.as_int(b.shape[1]) % 4 == 0}
    (name, plain), = _ops(f)
    assert _ops(_relayout(f, plan, False)) == [(op, _expected(plain, plan, len(ins)))]
