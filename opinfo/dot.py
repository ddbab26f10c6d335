"""The graph of recovered ops of a module, as Graphviz DOT (``opinfo analyze --dot``).

One node per ``call_tir`` (labelled with the ops recovered from its PrimFunc), one per input
of ``main``; edges follow the dataflow. Graph functions called from ``main`` are drawn
inline: functions with a ``Compiler`` attribute (offloaded regions, ``opinfo byoc``) become
a shaded cluster named after the backend, composite functions are drawn through. Layout and
data-movement ops (``layout_transform``, ``permute_dims``, the reshape family) are drawn as
blue diamonds, so the transforms a layout plan inserted stand out; functions opinfo did not
recognise are dashed red.
"""
from __future__ import annotations

from typing import Callable

from tir.function import PrimFunc
from tir.module import IRModule
from tir.relax import Call, CallDPSPacked, CallTIR, Function, RVar, Tuple, TupleGetItem

MOVEMENT = {"layout_transform", "permute_dims", "reshape", "expand_dims", "squeeze", "flatten"}


def _quote(text: str) -> str:
    """A DOT string literal; newlines become DOT line breaks."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class _Drawing:
    def __init__(self, mod: IRModule, analyze: Callable):
        self.mod = mod
        self.analyze = analyze
        self.infos: dict = {}
        self.lines: list = []
        self.clusters: dict = {}
        self.count = 0

    def info(self, name: str):
        if name not in self.infos:
            self.infos[name] = self.analyze(self.mod[name], name)
        return self.infos[name]

    def node(self, label: str, style: str, region: "str | None") -> str:
        self.count += 1
        ident = f"n{self.count}"
        line = f"  {ident} [label={_quote(label)}, {style}];"
        (self.clusters.setdefault(region, []) if region else self.lines).append(line)
        return ident

    def call_tir_node(self, name: str, region: "str | None") -> str:
        info = self.info(name)
        ops = [op.name for op in info.ops]
        label = f"{name}\n{', '.join(ops) if ops else '(not recognised)'}"
        if not ops:
            style = 'shape=box, style=dashed, color=red'
        elif all(op in MOVEMENT for op in ops):
            style = 'shape=diamond, style=filled, fillcolor="#d6e9ff"'
        else:
            style = 'shape=box, style="rounded,filled", fillcolor=white'
        return self.node(label, style, region)

    def sources(self, value, env: dict) -> list:
        """The node ids a graph value comes from."""
        if isinstance(value, RVar):
            return env.get(id(value), [])
        if isinstance(value, Tuple):
            return [s for f in value.fields for s in self.sources(f, env)]
        if isinstance(value, TupleGetItem):
            return self.sources(value.tuple_value, env)
        return []

    def edges(self, args, env: dict, target: str) -> None:
        for a in args:
            for s in self.sources(a, env):
                self.lines.append(f"  {s} -> {target};")

    def function(self, func: Function, env: dict, region: "str | None") -> list:
        """Draw the bindings of ``func``; the nodes its return value comes from."""
        for b in func.bindings:
            env[id(b.var)] = self.binding(b.value, env, region)
        return self.sources(func.ret, env)

    def binding(self, value, env: dict, region: "str | None") -> list:
        if isinstance(value, CallTIR):
            ident = self.call_tir_node(value.func.name, region)
            self.edges(value.args, env, ident)
            return [ident]
        callee = None
        if isinstance(value, Call):
            callee = value.func.name
        elif isinstance(value, CallDPSPacked):
            callee = value.func
        if callee is not None:
            return self.call(callee, value.args, env, region)
        return self.sources(value, env)

    def call(self, callee: str, args, env: dict, region: "str | None") -> list:
        func = self.mod.functions.get(callee)
        if not isinstance(func, Function):
            ident = self.node(f"{callee}\n(external)", 'shape=box, style=filled, fillcolor="#ffd8a8"', region)
            self.edges(args, env, ident)
            return [ident]
        inner = {id(p): self.sources(a, env) for p, a in zip(func.params, args)}
        compiler = func.attrs.get("Compiler")
        inner_region = f"{callee} ({compiler})" if compiler else region
        return self.function(func, inner, inner_region)

    def text(self, title: str) -> str:
        out = [f"digraph {_quote(title)} {{", "  rankdir=TB;", '  node [fontname="Helvetica", fontsize=10];']
        for k, (region, lines) in enumerate(self.clusters.items()):
            out.append(f"  subgraph cluster_{k} {{")
            out.append(f'    label={_quote(region)}; style=filled; fillcolor="#fff0e0"; color="#e8590c";')
            out.extend("  " + line for line in lines)
            out.append("  }")
        out.extend(self.lines)
        out.append("}")
        return "\n".join(out)


def module_dot(mod: IRModule, title: str = "module", analyze: "Callable | None" = None) -> str:
    """DOT text of the op graph of ``mod`` (its ``main``; or its PrimFuncs when it has none)."""
    if analyze is None:
        from .api import analyze_in_network as analyze
    drawing = _Drawing(mod, analyze)
    main = mod.main
    if isinstance(main, Function):
        env = {}
        for p in main.params:
            env[id(p)] = [drawing.node(p.name, "shape=ellipse, color=gray40", None)]
        drawing.function(main, env, None)
    else:
        for name, f in mod.prim_funcs():
            if isinstance(f, PrimFunc):
                drawing.call_tir_node(name, None)
    return drawing.text(title)
