"""The whole BYOC flow as one call, and a summary of what it did.

    mod = byoc.partition(mod, "onnxruntime")        # merge_composite -> annotate_target ->
                                                    # merge_compiler_regions -> partition_graph
                                                    # -> run_codegen
"""
from __future__ import annotations

from typing import Callable

from tir.module import IRModule

from .annotate_target import annotate_target
from .backend import UnknownName, default_registry
from .merge_composite import merge_composite
from .merge_regions import merge_compiler_regions
from .partition_graph import partition_graph
from .run_codegen import compiler_functions, run_codegen


def select_patterns(backend, names: "list | None") -> list:
    """The backend's patterns, or only those named (with or without the backend prefix)."""
    pats = backend.patterns()
    if not names:
        return pats
    by_name = {}
    for n, p in pats:
        by_name[n] = (n, p)
        by_name[n.split(".", 1)[-1]] = (n, p)
    missing = [n for n in names if n not in by_name]
    if missing:
        known = ", ".join(n for n, _ in pats) or "none"
        raise UnknownName(f"backend {backend.name!r} has no pattern {', '.join(missing)}; known: {known}")
    return [by_name[n] for n in names]


def memoized(analyze: "Callable | None" = None) -> Callable:
    """``analyze`` (default :func:`opinfo.analyze_in_network`) answering each PrimFunc once.

    Every pass of the flow reads the same kernels (the op graph, the target check, the dry
    run, each region's flattening, codegen, the summary): a network's kernels were analysed
    four to six times each. Keyed by the function object, which the passes never rebuild
    (PrimFuncs are immutable); the function is kept alive beside its answer so that its id
    cannot be reused."""
    if analyze is None:
        from opinfo import analyze_in_network as analyze
    if getattr(analyze, "memo", None) is not None:
        return analyze
    memo: dict = {}

    def cached(prim_func):
        hit = memo.get(id(prim_func))
        if hit is None:
            hit = memo[id(prim_func)] = (prim_func, analyze(prim_func))
        return hit[1]

    cached.memo = memo
    return cached


def partition(mod: IRModule, backend: str = "onnxruntime", patterns: "list | None" = None,
              registry=None, analyze: "Callable | None" = None, codegen: bool = True,
              num_input: "int | None" = None) -> IRModule:
    """Offload what ``backend`` supports. With ``patterns`` (names), only those composites
    are offloaded; without, the backend's patterns and then every supported single op.
    ``analyze`` is wrapped with :func:`memoized` (pass the same memoized function to
    :func:`summary` to reuse its answers)."""
    registry = registry if registry is not None else default_registry()
    analyze = memoized(analyze)
    be = registry[backend]
    mod = merge_composite(mod, select_patterns(be, patterns), analyze, num_input)
    mod = annotate_target(mod, be, analyze, single_ops=not patterns)
    mod = merge_compiler_regions(mod)
    mod = partition_graph(mod)
    return run_codegen(mod, registry, analyze) if codegen else mod


def summary(mod: IRModule, analyze: "Callable | None" = None) -> dict:
    """``{"regions": [{backend, symbol, ops: [{op, attrs}]}], "kept": [...]}`` of a partitioned module."""
    from .region import flatten

    analyze = memoized(analyze)
    regions = []
    for name, func in compiler_functions(mod):
        region = flatten(mod, name, analyze)
        ops = [{"op": s.info.name, "attrs": _plain(s.info.attrs)} for s in region.ops]
        regions.append({"backend": func.attrs["Compiler"], "symbol": name, "ops": ops})
    kept = [_plain(k) for k in mod.attrs.get("byoc.kept", ())]
    return {"regions": regions, "kept": kept}


def _plain(value):
    from collections.abc import Mapping

    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value
