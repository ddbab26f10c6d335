"""transform_layout on PrimFuncs and the generated layout_transform PrimFuncs (interpreter checked)."""
import itertools

import numpy as np
import pytest

import tir
from layout.index_map import IndexMap
from layout.layout import Layout, LayoutError
from layout.transform import transform_layout
from layout.transform_func import layout_transform_between, layout_transform_func


def relayout(a: np.ndarray, src: str, dst: str) -> np.ndarray:
    """Reference re-layout with numpy, element by element through the layout map."""
    m = Layout.parse(src).index_map_to(dst)
    out = np.zeros(Layout.parse(dst).shape_of(a.shape, src), a.dtype)
    for idx in itertools.product(*map(range, a.shape)):
        out[m.apply(idx)] = a[idx]
    return out


def _transform_all(func, layouts):
    for k, (src, dst) in enumerate(layouts):
        func = transform_layout(func, k, Layout.parse(src).index_map_to(dst))
    return func


@pytest.mark.parametrize("dst", ["NHWC", "NCHW4c", "NHWC2c"])
def test_pool_relaid_out_computes_the_same(dst):
    f = tir.topi.lower("nn.max_pool2d", [((2, 8, 6, 9), "float32")], pool_size=(2, 3), strides=(1, 2))
    g = _transform_all(f, [("NCHW", dst), ("NCHW", dst)])
    x = np.random.default_rng(0).random((2, 8, 6, 9), dtype=np.float32)
    np.testing.assert_allclose(tir.run(g, relayout(x, "NCHW", dst)), relayout(tir.run(f, x), "NCHW", dst))


def test_writer_block_is_reindexed_over_the_new_shape():
    f = tir.topi.lower("nn.max_pool2d", [((2, 8, 6, 9), "float32")], pool_size=(2, 3), strides=(1, 2))
    g = _transform_all(f, [("NCHW", "NCHW4c"), ("NCHW", "NCHW4c")])
    (block,) = list(g.blocks())
    spatial = [iv.var for iv in block.iter_vars if iv.kind == tir.IterKind.SPATIAL]
    assert tuple(block.body.indices) == tuple(spatial) and len(spatial) == 5
    load = block.body.value.b
    assert load.indices[1] is spatial[1] and load.indices[4] is spatial[4]
    # the loops were rebuilt: the outermost loops run over the new shape
    loop_extents = []
    tir.post_order_visit(g.body, lambda n: loop_extents.append(tir.expr.as_int(n.extent))
                         if isinstance(n, tir.For) else None)
    assert sorted(loop_extents) == sorted([2, 2, 5, 4, 4, 2, 3])


def test_conv_relaid_out_computes_the_same():
    f = tir.topi.lower("nn.conv2d", [((1, 8, 7, 7), "float32"), ((16, 8, 3, 3), "float32")],
                       padding=(1, 1, 1, 1), strides=(2, 2))
    g = _transform_all(f, [("NCHW", "NCHW4c"), ("OIHW", "OIHW4i4o"), ("NCHW", "NCHW4c")])
    rng = np.random.default_rng(1)
    x, w = rng.random((1, 8, 7, 7), dtype=np.float32), rng.random((16, 8, 3, 3), dtype=np.float32)
    out = tir.run(g, relayout(x, "NCHW", "NCHW4c"), relayout(w, "OIHW", "OIHW4i4o"))
    np.testing.assert_allclose(out, relayout(tir.run(f, x, w), "NCHW", "NCHW4c"), rtol=1e-5)


def test_padding_map_is_refused():
    f = tir.topi.lower("nn.relu", [((1, 6, 2, 2), "float32")])
    with pytest.raises(LayoutError, match="padding"):
        transform_layout(f, 0, Layout.parse("NCHW").index_map_to("NCHW4c"))


def test_unknown_buffer_name_is_refused():
    f = tir.topi.lower("nn.relu", [((1, 4, 2, 2), "float32")])
    with pytest.raises(LayoutError, match="no buffer named"):
        transform_layout(f, "nope", Layout.parse("NCHW").index_map_to("NHWC"))


@pytest.mark.parametrize("src,dst", [("NCHW", "NHWC"), ("NCHW", "NCHW4c"), ("NHWC", "NCHW4c")])
def test_layout_transform_func(src, dst):
    x = np.random.default_rng(2).random((2, 8, 3, 4), dtype=np.float32)
    f = layout_transform_between(x.shape, "float32", src, dst)
    y = tir.run(f, x)
    np.testing.assert_array_equal(y, relayout(x, src, dst))
    back = layout_transform_between(y.shape, "float32", dst, src)
    np.testing.assert_array_equal(tir.run(back, y), x)


def test_layout_transform_func_pads_non_divisible_split():
    f = layout_transform_func((2, 6), "float32", IndexMap.from_func(lambda n, c: [n, c // 4, c % 4]))
    y = tir.run(f, np.arange(12, dtype=np.float32).reshape(2, 6))
    assert y.shape == (2, 2, 4)
    np.testing.assert_array_equal(y[0, 1], [4, 5, 0, 0])
