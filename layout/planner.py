"""``layout.plan(mod, targets)``: re-plan data layouts of a lowered module.

Walks ``main``'s bindings in order. For each ``call_tir`` it recovers the ops of the called
PrimFunc (``opinfo.analyze``), asks the per-op rules which layouts they can run in given the
layouts their inputs arrive in (target ops take their target layouts), converts the
PrimFunc in place with ``transform_layout`` and asks for each argument in the layout the
call needs. A value is kept in every layout it has been produced or transformed into, so a
transform is inserted only when a layout is missing, and converting back to a layout that
already exists reuses it (inverse pairs cancel). Ops with no rule, with abstained
recognition, or refused by their rule get their inputs in the original layout (the sound
fallback). Transforms of ``main``'s parameters go first in ``main`` (foldable ahead of time
for weights), and ``main``'s results are returned in their original layout.
"""
from __future__ import annotations

from tir.function import PrimFunc
from tir.module import IRModule
from tir.relax import CallTIR, Function

from .layout import Layout, LayoutError
from .graph_walk import GraphWalk
from .summary import PlanSummary


def normalize_targets(targets: dict) -> dict:
    """``{op: layout or (data, kernel)}`` with every layout string checked."""
    out = {}
    for op, value in (targets or {}).items():
        layouts = (value,) if isinstance(value, str) else tuple(value)
        if not layouts or len(layouts) > 2:
            raise LayoutError(f"target for {op}: expected a layout or (data, kernel) layouts, got {value!r}")
        for text in layouts:
            if text is not None:
                Layout.parse(text)
        out[op] = layouts[0] if len(layouts) == 1 else layouts
    return out


def plan(mod: IRModule, targets: dict, analyze=None) -> "tuple[IRModule, PlanSummary]":
    """The module with layouts re-planned for ``targets``, and a summary of what changed.

    ``targets`` maps op names to a layout (``"NHWC"``) or, for convolutions, a pair of data
    and kernel layouts (``("NHWC", "OHWI")``). ``analyze`` defaults to ``opinfo.analyze``.
    Raises LayoutError for a bad target and ValueError for a module without a graph main.
    """
    if analyze is None:
        from opinfo import analyze_in_network as analyze
    if not isinstance(mod.main, Function):
        raise ValueError("plan needs a module with a graph-level main (a Relax function of call_tir bindings)")
    walk = GraphWalk(mod, normalize_targets(targets), analyze)
    main = walk.run()
    return _assemble(mod, main, walk), walk.summary()


def _used_functions(main: Function) -> set:
    used = set()
    for b in main.bindings:
        if isinstance(b.value, CallTIR):
            used.add(b.value.func.name)
        func = getattr(b.value, "func", None)
        if func is not None and hasattr(func, "name"):
            used.add(func.name)
    return used


def _assemble(mod: IRModule, main: Function, walk: GraphWalk) -> IRModule:
    used = _used_functions(main)
    funcs = {}
    for name, f in mod.functions.items():
        if name == "main" or not isinstance(f, PrimFunc) or name in used:
            funcs[name] = main if name == "main" else f
    for name, f in walk.new_funcs.items():
        funcs[name] = f
    return IRModule(funcs, mod.attrs)


__all__ = ["plan", "normalize_targets"]
