"""What the recognizers that run a function share (attention, reverse_sequence,
scatter_elements, scatter_nd, uneven adaptive pools, the gradient and vision ops): concrete
shapes for a symbolic function, one interpreter run that reports failure as None, inputs of
widely spread magnitudes, and keeping the readings that agree on every binding of the
symbolic extents."""
from __future__ import annotations

import itertools

import numpy as np

from tir.expr import BufferLoad, FloatImm, IntImm, PrimExpr, Var
from tir.function import PrimFunc
from tir.functor import post_order_visit, pre_order_visit
from tir.interp import interpret
from tir.stmt import While

from ..affine import const_of


def concrete_shapes(bufs, value: int) -> "list | None":
    """The buffers' shapes with constant extents kept and every symbolic extent (a
    variable) bound to ``value``; None when an extent is any other expression."""
    out = []
    for b in bufs:
        dims = []
        for s in b.shape:
            c = const_of(s)
            if c is None and not isinstance(s, Var):
                return None
            dims.append(c if c is not None else value)
        out.append(tuple(dims))
    return out


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
        with np.errstate(all="ignore"):
            interpret(func, *args)
    except Exception:  # anything the interpreter cannot run is not claimed
        return None
    return args


def run(func, arrays, out: int = -1) -> "np.ndarray | None":
    """:func:`run_all`'s array at position ``out`` (the output by default), or None."""
    args = run_all(func, arrays)
    return None if args is None else args[out]


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
