"""byoc: bring your own codegen, after lowering.

Patterns over the ops opinfo recovers from lowered PrimFuncs; passes that turn matches into
composite functions, mark what a backend supports, merge regions and partition them; and
backends (``onnxruntime``, ``c``) that compile the regions into external modules called
from ``main`` with ``call_dps_packed``.

    mod = byoc.partition(mod, "onnxruntime")
    out = tir.run(mod, *arrays)                      # external modules in mod.attrs

Names are loaded on first use (no backend registers itself on import).
"""
from __future__ import annotations

from tir.lazy import lazy_getattr

_LAZY = {
    "is_op": "pattern", "wildcard": "pattern", "is_input": "pattern", "is_param": "pattern",
    "is_const": "pattern", "Pattern": "pattern",
    "build_graph": "graph", "match": "match", "find_matches": "match",
    "merge_composite": "merge_composite", "annotate_target": "annotate_target",
    "merge_compiler_regions": "merge_regions", "partition_graph": "partition_graph",
    "run_codegen": "run_codegen", "load_externals": "run_codegen", "strip_externals": "run_codegen",
    "partition": "pipeline", "summary": "pipeline", "memoized": "pipeline",
    "default_registry": "backend", "Registry": "backend", "ExternalModule": "backend",
    "Unsupported": "region",
}


__getattr__ = lazy_getattr(__name__, _LAZY)
