"""Attributes the loops leave open, settled differently inside an imported network.

Applied by :func:`opinfo.api.analyze` where the graph context shows a network (``main``
calls PrimFuncs more than once). A function lowered on its own is reported with Relax's defaults for what its loops cannot
show (the sample corpus' convention). Inside a network the values come from the importer
(TVM's Relax ONNX frontend), which writes some of them differently:

- ``image.resize2d``/``resize3d`` with ``method`` linear or cubic ignore ``rounding_method``;
  the ONNX frontend passes the node's ``nearest_mode`` whatever the method, ONNX's default
  ``round_prefer_floor`` (Relax's default is ``round``). Reported as assumed.
- ``strided_slice`` with a stride above one whose last element read is not the last of
  the axis: every ``end`` up to one stride past it reads the same elements. Outside a
  network the convention is one past the last element; an importer passes the ``end`` the
  network wrote (the axis extent, a larger sentinel, ...), no convention: not reported.
  The recognizer marks such attributes (:attr:`.info.OpInfo.unconventional`).
- ``concat`` along the last axis of a tensor of rank 2 or more: networks write that axis as
  ``-1`` as often as ``rank - 1``, and the importer passes what was written (TVM's ONNX
  frontend, Concat's ``axis``); marked the same way and not reported. The channel axis of
  the CNN zoo's NCHW concats (``axis=1``) is reported.
"""
from __future__ import annotations

import attrs

INTERPOLATING = ("linear", "cubic")
RESIZES = ("image.resize2d", "image.resize3d")
ONNX_NEAREST_MODE = "round_prefer_floor"


def in_network(ops: tuple) -> tuple:
    """``ops`` as a network's importer writes them; () when one of them is left open."""
    out = []
    for op in ops:
        if op.name in RESIZES and op.attrs.get("method") in INTERPOLATING \
                and "rounding_method" in op.attrs:
            a = dict(op.attrs)
            a["rounding_method"] = ONNX_NEAREST_MODE
            op = attrs.evolve(op, attrs=a, assumed=tuple(op.assumed) + ("rounding_method",))
        elif op.unconventional:
            return ()
        out.append(op)
    return tuple(out)
