"""Outlining: move groups of ``main``'s bindings into new graph functions called from main.

Shared by ``merge_composite`` (groups become composite functions) and ``partition_graph``
(regions become ``Compiler`` functions). The bindings keep their values, so the module
still runs (the graph executor follows ``Call``s) after every pass.
"""
from __future__ import annotations

import attrs

from tir import relax as R
from tir.node import Map

from .dataflow import binding_inputs, used_vars, var_types


@attrs.frozen
class Group:
    """Bindings of main (by index) to outline into function ``name`` with ``attrs``."""

    members: tuple
    name: str
    attrs: Map = attrs.field(default=Map(), converter=Map)


def _ret_vars(main: R.Function) -> set:
    out = set(used_vars(main.ret))
    for blk in main.blocks:
        if isinstance(blk, R.DataflowBlock):
            out.update(blk.outputs)
    return out


class _Uses:
    """Def-use facts of main computed once per outlining (every group's interface reads
    them: recomputing them per group made outlining quadratic in a network's bindings)."""

    def __init__(self, main: R.Function):
        self.bindings = main.bindings
        self.reads = [used_vars(b.value) for b in self.bindings]
        self.users: dict = {}
        for i, vs in enumerate(self.reads):
            for v in vs:
                self.users.setdefault(v, set()).add(i)
        self.returned = _ret_vars(main)

    def interface(self, members: set) -> tuple:
        """(inputs, outputs) of a group of binding indices."""
        defined = {self.bindings[i].var for i in members}
        inputs: dict = {}
        for i in sorted(members):
            for v in self.reads[i]:
                if v not in defined:
                    inputs.setdefault(v, None)
        outputs = [self.bindings[i].var for i in sorted(members)
                   if self.bindings[i].var in self.returned or self.users.get(self.bindings[i].var, set()) - members]
        return list(inputs), outputs


def _fresh(v: R.RVar, types: dict) -> R.RVar:
    return R.RVar(v.name, types.get(v))


def make_function(main: R.Function, members: set, fattrs: Map, types: dict, uses: "_Uses | None" = None) -> tuple:
    """(function, inputs, outputs) holding the member bindings of ``main``."""
    from tir.functor import substitute

    uses = uses or _Uses(main)
    bindings = uses.bindings
    inputs, outputs = uses.interface(members)
    mapping = {v: _fresh(v, types) for v in inputs}
    for i in sorted(members):
        mapping[bindings[i].var] = _fresh(bindings[i].var, types)
    body = [substitute(bindings[i], mapping) for i in sorted(members)]
    rets = [mapping[v] for v in outputs]
    ret = rets[0] if len(rets) == 1 else R.Tuple(tuple(rets))
    ret_type = rets[0].type if len(rets) == 1 else R.TupleType(tuple(r.type for r in rets))
    func = R.Function(tuple(mapping[v] for v in inputs), (R.DataflowBlock(tuple(body), tuple(rets)),),
                      ret, ret_type, fattrs)
    return func, inputs, outputs


def _call_bindings(name: str, inputs: list, outputs: list, types: dict) -> list:
    call = R.Call(R.GlobalVar(name), tuple(inputs))
    if len(outputs) == 1:
        return [R.Binding(outputs[0], call)]
    whole = R.RVar(f"{name}_out", R.TupleType(tuple(types.get(v) for v in outputs)))
    items = [R.Binding(v, R.TupleGetItem(whole, k)) for k, v in enumerate(outputs)]
    return [R.Binding(whole, call)] + items


def _order_units(main: R.Function, units: list) -> list:
    """Units (lists of binding indices) in a dependency-respecting order, stable by position."""
    deps = binding_inputs(main)
    unit_of = {i: u for u, members in enumerate(units) for i in members}
    needs = [{unit_of[d] for i in members for d in deps[i]} - {u} for u, members in enumerate(units)]
    done: set = set()
    order = []
    pending = sorted(range(len(units)), key=lambda u: max(units[u]))
    while pending:
        ready = next((u for u in pending if needs[u] <= done), None)
        if ready is None:
            raise ValueError("outlining would create a cycle between regions")
        pending.remove(ready)
        done.add(ready)
        order.append(ready)
    return order


def outline(mod, groups: list):
    """A copy of ``mod`` where each group's bindings of main become one call of a new function."""
    main = mod.main
    types = var_types(main, mod)
    grouped = {i for g in groups for i in g.members}
    units = [sorted(g.members) for g in groups]
    units += [[i] for i in range(len(main.bindings)) if i not in grouped]
    new_bindings, funcs = [], {}
    uses = _Uses(main)
    for u in _order_units(main, units):
        if u >= len(groups):
            new_bindings.append(uses.bindings[units[u][0]])
            continue
        g = groups[u]
        func, inputs, outputs = make_function(main, set(g.members), g.attrs, types, uses)
        funcs[g.name] = func
        new_bindings += _call_bindings(g.name, inputs, outputs, types)
    outputs = tuple(v for v in _ordered_ret_vars(main) if any(b.var is v for b in new_bindings))
    new_main = attrs.evolve(main, blocks=(R.DataflowBlock(tuple(new_bindings), outputs),))
    out = mod.with_function("main", new_main)
    for name, func in funcs.items():
        out = out.with_function(name, func)
    return out


def _ordered_ret_vars(main: R.Function) -> list:
    seen: dict = {}
    for blk in main.blocks:
        if isinstance(blk, R.DataflowBlock):
            for v in blk.outputs:
                seen.setdefault(v, None)
    for v in used_vars(main.ret):
        seen.setdefault(v, None)
    return list(seen)
