"""A small ResNet-style network built with :class:`GraphBuilder`, for the demo and the tests."""
from __future__ import annotations

import numpy as np

from ..module import IRModule
from .graph import GraphBuilder


def resnet_block_example(batch=1, channels: int = 8, size: int = 8, classes: int = 10) -> IRModule:
    """conv+bias+relu stem, max pool, a residual block (two conv+bias(+relu) and an add), average
    pool, a dense head (reshape, matmul, bias) and softmax. ``batch`` may be a ``tir.SizeVar``.

    Parameters of ``main``: data, then each weight and bias in order of use.
    """
    g = GraphBuilder()
    x = g.input("data", (batch, 3, size, size))
    pad1 = [1, 1, 1, 1]

    def conv_bias(inp, cin, name, relu=True):
        w = g.input(f"{name}_w", (channels, cin, 3, 3))
        b = g.input(f"{name}_b", (1, channels, 1, 1))
        y = g.add(g.conv2d(inp, w, strides=[1, 1], padding=pad1, dilation=[1, 1], groups=1,
                           data_layout="NCHW", kernel_layout="OIHW"), b)
        return g.relu(y) if relu else y

    stem = conv_bias(x, 3, "stem")
    pooled = g.max_pool2d(stem, pool_size=[2, 2], strides=[2, 2], padding=[0, 0, 0, 0])
    branch = conv_bias(conv_bias(pooled, channels, "res_a"), channels, "res_b", relu=False)
    res = g.relu(g.add(branch, pooled))
    half = size // 2
    gap = g.avg_pool2d(res, pool_size=[half, half], strides=[1, 1], padding=[0, 0, 0, 0])
    flat = g.squeeze(gap, axis=[2, 3])
    w = g.input("fc_w", (channels, classes))
    b = g.input("fc_b", (classes,))
    logits = g.add(g.matmul(flat, w), b)
    return g.build(g.softmax(logits, axis=-1))


def example_inputs(module: IRModule, seed: int = 0, batch: int = 1) -> list:
    """Random float32 arrays for the parameters of ``module.main`` (symbolic extents -> ``batch``)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for p in module.main.params:
        shape = tuple(e if isinstance(e, int) else batch for e in p.type.shape)
        scale = 0.5 if p.name.endswith("_b") else 1.0
        arrays.append((rng.standard_normal(shape) * scale).astype(p.type.dtype.numpy))
    return arrays
