"""split: one PrimFunc writing several outputs, each a contiguous slice of one input along
one axis, the slices covering the input in order.

TVM's legalization names the blocks after the form of ``indices_or_sections``:
``T_split_sections``, ``T_split_sections_1``, ... for a number of sections (every section
``ceil(N / s)`` long but the last), ``T_split``, ``T_split_1``, ... for a list of split
indices. The loops of ``split(x, 2)`` and ``split(x, [N // 2])`` are identical, so the block
names decide which attribute form is reported; any other name abstains.
"""
from __future__ import annotations

import re

import sympy

from tir.expr import Add, BufferLoad

from ..affine import ONE, add_forms, affine, const_of
from ..info import Operand, OpInfo
from ..tags import tag
from .common import Space, strip
from .extent import always_equal, sym, sym_int
from .movement_index import pure_space

_TAG = re.compile(r"^(T_split_sections|T_split)$")


def split_ops(sem, outputs) -> tuple:
    """``(OpInfo("split", ...),)`` when ``outputs`` (the stages writing parameters) are the
    pieces of one split, else ()."""
    if len(outputs) < 2:
        return ()
    got = _pieces(sem, outputs)
    if got is None:
        return ()
    data, pieces, form = got
    rank = len(data.shape)
    in_ext = [sym(s) for s in data.shape]
    if None in in_ext:
        return ()
    axis = None
    for d in range(rank):
        if all(always_equal(off[d], sympy.Integer(0)) and always_equal(ext[d], in_ext[d]) for _, off, ext in pieces):
            continue
        if axis is not None:
            return ()
        axis = d
    if axis is None:
        return ()
    pos = sympy.Integer(0)
    for _, off, ext in pieces:
        if not always_equal(off[axis], pos):
            return ()
        pos = pos + ext[axis]
    if not always_equal(pos, in_ext[axis]):
        return ()
    if form == "T_split_sections":
        value = _sections(in_ext[axis], [ext[axis] for _, _, ext in pieces])
    else:
        starts = [sym_int(off[axis]) for _, off, _ in pieces[1:]]
        value = None if None in starts or starts != sorted(set(starts)) else starts
    if value is None:
        return ()
    params = list(sem.params)
    idx = next(i for i, p in enumerate(params) if p is data)
    out = pieces[0][0]
    return (OpInfo("split", {"axis": axis, "indices_or_sections": value}, (Operand("data", data.name, idx),),
                   Operand("output", out.name, next(i for i, p in enumerate(params) if p is out))),)


def _sections(total, sizes) -> "int | None":
    """The section count ``s`` of ``split(x, s)`` that cuts ``total`` into ``sizes``: TVM
    makes ``s`` pieces, all ``ceil(total / s)`` long but the last."""
    s = len(sizes)
    seg = sympy.ceiling(total / s)
    if all(always_equal(x, seg) for x in sizes[:-1]) and always_equal(sizes[-1], total - (s - 1) * seg):
        return s
    return None


def _pieces(sem, outputs):
    """(data buffer, [(out buffer, offsets, extents)] in parameter order, tag form) when every
    output copies one parameter ``data`` shifted by offsets free of the loop variables."""
    data, pieces, forms = None, [], set()
    for stage in outputs:
        m = _TAG.match(tag(stage.block.name))
        if m is None:
            return None
        forms.add(m.group(1))
        expr = strip(sem.meaning(stage))
        if not (isinstance(expr, BufferLoad) and sem.is_param(expr.buffer)):
            return None
        if data is None:
            data = expr.buffer
        if expr.buffer is not data or expr.buffer is stage.buffer:
            return None
        idx = tuple(stage.indices)
        if len(idx) != len(expr.indices) or len(idx) != len(stage.buffer.shape):
            return None
        if not pure_space(Space(idx, tuple(stage.buffer.shape))):
            return None
        offs = []
        for i, v, extent in zip(expr.indices, idx, stage.buffer.shape):
            f = affine(i)
            if f is not None and not any(k is v for k in f) and const_of(extent) == 1:
                # a unit piece whose variable a scheduler dropped (``x[7, i, j]``, dlight):
                # its one element sits at the index itself
                f, i = add_forms(f, {v: 1}), Add(i, v)
            if f is None or [c for k, c in f.items() if k is v] != [1]:
                return None
            if any(k is not v and _mentions(k, idx) for k in f):
                return None
            off = sym(i)
            sv = sym(v)
            if off is None or sv is None:
                return None
            off = sympy.expand(off - sv)
            if sv in off.free_symbols:
                return None
            offs.append(off)
        ext = [sym(s) for s in stage.buffer.shape]
        if None in ext:
            return None
        pieces.append((stage.buffer, offs, ext))
    if len(forms) != 1 or len({id(b) for b, _, _ in pieces}) != len(pieces):
        return None
    order = {id(p): i for i, p in enumerate(sem.params)}
    pieces.sort(key=lambda p: order[id(p[0])])
    return data, pieces, forms.pop()


def _mentions(atom, idx) -> bool:
    """Whether an affine atom (a Var or a div/mod node) involves one of the loop variables."""
    from tir.functor import pre_order_visit
    found = []

    def visit(n):
        if any(n is v for v in idx):
            found.append(n)
        return not found

    if atom is ONE:
        return False
    pre_order_visit(atom, visit)
    return bool(found)
