"""The checks behind the round-trip tests: lower(op, attrs) -> analyze must give (op, attrs).

:func:`check` compares as the corpus scorer does (reshape-family names interchangeable,
axes modulo the rank, ``out_dtype`` and the like ignored). Two other outcomes are
accepted, and only with evidence:

* a different answer that is the *same computation*: lowering the recovered op gives
  the same values on random inputs (the interpreter decides);
* abstention when the attributes are *genuinely unrecoverable*: some other attribute
  set (from ``alternatives``) lowers to a structurally identical function after the same
  transformation, so no analysis of the loops could tell them apart.
"""
from __future__ import annotations

import math

import numpy as np

import tir
from opinfo.api import analyze

RESHAPE = {"reshape", "flatten", "expand_dims", "squeeze", "nn.batch_flatten"}
IGNORED = {"out_dtype", "momentum", "training", "assume_inbound", "mode", "pad_mode"}
AXES = {"axis", "axes"}


def _norm(key, v, rank):
    if key not in AXES or rank is None:
        return v
    if v is None:
        return list(range(rank))
    if isinstance(v, (list, tuple)):
        return sorted(a % rank for a in v)
    return v % rank if isinstance(v, int) else v


def _same(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-5, abs_tol=1e-7)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def same_op(op, attrs, got_op, got_attrs, rank) -> bool:
    """Whether (got_op, got_attrs) is (op, attrs) as the scorer counts it."""
    if op in RESHAPE and got_op in RESHAPE:
        return True
    if op != got_op:
        return False
    for k, v in attrs.items():
        if k in IGNORED:
            continue
        if k not in got_attrs or not _same(_norm(k, v, rank), _norm(k, got_attrs[k], rank)):
            return False
    return True


def recovered(func) -> "tuple | None":
    """(name, attrs) of the single recovered op, None when analyze abstained."""
    ops = analyze(func).ops
    assert len(ops) <= 1, [o.name for o in ops]
    return (ops[0].name, ops[0].to_json()["attrs"]) if ops else None


def _inputs(inputs, seed=0) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for shape, dtype in inputs:
        if dtype == "bool":
            out.append(rng.integers(0, 2, shape).astype(bool))
        elif dtype.startswith("int"):
            out.append(rng.integers(0, 3, shape).astype(dtype))
        else:
            out.append(rng.standard_normal(shape).astype(dtype))
    return out


def same_values(op, inputs, attrs, got_op, got_attrs) -> bool:
    """Whether lowering (got_op, got_attrs) computes what (op, attrs) does."""
    want = tir.topi.lower(op, inputs, **attrs)
    try:
        have = tir.topi.lower(got_op, inputs, **_lowerable(got_op, got_attrs))
    except ValueError:
        return False
    args = _inputs(inputs)
    a, b = tir.run(want, *args), tir.run(have, *args)
    return np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)


def _lowerable(op, attrs) -> dict:
    accepted = tir.topi.accepted_attrs(op)
    return {k: v for k, v in attrs.items() if k in accepted}


def ambiguous(op, inputs, attrs, alternatives, transform) -> bool:
    """Whether another attribute set lowers to the same (transformed) function."""
    base = transform(tir.topi.lower(op, inputs, **attrs))
    rank = len(inputs[0][0])
    for alt in alternatives:
        if same_op(op, attrs, op, alt, rank):
            continue
        try:
            other = transform(tir.topi.lower(op, inputs, **alt))
        except ValueError:
            continue
        if tir.structural_equal(other, base):
            return True
    return False


def other_op_same_loops(op, inputs, attrs, func) -> bool:
    """Whether another Relax op lowers to these very loops: an order-preserving copy
    (reshape, broadcast_to of the same size, tile by ones, ...: opinfo.copy_tags), a 1-D
    take (gather_elements along axis 0) or a sum that collapse_sum_to explains too."""
    from types import SimpleNamespace

    from opinfo import copy_tags
    from tir.expr import as_int

    def dims(buf):
        return tuple(as_int(d) if as_int(d) is not None else str(d) for d in buf.shape)

    bufs = func.buffers
    if op == "sum":
        # collapse_sum_to lowers to the very loops of a sum over leading axes or with keepdims
        from opinfo.graph_naming import collapses_to
        from opinfo.info import OpInfo

        return collapses_to(OpInfo("sum", attrs), dims(bufs[0]), dims(bufs[-1]))
    if op == "take":
        return len(inputs) == 2 and len(inputs[0][0]) == 1 and len(inputs[1][0]) == 1
    return copy_tags.order_preserving(SimpleNamespace(name=op, attrs=attrs), dims(bufs[0]), dims(bufs[-1]))


def check(op, inputs, attrs, func, alternatives=(), transform=lambda f: f, run_inputs=None):
    """Assert the round trip (see the module docstring). ``run_inputs`` are concrete
    inputs for the value comparison when ``inputs`` have symbolic extents."""
    got = recovered(func)
    rank = len(inputs[0][0])
    if got is None:
        assert ambiguous(op, run_inputs or inputs, attrs, alternatives, transform) or \
            other_op_same_loops(op, run_inputs or inputs, attrs, func), \
            f"{op} {attrs}: abstained although the attributes are recoverable"
        return
    if same_op(op, attrs, got[0], got[1], rank):
        return
    assert same_values(op, run_inputs or inputs, attrs, *got), f"{op} {attrs}: recovered {got}"
