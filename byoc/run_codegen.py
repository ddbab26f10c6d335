"""Pass ``run_codegen``: compile each ``Compiler`` function; main calls it by symbol.

Each function with a ``Compiler`` attribute is handed to that backend, which returns an
:class:`~byoc.backend.ExternalModule`. In main, ``cls.<region>(args)`` becomes
``R.call_dps_packed("<region>", args, out_ty)``. The compiled modules are attached as the
module attribute ``"external_mods"`` (``{symbol: module}``, what the graph executor
looks up). The ``Compiler`` functions stay in the module: they are what a printed module
keeps, and :func:`load_externals` rebuilds the external modules from them on load.
"""
from __future__ import annotations

from typing import Callable

import attrs

from tir import relax as R
from tir.module import IRModule
from tir.node import Map

from .backend import default_registry


def compiler_functions(mod: IRModule) -> list:
    """(name, function) of every graph function with a ``Compiler`` attribute."""
    return [(n, f) for n, f in mod.graph_funcs() if "Compiler" in f.attrs]


def load_externals(mod: IRModule, registry=None, analyze: "Callable | None" = None) -> dict:
    """``{symbol: ExternalModule}`` for the Compiler functions of ``mod`` (compiled now)."""
    registry = registry if registry is not None else default_registry()
    return {name: registry[f.attrs["Compiler"]].codegen(mod, name, analyze) for name, f in compiler_functions(mod)}


def _to_packed(main: R.Function, mod: IRModule, symbols: set) -> R.Function:
    bindings = []
    for b in main.bindings:
        v = b.value
        if isinstance(v, R.Call) and v.func.name in symbols:
            v = R.CallDPSPacked(v.func.name, v.args, mod[v.func.name].ret_type)
            b = R.Binding(b.var, v)
        bindings.append(b)
    outputs = tuple(o for blk in main.blocks if isinstance(blk, R.DataflowBlock) for o in blk.outputs)
    return attrs.evolve(main, blocks=(R.DataflowBlock(tuple(bindings), outputs),))


def _compile_all(mod: IRModule, registry, analyze) -> tuple:
    """(externals, mod): a region whose codegen fails loses its Compiler attribute (it then
    runs in TIR as a plain graph function) and is listed in ``byoc.kept`` with the reason."""
    from .region import Unsupported

    registry = registry if registry is not None else default_registry()
    externals, kept = {}, list(mod.attrs.get("byoc.kept", ()))
    for name, f in compiler_functions(mod):
        try:
            externals[name] = registry[f.attrs["Compiler"]].codegen(mod, name, analyze)
        except (Unsupported, RuntimeError) as err:
            kept.append(Map({"binding": name, "func": name, "ops": (), "reason": f"codegen failed: {err}"}))
            plain = Map((k, v) for k, v in f.attrs.items() if k not in ("Compiler", "global_symbol"))
            mod = mod.with_function(name, attrs.evolve(f, attrs=plain))
    return externals, mod.with_attr("byoc.kept", tuple(kept))


def run_codegen(mod: IRModule, registry=None, analyze: "Callable | None" = None) -> IRModule:
    """``mod`` with its regions compiled and called through ``call_dps_packed``."""
    externals, mod = _compile_all(mod, registry, analyze)
    if not externals:
        return mod
    main = _to_packed(mod.main, mod, set(externals))
    previous = dict(mod.attrs.get("external_mods", {}))
    previous.update(externals)
    return mod.with_function("main", main).with_attr("external_mods", Map(previous))


def strip_externals(mod: IRModule) -> IRModule:
    """``mod`` without the compiled modules (e.g. before printing it)."""
    if "external_mods" not in mod.attrs:
        return mod
    return attrs.evolve(mod, attrs=mod.attrs.without("external_mods"))
