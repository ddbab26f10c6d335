"""What the recognizers that run a function share (attention, reverse_sequence,
scatter_elements, scatter_nd, uneven adaptive pools, the gradient and vision ops): concrete
shapes for a symbolic function, one interpreter run that reports failure as None, inputs of
widely spread magnitudes, and keeping the readings that agree on every binding of the
symbolic extents."""
from __future__ import annotations

import itertools

import attrs
import numpy as np

from tir.buffer import Buffer
from tir.expr import BufferLoad, FloatImm, IntImm, PrimExpr, Var
from tir.function import PrimFunc
from tir.functor import node_fields, post_order_visit, pre_order_visit
from tir.interp import interpret
from tir.interp_expr import nan_propagating_minmax
from tir.node import Node
from tir.stmt import Block, BlockRealize, BufferStore, For, IterVar, SeqStmt, Stmt, While

from ..affine import const_of
from ..probe import vars_in


def concrete_shapes(bufs, value: int) -> "list | None":
    """The buffers' shapes with constant extents kept and every symbolic extent (a
    variable) bound to ``value``; None when an extent is any other expression."""
    return bind_shapes(bufs, {}, value)


def bind_shapes(bufs, env: dict, default: int) -> "list | None":
    """The buffers' shapes with constant extents kept and each symbolic extent (a variable)
    bound to ``env[var]`` (``default`` when absent); None for any other extent."""
    out = []
    for b in bufs:
        dims = []
        for s in b.shape:
            c = const_of(s)
            if c is None and not isinstance(s, Var):
                return None
            dims.append(c if c is not None else env.get(s, default))
        out.append(tuple(dims))
    return out


def symbols(bufs) -> list:
    """The distinct variables among the buffers' extents, in order of appearance."""
    found = []
    for b in bufs:
        for s in b.shape:
            if isinstance(s, Var) and const_of(s) is None and all(s is not v for v in found):
                found.append(s)
    return found


def shapes_beyond(func, bufs, small: int, fits) -> list:
    """Shapes to check a reading made with symbolic extents bound to ``small`` against,
    for the symbols the body does more with than pass along (:func:`uniform`),
    with extents past every integer constant of ``func``'s body (:func:`above_constants`,
    plus one so that an index passes them too): a test ``i < 12`` on a symbolic axis, or a
    clamp ``min(i, 12)``, never bites at a small size. Every symbol is bound beyond at once when ``fits`` (the recognizer's signature
    test, on a list of shapes) accepts that; otherwise each symbol in turn, the others at
    ``small`` (a symbol the signature ties to a constant extent -- a query batch ``n``
    against a key batch of 2 -- has no other value; one that fits no way is left out). []
    without symbolic extents."""
    syms = [v for v in symbols(bufs) if not uniform(func, v)]
    if not syms:
        return []
    big = max(above_constants(func) + 1, small + 1)  # an index reaches past them too: min(i, c)
    every = bind_shapes(bufs, {v: big for v in syms}, small)
    if every is not None and fits(every):
        return [every]
    out = []
    for v in syms if len(syms) > 1 else ():
        one = bind_shapes(bufs, {v: big}, small)
        if one is not None and fits(one):
            out.append(one)
    return out


def uniform(func, sym) -> bool:
    """The body uses the symbolic extent ``sym`` only to run over it and pass it along: as
    the extent of loops and block variables from 0 (or a nested block's variable at one
    such variable's point), each such variable bound to another one, and every index of a buffer dimension of extent ``sym`` one of them, bare; no
    other expression (a test, arithmetic, a clamp, a predicate, a data-dependent index into
    that dimension) mentions ``sym`` or those variables. Every position along ``sym`` is
    then computed alike, whatever its number: nothing compares it with a constant, and a
    reading checked at a small size holds at any."""
    over: set = set()

    def collect(node):
        if isinstance(node, For) and node.extent is sym and const_of(node.min) == 0:
            over.add(id(node.loop_var))
        elif isinstance(node, IterVar) and (node.dom.extent is sym and const_of(node.dom.min) == 0 or (
                const_of(node.dom.extent) == 1 and isinstance(node.dom.min, Var) and id(node.dom.min) in over)):
            over.add(id(node.var))  # over the whole extent, or the one point of an outer variable (a nested block)
        return not isinstance(node, PrimExpr)
    pre_order_visit(func.body, collect)

    def bare(e) -> bool:
        return isinstance(e, Var) and id(e) in over

    def ok(node) -> bool:
        if isinstance(node, Var):
            return node is not sym and id(node) not in over
        if isinstance(node, (BufferLoad, BufferStore)):
            for d, i in enumerate(node.indices):
                at_sym = d < len(node.buffer.shape) and node.buffer.shape[d] is sym
                if at_sym != bare(i) or (not at_sym and not ok(i)):
                    return False
            return ok(node.value) if isinstance(node, BufferStore) else True
        if isinstance(node, For):
            ranged = id(node.loop_var) in over
            return (ranged or (ok(node.min) and ok(node.extent))) and ok(node.body)
        if isinstance(node, BlockRealize):
            for iv, value in zip(node.block.iter_vars, node.iter_values):
                if (id(iv.var) in over) != bare(value) or (id(iv.var) not in over and not ok(value)):
                    return False
            return ok(node.predicate) and ok(node.block)
        if isinstance(node, IterVar):
            return id(node.var) in over or ok(node.dom)
        if isinstance(node, Block):
            return all(ok(iv) for iv in node.iter_vars) and ok(node.body) and (node.init is None or ok(node.init)) \
                and all(ok(m) for m in node.match_buffers)
        if isinstance(node, Buffer):
            return True  # shapes may carry the symbol
        for name in node_fields(type(node)):
            value = getattr(node, name)
            for item in value if isinstance(value, tuple) else (value,):
                if isinstance(item, Node) and not ok(item):
                    return False
        return True
    try:
        if ok(func.body):
            return True
    except RecursionError:
        return False
    blocks = _as_blocks(func.body)
    return blocks is not None and uniform(attrs.evolve(func, body=blocks), sym)


def _as_blocks(body) -> "Stmt | None":
    """``body`` with each block that is alone under its loops (a perfect nest up to the
    enclosing block) standing for its own iteration domain: the loops dropped, each
    variable bound to itself, no predicate. The soundness gates have the loops run every
    block's domain (:mod:`opinfo.realize_check`, the predicate rules), so the block's domain
    and body are what it computes: splits and thread bindings of a symbolic extent
    (``(n + 2) // 3 * 60`` iterations, ``T.where(... < n)``) then need no judging. None when
    nothing changes or a block reads a loop variable directly."""
    dropped: list = []

    def own(realize: BlockRealize) -> BlockRealize:
        block = realize.block
        block = attrs.evolve(block, body=walk(block.body),
                             init=walk(block.init) if block.init is not None else None)
        return attrs.evolve(realize, iter_values=tuple(iv.var for iv in block.iter_vars),
                            predicate=IntImm(realize.predicate.dtype, 1), block=block)

    def walk(stmt):
        if isinstance(stmt, For):
            chain, inner = [], stmt
            while isinstance(inner, For):
                chain.append(inner)
                inner = inner.body
            if isinstance(inner, BlockRealize):
                dropped.extend(f.loop_var for f in chain)
                return own(inner)
            return attrs.evolve(stmt, body=walk(stmt.body))
        if isinstance(stmt, BlockRealize):
            return own(stmt)
        if isinstance(stmt, SeqStmt):
            return attrs.evolve(stmt, seq=tuple(walk(s) for s in stmt.seq))
        return stmt

    out = walk(body)
    if not dropped:
        return None
    used = vars_in(out)
    return None if used & set(dropped) else out


def above_constants(func) -> int:
    """One more than every integer constant of ``func``'s body: a symbolic extent bound to it
    exceeds any constant a clamp (``min(n, c)``) or a test (``n < c``) could compare it with."""
    found = [1]
    post_order_visit(func.body, lambda n: found.append(abs(int(n.value))) if isinstance(n, IntImm) else None)
    return max(found) + 1


def float_constants(func) -> list:
    """The distinct floating-point constants of ``func``'s body, in increasing order."""
    found = set()
    post_order_visit(func.body, lambda n: found.add(float(n.value)) if isinstance(n, FloatImm) else None)
    return sorted(found)


def run_all(func, arrays) -> "list | None":
    """Run ``func`` in destination-passing style on copies of ``arrays`` (outputs
    included); every array afterwards, or None when the interpreter cannot run the function
    on these inputs (an index out of range, an unsupported call)."""
    args = [np.array(a, copy=True) for a in arrays]
    try:
        # max/min keep a NaN: an accumulator left uninitialised shows in a max reduction too;
        # the function's own storage starts as junk, so that an intermediate it reads before
        # writing (a sum whose init runs at one batch row only) shows instead of passing for
        # zeros. Finite junk: TVM's schedules multiply unwritten storage by a zero of a dilated
        # kernel, junk times 0 being the 0 intended
        with np.errstate(all="ignore"), nan_propagating_minmax():
            interpret(func, *args, scratch_fill=SCRATCH_JUNK)
    except Exception:  # anything the interpreter cannot run is not claimed
        return None
    return args


SCRATCH_JUNK = 7.0
"""What storage a function allocates holds before it writes it, when recognizers run it."""


def run(func, arrays, out: int = -1) -> "np.ndarray | None":
    """:func:`run_all`'s array at position ``out`` (the output by default), or None."""
    args = run_all(func, arrays)
    return None if args is None else args[out]


def poisoned(shape, dtype) -> np.ndarray:
    """An output array to run a function into: NaN for floats (an element the function
    leaves unset, or an accumulator it never resets, shows instead of passing for a zero),
    the type's minimum for integers, False for bool."""
    dt = np.dtype(dtype)
    if np.issubdtype(dt, np.floating):
        return np.full(shape, np.nan, dt)
    if np.issubdtype(dt, np.integer):
        return np.full(shape, np.iinfo(dt).min, dt)
    return np.zeros(shape, dt)


DEFAULT_EXTENT = 3
"""Value tried for a symbolic extent besides the constant extents of the other buffers."""


def signature(func: PrimFunc) -> "list | None":
    """The parameters' buffers (every parameter a buffer, the output last), or None."""
    bufs = [func.buffer_map.get(p) for p in func.params]
    return bufs if bufs and None not in bufs else None


def runnable(func: PrimFunc) -> bool:
    """No ``while`` loop: running the function ends."""
    found = []

    def visit(node):
        if isinstance(node, While):
            found.append(node)
        return not found and not isinstance(node, PrimExpr)

    pre_order_visit(func.body, visit)
    return not found


def shape_bindings(bufs) -> list:
    """Concrete shapes for ``bufs``, one list per binding of the symbolic extents to a
    constant extent found in another buffer (or :data:`DEFAULT_EXTENT`); [] when an extent
    is neither a constant nor a variable, or more than two variables are free."""
    symbols, consts = [], {DEFAULT_EXTENT}
    for b in bufs:
        for s in b.shape:
            c = const_of(s)
            if c is not None:
                consts.add(c)
            elif isinstance(s, Var):
                symbols.append(s) if all(s is not v for v in symbols) else None
            else:
                return []
    if len(symbols) > 2:
        return []
    out = []
    for values in itertools.product(sorted(consts), repeat=len(symbols)):
        env = [(v, x) for v, x in zip(symbols, values)]
        out.append([tuple(const_of(s) if const_of(s) is not None else next(x for v, x in env if v is s)
                          for s in b.shape) for b in bufs])
    return out


def symbols_exercised(bufs, bindings) -> bool:
    """Whether every symbolic extent of ``bufs`` takes a value of 2 or more in one of
    ``bindings`` (:func:`shape_bindings` the caller ran the function on): a function run only
    where a batch is 1 may index that axis with anything (``x[0, i]`` for ``x[b, i]``) and
    still agree, so what it computes for the other batches is not shown."""
    for k, buf in enumerate(bufs):
        for d, extent in enumerate(buf.shape):
            if const_of(extent) is None and not any(shapes[k][d] >= 2 for shapes in bindings):
                return False
    return True


def loads(func: PrimFunc, buf) -> bool:
    """Whether ``func`` loads ``buf`` anywhere."""
    found = []
    pre_order_visit(func.body, lambda n: not found and (
        found.append(n) if isinstance(n, BufferLoad) and n.buffer is buf else True))
    return bool(found)


def wide(rng, shape, dtype: str, sign=None, large: bool = False) -> np.ndarray:
    """Values of magnitudes spread over many decades (a quarter of the dtype's exponent range
    up, a twelfth down; with ``large`` only the upper half of that), of random sign unless
    ``sign`` is given."""
    top = np.log10(float(np.finfo(dtype).max)) / 4
    v = 10.0 ** rng.uniform(top / 2 if large else -top / 3, top, shape)
    return v * (rng.choice([-1, 1], shape) if sign is None else sign)


def agreeing(results) -> set:
    """The candidates that agreed with the trials on some binding of the symbolic extents and
    on every binding whose shapes allow them (``results``: (allowed, agreeing) per binding;
    a binding that could not be run refutes all it allows)."""
    ok, refuted = set(), set()
    for tried, kept in results:
        ok |= kept
        refuted |= tried - kept
    return ok - refuted


def size(shape) -> int:
    return int(np.prod(shape)) if shape else 1
