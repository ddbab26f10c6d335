"""What the recognizers that run a function share (attention, reverse_sequence,
scatter_elements, scatter_nd, uneven adaptive pools): concrete shapes for a symbolic
function, and one interpreter run that reports failure as None."""
from __future__ import annotations

import numpy as np

from tir.expr import Var
from tir.interp import interpret

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
    from tir.expr import IntImm
    from tir.functor import post_order_visit

    found = [1]
    post_order_visit(func.body, lambda n: found.append(abs(int(n.value))) if isinstance(n, IntImm) else None)
    return max(found) + 1


def run(func, arrays, out: int = -1) -> "np.ndarray | None":
    """Run ``func`` in destination-passing style on copies of ``arrays`` (outputs
    included); the array at position ``out`` afterwards, or None when the interpreter
    cannot run the function on these inputs (an index out of range, an unsupported call)."""
    args = [np.array(a, copy=True) for a in arrays]
    try:
        with np.errstate(all="ignore"):
            interpret(func, *args)
    except Exception:  # anything the interpreter cannot run is not claimed
        return None
    return args[out]
