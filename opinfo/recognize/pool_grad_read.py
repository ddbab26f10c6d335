"""What the ``T_pool_grad`` block of TVM's pool gradient shows (:mod:`.pool_grad`): the
pooled axes and the candidate stride and before-padding of each (the index of
``output_grad`` is ``(v + before) // s - w``, evaluated over the axis), the reduction
extents, the max pool's window (its argmax reduction) and padded extents (the flat index
``ravel(i + before)``), and the average's divisor form. Blocks are those of the function
with schedules undone (:func:`.normalize.normalize`)."""
from __future__ import annotations

import numpy as np

from tir.expr import EQ, BufferLoad, Div, Var
from tir.functor import post_order_visit
from tir.function import PrimFunc
from tir.stmt import BufferStore, IterKind

from ..affine import const_of
from ..probe import NotEvaluable, evaluate
from ..tags import compute_tags, tag

GRAD, ARGMAX, PAD = "T_pool_grad", "maxpool_grad_argmax", "pad_temp"
MAX_STRIDE, MAX_BEFORE = 16, 32


def _loads(node, buf) -> list:
    found = []
    post_order_visit(node, lambda n: found.append(n) if isinstance(n, BufferLoad) and n.buffer is buf else None)
    return found


def grad_block(func: PrimFunc, kind: str):
    """The one reduction block tagged ``T_pool_grad``, when the compute tags are those of
    TVM's pool gradient of ``kind`` and nothing else."""
    found = set(compute_tags(func))
    allowed = {GRAD, ARGMAX, PAD} if kind == "max" else {GRAD}
    if GRAD not in found or not found <= allowed or (kind == "max") != (ARGMAX in found):
        return None
    blocks = [b for b in func.blocks() if tag(b.name) == GRAD]
    return blocks[0] if len(blocks) == 1 else None


def _ints(e, env: dict) -> "np.ndarray | None":
    try:
        v = np.asarray(evaluate(e, env), dtype=float)
    except (NotEvaluable, TypeError, ValueError, ZeroDivisionError):
        return None
    return v if np.all(np.isfinite(v)) and np.all(v == np.round(v)) else None


def _stride_before(f: np.ndarray) -> list:
    """Every ``(s, before)`` with ``f[v] == (v + before) // s`` on the whole axis."""
    v = np.arange(len(f))
    return [(s, b) for s in range(1, MAX_STRIDE + 1) for b in range(MAX_BEFORE + 1)
            if np.array_equal((v + b) // s, f)]


def structure(block, x, out, shape) -> "dict | None":
    """Pooled axes (H, W), the candidate (s, before) of each and its reduction extent, read
    from the ``T_pool_grad`` block; None when it is not of that form."""
    stores = []
    post_order_visit(block.body, lambda n: stores.append(n) if isinstance(n, BufferStore) else None)
    if len(stores) != 1 or stores[0].buffer is not out:
        return None
    spatial = {iv.var: iv for iv in block.iter_vars if iv.kind == IterKind.SPATIAL}
    red = [iv for iv in block.iter_vars if iv.kind == IterKind.REDUCE]
    axes_vars = stores[0].indices
    if len(red) != 2 or len(set(axes_vars)) != len(shape) or any(v not in spatial for v in axes_vars):
        return None
    ext = [const_of(iv.dom.extent) for iv in red]
    if any(const_of(iv.dom.min) != 0 for iv in red) or any(e is None or e < 1 for e in ext):
        return None
    loads = _loads(block.body, x)
    if not loads or any(ld.indices != loads[0].indices for ld in loads):
        return None
    rng = np.random.default_rng(3)
    env = {iv.var: rng.integers(0, 6, 64).astype(float) for iv in block.iter_vars}
    env.update({v: rng.integers(0, n, 64).astype(float) for v, n in zip(axes_vars, shape)})
    pooled = {}
    for d, (idx, v) in enumerate(zip(loads[0].indices, axes_vars)):
        got = _ints(idx, env)
        if got is None:
            return None
        moved = [r for r in (0, 1) if not np.array_equal(_ints(idx, {**env, red[r].var: env[red[r].var] + 1}), got)]
        if not moved:
            if not np.array_equal(got, env[v]):
                return None  # a dimension passed through unchanged
            continue
        if len(moved) != 1:
            return None
        r = red[moved[0]].var
        # the index is f(v_d) - w: evaluate f over the whole axis, the rest held at zero
        base = {k: np.zeros(shape[d]) for k in env}
        f = _ints(idx, {**base, v: np.arange(shape[d], dtype=float)})
        if f is None or not np.array_equal(got + env[r], f[env[v].astype(int)]):
            return None
        pooled[d] = (moved[0], _stride_before(f.astype(int)), ext[moved[0]])
    if len(pooled) != 2 or sorted(r for r, _, _ in pooled.values()) != [0, 1]:
        return None
    h, w = sorted(pooled)  # H before W, the layouts' order (as the forward pools read it)
    return {"axes": (h, w), "cands": (pooled[h][1:], pooled[w][1:]), "vars": axes_vars}


def argmax_windows(func: PrimFunc, axes) -> "tuple | None":
    """The window ``(k_h, k_w)`` of the pooled ``axes``: the extents of the
    ``maxpool_grad_argmax`` reduction variables, placed by the axis of the data they move
    in every load (one variable per pooled axis)."""
    blocks = [b for b in func.blocks() if tag(b.name) == ARGMAX]
    if len(blocks) != 1:
        return None
    red = {iv.var: iv.dom for iv in blocks[0].iter_vars if iv.kind == IterKind.REDUCE}
    if len(red) != 2 or any(const_of(d.min) != 0 or const_of(d.extent) is None for d in red.values()):
        return None
    placed = {}
    loads = []
    post_order_visit(blocks[0].body, lambda n: loads.append(n) if isinstance(n, BufferLoad) else None)
    for ld in loads:
        for d, idx in enumerate(ld.indices):
            used = []
            post_order_visit(idx, lambda n: used.append(n) if isinstance(n, Var) and n in red else None)
            for v in set(used):
                if placed.setdefault(v, d) != d or len(set(used)) > 1:
                    return None
    if sorted(placed.values()) != sorted(axes):
        return None
    by_axis = {d: const_of(red[v].extent) for v, d in placed.items()}
    return tuple(by_axis[a] for a in axes)


def layout_of(axes, shape) -> "str | None":
    if len(shape) == 4:
        return {(2, 3): "NCHW", (1, 2): "NHWC"}.get(axes)
    if len(shape) == 5 and axes == (2, 3):
        return f"NCHW{shape[4]}c"
    return None


def padded_extents(block, axes_vars, pooled, shape) -> "tuple | None":
    """TVM's padded extents of the pooled axes and the argmax buffer, from the flat index
    ``argmax[o] == ravel(i + before)`` (strides of the padded data); None if not read."""
    eqs = []
    post_order_visit(block.body, lambda n: eqs.append(n) if isinstance(n, EQ) else None)
    for eq in eqs:
        for side, other in ((eq.a, eq.b), (eq.b, eq.a)):
            if isinstance(side, BufferLoad) and side.buffer.dtype.is_int:
                zero = {v: np.zeros(1) for v in axes_vars}
                at = [_ints(other, {**zero, v: np.ones(1)}) for v in axes_vars]
                at0 = _ints(other, zero)
                if at0 is None or any(a is None for a in at):
                    return None
                c = [int(a[0] - at0[0]) for a in at]
                if c[-1] != 1 or any(c[j] <= 0 or c[j] % c[j + 1] for j in range(len(c) - 1)):
                    return None
                ravel = [None] + [c[j - 1] // c[j] for j in range(1, len(c))]
                if any(ravel[j] != shape[j] for j in range(1, len(c)) if j not in pooled):
                    return None
                return tuple(ravel[d] for d in pooled), side.buffer, int(at0[0]), c
    return None


def include_pad(block, x) -> "bool | None":
    """Whether the average's divisor is a constant (``count_include_pad``: ``k_h * k_w``)
    rather than the clipped window size TVM writes with the indices; None if not found."""
    divs = []
    post_order_visit(block.body, lambda n: divs.append(n) if isinstance(n, Div) and n.dtype.is_float
                     and _loads(n.a, x) else None)
    if len(divs) != 1:
        return None
    found = []
    post_order_visit(divs[0].b, lambda n: found.append(n) if isinstance(n, (Var, BufferLoad)) else None)
    return not found
