"""The graph of recovered ops of a module's ``main``: what patterns are matched against.

Every ``call_tir`` binding of ``main`` is analysed with :func:`opinfo.analyze`; each op it
recovers becomes one :class:`OpNode`, so the op sequence of a fused PrimFunc is seen exactly
like separate calls. An operand of an op comes from a :class:`Leaf` (a parameter of
``main`` or a constant), from another op (:class:`NodeOut`), or from something opinfo did
not recognise (:class:`Opaque`: only a wildcard matches it).

Parameters: the first ``num_input`` parameters of ``main`` (``R.func_attr({"num_input":
k})``) are inputs, the rest are weights; without the attribute every parameter is an input
unless ``num_input`` is given to :func:`build_graph`. Constants count as weights.
"""
from __future__ import annotations

from typing import Callable

import attrs

from tir import relax as R
from tir.module import IRModule

INPUT, PARAM, CONST = "input", "param", "const"


@attrs.frozen
class Leaf:
    """A value from outside the ops: a parameter of ``main`` or a constant."""

    value: object
    """The RVar parameter or the Constant."""
    kind: str
    """INPUT (a runtime input), PARAM (a weight parameter) or CONST (a constant)."""


@attrs.frozen
class NodeOut:
    """The result of op node ``node``."""

    node: int


@attrs.frozen
class Opaque:
    """Output ``index`` of binding ``binding`` that no recovered op produces."""

    binding: int
    index: int = 0


@attrs.frozen(eq=False)
class OpNode:
    """One recovered op, located in the binding that computes it."""

    index: int
    info: object
    """The OpInfo."""
    binding: int
    """Index of its ``call_tir`` binding in ``main.bindings``."""
    args: tuple
    """Source (Leaf, NodeOut or Opaque) of each operand, in operand order."""


@attrs.frozen(eq=False)
class OpGraph:
    """The op nodes in dataflow order, with who uses what."""

    main: R.Function
    nodes: tuple
    binding_nodes: tuple
    """For each binding of main: the indices of its op nodes (empty: not recognised)."""
    users: tuple
    """For each node: the indices of the nodes reading its result."""
    external_uses: frozenset
    """Nodes whose result is used by an unrecognised binding or returned by main."""

    def node_ops(self, binding: int) -> tuple:
        """The OpInfos of one binding."""
        return tuple(self.nodes[i].info for i in self.binding_nodes[binding])


def input_count(main: R.Function, num_input: "int | None" = None) -> int:
    """How many leading parameters of ``main`` are runtime inputs (the rest are weights)."""
    if num_input is not None:
        return num_input
    value = main.attrs.get("num_input")
    return int(value) if value is not None else len(main.params)


def call_outputs(binding_value) -> int:
    """Number of outputs of a call_tir (1, or the fields of a tuple output)."""
    ty = binding_value.out_type
    return len(ty.fields) if isinstance(ty, R.TupleType) else 1


class _Builder:
    """Walks main's bindings once, turning each into op nodes."""

    def __init__(self, mod: IRModule, analyze: Callable, num_input: "int | None"):
        self.mod = mod
        self.analyze = analyze
        self.main = mod.main
        n_in = input_count(self.main, num_input)
        self.source: dict = {p: Leaf(p, INPUT if i < n_in else PARAM) for i, p in enumerate(self.main.params)}
        self.nodes: list = []
        self.binding_nodes: list = []
        self.infos: dict = {}

    def func_info(self, name: str):
        info = self.infos.get(name)
        if info is None:
            info = self.infos[name] = self.analyze(self.mod[name])
        return info

    def value_source(self, expr):
        if isinstance(expr, R.Constant):
            return Leaf(expr, CONST)
        src = self.source.get(expr)
        return src if src is not None else Opaque(-1)

    def add_binding(self, i: int, binding: R.Binding) -> None:
        value = binding.value
        if isinstance(value, R.TupleGetItem):
            self.binding_nodes.append(())
            self.source[binding.var] = self._item_source(value, i)
            return
        if not isinstance(value, R.CallTIR):
            self.binding_nodes.append(())
            self.source[binding.var] = Opaque(i)
            return
        self.binding_nodes.append(self._add_call(i, binding))

    def _item_source(self, value: R.TupleGetItem, i: int):
        whole = self.source.get(value.tuple_value)
        if isinstance(whole, tuple):
            return whole[value.index]
        return Opaque(i, value.index)

    def _add_call(self, i: int, binding: R.Binding) -> tuple:
        call = binding.value
        ops = self.func_info(call.func.name).ops
        n_args, n_out = len(call.args), call_outputs(call)
        by_buffer, made = {}, []
        for op in ops:
            args = tuple(self._operand_source(o, call, by_buffer) for o in op.operands)
            node = OpNode(len(self.nodes), op, i, args)
            self.nodes.append(node)
            made.append(node.index)
            if op.output is not None:
                by_buffer[op.output.buffer] = NodeOut(node.index)
        outs = [Opaque(i, k) for k in range(n_out)]
        for idx in made:
            out = self.nodes[idx].info.output
            if out is not None and out.param is not None and 0 <= out.param - n_args < n_out:
                outs[out.param - n_args] = NodeOut(idx)
        self.source[binding.var] = tuple(outs) if n_out > 1 else outs[0]
        return tuple(made)

    def _operand_source(self, operand, call, by_buffer):
        if operand.param is None:
            return by_buffer.get(operand.buffer, Opaque(-1))
        if operand.param < len(call.args):
            return self.value_source(call.args[operand.param])
        return Opaque(-1)


def build_graph(mod: IRModule, analyze: "Callable | None" = None, num_input: "int | None" = None) -> OpGraph:
    """The op graph of ``mod.main`` (see the module docstring for inputs vs weights)."""
    if not isinstance(mod.main, R.Function):
        raise ValueError("module has no graph-level 'main' to partition")
    if analyze is None:
        from opinfo import analyze_in_network as analyze
    b = _Builder(mod, analyze, num_input)
    for i, binding in enumerate(mod.main.bindings):
        b.add_binding(i, binding)
    users = [[] for _ in b.nodes]
    for node in b.nodes:
        for src in node.args:
            if isinstance(src, NodeOut):
                users[src.node].append(node.index)
    external = _external_uses(mod.main, b)
    return OpGraph(mod.main, tuple(b.nodes), tuple(b.binding_nodes), tuple(tuple(u) for u in users), external)


def _external_uses(main: R.Function, b: _Builder) -> frozenset:
    """Nodes whose value flows out through something other than an op operand."""
    from .dataflow import used_vars

    out = set()
    for i, binding in enumerate(main.bindings):
        if b.binding_nodes[i] or isinstance(binding.value, R.TupleGetItem):
            continue
        for v in used_vars(binding.value):
            out.update(_node_ids(b.source.get(v)))
    for v in used_vars(main.ret):
        out.update(_node_ids(b.source.get(v)))
    return frozenset(out)


def _node_ids(src) -> list:
    if isinstance(src, NodeOut):
        return [src.node]
    if isinstance(src, tuple):
        return [s.node for s in src if isinstance(s, NodeOut)]
    return []
