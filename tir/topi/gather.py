"""Gathers, scatters and other index-driven ops (``gather_elements``, ``gather_nd``,
``scatter_elements``, ``scatter_nd``, ``one_hot``, ``split``, ...) as TVM's topi writes them."""
from __future__ import annotations

OPS: dict = {}
"""Op name -> lowering function (``fn(b, *inputs, **attrs)``), merged into ``ops.op_table``."""
