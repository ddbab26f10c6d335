"""Pass ``annotate_target``: decide, unit by unit, what a backend will take.

A unit is a call of a composite function (from ``merge_composite``) or a bare ``call_tir``;
a Relax op TVM left unlowered (``R.sort(x)``) is never a unit and is listed as kept.
It is supported when opinfo recognised every PrimFunc in it (``ops`` not empty: nothing is
offloaded on an abstained recognition) and the backend's attribute checks accept every op.
A supported composite gets the attribute ``{"Target": backend}``; a supported bare call is
first wrapped into a one-call composite named after its ops (unless ``single_ops`` is
False). Every unit left in TIR is listed, with the reason, in the module attribute
``"byoc.kept"`` (a tuple of ``{"binding", "func", "ops", "reason"}``).
"""
from __future__ import annotations

from typing import Callable

import attrs

from tir import relax as R
from tir.module import IRModule
from tir.node import Map

from .dataflow import attached_items
from .outline import Group, outline


def _prim_calls(mod: IRModule, func: R.Function) -> list:
    """The call_tir values inside a graph function, following calls of graph functions."""
    out = []
    for b in func.bindings:
        if isinstance(b.value, R.CallTIR):
            out.append(b.value)
        elif isinstance(b.value, R.Call) and isinstance(mod[b.value.func.name], R.Function):
            out += _prim_calls(mod, mod[b.value.func.name])
    return out


class _Checker:
    def __init__(self, mod: IRModule, backend, analyze: Callable):
        self.mod, self.backend, self.analyze = mod, backend, analyze
        self.infos: dict = {}

    def ops(self, call: R.CallTIR) -> tuple:
        name = call.func.name
        if name not in self.infos:
            self.infos[name] = self.analyze(self.mod[name])
        return self.infos[name].ops

    def reason(self, calls: list) -> "str | None":
        """Why these calls cannot go to the backend, or None."""
        for call in calls:
            ops = self.ops(call)
            if not ops:
                return f"{call.func.name}: opinfo did not recognise this PrimFunc (nothing is offloaded on a guess)"
            for op in ops:
                why = self.backend.check(op)
                if why is not None:
                    return why
        return None

    def op_names(self, calls: list) -> tuple:
        return tuple(op.name for c in calls for op in self.ops(c))


def _kept(binding: R.Binding, func: str, ops: tuple, reason: str) -> Map:
    return Map({"binding": binding.var.name, "func": func, "ops": ops, "reason": reason})


def annotate_target(mod: IRModule, backend, analyze: "Callable | None" = None,
                    single_ops: bool = True) -> IRModule:
    """``mod`` with the units ``backend`` supports marked ``Target`` (see the module docstring)."""
    if analyze is None:
        from opinfo import analyze_in_network as analyze
    chk = _Checker(mod, backend, analyze)
    kept, wrap = list(mod.attrs.get("byoc.kept", ())), []
    items = attached_items(mod.main)
    for i, b in enumerate(mod.main.bindings):
        v = b.value
        if isinstance(v, R.Call) and "Composite" in getattr(mod[v.func.name], "attrs", {}):
            mod = _annotate_composite(mod, chk, b, kept)
        elif isinstance(v, R.CallTIR):
            why = chk.reason([v])
            if why is None and single_ops:
                wrap.append((i, chk.op_names([v])))
                continue
            kept.append(_kept(b, v.func.name, chk.op_names([v]), why or "not part of any selected pattern"))
        elif isinstance(v, R.OpCall):
            kept.append(_kept(b, f"R.{v.op}", (v.op,),
                              f"R.{v.op} was not lowered to a PrimFunc (an opaque Relax call: nothing to analyse)"))
    groups = [Group(tuple([i] + items.get(i, [])), f"composite_{backend.name}_{'_'.join(_short(n) for n in ops)}_{i}",
                    {"Composite": f"{backend.name}.{'+'.join(ops)}", "Primitive": True, "Target": backend.name})
              for i, ops in wrap]
    out = outline(mod, groups) if groups else mod
    out = _dry_run(out, backend, analyze, kept)
    return out.with_attr("byoc.kept", tuple(kept))


def _dry_run(mod: IRModule, backend, analyze: Callable, kept: list) -> IRModule:
    """Drop ``Target`` from composites the backend's ``check_function`` (if any) refuses:
    facts only known from shapes, or a converter's own refusal."""
    check = getattr(backend, "check_function", None)
    if check is None:
        return mod
    for b in mod.main.bindings:
        v = b.value
        if not isinstance(v, R.Call) or mod[v.func.name].attrs.get("Target") != backend.name:
            continue
        why = check(mod, v.func.name, analyze)
        if why is None:
            continue
        func = mod[v.func.name]
        kept.append(_kept(b, v.func.name, tuple(op.name for c in _prim_calls(mod, func)
                                                for op in analyze(mod[c.func.name]).ops), why))
        mod = mod.with_function(v.func.name, attrs.evolve(func, attrs=func.attrs.without("Target")))
    return mod


def _short(op_name: str) -> str:
    return op_name.split(".")[-1]


def _annotate_composite(mod: IRModule, chk: _Checker, binding: R.Binding, kept: list) -> IRModule:
    name = binding.value.func.name
    func = mod[name]
    calls = _prim_calls(mod, func)
    why = chk.reason(calls)
    if why is not None:
        kept.append(_kept(binding, name, chk.op_names(calls), why))
        return mod
    return mod.with_function(name, attrs.evolve(func, attrs=func.attrs.set("Target", chk.backend.name)))
