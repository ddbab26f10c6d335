"""An elementwise expression tree: its leaves, the intermediates where it may be cut into
two ops, and the known op it computes over a set of leaves (identified by probing, checked
against the intrinsics of the op's TVM form)."""
from __future__ import annotations

import functools

import numpy as np

from tir.expr import (GT, LT, Add, BufferLoad, Call, Cast, CmpOp, Div, FloatImm, FloorDiv, FloorMod, IntImm, Max, Min,
                      Mod, Mul, PrimExpr, Select, Sub)
from tir.functor import collect_distinct, pre_order_visit

from .probe import NotEvaluable, evaluate
from .recognize import elementwise as ew
from .recognize.common import strip
from .recognize.ew_forms import calls_allowed, form_size_ok
from .semantic import ArgReduce, Inlined, Reduce

MAX_HOLES = 40


def leaves_of(expr) -> list:
    """Distinct maximal non-elementwise sub-trees: loads, and the intermediates holding a
    reduction's result (the buffer between the reducing op and this one)."""
    return collect_distinct(expr, lambda n: isinstance(n, (BufferLoad, Reduce, ArgReduce)) or
                            isinstance(n, Inlined) and isinstance(strip(n), (Reduce, ArgReduce)))


def inner_same(expr, leaves, found) -> bool:
    """Whether an intermediate inside ``expr`` already computes ``found`` from the same
    leaves: the blocks after it change nothing on the samples (relu after exp) and are an
    op of their own."""
    own = _under_output_cast(expr, leaves)  # the float16 wrapping's cast back is no op
    return any(hole is not own and identify(hole, leaves) == found for hole in holes(expr, leaves))


def direct(expr) -> list:
    """The distinct loads and intermediates ``expr`` reads without looking into them."""
    return collect_distinct(expr, lambda n: isinstance(n, (BufferLoad, Inlined, Reduce, ArgReduce)))


def _subtrees(expr) -> list:
    out = []

    def visit(n):
        if isinstance(n, (BufferLoad, Reduce, ArgReduce)):
            return False
        if isinstance(n, PrimExpr) and not isinstance(n, (FloatImm, IntImm)):
            out.append(n)
        return True

    pre_order_visit(expr, visit)
    return out


def _size(e) -> int:
    n = [0]
    pre_order_visit(e, lambda x: n.__setitem__(0, n[0] + 1))
    return n[0]


def holes(expr, leaves) -> list:
    """Intermediate buffers inside ``expr`` where it may be cut into two ops, smallest first
    (a cut elsewhere would split one block's computation into two ops)."""
    cands = []
    for n in _subtrees(expr):
        if n is expr or n in cands or n in leaves or not isinstance(n, Inlined) or not leaves_of(n):
            continue
        cands.append(n)
    cands.sort(key=_size)
    return cands[:MAX_HOLES]


def occurs_outside(expr, leaf, hole) -> bool:
    """Whether ``leaf`` is used in ``expr`` other than inside ``hole``."""
    found = []

    def visit(n):
        if n == hole:
            return False
        if n == leaf:
            found.append(n)
            return False
        return True

    pre_order_visit(expr, visit)
    return bool(found)


def _consts(expr, leaves=(), values_only: bool = False):
    """Constants of ``expr`` outside its leaves (an inlined producer's own constants, such as
    a pad value, are not this op's), and those compared against. An intermediate's extents
    and indices count too (so a tree reading one is no op of one constant, and is cut at the
    intermediate), except with ``values_only``: an op's scalar operand is none of them."""
    vals, cmp_vals = [], []
    stop = set(leaves)

    def visit(n):
        if n in stop:
            return False
        if values_only and isinstance(n, Inlined):
            pre_order_visit(n.value, visit)
            return False
        if isinstance(n, (FloatImm, IntImm)) and not isinstance(n.value, bool):
            vals.append(float(n.value))
        if isinstance(n, CmpOp):
            for side in (n.a, n.b):
                if isinstance(side, (FloatImm, IntImm)):
                    cmp_vals.append(float(side.value))
        return not isinstance(n, (BufferLoad, Reduce, ArgReduce))

    pre_order_visit(expr, visit)
    return vals, cmp_vals


def _fn(expr, leaves):
    def f(*values):
        env = dict(zip(leaves, (np.asarray(v, dtype=float) for v in values)))
        return np.broadcast_to(evaluate(expr, env), np.shape(values[0])).astype(float)
    return f


def identify(expr, leaves):
    """(name, attrs, leaf order, roles) when ``expr`` over ``leaves`` is one known op."""
    try:  # the float16 wrapping's last cast only rounds: identify the float32 op under it
        found = _identify_impl(_under_output_cast(expr, leaves), leaves)
    except NotEvaluable:
        return None
    if found is None or not calls_allowed(found[0], expr, leaves) or not form_size_ok(found[0], found[1], expr, leaves):
        return None
    if found[0] != "astype" and (_changes_dtype(expr, leaves) or cast_of_cast(expr, leaves)):
        return None  # an astype after the op (or two, to float16 and back) is an op of its own
    if inner_blocks(expr, leaves) and not multi_block(found[0], found[1], len(leaves)):
        # relu after exp, abs after negative: the tree computes one op's values but is
        # several ops' blocks; named as one, an op would be lost
        return None
    return found


def _under_output_cast(expr, leaves):
    """The op's own node when ``expr`` is TVM's float16 wrapping of it: an op without a
    float16 form (``erf``) is computed in float32 between a cast block of its input and a
    cast block back to the input's type, so the op's block sits under the output cast."""
    root = strip(expr)
    if (isinstance(root, Cast) and (isinstance(root.value, Inlined) or _widened_leaf(root.value, leaves)) and leaves
            and all(leaf.dtype == root.dtype for leaf in leaves)
            # TVM widens only a float16 op without a float16 form (to float32): an op computed
            # in a narrower (or, from float32, any other) type is astype, op, astype
            and root.dtype.is_float and root.dtype.bits <= 16 and root.value.dtype.bits > root.dtype.bits
            and not isinstance(strip(root.value), Cast)):  # a cast back of a cast is two astype ops
        return root.value
    return expr


def _widened_leaf(expr, leaves) -> bool:
    """Whether ``expr`` computes on a leaf cast to its own (wider) type: the float16 wrapping
    with its blocks inlined into one (dlight: ``float16(erf(float32(x)))``)."""
    stop = set(leaves)
    found = []

    def visit(n) -> bool:
        if isinstance(n, Cast) and n.dtype == expr.dtype and (n.value in stop or strip(n.value) in stop):
            found.append(n)
            return True
        return n not in stop  # leaves are not entered

    pre_order_visit(expr, visit)
    return bool(found)


def inner_blocks(expr, leaves) -> list:
    """The intermediate buffers between ``expr``'s root and its leaves, except dtype
    conversions (TVM wraps a float16 op in cast blocks)."""
    stop = set(leaves)
    found = []
    own = _under_output_cast(expr, leaves)

    def wrapping_cast(n) -> bool:
        # only inside the float16 wrapping, and only the cast of an input itself: a cast of a
        # cast (astype to float16 and back) or of a computed value is an astype op of its own
        inner = strip(n)
        return own is not expr and isinstance(inner, Cast) and (inner.value in stop or strip(inner.value) in stop)

    def visit(n):
        if n in stop or isinstance(n, (BufferLoad, Reduce, ArgReduce)):
            return False
        if isinstance(n, Inlined) and n is not expr and n is not own and not wrapping_cast(n):
            found.append(n)
        return True

    pre_order_visit(expr, visit)
    return found


@functools.lru_cache(maxsize=None)
def _multi_block_cached(name, attrs_items, arity) -> bool:
    import tir

    try:
        func = tir.topi.lower(name, [((2, 3), "float32")] * arity, **dict(attrs_items))
    except (ValueError, TypeError, KeyError):
        return False
    return len(list(func.blocks())) > 1


def multi_block(name, attrs, arity) -> bool:
    """Whether the op's TVM form (as ``tir.topi`` lowers it) spans several blocks, like
    gelu's multiply/erf/add chain: only such an op may be named over several blocks."""
    try:
        items = tuple(sorted(attrs.items()))
        hash(items)
    except TypeError:
        return False
    return _multi_block_cached(name, items, arity)


def _identify_impl(expr, leaves):
    root = expr
    while isinstance(root, Inlined):
        root = root.value
    if len(leaves) == 1:
        if isinstance(root, Cast) and (root.value == leaves[0] or strip(root.value) == leaves[0]):
            return "astype", {"dtype": str(root.dtype)}, (0,), ("data",)
        integer = not leaves[0].dtype.is_float
        consts, cmp_consts = _consts(expr, leaves)
        got = ew.identify_unary(_fn(expr, leaves), consts, cmp_consts, integer, leaves[0].dtype.is_bool)
        if got is None and _narrow_cast_inside(expr):
            got = _identify_narrow(expr, leaves)
        if got is not None and got[0] == "nn.relu" and _leaky_zero(root, leaves[0]):
            return "nn.leakyrelu", {"alpha": 0.0}, (0,), ("data",)
        if got is None or not calls_allowed(got[0], expr, leaves):
            # ``0 - x`` computes negative but is not its form: Relax's subtract(0, x)
            return _with_scalar(root, leaves[0], consts, integer) or _self_binary(root, leaves[0])
        return got[0], got[1], (0,), ("data",)
    if len(leaves) == 2:
        integer = not leaves[0].dtype.is_float
        boolean = all(leaf.dtype.is_bool for leaf in leaves)
        if boolean != any(leaf.dtype.is_bool for leaf in leaves):
            return None
        got = ew.identify_binary(_fn(expr, leaves), integer, boolean)
        if got is None:
            return None
        order = (1, 0) if got[1] else (0, 1)
        return got[0], {}, order, ("lhs", "rhs")
    if len(leaves) == 3:
        return _where(root, leaves)
    return None


_SELF_BINARY = {Add: "add", Sub: "subtract", Mul: "multiply", Div: "divide", Max: "maximum", Min: "minimum"}


def _self_binary(root, leaf):
    """A binary op whose two operands are one intermediate (``e + e``, an op reading a value
    twice: Relax's add(e, e)); ``e * e`` is named square before this is asked."""
    name = _SELF_BINARY.get(type(root))
    same = lambda e: e is leaf or e == leaf
    if name is None or not (same(root.a) and same(root.b)):
        return None
    return name, {}, (0, 0), ("lhs", "rhs")


def _leaky_zero(root, leaf) -> bool:
    """Whether ``root`` is ``Select(0 < x, x, 0)``: topi's leaky_relu ``Select(x > 0, x,
    x * alpha)`` with alpha 0 folded (relu is ``max(x, 0)``, clip a min and a max; no other
    op prints this select)."""
    if not isinstance(root, Select):
        return False
    c = root.condition

    def zero(e):
        e = strip(e)
        return isinstance(e, FloatImm) and e.value == 0.0

    def is_leaf(e):
        e = strip(e)
        return e is leaf or e == leaf

    positive = (isinstance(c, LT) and zero(c.a) and is_leaf(c.b)) or (isinstance(c, GT) and is_leaf(c.a) and zero(c.b))
    return positive and is_leaf(root.true_value) and zero(root.false_value)


def _changes_dtype(expr, leaves) -> bool:
    """Whether ``expr``'s type differs from its (non-bool) leaves': an elementwise op other
    than ``astype`` keeps its operands' type (comparisons' bool aside; trunc of a float stays
    a float, a cast to int32 is astype)."""
    out = expr.dtype
    return not out.is_bool and any(leaf.dtype != out for leaf in leaves if not leaf.dtype.is_bool)


def _computed(expr, stop) -> bool:
    """Whether ``expr`` computes from a value: an intermediate, or an operation over a load,
    a reduction or one of ``stop``. A load itself is not (TVM's float16 nearest resize casts
    the element it reads to float32 and back), nor an index (``float32(int32(floor(v *
    0.8)))``, a resize's weight, casts twice)."""
    if expr in stop or isinstance(expr, BufferLoad):
        return False
    if isinstance(expr, Inlined):
        return True
    found = []

    def visit(n):
        if found:
            return False
        if n in stop or isinstance(n, (BufferLoad, Reduce, ArgReduce, Inlined)):
            found.append(n)
            return False
        return True

    pre_order_visit(expr, visit)
    return bool(found)


def cast_of_cast(expr, leaves) -> bool:
    """Whether a cast in ``expr`` (outside its leaves) casts another cast's result, as
    blocks of their own or inlined into one: no op's form casts twice in a row, two astype
    ops do (float32 to float16 and back rounds; to float64 and back changes nothing)."""
    stop = set(leaves)
    found = []

    def through(e):
        """``e`` under its Inlined markers, stopping at a leaf."""
        while isinstance(e, Inlined) and e not in stop:
            e = e.value
        return e

    def visit(n):
        if n in stop or isinstance(n, (BufferLoad, Reduce, ArgReduce)):
            return False
        inner = through(n)
        if isinstance(inner, Cast) and inner.value not in stop and isinstance(through(inner.value), Cast) \
                and (isinstance(n, Inlined) and isinstance(inner.value, Inlined)  # two cast blocks
                     or _computed(through(inner.value).value, stop)):  # two casts inlined after an op
            found.append(n)
        return not found

    pre_order_visit(expr, visit)
    return bool(found)


NARROW_RTOL = 4e-3
"""Tolerance, relative to each value and to the largest, for a tree that rounds to float16
between its blocks (about four units in float16's last place)."""


def _narrow_cast_inside(expr) -> bool:
    """Whether a cast to a float type of 16 bits or fewer sits below ``expr``'s root: TVM
    computes a float16 op without a float16 form (``erf`` in gelu) in float32 and casts back."""
    found = []
    pre_order_visit(strip(expr), lambda n: found.append(n) if isinstance(n, Cast) and n is not strip(expr)
                    and n.dtype.is_float and n.dtype.bits <= 16 else True)
    return bool(found)


def _identify_narrow(expr, leaves):
    """The one plain unary op (no parameters) ``expr`` computes within float16 rounding and
    whose TVM form it is; None when none or several fit."""
    f = _fn(expr, leaves)
    ys = f(ew.XS)
    fits = []
    for name, ref in ew.UNARY.items():
        with np.errstate(all="ignore"):
            want = ref(ew.XS)
            scale = float(np.nanmax(np.abs(np.where(np.isfinite(want), want, np.nan)), initial=1.0))
            if ew.close(ys, want, rtol=NARROW_RTOL, atol=NARROW_RTOL * scale) and calls_allowed(name, expr, leaves):
                fits.append(name)
    return (fits[0], {}) if len(fits) == 1 else None


SCALAR_ROOTS = {
    "add": (Add,), "subtract": (Sub,), "multiply": (Mul,), "divide": (Div,), "maximum": (Max,),
    "minimum": (Min,), "power": ("pow",), "floor_divide": (FloorDiv, "floor"),
    "floor_mod": (FloorMod, Sub), "mod": (Mod,),
}
"""The node at the root of each binary op's TVM form, when Relax's legalization folded one
operand into a scalar constant (``x * 0.0001``, ``pow(x, 0.75)``, ``x - floor(x / c) * c``)."""


def _scalar_samples(name: str, integer: bool, tensor_lhs: bool) -> np.ndarray:
    """Samples for the tensor operand of binary op ``name`` beside a scalar: whole numbers for
    integer data, positive bases for ``power``'s left operand."""
    xs = np.round(ew.XS) if integer else ew.XS
    return np.abs(xs) + 0.25 if name == "power" and tensor_lhs else xs


def _computes_with(f, name: str, x, c, tensor_lhs: bool) -> bool:
    """Whether ``f(x)`` is op ``name`` of ``x`` and the scalar ``c`` (on the other side)."""
    ref = ew.BINARY[name]
    with np.errstate(all="ignore"):
        return ew.close(f(x), ref(x, c) if tensor_lhs else ref(c, x))


def _with_scalar(root, leaf, consts, integer):
    """A binary arithmetic op one of whose operands is a scalar constant: the tree must be
    that op's own form (its root node, one distinct constant), and compute the op on samples
    with the constant on the side that matches. Abstains on anything else: ``clip`` with an
    infinite bound is ``max(min(x, hi), -inf)``, two constants, not ``minimum``."""
    if len(set(consts)) != 1:
        return None
    c = consts[0]
    f = _fn(root, [leaf])
    for name, node in SCALAR_ROOTS.items():
        if not _root_is(root, node):
            continue
        for swapped in (False, True):
            if _computes_with(f, name, _scalar_samples(name, integer, not swapped), c, not swapped):
                return name, {}, (0,), ("rhs",) if swapped else ("lhs",)
    return None


def scalar_operand(name: str, role: str, expr, leaf) -> "float | None":
    """The scalar a binary op ``name`` takes beside its one tensor operand (on side ``role``)
    to compute ``expr`` over ``leaf``: a constant of the expression, negated (TVM writes
    ``add(x, -1)`` as ``x - 1``) or inverted, that gives the op's values on samples; None
    when none does."""
    if name not in ew.BINARY or role not in ("lhs", "rhs"):
        return None
    consts, cmp_vals = _consts(expr, [leaf], values_only=True)
    integer = not leaf.dtype.is_float
    xs = _scalar_samples(name, integer, role == "lhs")
    f = _fn(expr, [leaf])
    seen = []
    for c in consts + cmp_vals:
        for cand in (c, -c) + ((1.0 / c,) if c else ()):
            if cand in seen:
                continue
            seen.append(cand)
            probes = xs
            if name in COMPARISONS:  # at and beside each threshold: another one between two samples agrees
                near = np.array([v + d for v in cmp_vals + [cand] for d in ((-1, 0, 1) if integer else (-1e-3, 0, 1e-3))])
                probes = np.concatenate([xs, near])
            if _computes_with(f, name, probes, cand, role == "lhs"):
                return int(cand) if integer and float(cand).is_integer() else float(cand)
    return None


def scalar_constants(name: str, role: str, expr, leaf) -> tuple:
    """:attr:`.info.OpInfo.constants` of a binary op whose tensor operand is on side ``role``:
    the scalar on the other side (:func:`scalar_operand`), or () when it is not found."""
    value = scalar_operand(name, role, expr, leaf)
    return () if value is None else (("rhs" if role == "lhs" else "lhs", value),)


COMPARISONS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")


def scalar_comparison(root, leaf, name: str) -> "str | None":
    """The role of ``leaf`` (``"lhs"`` or ``"rhs"`` in the Relax call) when ``root`` is the
    comparison ``name`` of ``leaf`` and one scalar constant, or None. The value of
    ``greater(x, c)`` is ``less(c, x)``'s (TVM writes both ``c < x``), so ``name`` must come
    from elsewhere (the block's compute tag); the values only settle the role, probed at
    and around the constant (an equality far from it is false everywhere). ``equal`` and
    ``not_equal`` are symmetric and TVM puts their constant on the right either way: the
    tensor is reported as ``lhs``, as for the other commutative ops of :func:`_with_scalar`."""
    if name not in COMPARISONS or not isinstance(root, CmpOp):
        return None
    sides = (root.a, root.b)
    consts = [s for s in sides if isinstance(s, (FloatImm, IntImm)) and not isinstance(s.value, bool)]
    others = [s for s in sides if not isinstance(s, (FloatImm, IntImm))]
    if len(consts) != 1 or len(others) != 1 or not (others[0] is leaf or others[0] == leaf):
        return None
    c = float(consts[0].value)
    xs = np.concatenate([ew.XS, c + np.array([-2.0, -1.0, -0.5, -1e-3, 0.0, 1e-3, 0.5, 1.0, 2.0])])
    if not leaf.dtype.is_float:
        xs = np.round(xs)
    got = _fn(root, [leaf])(xs)
    ref = ew.BINARY[name]
    for role, want in (("lhs", ref(xs, c)), ("rhs", ref(c, xs))):
        if np.array_equal(got, want.astype(float)):
            return role
    return None


def _root_is(root, kinds) -> bool:
    return any(isinstance(root, k) if isinstance(k, type) else isinstance(root, Call) and root.op == k
               for k in kinds)


def _where(root, leaves):
    """Three leaves, one of them bool: ``where(cond, x1, x2)`` by probing."""
    conds = [i for i, l in enumerate(leaves) if l.dtype.is_bool]
    if len(conds) != 1:
        return None
    c = conds[0]
    rest = [i for i in range(3) if i != c]
    rng = np.random.default_rng(3)
    vals = [None] * 3
    vals[c] = rng.integers(0, 2, 16).astype(float)
    vals[rest[0]], vals[rest[1]] = rng.uniform(-3, 3, 16), rng.uniform(-3, 3, 16)
    got = _fn(root, leaves)(*vals)
    for t, f in (rest, rest[::-1]):
        if np.array_equal(got, np.where(vals[c] != 0, vals[t], vals[f])):
            return "where", {}, (c, t, f), ("condition", "x1", "x2")
    return None
