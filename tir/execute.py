"""One entry point to execute IR: ``tir.run(func_or_module, *arrays, engine="interp" | "c")``.

A PrimFunc runs in destination-passing style: the arrays are its inputs (every parameter but
the last buffer, scalar parameters as numbers) and the last buffer parameter is allocated
(its symbolic extents bound from the inputs) and returned. A module runs its graph ``main``
(see :mod:`tir.graph_exec`), or its ``main``/only PrimFunc as above.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from .function import PrimFunc
from .interp_data import InterpError, np_dtype
from .module import IRModule

ENGINES = ("interp", "c")


def run(func_or_module, *arrays, engine: str = "interp", registry: "Mapping | None" = None):
    """Run a PrimFunc or an IRModule's main on numpy arrays; returns an array or a tuple of them."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    target = func_or_module
    if isinstance(target, IRModule):
        target = entry_function(target)
        if not isinstance(target, PrimFunc):
            from .graph_exec import GraphExecutor

            return GraphExecutor(func_or_module, engine=engine, registry=registry).run(*arrays)
    if not isinstance(target, PrimFunc):
        raise TypeError(f"run expects a PrimFunc or an IRModule, got {type(target).__name__}")
    return run_prim_func(target, arrays, engine)


def entry_function(module: IRModule):
    """The module's ``main``, or its only PrimFunc when it has no ``main``."""
    if module.main is not None:
        return module.main
    prims = module.prim_funcs()
    if len(prims) == 1:
        return prims[0][1]
    names = ", ".join(module.functions) or "none"
    raise InterpError(f"module has no 'main' and not exactly one PrimFunc (functions: {names})")


def run_prim_func(func: PrimFunc, inputs, engine: str = "interp", runner=None):
    """Allocate the output of ``func`` from the inputs, run it, and return the output."""
    out_param = _output_param(func)
    params = [p for p in func.params if p is not out_param]
    if len(inputs) != len(params):
        raise InterpError(f"{func.name or 'prim_func'}: expects {len(params)} inputs, got {len(inputs)}")
    out_buf = func.buffer_map[out_param]
    shape = output_shape(func, params, inputs, out_buf)
    out = np.zeros(shape, dtype=np_dtype(out_buf.dtype))
    args = list(inputs)
    args.insert(func.params.index(out_param), out)
    call = runner if runner is not None else prim_runner(func, engine)
    call(*args)
    return out


def _output_param(func: PrimFunc):
    buffers = [p for p in func.params if p in func.buffer_map]
    if not buffers:
        raise InterpError(f"{func.name or 'prim_func'}: has no buffer parameter to return")
    return buffers[-1]


def prim_runner(func: PrimFunc, engine: str):
    """A callable running ``func`` in destination-passing style with the chosen engine."""
    if engine == "c":
        from .codegen_c import build

        return build(func)
    from .interp import interpret

    return lambda *args: interpret(func, *args)


def output_shape(func: PrimFunc, params, inputs, out_buf) -> tuple:
    """The output buffer's shape with symbolic extents bound from the inputs' shapes."""
    from . import expr as E
    from .interp_expr import Ctx, evaluate

    ctx = Ctx(where=f"function {func.name or 'prim_func'!r}")
    for p, value in zip(params, inputs):
        if p not in func.buffer_map:
            ctx.vars[p] = np_dtype(p.dtype).type(value)
            continue
        buf = func.buffer_map[p]
        for extent, actual in zip(buf.shape, np.shape(value)):
            if isinstance(extent, E.Var) and extent not in ctx.vars:
                ctx.vars[extent] = np_dtype(extent.dtype).type(actual)
    try:
        return tuple(int(evaluate(x, ctx)) for x in out_buf.shape)
    except InterpError:
        raise InterpError(
            f"{func.name or 'prim_func'}: the shape of output {out_buf.name!r} cannot be derived from the inputs"
        ) from None
