"""The public op table: one function per Relax op name, taking the builder, the input buffers
and the op's attributes under their Relax names (DESIGN.md). :func:`tir.topi.lower` reads
each function's signature to know the inputs and the accepted attributes."""
from __future__ import annotations

from ..builder import Builder
from . import binary as bin_
from . import conv as cv
from . import conv_transpose as ct
from . import elemwise as ew
from . import layout_transform as lt
from . import matmul as mm
from . import pool as pl
from . import reduce as rd
from . import resize as rs
from . import norm as nm
from . import softmax as sm
from . import transform as tf
from . import quantize as qz
from . import indexing as ix
from . import affine_grid as ag, hamming as hw, loss as ls
from . import attention as at, gather as gt, grad as gd, nn_extra as nx, vision as vs


# ---------------------------------------------------------------- convolution
def nn_conv1d(b: Builder, data, weight, *, strides=1, padding=0, dilation=1, groups=1, data_layout="NCW",
              kernel_layout="OIW", out_layout=None, out_dtype=None):
    return cv.conv(b, data, weight, op="nn.conv1d", nd=1, strides=strides, padding_=padding, dilation=dilation,
                   groups=groups, data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
                   out_dtype_=out_dtype)


def nn_conv2d(b: Builder, data, weight, *, strides=1, padding=0, dilation=1, groups=1, data_layout="NCHW",
              kernel_layout="OIHW", out_layout=None, out_dtype=None):
    return cv.conv(b, data, weight, op="nn.conv2d", nd=2, strides=strides, padding_=padding, dilation=dilation,
                   groups=groups, data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
                   out_dtype_=out_dtype)


def nn_conv3d(b: Builder, data, weight, *, strides=1, padding=0, dilation=1, groups=1, data_layout="NCDHW",
              kernel_layout="OIDHW", out_layout=None, out_dtype=None):
    return cv.conv(b, data, weight, op="nn.conv3d", nd=3, strides=strides, padding_=padding, dilation=dilation,
                   groups=groups, data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
                   out_dtype_=out_dtype)


def _conv_transpose(nd, layout, kernel_layout_):
    op = f"nn.conv{nd}d_transpose"

    def lower_conv_transpose(b: Builder, data, weight, *, strides=1, padding=0, output_padding=0, dilation=1,
                             groups=1, data_layout=layout, kernel_layout=kernel_layout_, out_layout=None,
                             out_dtype=None):
        return ct.conv_transpose(b, data, weight, op=op, nd=nd, strides=strides, padding_=padding,
                                 output_padding=output_padding, dilation=dilation, groups=groups,
                                 data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
                                 out_dtype_=out_dtype)

    lower_conv_transpose.__name__ = op.replace(".", "_")
    return lower_conv_transpose


# ---------------------------------------------------------------- pooling
def _pool(nd, kind, default_layout):
    op = f"nn.{kind}_pool{nd}d"

    def lower_pool(b: Builder, data, *, pool_size=1, strides=1, dilation=1, padding=0, ceil_mode=False,
                   count_include_pad=False, layout=default_layout, out_layout=None):
        return pl.pool(b, data, op=op, nd=nd, kind=kind, pool_size=pool_size, strides=strides,
                       dilation=dilation, padding_=padding, ceil_mode=ceil_mode,
                       count_include_pad=count_include_pad, layout=layout, out_layout=out_layout)

    lower_pool.__name__ = op.replace(".", "_")
    lower_pool.__doc__ = f"``{op}``"
    return lower_pool


def _adaptive(nd, default_layout):
    op = f"nn.adaptive_avg_pool{nd}d"

    def lower_adaptive_avg_pool(b: Builder, data, *, output_size=None, layout=default_layout, out_layout=None):
        return pl.adaptive_avg_pool(b, data, op=op, nd=nd, output_size=output_size, layout=layout,
                                    out_layout=out_layout)

    lower_adaptive_avg_pool.__name__ = op.replace(".", "_")
    lower_adaptive_avg_pool.__doc__ = f"``{op}``"
    return lower_adaptive_avg_pool


# ---------------------------------------------------------------- linear algebra, casts
def matmul(b: Builder, x, y, *, out_dtype=None):
    return mm.matmul(b, x, y, out_dtype)


def astype(b: Builder, x, *, dtype="float32"):
    return ew.astype(b, x, dtype)


# ---------------------------------------------------------------- elementwise
def _unary(name):
    def lower_unary(b: Builder, x):
        return ew.unary(b, name, x)

    lower_unary.__name__ = name
    return lower_unary


def _binary(name):
    def lower_binary(b: Builder, x, y):
        return bin_.binary(b, name, x, y)

    lower_binary.__name__ = name
    return lower_binary


def nn_relu(b: Builder, x):
    return ew.relu(b, x)


def nn_relu6(b: Builder, x, *, min=0.0, max=6.0):  # noqa: A002 - Relax argument names
    return ew.clip(b, x, min, max)


def clip(b: Builder, x, *, min=None, max=None):  # noqa: A002
    if min is None or max is None:
        from .common import OpError
        raise OpError("clip", "min" if min is None else "max", "is required")
    return ew.clip(b, x, min, max)


def nn_leakyrelu(b: Builder, x, *, alpha=0.01):
    return ew.leakyrelu(b, x, alpha)


def nn_softplus(b: Builder, x, *, beta=1.0, threshold=20.0):
    return ew.softplus(b, x, beta, threshold)


def nn_gelu(b: Builder, x):
    return ew.gelu(b, x)


def nn_gelu_tanh(b: Builder, x):
    return ew.gelu_tanh(b, x)


def nn_silu(b: Builder, x):
    return ew.silu(b, x)


def nn_selu(b: Builder, x):
    return ew.selu(b, x)


def where(b: Builder, condition, x, y):
    return bin_.where(b, condition, x, y)


# ---------------------------------------------------------------- softmax and reductions
def nn_softmax(b: Builder, x, *, axis=-1):
    return sm.softmax(b, x, axis)


def nn_log_softmax(b: Builder, x, *, axis=-1):
    return sm.log_softmax(b, x, axis)


def _reduce(name):
    def lower_reduce(b: Builder, x, *, axis=None, keepdims=False):
        return rd.reduce(b, name, x, axis, keepdims)

    lower_reduce.__name__ = name
    return lower_reduce


def variance(b: Builder, x, *, axis=None, keepdims=False):
    return rd.variance(b, x, axis, keepdims)


def _arg(name):
    def lower_arg(b: Builder, x, *, axis=None, keepdims=False):
        return rd.arg_reduce(b, name, x, axis, keepdims)

    lower_arg.__name__ = name
    return lower_arg


# ---------------------------------------------------------------- normalisation
def nn_layer_norm(b: Builder, data, gamma, beta, *, axes=-1, epsilon=1e-5, center=True, scale=True):
    return nm.layer_norm(b, data, gamma, beta, axes, epsilon, center, scale)


def nn_instance_norm(b: Builder, data, gamma, beta, *, channel_axis=1, axes=None, epsilon=1e-5, center=True,
                     scale=True):
    return nm.instance_norm(b, data, gamma, beta, channel_axis, axes, epsilon, center, scale)


def nn_rms_norm(b: Builder, data, weight, *, axes=-1, epsilon=1e-5):
    return nm.rms_norm(b, data, weight, axes, epsilon)


def nn_group_norm(b: Builder, data, gamma, beta, *, num_groups=1, channel_axis=1, axes=None, epsilon=1e-5,
                  center=True, scale=True):
    return nm.group_norm(b, data, gamma, beta, num_groups, channel_axis, axes, epsilon, center, scale)


def nn_batch_norm(b: Builder, data, gamma, beta, moving_mean, moving_var, *, axis=1, epsilon=1e-5, center=True,
                  scale=True, momentum=0.1, training=False):
    return nm.batch_norm(b, data, gamma, beta, moving_mean, moving_var, axis, epsilon, center, scale, momentum,
                         training)


# ---------------------------------------------------------------- data movement
def permute_dims(b: Builder, x, *, axes=None):
    return tf.permute_dims(b, x, axes)


def reshape(b: Builder, x, *, shape=None):
    if shape is None:
        from .common import OpError
        raise OpError("reshape", "shape", "is required")
    return tf.reshape(b, x, shape)


def expand_dims(b: Builder, x, *, axis=0):
    return tf.expand_dims(b, x, axis)


def squeeze(b: Builder, x, *, axis=None):
    return tf.squeeze(b, x, axis)


def concat(b: Builder, *xs, axis=0):
    return tf.concat(b, *xs, axis=axis)


def stack(b: Builder, *xs, axis=0):
    return tf.stack(b, *xs, axis=axis)


def strided_slice(b: Builder, x, *, axes=(), begin=(), end=(), strides=None, assume_inbound=False):
    return tf.strided_slice(b, x, axes, begin, end, strides, assume_inbound)


def nn_pad(b: Builder, x, *, pad_width=(), pad_value=0.0, pad_mode="constant"):
    return tf.nn_pad(b, x, pad_width, pad_value, pad_mode)


def take(b: Builder, x, indices, *, axis=None, mode="fast"):
    return tf.take(b, x, indices, axis, mode)


def broadcast_to(b: Builder, x, *, shape=()):
    return tf.broadcast_to(b, x, shape)


def tile(b: Builder, x, *, repeats=()):
    return tf.tile(b, x, repeats)


def flip(b: Builder, x, *, axis=0):
    return tf.flip(b, x, axis)


def repeat(b: Builder, x, *, repeats=1, axis=None):
    return tf.repeat(b, x, repeats, axis)


def tril(b: Builder, x, *, k=0):
    return tf.trilu(b, x, k, upper=False)


def triu(b: Builder, x, *, k=0):
    return tf.trilu(b, x, k, upper=True)


def outer(b: Builder, x, y):
    return bin_.outer(b, x, y)


def std(b: Builder, x, *, axis=None, keepdims=False):
    return rd.std(b, x, axis, keepdims)


def _image_resize(flavour, default_layout, default_rounding, spatial):
    op = flavour.op

    def lower_resize(b: Builder, x, *, size=None, roi=None, layout=default_layout, method="linear",
                     coordinate_transformation_mode="half_pixel", rounding_method=default_rounding,
                     cubic_alpha=-0.75, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
        if size is None:
            from .common import OpError
            raise OpError(op, "size", f"is required (the output [{spatial}])")
        return rs.resize(b, x, flavour, size=size, layout=layout, method=method,
                         coordinate_transformation_mode=coordinate_transformation_mode,
                         rounding_method=rounding_method, cubic_alpha=cubic_alpha, cubic_exclude=cubic_exclude,
                         out_dtype=out_dtype)

    lower_resize.__name__ = op.replace(".", "_")
    return lower_resize


def layout_transform(b: Builder, x, *, src_layout=None, dst_layout=None, index_map=None, inverse=None,
                     pad_value=0.0):
    if index_map is not None:
        if inverse is None:
            from .common import OpError
            raise OpError("layout_transform", "inverse", "an index_map needs its inverse")
        return lt.from_index_map(b, x, index_map, inverse)
    if src_layout is None or dst_layout is None:
        from .common import OpError
        raise OpError("layout_transform", "src_layout", "give src_layout and dst_layout, or index_map")
    return lt.from_layouts(b, x, src_layout, dst_layout, pad_value)


def op_table() -> dict:
    """Op name -> lowering function (built on call; nothing is registered at import)."""
    table = {
        "nn.conv1d": nn_conv1d, "nn.conv2d": nn_conv2d, "nn.conv3d": nn_conv3d,
        "nn.conv1d_transpose": _conv_transpose(1, "NCW", "IOW"),
        "nn.conv2d_transpose": _conv_transpose(2, "NCHW", "IOHW"),
        "nn.conv3d_transpose": _conv_transpose(3, "NCDHW", "IODHW"),
        "matmul": matmul, "astype": astype,
        "nn.relu": nn_relu, "nn.relu6": nn_relu6, "clip": clip, "nn.leakyrelu": nn_leakyrelu,
        "nn.softplus": nn_softplus, "nn.gelu": nn_gelu, "nn.gelu_tanh": nn_gelu_tanh, "nn.silu": nn_silu,
        "nn.selu": nn_selu, "where": where,
        "nn.softmax": nn_softmax, "nn.log_softmax": nn_log_softmax,
        "nn.layer_norm": nn_layer_norm, "nn.rms_norm": nn_rms_norm, "nn.group_norm": nn_group_norm,
        "nn.instance_norm": nn_instance_norm,
        "nn.batch_norm": nn_batch_norm,
        "permute_dims": permute_dims, "reshape": reshape, "expand_dims": expand_dims, "squeeze": squeeze,
        "concat": concat, "stack": stack, "strided_slice": strided_slice, "nn.pad": nn_pad, "take": take,
        "image.resize2d": _image_resize(rs.RESIZE2D, "NCHW", "round", "height, width"),
        "image.resize3d": _image_resize(rs.RESIZE3D, "NCDHW", "", "depth, height, width"),
        "layout_transform": layout_transform,
        "broadcast_to": broadcast_to, "tile": tile, "flip": flip, "repeat": repeat, "tril": tril, "triu": triu,
        "outer": outer, "std": std,
        "variance": variance, "argmax": _arg("argmax"), "argmin": _arg("argmin"),
        "quantize": qz.quantize, "dequantize": qz.dequantize,
        "index_tensor": ix.index_tensor,
        "nn.nll_loss": ls.nll_loss, "nn.cross_entropy_with_logits": ls.cross_entropy_with_logits,
        "hamming_window": hw.hamming_window,
        "image.affine_grid": ag.affine_grid,
    }
    for nd, layout in ((1, "NCW"), (2, "NCHW"), (3, "NCDHW")):
        for kind in ("max", "avg"):
            table[f"nn.{kind}_pool{nd}d"] = _pool(nd, kind, layout)
        table[f"nn.adaptive_avg_pool{nd}d"] = _adaptive(nd, layout)
    for name in list(ew.INTRINSICS) + ["negative", "square", "sign", "isinf", "isfinite", "logical_not"]:
        table[name] = _unary(name)
    for name in bin_.BINARY:
        table[name] = _binary(name)
    for name in ("sum", "mean", "max", "min", "prod"):
        table[name] = _reduce(name)
    table.update(gt.OPS)
    table.update(nx.OPS)
    table.update(at.OPS)
    table.update(vs.OPS)
    table.update(gd.OPS)
    return table
