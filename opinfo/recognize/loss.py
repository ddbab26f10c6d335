"""``nn.nll_loss`` and ``nn.cross_entropy_with_logits`` in the forms of TVM's legalization.

nll_loss (``topi.nn.nll_loss``): one element per target position ``i = (n, d...)``,

    E(i) = Select(t[i] != ignore_index, (0 - x[n, t[i], d...]) * w[t[i]], 0)

(``w`` an intermediate of ones when Relax's op has no weights), stored as the output
("none"), summed over every target axis ("sum"), or that sum divided by the sum of
``W(i) = Select(t[i] != ignore_index, w[t[i]], 0)`` ("mean"). With 1-D
predictions (a 0-d target) TVM returns ``E`` itself for "sum" and "none" alike: only "mean"
(``E / W``) is named there.

cross_entropy_with_logits: ``-sum(x * y) / x.shape[0]`` (``sum * -1`` then the division),
without the division for 1-D inputs. The sum must run over every element of both inputs.
"""
from __future__ import annotations

from tir.expr import NE, BufferLoad, Cast, Div, IntImm, Mul, Select, Sub, Var

from ..affine import const_of, float_of
from ..semantic import Inlined, Reduce
from .common import Match, Space, strip
from .movement_index import pure_space


def _same_load(a, b) -> bool:
    """Two reads of one buffer at the identical index expressions."""
    return (isinstance(a, BufferLoad) and isinstance(b, BufferLoad) and a.buffer is b.buffer
            and len(a.indices) == len(b.indices) and all(i is j for i, j in zip(a.indices, b.indices)))


def _param(e, ctx) -> "BufferLoad | None":
    e = strip(e)
    return e if isinstance(e, BufferLoad) and ctx.is_param(e.buffer) else None


def _target_test(cond, ctx) -> "tuple | None":
    """(target load, ignore_index) of ``t[i] != c`` (either side)."""
    if not isinstance(cond, NE):
        return None
    for t, c in ((cond.a, cond.b), (cond.b, cond.a)):
        t = _param(t, ctx)
        if t is not None and isinstance(c, IntImm) and t.buffer.dtype.is_integer:
            idx = t.indices
            if all(isinstance(i, Var) for i in idx) and len({id(i) for i in idx}) == len(idx):
                return t, c.value
    return None


def _weight(e, t, ctx) -> "BufferLoad | Inlined | None":
    """``w[t[i]]`` for a 1-D parameter ``w``, or an intermediate of ones read there (Relax's
    nll_loss without weights: ``topi.full`` of 1)."""
    if isinstance(e, Inlined) and len(e.indices) == 1 and _same_load(strip(e.indices[0]), t) \
            and float_of(strip(e)) == 1 and len(e.buffer.shape) == 1:
        return e
    w = _param(e, ctx)
    if w is None or len(w.indices) != 1 or not _same_load(strip(w.indices[0]), t):
        return None
    return w


def _prediction(e, t, ctx) -> "BufferLoad | None":
    """``x[n, t[i], d...]`` where ``i = (n, d...)`` (``x[t[()]]`` for a 0-d target)."""
    x = _param(e, ctx)
    if x is None or not x.buffer.dtype.is_float or len(x.indices) != len(t.indices) + 1:
        return None
    lead, cls, rest = x.indices[:1], x.indices[1] if t.indices else x.indices[0], x.indices[2:]
    if not _same_load(strip(cls), t):
        return None
    if t.indices and not (lead[0] is t.indices[0] and all(a is b for a, b in zip(rest, t.indices[1:]))):
        return None
    return x


def _element(e, ctx) -> "tuple | None":
    """(x, t, w, ignore_index) of ``E(i)`` (see the module doc)."""
    e = strip(e)
    if not isinstance(e, Select) or float_of(e.false_value) != 0:
        return None
    test = _target_test(e.condition, ctx)
    prod = strip(e.true_value)
    if test is None or not isinstance(prod, Mul):
        return None
    t, ignore = test
    for neg, wl in ((prod.a, prod.b), (prod.b, prod.a)):
        neg = strip(neg)
        if not (isinstance(neg, Sub) and float_of(neg.a) == 0):
            continue
        x, w = _prediction(neg.b, t, ctx), _weight(wl, t, ctx)
        if x is not None and w is not None and w.buffer.dtype == x.buffer.dtype and x.buffer is not w.buffer:
            return x, t, w, ignore
    return None


def _weight_sum_term(e, t, w, ignore, ctx) -> bool:
    """``W(i) = Select(t[i] != ignore, w[t[i]], 0)`` over the same target, weights and ignore."""
    e = strip(e)
    if not isinstance(e, Select) or float_of(e.false_value) != 0:
        return False
    test = _target_test(e.condition, ctx)
    wl = _weight(e.true_value, t, ctx) if test is not None else None
    return test is not None and _same_load(test[0], t) and test[1] == ignore and wl is not None \
        and wl.buffer is w.buffer


def _same_extent(a, b) -> bool:
    ca, cb = const_of(a), const_of(b)
    return ca == cb if ca is not None or cb is not None else a is b


def _over_all(red, loads) -> bool:
    """``red`` sums over the indices of every load in ``loads`` (all the same), every axis of
    the first load's buffer whole, from 0."""
    if not isinstance(red, Reduce) or red.combiner != "sum" or float_of(red.init) != 0:
        return False
    first = loads[0]
    if len(red.axes) != len(first.indices) or not all(iv.var is i for iv, i in zip(red.axes, first.indices)):
        return False
    if not all(len(l.indices) == len(first.indices) and all(a is b for a, b in zip(l.indices, first.indices))
               for l in loads):
        return False
    return all(const_of(iv.dom.min) == 0 and _same_extent(iv.dom.extent, s)
               for iv, s in zip(red.axes, first.buffer.shape))


def _nll(found, reduction, space) -> Match:
    x, t, w, ignore = found
    weights = (("weights", w, space),) if isinstance(w, BufferLoad) else ()
    return Match("nn.nll_loss", {"reduction": reduction, "ignore_index": ignore},
                 (("predictions", x, space), ("targets", t, space)) + weights)


def _mean(e, space, ctx) -> "Match | None":
    """``sum(E) / sum(W)``, or ``E / W`` for a 0-d target."""
    num, den = strip(e.a), strip(e.b)
    if isinstance(num, Reduce) and isinstance(den, Reduce):
        found = _element(num.source, ctx)
        if found is None or not found[1].indices or not _over_all(num, [found[1]]):
            return None
        x, t, w, ignore = found
        t_den = BufferLoad(t.buffer, tuple(iv.var for iv in den.axes))  # t at the other sum's variables
        if not _over_all(den, [t_den]) or not _weight_sum_term(den.source, t_den, w, ignore, ctx):
            return None
        return _nll(found, "mean", space)
    found = _element(num, ctx)
    if found is None or found[1].indices or not _weight_sum_term(den, found[1], found[2], found[3], ctx):
        return None
    return _nll(found, "mean", space)


def match_nll_loss(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if not pure_space(space):
        return None
    if isinstance(e, Div) and space.rank == 0:
        return _mean(e, space, ctx)
    if isinstance(e, Reduce) and space.rank == 0:
        found = _element(e.source, ctx)
        if found is None or not found[1].indices or not _over_all(e, [found[1]]):
            return None
        return _nll(found, "sum", space)
    found = _element(e, ctx)
    if found is None or space.rank == 0:
        return None
    t = found[1]
    if len(t.indices) != space.rank or not all(a is b for a, b in zip(t.indices, space.indices)):
        return None
    if not all(_same_extent(a, b) for a, b in zip(space.extents, t.buffer.shape)):
        return None
    return _nll(found, "none", space)


# ---------------------------------------------------------------- cross_entropy_with_logits
def _negated_sum(e, ctx) -> "tuple | None":
    """(x, y) of ``sum(x * y) * -1`` over every element of both."""
    e = strip(e)
    if not isinstance(e, Mul):
        return None
    for red, c in ((e.a, e.b), (e.b, e.a)):
        red = strip(red)
        if float_of(c) != -1 or not isinstance(red, Reduce):
            continue
        prod = strip(red.source)
        if not isinstance(prod, Mul):
            return None
        x, y = _param(prod.a, ctx), _param(prod.b, ctx)
        if x is None or y is None or x.buffer is y.buffer or x.buffer.dtype != y.buffer.dtype:
            return None
        if not x.buffer.dtype.is_float or not (_over_all(red, [x, y]) or _over_all(red, [y, x])):
            return None
        if not (_fits(red, x) and _fits(red, y)):
            return None
        return x, y
    return None


def _fits(red, load) -> bool:
    """Every constant axis of ``load``'s buffer is the reduction's extent (a symbolic one is
    taken to be: Relax gave both inputs one shape)."""
    return all(const_of(s) is None or const_of(s) == const_of(iv.dom.extent)
               for iv, s in zip(red.axes, load.buffer.shape))


def _batch_divisor(d, x) -> bool:
    """``d`` is ``x.shape[0]`` as a float (a constant, or a cast of the symbolic extent)."""
    n = x.buffer.shape[0]
    if const_of(n) is not None:
        return float_of(d) == const_of(n)
    return isinstance(d, Cast) and d.value is n


def match_cross_entropy(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if space.rank != 0:
        return None
    if isinstance(e, Div):
        xy = _negated_sum(e.a, ctx)
        if xy is None or len(xy[0].indices) < 2 or not _batch_divisor(strip(e.b), xy[0]):
            return None
    else:
        xy = _negated_sum(e, ctx)
        if xy is None or len(xy[0].indices) != 1:
            return None
    x, y = xy
    return Match("nn.cross_entropy_with_logits", {}, (("predictions", x, space), ("labels", y, space)))
