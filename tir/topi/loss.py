"""``nn.nll_loss`` and ``nn.cross_entropy_with_logits`` as TVM's Relax legalization writes
them (``topi.nn.nll_loss``; ``-sum(x * y) / x.shape[0]``), block names included."""
from __future__ import annotations

from ..buffer import Buffer
from ..builder import Builder, sum_
from ..expr import IntImm, cast, const, ne, select
from .common import OpError, ShapeError, differ, dims, index

REDUCTIONS = ("mean", "sum", "none")


def _check_nll(predictions: Buffer, targets: Buffer, weights: Buffer, reduction: str) -> None:
    if reduction not in REDUCTIONS:
        raise OpError("nn.nll_loss", "reduction", f"must be one of {', '.join(REDUCTIONS)}, got {reduction!r}")
    if predictions.ndim != targets.ndim + 1 or weights.ndim != 1:
        raise OpError("nn.nll_loss", "targets", f"needs predictions of rank targets + 1 and 1-D weights, got "
                      f"{predictions.ndim}, {targets.ndim}, {weights.ndim}")
    if not targets.dtype.is_integer:
        raise OpError("nn.nll_loss", "targets", f"must be integer, got {targets.dtype}")
    # predictions (N, C, d...) over targets (N, d...), or (C,) over a 0-d target; weights (C,)
    p = list(predictions.shape)
    want = [(p[0], targets.shape[0])] + list(zip(p[2:], targets.shape[1:])) if targets.ndim else []
    classes = p[1] if targets.ndim else p[0]
    if any(differ(a, c) for a, c in want + [(classes, weights.shape[0])]):
        raise ShapeError("nn.nll_loss", "targets", f"predictions {dims(p)}, targets {dims(targets.shape)} and "
                         f"weights {dims(weights.shape)} do not fit")


def _sum_all(b: Builder, name: str, x: Buffer) -> Buffer:
    """``x`` summed over every axis into a 0-d ``<name>_red``."""
    axes = [b.reduce_axis(s, f"k{d}") for d, s in enumerate(x.shape)]
    return b.compute(f"{name}_red", [], lambda: sum_(x[tuple(a.var for a in axes)], axes))


def nll_loss(b: Builder, predictions: Buffer, targets: Buffer, weights: Buffer, *, reduction="mean",
             ignore_index=-100) -> Buffer:
    """``Select(t != ignore_index, -x[n, t, d...] * w[t], 0)``, then summed or averaged by weight."""
    _check_nll(predictions, targets, weights, reduction)
    x, t, w = predictions, targets, weights
    ign = IntImm(t.dtype, int(ignore_index))
    zero = const(0.0, x.dtype)
    names = [f"ax{d}" for d in range(t.ndim)]

    def element(*i):
        c = t[i]
        pred = x[(i[0], c) + i[1:]] if i else x[(c,)]
        return select(ne(c, ign), (zero - pred) * w[(c,)], zero)

    loss = b.compute("nll_loss", t.shape, element, names=names)
    if reduction == "none" or (reduction == "sum" and t.ndim == 0):  # TVM: no sum of a 0-d loss
        return loss
    total = _sum_all(b, "nll_loss", loss) if t.ndim else loss
    if reduction == "sum":
        return total
    weight = b.compute("nll_loss", t.shape, lambda *i: select(ne(t[i], ign), w[(t[i],)], zero), names=names)
    wsum = _sum_all(b, "nll_loss", weight) if t.ndim else weight
    return b.compute("T_divide", [], lambda: total[()] / wsum[()])


def cross_entropy_with_logits(b: Builder, predictions: Buffer, labels: Buffer) -> Buffer:
    """``-sum(x * y)``, divided by ``x.shape[0]`` when ``x`` has more than one axis."""
    x, y = predictions, labels
    if x.ndim < 1 or x.ndim != y.ndim:
        raise OpError("nn.cross_entropy_with_logits", "labels", f"needs equal ranks >= 1, got {x.ndim}, {y.ndim}")
    if any(differ(a, c) for a, c in zip(x.shape, y.shape)):
        raise ShapeError("nn.cross_entropy_with_logits", "labels", f"shape {dims(y.shape)} differs from {dims(x.shape)}")
    names = [f"ax{d}" for d in range(x.ndim)]
    prod = b.compute("T_multiply", x.shape, lambda *i: x[i] * y[i], names=names)
    total = _sum_all(b, "T_multiply", prod)
    neg = b.compute("T_multiply", [], lambda: total[()] * const(-1.0, x.dtype))
    if x.ndim == 1:
        return neg
    n = x.shape[0]
    count = const(float(n.value), x.dtype) if isinstance(n, IntImm) else cast(index(n), x.dtype)
    return b.compute("T_divide", [], lambda: neg[()] / count)

