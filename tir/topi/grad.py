"""Gradient ops (``grad.max_pool2d_backward``, ``grad.avg_pool2d_backward``,
``grad.take_backward``, ``grad.nll_loss_backward``) as TVM's topi writes them."""
from __future__ import annotations

OPS: dict = {}
"""Op name -> lowering function (``fn(b, *inputs, **attrs)``), merged into ``ops.op_table``."""
