"""Pass ``merge_compiler_regions``: group adjacent units of one backend into regions.

Each call of a composite function marked ``Target`` starts as its own region. Walking main
in order, a unit joins the regions (same backend) of the units it reads from, when the
merged set stays convex: no value leaves the set and comes back into it through a binding
outside it (that would make the partitioned functions call each other in a cycle). The
region of a composite is recorded as its ``"Region"`` attribute (``"<backend>_<k>"``).
"""
from __future__ import annotations

import attrs

from tir import relax as R
from tir.module import IRModule

from .dataflow import ancestors, attached_items, binding_inputs


def _units(mod: IRModule) -> dict:
    """{binding index of a Target composite call: (target, composite function name)}."""
    out = {}
    for i, b in enumerate(mod.main.bindings):
        v = b.value
        if isinstance(v, R.Call) and isinstance(mod[v.func.name], R.Function):
            target = mod[v.func.name].attrs.get("Target")
            if target is not None:
                out[i] = (target, v.func.name)
    return out


def _convex(members: int, deps: list, anc: list) -> bool:
    """No binding outside ``members`` (a bitmask) both reads from and feeds the set."""
    m, i = members, 0
    while m:
        if m & 1:
            for d in deps[i]:
                if not (members >> d) & 1 and anc[d] & members:
                    return False
        m >>= 1
        i += 1
    return True


def _assign(mod: IRModule, units: dict) -> dict:
    """{unit binding: region id}, merging greedily in binding order."""
    main = mod.main
    deps, items = binding_inputs(main), attached_items(main)
    anc = ancestors(deps)
    owner = {}
    for u in units:
        for i in [u] + items.get(u, []):
            owner[i] = u
    region_of: dict = {}
    masks: dict = {}
    for u, (target, _) in units.items():
        mask = sum(1 << i for i in [u] + items.get(u, []))
        region_of[u], masks[u] = u, mask
        for d in deps[u]:
            src = owner.get(d)
            if src is None or units[src][0] != target or region_of[src] == region_of[u]:
                continue
            r_other, r_self = region_of[src], region_of[u]
            merged = masks[r_other] | masks[r_self]
            if _convex(merged, deps, anc):
                for k, r in region_of.items():
                    if r == r_self:
                        region_of[k] = r_other
                masks[r_other] = merged
                del masks[r_self]
    return region_of


def merge_compiler_regions(mod: IRModule) -> IRModule:
    """``mod`` with a ``"Region"`` attribute on every ``Target`` composite (see module docstring)."""
    units = _units(mod)
    if not units:
        return mod
    region_of = _assign(mod, units)
    ids: dict = {}
    for u in sorted(units):
        target, name = units[u]
        rid = ids.setdefault(region_of[u], f"{target}_{len(ids)}")
        func = mod[name]
        mod = mod.with_function(name, attrs.evolve(func, attrs=func.attrs.set("Region", rid)))
    return mod
