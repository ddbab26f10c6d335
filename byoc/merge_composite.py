"""Pass ``merge_composite``: each pattern match becomes a composite function.

The bindings of a match (its ``call_tir``s and the tuple items reading them) move into a
private graph function with attributes ``{"Composite": <pattern name>, "Primitive": True}``;
main calls it in their place. Matches come from :func:`byoc.match.find_matches`: patterns
earlier in the list win; a fused PrimFunc is taken whole or not at all.
"""
from __future__ import annotations

import re
from typing import Callable

from tir.module import IRModule

from .dataflow import attached_items
from .graph import build_graph
from .match import find_matches
from .outline import Group, outline


def composite_name(pattern: str, k: int) -> str:
    """A module-level name for the k-th composite of ``pattern``."""
    return f"composite_{re.sub(r'[^0-9A-Za-z_]', '_', pattern)}_{k}"


def merge_composite(mod: IRModule, patterns, analyze: "Callable | None" = None,
                    num_input: "int | None" = None) -> IRModule:
    """``mod`` with every match of ``patterns`` (``[(name, Pattern), ...]``) outlined.

    Returns ``mod`` itself when nothing matched.
    """
    graph = build_graph(mod, analyze, num_input)
    matches = find_matches(graph, list(patterns))
    if not matches:
        return mod
    items = attached_items(mod.main)
    taken = {n for n in mod.functions}
    groups = []
    for k, m in enumerate(sorted(matches, key=lambda m: m.root)):
        calls = sorted({graph.nodes[n].binding for n in m.nodes})
        members = tuple(sorted(set(calls) | {i for c in calls for i in items.get(c, ())}))
        name = _unique(composite_name(m.pattern, k), taken)
        groups.append(Group(members, name, {"Composite": m.pattern, "Primitive": True}))
    return outline(mod, groups)


def _unique(name: str, taken: set) -> str:
    base, k = name, 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name
