"""The intrinsics TVM's lowering of each elementwise op calls.

An elementwise op is identified by what it computes on sample values; this is the
structural check that goes with it: the expression may call only intrinsics that the
op's TVM form calls (topi and Relax's legalization, e.g. ``nn.gelu`` calls ``erf``,
``square`` calls nothing). ``power(x, 2.0)`` computes a square but calls ``pow``: it is
the Relax op ``power`` with a constant operand, not ``square``, and must not be named so.
``if_then_else`` is a select, allowed everywhere. Ops whose whole form is one arithmetic
node also fix that node: ``negative`` is ``x * -1``, so ``0 - x`` (Relax's ``subtract``
with a constant operand) is not named ``negative``.
"""
from __future__ import annotations

import functools

from tir.expr import And, BinaryOp, BufferLoad, Call, Max, Mod, Mul, Not, Or, Select
from tir.functor import children, pre_order_visit

from ..semantic import ArgReduce, Reduce

_CALLS = {
    "exp": {"exp"}, "log": {"log"}, "sqrt": {"sqrt"}, "rsqrt": {"rsqrt"}, "sigmoid": {"sigmoid"},
    "tanh": {"tanh"}, "erf": {"erf"}, "abs": {"fabs"}, "sin": {"sin"}, "cos": {"cos"}, "tan": {"tan"},
    "floor": {"floor"}, "ceil": {"ceil"}, "round": {"nearbyint", "round"}, "trunc": {"trunc"},
    "log1p": {"log1p"}, "negative": set(), "square": set(), "sign": set(),
    "nn.relu": set(), "nn.gelu": {"erf"}, "nn.gelu_tanh": {"tanh"}, "nn.silu": {"sigmoid"},
    "nn.selu": {"exp"}, "nn.leakyrelu": set(), "clip": set(), "nn.softplus": {"exp", "log", "log1p"},
    "add": set(), "subtract": set(), "multiply": set(), "divide": set(), "maximum": set(),
    "minimum": set(), "power": {"pow"}, "floor_divide": {"floor"}, "floor_mod": {"floor"},
    "equal": set(), "not_equal": set(), "less": set(), "less_equal": set(), "greater": set(),
    "greater_equal": set(), "where": set(), "astype": set(),
    "acos": {"acos"}, "acosh": {"acosh"}, "asin": {"asin"}, "asinh": {"asinh"}, "atan": {"atan"},
    "atanh": {"atanh"}, "cosh": {"cosh"}, "sinh": {"sinh"},
    "isnan": {"isnan"}, "isinf": {"isinf", "isnan", "fabs"}, "isfinite": {"isfinite", "isinf", "isnan", "fabs"},
    "bitwise_not": {"bitwise_not"}, "logical_not": set(),
    "logical_and": set(), "logical_or": set(), "mod": set(), "log_add_exp": {"exp", "log", "log1p", "fabs"},
    "bitwise_and": {"bitwise_and"}, "bitwise_or": {"bitwise_or"}, "bitwise_xor": {"bitwise_xor"},
    "left_shift": {"shift_left"}, "right_shift": {"shift_right"}, "atan2": {"atan2"},
}
_ANYWHERE = {"if_then_else"}
_ARITHMETIC = {"nn.relu": {Max}, "negative": {Mul}, "square": {Mul}, "logical_and": {And}, "logical_or": {Or},
               "logical_not": set(), "mod": {Mod}, "bitwise_not": set(), "bitwise_and": set(),
               "bitwise_or": set(), "bitwise_xor": set(), "left_shift": set(), "right_shift": set()}
"""Ops whose TVM form is one arithmetic node: the only arithmetic node types they may use
(relu is ``max(x, 0)``; leakyrelu with alpha 0 prints ``Select(0 < x, x, 0)``)."""


def calls_allowed(name: str, expr, leaves) -> bool:
    """Whether ``expr`` (outside its ``leaves``) calls only intrinsics of ``name``'s TVM form;
    an op missing from the table is never allowed."""
    allowed = _CALLS.get(name)
    if allowed is None or not called(expr, leaves) <= allowed | _ANYWHERE:
        return False
    nodes = _ARITHMETIC.get(name)
    return nodes is None or _arithmetic(expr, leaves) <= nodes


def _arithmetic(expr, leaves) -> set:
    """Types of the arithmetic nodes in ``expr`` outside its ``leaves``."""
    return _outside(expr, leaves, BinaryOp, type)


def called(expr, leaves) -> set:
    """Names of the intrinsics called in ``expr``, not looking into ``leaves``."""
    return _outside(expr, leaves, Call, lambda n: n.op)


def _outside(expr, leaves, node_type, key) -> set:
    """``key(n)`` of every ``node_type`` node of ``expr`` outside loads, reductions and ``leaves``."""
    stop = set(leaves)
    found = set()

    def visit(n):
        if isinstance(n, (BufferLoad, Reduce, ArgReduce)) or n in stop:
            return False
        if isinstance(n, node_type):
            found.add(key(n))
        return True

    pre_order_visit(expr, visit)
    return found


def _size(expr, stop) -> int:
    """Operations of ``expr`` outside loads, reductions and ``stop`` that depend on them:
    intrinsic calls (``if_then_else`` aside, a guard), arithmetic and comparison nodes,
    selects, negations. Casts, constants, operations on constants alone (TVM leaves
    ``1 / 3`` unfolded in float16) and intermediates' markers are not counted."""
    count = [0]

    def walk(e) -> bool:
        """Whether ``e`` depends on a load; counts its operations."""
        if isinstance(e, (BufferLoad, Reduce, ArgReduce)) or e in stop:
            return True
        deps = [walk(c) for c in children(e)]
        live = any(deps)
        if live and (isinstance(e, (BinaryOp, Select, Not)) or isinstance(e, Call) and e.op not in _ANYWHERE):
            count[0] += 1
        return live

    walk(expr)
    return count[0]


def form_size_ok(name: str, attrs: dict, expr, leaves) -> bool:
    """Whether ``expr`` over ``leaves`` performs no more operations than op ``name``'s TVM
    form: an op that changes nothing on its operand's values (relu after exp, floor after
    floor) computed in the same block as the op before it -- the chain inlined by
    ``compute_inline`` or dlight -- is then not swallowed into one op. Forms not known to
    :mod:`tir.topi` (and ops over a scalar constant) pass."""
    items = _items(attrs)
    if items is None:
        return True
    size = _op_form_size(name, items, tuple(((2, 3), str(leaf.dtype)) for leaf in leaves))
    return size is None or _size(expr, set(leaves)) <= size


def _items(attrs: dict) -> "tuple | None":
    """``attrs`` as a hashable key of :func:`_op_form_size` (lists made tuples), or None when
    a value cannot be hashed."""
    try:
        items = tuple(sorted((k, _plain_attr(v)) for k, v in attrs.items()))
        hash(items)
    except TypeError:
        return None
    return items


def _plain_attr(value):
    return tuple(_plain_attr(v) for v in value) if isinstance(value, (list, tuple)) else value


def _as_list(value):
    return [_as_list(v) for v in value] if isinstance(value, tuple) else value


@functools.lru_cache(maxsize=4096)
def _op_form_size(name: str, attrs_items: tuple, inputs: tuple) -> "int | None":
    """Operations above the reductions of op ``name``'s output as :mod:`tir.topi` lowers it on
    ``inputs`` (``(shape, dtype)`` pairs), through its intermediate blocks; None when the op
    is not lowered so or has several outputs."""
    import tir
    from ..semantic import Semantics

    try:
        func = tir.topi.lower(name, [(list(s), d) for s, d in inputs], **{k: _as_list(v) for k, v in attrs_items})
    except (ValueError, TypeError, KeyError, NotImplementedError, IndexError, ZeroDivisionError):
        return None
    sem = Semantics(func)  # tir.topi's form is unscheduled: nothing to normalize
    outputs = sem.outputs()
    if len(outputs) != 1:
        return None
    return _size(sem.meaning(outputs[0]), set())


def op_form_ok(name: str, attrs: dict, expr, inputs, stops=None) -> bool:
    """Whether ``expr``, down to the op's ``inputs`` (loads or intermediates), performs no
    more operations above its reductions than op ``name``'s TVM form (:func:`_size`): an
    elementwise op that changes nothing on the op's values (relu after softmax, abs after
    std) inlined into the op's last block is then not swallowed. Ops not lowered by
    :mod:`tir.topi` with these attributes, or over symbolic shapes, pass. ``stops``: the
    nodes where the op's expression ends (default ``inputs``; an input read at other indices
    too)."""
    region = _size(expr, set(inputs if stops is None else stops))
    if region == 0:
        return True  # nothing above the reductions (a convolution, a sum): nothing to compare
    shapes = []
    for e in inputs:
        buf = getattr(e, "buffer", None)
        dims = [getattr(s, "value", None) for s in buf.shape] if buf is not None else [None]
        if None in dims or not all(isinstance(d, int) for d in dims):
            return True
        shapes.append((tuple(dims), str(e.dtype)))
    items = _items(attrs)
    if items is None:
        return True
    size = _op_form_size(name, items, tuple(shapes))
    return size is None or region <= size
