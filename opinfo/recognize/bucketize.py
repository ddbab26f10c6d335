"""``bucketize(input, boundaries, out_int32, right)``, recognised by running the PrimFunc.

Relax legalizes bucketize to TVM's ``searchsorted(boundaries, input, right, out_dtype)``
extern (the only Relax op that reaches it): one opaque block holding, per element of
``input``, a binary search over the one-dimensional ``boundaries`` in two one-element
local buffers (``while lo < hi: if boundaries[mid] < x (right: <=) ...``), written to an
output of ``input``'s shape whose dtype is int32 (``out_int32``) or int64.

The function must hold exactly one ``while`` loop, of that binary-search form (``lo = mid + 1``
/ ``hi = mid`` with ``mid = lo + (hi - lo >> 1)``), which ends whatever its comparison is:
nothing else is run, since the interpreter has no bound on a loop that may not end. The
function is then run by the interpreter on sorted boundaries (with repeated values) and
inputs that hit boundaries exactly, fall between them and lie outside them, and compared
with numpy's ``searchsorted`` for each side. Candidates are the side (``right``) and which
of the two inputs is ``boundaries``: exactly one candidate must agree on every trial, else
nothing is claimed (e.g. empty boundaries, where both sides give 0).
"""
from __future__ import annotations

import numpy as np

from tir.expr import Add, BufferLoad, Call, Cast, LT, PrimExpr, Sub
from tir.function import PrimFunc
from tir.functor import pre_order_visit
from tir.stmt import BufferStore, IfThenElse, While

from ..affine import const_of
from ..info import OpInfo, Operand
from .running import concrete_shapes, poisoned, run, shapes_beyond

MAX_ELEMENTS = 200_000
SYMBOLIC_VALUE = 5
TRIALS = 3
ENOUGH = 512
"""Elements compared after which a further trial adds nothing (each costs a run of the
interpreter, which executes the binary search one element at a time)."""
OUT_DTYPES = {"int32": True, "int64": False}


def _whiles(func: PrimFunc) -> list:
    found = []

    def visit(node):
        if isinstance(node, While):
            found.append(node)
        return not isinstance(node, PrimExpr)  # no statement below an expression

    pre_order_visit(func.body, visit)
    return found


def _unwiden(e):
    """``e`` seen through integer casts that keep every value (int32 -> int64)."""
    while isinstance(e, Cast) and e.dtype.is_int and e.value.dtype.is_int and e.dtype.bits >= e.value.dtype.bits:
        e = e.value
    return e


def _cell(e) -> "object | None":
    """The buffer of a load ``b[0]`` (seen through widening casts) from a one-element
    int32/int64 buffer."""
    e = _unwiden(e)
    if not (isinstance(e, BufferLoad) and len(e.indices) == 1 and const_of(e.indices[0]) == 0):
        return None
    b = e.buffer
    if str(b.dtype) not in ("int32", "int64") or len(b.shape) != 1 or const_of(b.shape[0]) != 1:
        return None
    return b


def _is_mid(e, lo, hi) -> bool:
    """``lo + (hi - lo >> 1)``: the middle of ``[lo, hi)``, inside it whenever lo < hi."""
    if not (isinstance(e, Add) and _cell(e.a) is lo):
        return False
    half = e.b
    if not (isinstance(half, Call) and half.op == "shift_right" and len(half.args) == 2
            and const_of(half.args[1]) == 1):
        return False
    diff = _unwiden(half.args[0])
    return isinstance(diff, Sub) and _cell(diff.a) is hi and _cell(diff.b) is lo


def _store_to(s, buf):
    return s if isinstance(s, BufferStore) and s.buffer is buf and len(s.indices) == 1 \
        and const_of(s.indices[0]) == 0 else None


def _binary_search(func: PrimFunc) -> bool:
    """The function's one ``while`` loop is TVM's binary search, ``while lo < hi: if c:
    lo = mid + 1 else: hi = mid``, which ends whatever ``c`` is (each step narrows
    ``[lo, hi)``): running the function cannot hang."""
    loops = _whiles(func)
    if len(loops) != 1:
        return False
    loop = loops[0]
    cond = loop.condition
    if not isinstance(cond, LT):
        return False
    lo, hi = _cell(cond.a), _cell(cond.b)
    body = loop.body
    if lo is None or hi is None or lo is hi or not isinstance(body, IfThenElse) or body.else_case is None:
        return False
    up, down = _store_to(body.then_case, lo), _store_to(body.else_case, hi)
    if up is None or down is None or not _is_mid(down.value, lo, hi):
        return False
    inc = up.value
    return isinstance(inc, Add) and const_of(inc.b) == 1 and _is_mid(inc.a, lo, hi)


def _sample(rng, shape, dtype: str, pool, trial: int) -> np.ndarray:
    """Values of ``shape``: about half drawn from ``pool`` (exact ties), the rest spread past
    it; the first value is a tie on trial 0, above every boundary on trial 1 and below every
    one on trial 2 (so that even a one-element input tells the sides and the operands apart)."""
    size = int(np.prod(shape)) if shape else 1
    lo, hi = (float(pool.min()), float(pool.max())) if pool.size else (-1.0, 1.0)
    span = max(hi - lo, 1.0)
    if dtype.startswith("float"):
        spread = rng.uniform(lo - span, hi + span, size)
    else:
        spread = rng.integers(int(lo - span) - 1, int(hi + span) + 2, size)
    ties = rng.choice(pool, size) if pool.size else spread
    vals = np.where(rng.random(size) < 0.5, ties, spread)
    if pool.size:
        vals[0] = (pool[rng.integers(pool.size)], hi + span, lo - span)[trial % 3]
    return vals.astype(dtype).reshape(shape)


def _boundaries(rng, n: int, dtype: str, trial: int) -> np.ndarray:
    if dtype.startswith("float"):
        base = rng.standard_normal(n) * 4 if trial % 2 else rng.integers(-3, 4, n)  # odd trials: repeats
    else:
        base = rng.integers(-20, 21, n) if trial % 2 else rng.integers(-3, 4, n)
    return np.sort(base.astype(dtype))


def _trials(func, bufs, shapes, cands: list, rng) -> list:
    """The candidates that agree with runs of ``func`` on ``shapes`` (sorted boundaries with
    ties, values between, on and past them)."""
    size = int(np.prod(shapes[2])) if shapes[2] else 1
    for trial in range(TRIALS):
        if trial and trial * size >= ENOUGH:
            break
        kept = []
        for b, x in dict.fromkeys(order for order, _ in cands):  # one run per order: ties split the sides
            dtype = str(bufs[b].dtype)
            bounds = _boundaries(rng, shapes[b][0], dtype, trial)
            vals = _sample(rng, shapes[x], dtype, bounds, trial)
            args = [None, None, poisoned(shapes[2], str(bufs[2].dtype))]
            args[b], args[x] = bounds, vals
            got = run(func, args)
            if got is None:
                return []
            kept += [(o, right) for o, right in cands if o == (b, x)
                     and np.array_equal(got, np.searchsorted(bounds, vals, side="right" if right else "left"))]
        cands = kept
    return cands


def _holds_beyond(func, bufs, cand) -> bool:
    """The reading holds with symbolic extents bound past every integer constant of the body
    (a test ``i < 12`` on a symbolic axis never bites at 5; see
    :func:`.running.shapes_beyond`)."""
    (b, x), _ = cand

    def fits(shapes):
        return len(shapes[b]) == 1 and shapes[x] == shapes[2]
    for shapes in shapes_beyond(func, bufs, SYMBOLIC_VALUE, fits):
        if any(int(np.prod(s)) > MAX_ELEMENTS for s in shapes):
            return False
        if _trials(func, bufs, shapes, [cand], np.random.default_rng(8)) != [cand]:
            return False
    return True


def recognize_bucketize(func: PrimFunc) -> "OpInfo | None":
    """The bucketize ``func`` computes, or None (see the module doc)."""
    bufs = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    if len(bufs) != 3 or len(bufs) != len(func.params):
        return None
    out = bufs[2]
    out_int32 = OUT_DTYPES.get(str(out.dtype))
    if out_int32 is None or not _binary_search(func):
        return None
    shapes = concrete_shapes(bufs, SYMBOLIC_VALUE)
    if shapes is None or any(int(np.prod(s)) > MAX_ELEMENTS for s in shapes):
        return None
    # (boundaries position, input position): the input has the output's shape
    orders = [(b, 1 - b) for b in (0, 1)
              if len(shapes[b]) == 1 and shapes[1 - b] == shapes[2]
              and str(bufs[b].dtype) == str(bufs[1 - b].dtype)]
    cands = [(order, right) for order in orders for right in (False, True)]
    cands = _trials(func, bufs, shapes, cands, np.random.default_rng(7))
    if len(cands) != 1 or not _holds_beyond(func, bufs, cands[0]):
        return None
    (b, x), right = cands[0]
    return OpInfo("bucketize", {"out_int32": out_int32, "right": right},
                  (Operand("input_tensor", bufs[x].name, x), Operand("boundaries", bufs[b].name, b)),
                  Operand("output", out.name, 2))
