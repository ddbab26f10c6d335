"""The ONNX backend's op table: which recovered ops it takes, on which attributes, and how.

``CHECKS`` are the support rules written as attribute predicates (like a TensorRT
converter's checks): each is ``(predicate(attrs) -> bool, reason when false)``. They are
asked before anything is offloaded; the converter itself may still refuse (with a reason)
on facts only known from shapes.
"""
from __future__ import annotations

import functools

from . import onnx_basic as B
from . import onnx_composed as K
from . import onnx_nn as N
from .region import OpStep, Unsupported


def _plain_layout(key: str, default: str):
    def pred(a) -> bool:
        value = str(a.get(key) or default)
        return value.isalpha() and value.isupper() and len(set(value)) == len(value)

    return pred, f"{key} must be a plain layout (no blocked axes like NCHW4c)"


_NOT_TRAINING = (lambda a: not a.get("training", False), "training-mode batch_norm is not offloaded")
_FLOAT_OUT = (lambda a: a.get("out_dtype") in (None, "", "void"), "a changed out_dtype is not offloaded")
_CONV = (_plain_layout("data_layout", "NCHW"), _plain_layout("kernel_layout", "OIHW"),
         _plain_layout("out_layout", "NCHW"), _FLOAT_OUT)
_POOL = (_plain_layout("layout", "NCHW"), _plain_layout("out_layout", "NCHW"))

CHECKS = {
    "nn.conv1d": _CONV, "nn.conv2d": _CONV, "nn.conv3d": _CONV,
    "nn.max_pool1d": _POOL, "nn.max_pool2d": _POOL, "nn.max_pool3d": _POOL,
    "nn.avg_pool1d": _POOL, "nn.avg_pool2d": _POOL, "nn.avg_pool3d": _POOL,
    "nn.adaptive_avg_pool1d": _POOL, "nn.adaptive_avg_pool2d": _POOL, "nn.adaptive_avg_pool3d": _POOL,
    "nn.batch_norm": (_NOT_TRAINING,),
    "nn.pad": ((lambda a: a.get("pad_mode", "constant") in ("constant", "reflect", "edge"),
                "pad_mode must be constant, reflect or edge"),),
    "reshape": ((lambda a: a.get("shape") is not None and all(isinstance(s, int) for s in a["shape"]),
                 "the target shape must be static"),),
    "broadcast_to": ((lambda a: a.get("shape") is not None and all(isinstance(s, int) for s in a["shape"]),
                      "the target shape must be static"),),
}


@functools.lru_cache(maxsize=1)
def converters() -> dict:
    """Relax op name -> converter ``(builder, op, inputs, output)``."""
    table = {name: B.unary for name in B.UNARY}
    table.update({name: B.binary for name in B.BINARY})
    table.update({name: B.reduce for name in B.REDUCE})
    table.update({f"nn.conv{d}d": N.conv for d in (1, 2, 3)})
    table.update({f"nn.max_pool{d}d": N.max_pool for d in (1, 2, 3)})
    table.update({f"nn.avg_pool{d}d": N.avg_pool for d in (1, 2, 3)})
    table.update({f"nn.adaptive_avg_pool{d}d": N.adaptive_avg_pool for d in (1, 2, 3)})
    table.update({
        "nn.batch_norm": N.batch_norm, "nn.layer_norm": N.layer_norm, "nn.softmax": N.softmax,
        "nn.log_softmax": N.log_softmax, "matmul": N.matmul, "nn.pad": N.pad,
        "divide": B.divide, "rsqrt": B.rsqrt, "square": B.square, "nn.silu": B.silu,
        "nn.leakyrelu": B.leaky_relu, "clip": B.clip, "nn.relu6": B.clip,
        "reshape": B.reshape, "permute_dims": B.permute_dims, "broadcast_to": B.broadcast_to,
        "concat": B.concat, "stack": B.stack, "expand_dims": B.expand_dims, "squeeze": B.squeeze,
        "astype": B.astype, "strided_slice": B.strided_slice, "where": B.where,
        "nn.gelu": K.gelu, "nn.gelu_tanh": K.gelu_tanh, "nn.softplus": K.softplus,
        "floor_divide": K.floor_divide, "variance": K.variance, "nn.rms_norm": K.rms_norm,
        "argmax": K.arg_reduce, "argmin": K.arg_reduce, "tile": K.tile, "flip": K.flip,
    })
    return table


def check(op) -> "str | None":
    """Why ``op`` (an OpInfo) cannot go to ONNX Runtime, or None when it can."""
    if op.name not in converters():
        return f"{op.name}: no ONNX converter for this op"
    for pred, reason in CHECKS.get(op.name, ()):
        try:
            ok = pred(op.attrs)
        except (TypeError, ValueError, KeyError):
            ok = False
        if not ok:
            return f"{op.name}: {reason}"
    return None


def convert(b, step: OpStep) -> None:
    """Emit the ONNX nodes of one op step; raises Unsupported with the reason."""
    reason = check(step.info)
    if reason is not None:
        raise Unsupported(reason)
    try:
        converters()[step.info.name](b, step.info, step.inputs, step.output)
    except (KeyError, TypeError, ValueError, IndexError) as err:
        raise Unsupported(f"{step.info.name}: attributes not convertible ({err})") from None
