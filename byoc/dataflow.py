"""Def-use facts about a graph function's bindings, shared by the partitioning passes."""
from __future__ import annotations

from tir import relax as R
from tir.functor import post_order_visit


def used_vars(expr) -> list:
    """The RVars ``expr`` reads, in first-use order, without repeats."""
    seen: dict = {}

    def visit(n):
        if isinstance(n, R.RVar):
            seen.setdefault(n, None)

    post_order_visit(expr, visit)
    return list(seen)


def value_type(value, types: dict, mod=None):
    """The graph type of a binding's value, when it can be known."""
    if isinstance(value, (R.CallTIR, R.CallDPSPacked)):
        return value.out_type
    if isinstance(value, R.RVar):
        return types.get(value, value.type)
    if isinstance(value, R.TupleGetItem):
        whole = value_type(value.tuple_value, types, mod)
        return whole.fields[value.index] if isinstance(whole, R.TupleType) else None
    if isinstance(value, R.Tuple):
        return R.TupleType(tuple(value_type(f, types, mod) for f in value.fields))
    if isinstance(value, R.Constant):
        return value.type
    if isinstance(value, R.Call) and mod is not None and value.func.name in mod:
        return getattr(mod[value.func.name], "ret_type", None)
    return None


def var_types(func: R.Function, mod=None) -> dict:
    """The type of every parameter and bound variable of ``func``."""
    types = {p: p.type for p in func.params}
    for b in func.bindings:
        types[b.var] = b.var.type if b.var.type is not None else value_type(b.value, types, mod)
    return types


def binding_inputs(func: R.Function) -> list:
    """For each binding: the indices of the bindings whose variables it reads."""
    where = {b.var: i for i, b in enumerate(func.bindings)}
    return [sorted({where[v] for v in used_vars(b.value) if v in where}) for b in func.bindings]


def ancestors(deps: list) -> list:
    """For each binding: a bitmask of every binding it depends on, directly or not."""
    masks: list = []
    for direct in deps:
        m = 0
        for d in direct:
            m |= masks[d] | (1 << d)
        masks.append(m)
    return masks


def attached_items(func: R.Function) -> dict:
    """``{call binding index: [indices of the tuple-item bindings reading it]}``."""
    where = {b.var: i for i, b in enumerate(func.bindings)}
    out: dict = {}
    for i, b in enumerate(func.bindings):
        v = b.value
        if isinstance(v, R.TupleGetItem) and v.tuple_value in where:
            out.setdefault(where[v.tuple_value], []).append(i)
    return out
