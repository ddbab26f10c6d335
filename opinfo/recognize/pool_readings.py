"""Which (ceil_mode, padding) readings explain a pooling loop nest, and which one to report.

TVM lowers ``ceil_mode=True`` by growing the after-padding by ``stride - 1`` and taking
the floor; the output extent then loses one position when the last window would start
in the after-padding (``(out - 1) * stride >= size + before``). A pool with
``ceil_mode=False`` and more after-padding can therefore give exactly the same loops.

Policy (steps a-c read *this* IR; rule d is a convention, and says so):

a. Enumerate the readings per dimension: an after-padding ``pa`` and a ceil flag such that
   TVM's lowering gives the observed output extent and the observed padded extent
   ``pa + (stride - 1 if ceil)`` (exact when a pad buffer is visible; when the pad was
   inlined, only whether the after side is guarded at all).
b. Drop readings that pad some dimension by at least the dilated window extent (a window
   made only of padding; frameworks do not produce it).
c. If exactly one reading remains, report it.
d. If several remain and they differ only in the flag (same padding: every stride is 1,
   a single window, or the extra ceil padding is never read), ceil_mode has no effect:
   report the importers' default ``False``. Otherwise report the ``ceil_mode=False`` one
   when it is the only one with that flag (importers write the default flag with the
   padding they mean); otherwise abstain. Both rule-d answers are conventions, not facts
   of the loops: the match names the attributes it assumed (``Match.assumed``) and
   :func:`opinfo.analyze` keeps it only where the convention holds (a network imported
   from a framework, whose pools in the ONNX model zoo all have ceil_mode=False).

Average pooling first filters the readings by its divisor expression (see
``pool_divisor``), which often settles the question.
"""
from __future__ import annotations

import itertools

import attrs

MAX_READINGS = 64


@attrs.frozen
class Axis:
    """One pooled dimension as the loops show it."""

    size: int
    out: int
    kernel: int
    stride: int
    dilation: int
    before: int
    padded: "int | None"
    """TVM's after-padding when the pad buffer is visible, else None."""
    guarded: "bool | None"
    """Whether the after side is guarded (inlined pad); None when that is no evidence."""

    @property
    def span(self) -> int:
        """Extent of the dilated window."""
        return (self.kernel - 1) * self.dilation + 1


@attrs.frozen
class Reading:
    """ceil_mode and the after-padding of every pooled dimension."""

    ceil: bool
    after: tuple


def out_size(ax: Axis, after: int, ceil: bool) -> int:
    """TVM's output extent for one dimension."""
    grow = ax.stride - 1 if ceil else 0
    o = (ax.size + ax.before + after - ax.span + grow) // ax.stride + 1
    if ceil and (o - 1) * ax.stride >= ax.size + ax.before:
        o -= 1
    return o


def _explains(ax: Axis, after: int, ceil: bool) -> bool:
    tvm_after = after + (ax.stride - 1 if ceil else 0)
    if ax.padded is not None and tvm_after != ax.padded:
        return False
    if ax.guarded is not None and (tvm_after > 0) != ax.guarded:
        return False
    return out_size(ax, after, ceil) == ax.out


def afters(ax: Axis, ceil: bool) -> list:
    """After-paddings (below the window extent, rule b) that explain ``ax`` with ``ceil``."""
    return [pa for pa in range(ax.span) if _explains(ax, pa, ceil)]


def readings(axes) -> list:
    """Every reading that explains all ``axes`` (rules a and b)."""
    if any(ax.before >= ax.span or ax.before < 0 for ax in axes):
        return []
    out = []
    for ceil in (False, True):
        per = [afters(ax, ceil) for ax in axes]
        for combo in itertools.islice(itertools.product(*per), MAX_READINGS):
            out.append(Reading(ceil, tuple(combo)))
    return out


def choose(axes, cands: list) -> "tuple[Reading | None, tuple]":
    """The reading to report among ``cands`` (rules c and d) and the attributes it assumes
    by convention (rule d; empty when the loops decide it); (None, ()) when none."""
    if len(cands) == 1:
        return cands[0], ()
    plain = [r for r in cands if not r.ceil]
    if len(plain) != 1:
        return None, ()
    if all(r.after == plain[0].after for r in cands):
        # the readings differ only in the flag (every stride 1, a single window, or the
        # extra ceil padding never read): ceil_mode has no effect on these loops; the
        # importers' default (False) is the convention
        return plain[0], ("ceil_mode",)
    # ceil_mode=True with less after-padding lowers the same: importers write ceil_mode=False
    # (the default) with the padding they mean, so the one plain reading is the convention
    return plain[0], ("ceil_mode", "padding")
