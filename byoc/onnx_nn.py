"""ONNX converters of the windowed and normalising ops: conv, pools, batch/layer norm, softmax.

A converter takes the builder, the OpInfo, the input value names (Relax argument order) and
the output name, and emits the nodes computing it; it raises Unsupported with the reason
when the attributes cannot be expressed.
"""
from __future__ import annotations

import numpy as np

from . import onnx_layout as L
from .region import Unsupported


def _layout_in(b, name: str, layout: str, what: str):
    """(value in NC<spatial> order, the NC<spatial> string)."""
    canon = L.channel_first(layout, what)
    return b.transpose(name, L.perm(layout, canon)), canon


def _layout_out(b, value: str, canon: str, out_layout: str, out: str, what: str) -> None:
    L.plain(out_layout, what)
    if sorted(out_layout) != sorted(canon):
        raise Unsupported(f"{what}: out_layout {out_layout!r} does not fit {canon!r}")
    p = L.perm(canon, out_layout)
    b.node("Transpose", [value], out, perm=p) if p != sorted(p) else b.node("Identity", [value], out)


def conv(b, op, ins, out) -> None:
    """nn.conv1d/2d/3d: Conv with strides, pads, dilations, group; other layouts via Transpose."""
    a = op.attrs
    what = op.name
    data_layout = a.get("data_layout", "NCHW")
    data, canon = _layout_in(b, ins[0], data_layout, what)
    n = len(canon) - 2
    kcanon = L.kernel_first(a.get("kernel_layout", "OI" + canon[2:]), canon[2:], what)
    weight = b.transpose(ins[1], L.perm(a.get("kernel_layout", kcanon), kcanon))
    y = b.node("Conv", [data, weight],
               strides=L.spatial_ints(a.get("strides", 1), n, what, "strides"),
               pads=L.pads(a.get("padding", 0), n, what),
               dilations=L.spatial_ints(a.get("dilation", 1), n, what, "dilation"),
               group=int(a.get("groups", 1)))
    _layout_out(b, y, canon, a.get("out_layout") or data_layout, out, what)


def _ceil_mode(b, data: str, kernel, strides, pads, dilation, op_type: str, what: str) -> int:
    """ONNX ceil_mode for a TVM pool with ceil_mode: 0 when no partial window is added;
    1 for MaxPool when ONNX adds the same windows; otherwise the op is refused."""
    shape = b.shape(data)
    if shape is None:
        raise Unsupported(f"{what}: ceil_mode needs a static input shape")
    n = len(kernel)
    for i, size in enumerate(shape[2:]):
        span = size + pads[i] + pads[i + n] - (kernel[i] - 1) * dilation[i] - 1
        tvm_out = (span + strides[i] - 1) // strides[i] + 1
        if tvm_out == span // strides[i] + 1:
            continue
        onnx_out = -(-span // strides[i]) + 1
        if (onnx_out - 1) * strides[i] >= size + pads[i]:
            onnx_out -= 1
        if op_type != "MaxPool" or onnx_out != tvm_out:
            raise Unsupported(f"{what}: ceil_mode adds partial windows that ONNX {op_type} counts differently")
        return 1
    return 0


def _pool(b, op, ins, out, op_type: str, **extra) -> None:
    a = op.attrs
    what = op.name
    layout = a.get("layout", "NCHW")
    data, canon = _layout_in(b, ins[0], layout, what)
    n = len(canon) - 2
    kernel = L.spatial_ints(a["pool_size"], n, what, "pool_size")
    strides = L.spatial_ints(a.get("strides", 1), n, what, "strides")
    pads = L.pads(a.get("padding", 0), n, what)
    ceil = 0
    if a.get("ceil_mode", False):
        dilation = L.spatial_ints(a.get("dilation", 1), n, what, "dilation")
        ceil = _ceil_mode(b, data, kernel, strides, pads, dilation, op_type, what)
    y = b.node(op_type, [data], kernel_shape=kernel, strides=strides, pads=pads, ceil_mode=ceil, **extra)
    _layout_out(b, y, canon, a.get("out_layout") or layout, out, what)


def max_pool(b, op, ins, out) -> None:
    """nn.max_pool1d/2d/3d: MaxPool (dilations supported)."""
    n = len(L.channel_first(op.attrs.get("layout", "NCHW"), op.name)) - 2
    _pool(b, op, ins, out, "MaxPool", dilations=L.spatial_ints(op.attrs.get("dilation", 1), n, op.name, "dilation"))


def avg_pool(b, op, ins, out) -> None:
    """nn.avg_pool1d/2d/3d: AveragePool with count_include_pad (dilation 1 only at opset 17)."""
    n = len(L.channel_first(op.attrs.get("layout", "NCHW"), op.name)) - 2
    if any(d != 1 for d in L.spatial_ints(op.attrs.get("dilation", 1), n, op.name, "dilation")):
        raise Unsupported(f"{op.name}: dilated average pooling is not in ONNX opset 17")
    _pool(b, op, ins, out, "AveragePool", count_include_pad=int(bool(op.attrs.get("count_include_pad", False))))


def adaptive_avg_pool(b, op, ins, out) -> None:
    """nn.adaptive_avg_pool*: GlobalAveragePool when the output is 1 per spatial axis."""
    a = op.attrs
    layout = a.get("layout", "NCHW")
    data, canon = _layout_in(b, ins[0], layout, op.name)
    size = a.get("output_size")
    n = len(canon) - 2
    if size is not None and L.spatial_ints(size, n, op.name, "output_size") != [1] * n:
        raise Unsupported(f"{op.name}: only a global (output_size 1) adaptive pool is expressible in ONNX")
    y = b.node("GlobalAveragePool", [data])
    _layout_out(b, y, canon, a.get("out_layout") or layout, out, op.name)


def batch_norm(b, op, ins, out) -> None:
    """nn.batch_norm (inference): BatchNormalization, the channel axis moved to 1 if needed."""
    a = op.attrs
    if a.get("training"):
        raise Unsupported("nn.batch_norm: training mode is not offloaded")
    if len(ins) != 5:
        raise Unsupported(f"nn.batch_norm: expected 5 operands, got {len(ins)}")
    data, gamma, beta, mean, var = ins
    rank = b.rank(data, op.name)
    axis = int(a.get("axis", 1)) % rank
    if not a.get("scale", True):
        gamma = b.node("Div", [gamma, gamma])
    if not a.get("center", True):
        beta = b.node("Sub", [beta, beta])
    order = [0, axis] + [i for i in range(1, rank) if i != axis] if axis != 0 else list(range(rank))
    x = b.transpose(data, order)
    eps = float(a.get("epsilon", 1e-5))
    inv = [order.index(i) for i in range(rank)]
    if inv == sorted(inv):
        b.node("BatchNormalization", [x, gamma, beta, mean, var], out, epsilon=eps)
        return
    y = b.node("BatchNormalization", [x, gamma, beta, mean, var], epsilon=eps)
    b.node("Transpose", [y], out, perm=inv)


def layer_norm(b, op, ins, out) -> None:
    """nn.layer_norm over trailing axes: LayerNormalization."""
    a = op.attrs
    rank = b.rank(ins[0], op.name)
    axes = sorted(int(x) % rank for x in a.get("axes", [-1]))
    if axes != list(range(rank - len(axes), rank)):
        raise Unsupported(f"{op.name}: axes {axes} are not the trailing axes")
    if len(ins) != 3 or not a.get("center", True) or not a.get("scale", True):
        raise Unsupported(f"{op.name}: needs gamma and beta with center and scale")
    b.node("LayerNormalization", list(ins), out, axis=-len(axes), epsilon=float(a.get("epsilon", 1e-5)))


def softmax(b, op, ins, out) -> None:
    """nn.softmax: Softmax over one axis (opset 13 semantics equal Relax's)."""
    b.node("Softmax", [ins[0]], out, axis=int(op.attrs.get("axis", -1)))


def log_softmax(b, op, ins, out) -> None:
    """nn.log_softmax: LogSoftmax over one axis."""
    b.node("LogSoftmax", [ins[0]], out, axis=int(op.attrs.get("axis", -1)))


def matmul(b, op, ins, out) -> None:
    """matmul: MatMul (numpy semantics on both sides)."""
    dtype = op.attrs.get("out_dtype")
    if dtype and np.dtype(str(dtype)) != b.dtype(ins[0]):
        raise Unsupported(f"matmul: out_dtype {dtype} differs from the input dtype")
    b.node("MatMul", list(ins), out)


def pad(b, op, ins, out) -> None:
    """nn.pad: Pad (Relax pad_width pairs per axis -> ONNX begins then ends)."""
    a = op.attrs
    width = [int(v) for v in a.get("pad_width", ())]
    mode = str(a.get("pad_mode", "constant"))
    if mode not in ("constant", "reflect", "edge"):
        raise Unsupported(f"nn.pad: pad_mode {mode!r} is not expressible in ONNX")
    begins, ends = width[0::2], width[1::2]
    value = b.const(np.asarray(a.get("pad_value", 0.0), dtype=b.dtype(ins[0])))
    b.node("Pad", [ins[0], b.ints(begins + ends), value], out, mode=mode)
