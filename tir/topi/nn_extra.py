"""More ``nn`` and vision ops (``nn.prelu``, adaptive pools of every rank, attention, ...) as
TVM's topi writes them."""
from __future__ import annotations

OPS: dict = {}
"""Op name -> lowering function (``fn(b, *inputs, **attrs)``), merged into ``ops.op_table``."""
