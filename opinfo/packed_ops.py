"""Ops of a function whose buffers TVM's ``transform_layout`` packed (NCHW4c, OIHW4i4o).

The function is read on its logical tensors (:func:`.unpack.unpack`) and the layouts of
packed operands are named packed (:func:`.unpack.repack`). When only unit splits show the
packing (``x[n, 0, h, w, c]``: a single block of 4 channels), the buffer may as well be a
genuine 5-D tensor with a unit dimension: the op is claimed only when both readings
agree (same op, same attributes, axes compared on each reading's rank).
"""
from __future__ import annotations

import re

from .copy_tags import RESHAPES, contradicted
from .coverage import partial_writes
from .realize_check import misrealized
from .unit_axes import scheduled
from .unpack import buffer_shapes, paired, repack, unpack_all

AXIS_KEYS = ("axis", "axes", "channel_axis")
LAYOUT_KEYS = ("layout", "data_layout", "kernel_layout", "out_layout")


def _canon(op, shapes: dict) -> tuple:
    """(name, attributes) with axes taken modulo the rank of the op's first operand."""
    first = op.operands[0] if op.operands else op.output
    rank = len(shapes.get(first.buffer) or ()) if first is not None else 0
    out = {}
    for k, v in op.attrs.items():
        if k in AXIS_KEYS and rank and isinstance(v, int):
            v = v % rank
        elif k in AXIS_KEYS and rank and isinstance(v, tuple) and all(isinstance(a, int) for a in v):
            v = tuple(a % rank for a in v)
        out[k] = v
    return op.name, tuple(sorted(out.items(), key=lambda kv: kv[0]))


def _packing_factors(packed: dict) -> bool:
    """Whether every split factor could be a packed layout's block (a power of two up to 64:
    NCHW4c, NCHW16c, ...)."""
    factors = [sp.factor for splits in packed.values() for sp in splits]
    return all(f is not None and 0 < f <= 64 and f & (f - 1) == 0 for f in factors)


def recognize_packed(func, recognize_ops) -> "tuple | None":
    """:func:`_recognize_packed`, except that packings which are no layout of the interface
    (:func:`_merges_only`: ``w[o, 0, c // 3, c % 3]``, dlight fused ``kh, kw`` into one
    variable ``c``) are no evidence of a packed layout when their reading names nothing: the
    buffers are read as declared (None)."""
    got = _recognize_packed(func, recognize_ops)
    if got == () and _merges_only(func):
        return None
    return got


def _merges_only(func) -> bool:
    """Whether every packing read is no layout of the function's interface: a split merging
    adjacent dimensions in order, or one of an intermediate buffer (dlight's rfactor scratch
    ``rf[k, 0, c, h, w]``, whose unit dimension may read as a single block of channels)."""
    readings = unpack_all(func)
    params = {b.name for b in func.buffers}
    return bool(readings) and all(
        name not in params or all(s.inner == s.outer + 1 and not s.unit for s in splits)
        for _, packed, _ in readings for name, splits in packed.items())


def _recognize_packed(func, recognize_ops) -> "tuple | None":
    """The ops of ``func`` (recognized by ``recognize_ops``) when some buffer is packed,
    () when not certain; None when no buffer is packed.

    When a buffer's packing has several readings (more than one unit dimension read at 0
    could hold a single block: a kernel ``(1, O/4, kh, 1, 4, 4)``), each reading is
    recognized; the readings that name ops must agree (else ()), those naming none or
    whose packing does not fit the op they name are no evidence. A reading that provably
    writes part of a logical output, or whose loops do not run its blocks' domains
    (:func:`.coverage.partial_writes`, :func:`.realize_check.misrealized`, which cannot
    judge the packed indices), makes the function abstain."""
    readings = unpack_all(func)
    if readings is None:
        return None
    if not readings:
        return ()
    if any(partial_writes(logical) or misrealized(logical) for logical, _, _ in readings):
        # what the packed stores hid: ``out[n, c // 4, h, w, c % 4]`` over 7 of 8 channels
        return ()
    if len(readings) == 1:
        return _reading(func, *readings[0], recognize_ops)
    raws = [recognize_ops(logical) for logical, _, _ in readings]
    if not any(raws):
        return _reading(func, *readings[0], recognize_ops, raw=())
    pairs = [(r, _reading(func, *r, recognize_ops, raw=raw)) for r, raw in zip(readings, raws) if raw]
    pairs = [(r, a) for r, a in pairs if a]
    distinct = _distinct([a for _, a in pairs])
    if len(distinct) > 1 and any(not _blocks_batch(r[1]) for r, _ in pairs):
        # a batch of one is no block of channels: where the batch and the channels' outer
        # axis are both single and stored at 0, a reading that takes axis 0 for the blocks
        # gives way to one that does not (layouts block the channels: NCHW4c)
        distinct = _distinct([a for r, a in pairs if not _blocks_batch(r[1])])
    if len(distinct) > 1 and len({_without_layouts(a) for a in distinct}) == 1:
        # the same op read with a unit kernel dimension (kw = 1) taken for the single block
        # of channels and the other way round: only the layout names differ, and one of
        # them is a layout no framework writes (``WOHI4i4o`` beside ``OIHW4i4o``)
        distinct = [a for a in distinct if _usual_layouts(a)]
    return distinct[0] if len(distinct) == 1 else ()


def _blocks_batch(packed: dict) -> bool:
    """Whether a reading's packing holds the blocks of some buffer's axis 0 in a single block
    read at 0 (``x[0, 0, h, w, c]`` read as ``(4, 1, h, w)``: the batch taken for channels)."""
    return any(s.outer == 0 and s.unit for splits in packed.values() for s in splits)


def _without_layouts(ops) -> tuple:
    return tuple((op.name, tuple((k, v) for k, v in op.attrs.items() if k not in LAYOUT_KEYS)) for op in ops)


def _distinct(answers: list) -> list:
    out, seen = [], []
    for a in answers:
        key = [(op.name, op.attrs) for op in a]
        if key not in seen:
            seen.append(key)
            out.append(a)
    return out


def _usual(op) -> bool:
    """Whether the layouts of ``op``, once their blocks (``4c``, ``4i4o``) are dropped, are
    ones a legalized op has: data N, C and the spatial letters (C second or last); a
    convolution's kernel O, I and the spatial letters in a framework's order (OIHW, HWIO,
    OHWI, HWOI); a transposed convolution's I, O then the spatial ones (the only layout
    TVM lowers it with)."""
    got = {k: re.sub(r"\d+[a-z]", "", v) for k, v in op.attrs.items() if k in LAYOUT_KEYS and isinstance(v, str)}
    data = got.get("data_layout", got.get("layout"))
    if data is None or len(data) < 3 or not data.startswith("N"):
        return False
    sp = data[2:] if data[1] == "C" else data[1:-1]
    if data not in ("NC" + sp, "N" + sp + "C") or got.get("out_layout", data) != data:
        return False
    kern = got.get("kernel_layout")
    if kern is None:
        return True
    if op.name.endswith("_transpose"):
        return data == "NC" + sp and kern == "IO" + sp
    return kern in ("OI" + sp, sp + "IO", "O" + sp + "I", sp + "OI")


def _usual_layouts(ops) -> bool:
    """Whether every op of ``ops`` with layout attributes has usual ones (:func:`_usual`)."""
    return all(_usual(op) for op in ops if any(k in op.attrs for k in LAYOUT_KEYS))


def _reading(func, logical, packed, shown, recognize_ops, raw=None) -> tuple:
    """The ops of ``func`` on one reading of its packed buffers (see :func:`recognize_packed`);
    ``raw``: the ops of ``logical`` when already known."""
    raw = recognize_ops(logical) if raw is None else raw
    if len(raw) == 1 and contradicted(raw[0], [b.name for b in func.blocks()]):
        raw = ()  # a copy the compute tag names otherwise (T_squeeze read as a permute_dims)
    shapes = buffer_shapes(logical)
    ops = tuple(repack(op, packed, shapes) for op in raw)
    if shown:
        if raw and None not in ops and scheduled(func) and not paired(func) and not _usual_layouts(ops):
            # only stores at 0 showed the packing, in blocks a scheduler rebuilt: a unit
            # axis that lost its variable (a batch of 1) taken for a single block names a
            # layout no framework writes (a conv3d read as a conv2d in ``HCWN9h``)
            return ()
        return recognize_ops(func) if not raw else (() if None in ops else ops)
    physical = recognize_ops(func)
    if not raw or (physical and all(op.name in RESHAPES for op in physical) and not _packing_factors(packed)):
        # only unit dimensions suggested a packing, with a trailing extent no packed layout
        # uses (LRN's squeeze of (1, 1, C, 56, 56)), and the function reads as a reshape of
        # its physical buffers: what the IR does, exactly
        return physical
    if None in ops or len(ops) != len(physical):
        return ()
    phys_shapes = buffer_shapes(func)
    agree = all(_canon(a, shapes) == _canon(b, phys_shapes) for a, b in zip(ops, physical))
    return physical if agree else ()
