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
    ("nn.conv2d", [_x(8), ((4, 8, 1, 1), F)], dict()),
    ("nn.conv2d", [_x(8), ((6, 8, 1, 1), F)], dict()),
    ("nn.conv2d", [_x(6), ((8, 6, 3, 3), F)], dict()),
    ("nn.max_pool2d", [_x(8)], dict(pool_size=[2, 3], strides=[1, 2])),
    ("nn.max_pool2d", [_x(8)], dict(pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], ceil_mode=True)),
    ("nn.max_pool2d", [_x(4)], dict(pool_size=[2, 2], dilation=[2, 1])),
    ("nn.avg_pool2d", [_x(8)], dict(pool_size=[3, 3], padding=[1, 1, 1, 1], count_include_pad=True)),
    ("nn.avg_pool2d", [_x(8)], dict(pool_size=[3, 3], padding=[1, 1, 1, 1], count_include_pad=False)),
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
    ("permute_dims", [_x(8)], dict(axes=[0, 2, 3, 1])),
    ("permute_dims", [_x(8, h=4)], dict(axes=[0, 2, 1, 3])),
    ("nn.pad", [_x(8)], dict(pad_width=[0, 0, 0, 0, 1, 1, 2, 2])),
    ("nn.pad", [_x(8)], dict(pad_width=[0, 0, 4, 4, 1, 1, 0, 0])),
    ("strided_slice", [_x(8)], dict(axes=[2], begin=[1], end=[5])),
    ("strided_slice", [_x(8)], dict(axes=[1], begin=[0], end=[4])),
    ("strided_slice", [_x(16)], dict(axes=[1], begin=[0], end=[16], strides=[2])),
]

# Cases (index into CASES) opinfo recognises in TVM's form (reindex=False); a regression guard.
RECOGNISED = {0, 1, 5, 6, 7, 8, 10, 11, 12, 14}


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
    return [(o.name, o.to_json()["attrs"]) for o in analyze(func).ops]


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


@pytest.mark.parametrize("k", sorted(RECOGNISED))
def test_recognised_in_tvm_form(k):
    op, ins, f, plan, g = _setup(CASES[k], False)
    (name, plain), = _ops(f)
    assert _ops(g) == [(op, _expected(plain, plan, len(ins)))]
