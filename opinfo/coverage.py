"""Does every block write the whole of a buffer it alone writes?

An op's output is all of its buffer: ``y[i, j] = x[i + 2, j]`` over rows 0..1 of a 4-row
``y`` is no ``strided_slice`` (rows 2..3 are never written), and ``y[i] = sum(x[i, :])`` over
3 of 4 rows is no ``sum``. Recognizers read a block's expression and take the output's
extents from its buffer, so a block that covers only part of it must be caught before:
:func:`partial_writes` finds the blocks that provably write less than their buffer.

Only what is certain counts. A block iteration variable covers ``[0, extent)`` of its
domain when its binding is a mixed-radix sum of loop variables (``i0 * 4 + i1`` over loops
of extents (E, 4): all of ``[0, 4 E)``); it provably covers less when that range is shorter
than its domain, both constants. A store index that is a block variable covers its axis
when the variable's domain is the axis' extent. Anything else -- fused div/mod bindings,
nested blocks bound to outer block variables, symbolic extents that differ, buffers with
several writers (decomposed reductions, scatters) -- is not judged."""
from __future__ import annotations

from tir.expr import Var
from tir.stmt import Block, BlockRealize, For, SeqStmt

from .affine import ONE, affine, const_of
from .semantic import stages_of


def _realizes(stmt, loops=()):
    """(BlockRealize, enclosing loops since the enclosing block) for every block below."""
    if isinstance(stmt, BlockRealize):
        yield stmt, loops
        yield from _realizes(stmt.block.body, ())
        if stmt.block.init is not None:
            yield from _realizes(stmt.block.init, ())
    elif isinstance(stmt, For):
        yield from _realizes(stmt.body, loops + (stmt,))
    elif isinstance(stmt, SeqStmt):
        for s in stmt.seq:
            yield from _realizes(s, loops)
    elif isinstance(stmt, Block):
        yield from _realizes(stmt.body, ())


def _reach(value, loops) -> "int | None":
    """``P`` when ``value`` takes exactly the values ``[0, P)`` over ``loops`` (a mixed-radix
    sum of loop variables with constant extents), else None."""
    form = affine(value)
    if form is None or form.get(ONE, 0) != 0:
        return None
    extents = {}
    for loop in loops:
        if const_of(loop.min) != 0 or const_of(loop.extent) is None:
            continue
        extents[loop.loop_var] = const_of(loop.extent)
    terms = []
    for atom, coef in form.items():
        if atom is ONE:
            continue
        if not isinstance(atom, Var) or atom not in extents or coef <= 0:
            return None
        terms.append((coef, extents[atom]))
    size = 1
    for coef, extent in sorted(terms):
        if coef != size:
            return None
        size *= extent
    return size


def _short_vars(realize: BlockRealize, loops) -> set:
    """Block variables whose binding provably reaches less than their domain."""
    short = set()
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        lo, ext = const_of(iv.dom.min), const_of(iv.dom.extent)
        if lo != 0 or ext is None:
            continue
        reach = _reach(value, loops)
        if reach is not None and reach < ext:
            short.add(iv.var)
    return short


def _short_store(block: Block, short: set, indices, buffer) -> bool:
    doms = {iv.var: iv.dom for iv in block.iter_vars}
    for index, axis in zip(indices, buffer.shape):
        if not isinstance(index, Var) or index not in doms:
            continue
        if index in short:
            return True
        dom = doms[index]
        ext, size = const_of(dom.extent), const_of(axis)
        if const_of(dom.min) == 0 and ext is not None and size is not None and ext < size:
            return True
    return False


def partial_writes(func) -> bool:
    """True when some block is the only writer of an output (a parameter buffer) and
    provably writes part of it. Intermediate buffers may be written in part: TVM's pad
    block after ``compute_at`` fills only the columns its consumer reads."""
    params = {id(b) for b in func.buffers}
    found = list(_realizes(func.body))
    writers: dict = {}
    for realize, _ in found:
        for key in {id(s.buffer) for s in stages_of(realize.block) if s.buffer is not None}:
            writers[key] = writers.get(key, 0) + 1
    for realize, loops in found:
        block = realize.block
        if not block.iter_vars:
            continue
        short = _short_vars(realize, loops)
        for stage in stages_of(block):
            buffer = stage.buffer
            if (buffer is None or id(buffer) not in params or writers.get(id(buffer)) != 1
                    or len(stage.indices) != len(buffer.shape)):
                continue
            if _short_store(block, short, stage.indices, buffer):
                return True
    return False
