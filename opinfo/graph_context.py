"""What the graph-level ``main`` of a module tells about one of its PrimFuncs.

Legalization drops an operand that only lends its shape: ``full_like(x, v)`` becomes a
PrimFunc that reads nothing (the loops of ``full``), ``collapse_sum_like(x, y)`` one that
reads only ``x`` (the loops of ``sum``). ``main`` still shows them: ``x`` (``y``) stays a
parameter that no binding uses. This module collects, cheaply and without ever raising on
an odd module (no ``main``, ``main`` a PrimFunc, tuples, symbolic or unknown shapes):

- the call sites of each PrimFunc in ``main`` (``call_tir`` args, their types, the output
  type), with, per call site, the types of every tensor of ``main`` that is neither the
  call's own result nor computed from it;
- the tensor parameters of ``main`` that no binding (and not the return value) uses.

:func:`.graph_naming.name_in_context` uses it to name creation ops and ``*_like`` ops.
Shapes are compared through :func:`dims_key` (an int per constant extent, the printed
expression per symbolic one: the shapes of ``main`` share their symbolic variables).
"""
from __future__ import annotations

import attrs

from tir.functor import pre_order_visit
from tir.relax import (Call, CallDPSPacked, CallTIR, Constant, Function, GlobalVar, RVar, ShapeType,
                       TensorType, Tuple, TupleGetItem, TupleType)

UNKNOWN = None
"""A tensor whose type is not known (it could have any shape)."""


def dims_key(shape) -> "tuple | None":
    """A comparable form of a shape: ints for constant extents, text for symbolic ones."""
    if shape is None:
        return None
    out = []
    for d in shape:
        if isinstance(d, bool):
            return None
        if isinstance(d, int):
            out.append(d)
            continue
        value = getattr(d, "value", None)
        if isinstance(value, int) and not isinstance(value, bool):
            out.append(value)
        else:
            out.append(str(d))
    return tuple(out)


class CallSite:
    """One ``var = R.call_tir(func, args, out_ty)`` binding of ``main``."""

    __slots__ = ("args", "arg_types", "out_type", "_var", "_graph", "_others")

    @property
    def consumers(self) -> tuple:
        """``(value, types)`` of every binding of ``main`` that uses this call's result
        (``types``: its positional arguments' types); a use by ``main``'s return value is
        ``(None, ())``."""
        return tuple(self._graph.consumers.get(id(self._var), ()))

    @property
    def var(self):
        """The variable the call's result is bound to."""
        return self._var

    def __init__(self, args: tuple, arg_types: tuple, out_type, var, graph: "_Graph"):
        self.args = args
        """The graph-level argument expressions."""
        self.arg_types = arg_types
        """Their types (TensorType, TupleType, ... or None when unknown)."""
        self.out_type = out_type
        """The declared output type."""
        self._var, self._graph, self._others = var, graph, None

    @property
    def others(self) -> tuple:
        """Types of the tensors of ``main`` (parameters and bindings, tuple fields
        flattened) that are neither this call's result nor computed from it; None entries
        are tensors of unknown type. Computed on first use."""
        if self._others is None:
            self._others = self._graph.others(self._var)
        return self._others


class _Graph:
    """The variables of ``main`` in order, their types and the variables each binding uses."""

    def __init__(self):
        self.order: list = []  # RVar, parameters first
        self.types: dict = {}  # id(RVar) -> type
        self.uses: dict = {}  # id(RVar) -> ids of the variables its binding uses
        self.consumers: dict = {}  # id(RVar) -> [(binding value, its args' types)] using it

    def others(self, var) -> tuple:
        derived = {id(var)}
        out = []
        for v in self.order:
            if id(v) in derived or self.uses.get(id(v), set()) & derived:
                derived.add(id(v))
                continue
            out.extend(_tensor_types(self.types.get(id(v))))
        return tuple(out)


@attrs.frozen
class FuncContext:
    """What ``main`` tells about one PrimFunc: its call sites and ``main``'s unused parameters."""

    calls: tuple
    """CallSite per call of the PrimFunc in ``main`` (every use of it is such a call)."""
    unused: tuple
    """(name, TensorType or None when not a known tensor type) of each parameter of
    ``main`` that nothing uses, shapes and tuples left out."""
    graph: bool = False
    """``main`` calls other PrimFuncs too: the function is one kernel of a graph."""
    network: bool = False
    """``main`` looks like a network a framework importer wrote (:func:`is_network`): the
    function is one op of it, not an op lowered on its own or one kernel of a small graph."""


NETWORK_CALLS = 8
"""A ``main`` making at least this many PrimFunc calls is read as a network."""


def is_network(calls_per_func: list) -> bool:
    """Whether a ``main`` calling each PrimFunc ``calls_per_func[i]`` times is a network an
    importer wrote: a kernel shared by several call sites (a layer repeated with the same
    shapes), or many calls. A graph of a few distinct kernels (an op lowered on its own, a
    small graph after FuseOps) is not: the importers' conventions are not its own."""
    return any(n > 1 for n in calls_per_func) or sum(calls_per_func) >= NETWORK_CALLS


class ModuleContext:
    """Contexts of the PrimFuncs of a module (see the module doc); ``for_function(name)``
    is None when ``main`` is missing or is not a graph-level function, or when the
    PrimFunc is referenced anywhere other than a ``call_tir`` binding of ``main``."""

    def __init__(self, mod):
        self._funcs: dict = {}
        try:
            self._build(mod)
        except Exception:  # an odd module gives no context, never an error
            self._funcs = {}

    def for_function(self, name: str) -> "FuncContext | None":
        return self._funcs.get(name)

    def _build(self, mod) -> None:
        main = getattr(mod, "main", None)
        if not isinstance(main, Function):
            return
        prim_names = {n for n, _ in mod.prim_funcs()}
        graph_funcs = dict(mod.graph_funcs())
        refs = _references(mod, prim_names)
        g = _Graph()
        for p in main.params:
            g.types[id(p)] = p.type
            g.order.append(p)
        used = set()
        by_name: dict = {}
        for b in main.bindings:
            direct = _vars_in(b.value)
            used |= direct
            g.uses[id(b.var)] = direct
            arg_types = tuple(_type_of(a, g.types, graph_funcs) for a in getattr(b.value, "args", ()))
            for v in direct:
                g.consumers.setdefault(v, []).append((b.value, arg_types))
            g.types[id(b.var)] = b.var.type if b.var.type is not None else _type_of(b.value, g.types, graph_funcs)
            g.order.append(b.var)
            call = b.value
            if isinstance(call, CallTIR) and call.func.name in prim_names:
                site = CallSite(tuple(call.args), tuple(_type_of(a, g.types, graph_funcs) for a in call.args),
                                call.out_type, b.var, g)
                by_name.setdefault(call.func.name, []).append(site)
        returned = _vars_in(main.ret)
        used |= returned
        for v in returned:
            g.consumers.setdefault(v, []).append((None, ()))
        # an unused shape or tuple is no operand of a ``*_like``; a parameter of unknown or
        # object type may hold a tensor (its type None: any shape)
        unused = tuple((p.name, p.type if isinstance(p.type, TensorType) else None) for p in main.params
                       if id(p) not in used and not isinstance(p.type, (ShapeType, TupleType)))
        counts = [len(calls) for calls in by_name.values()]
        network = is_network(counts)
        for name, calls in by_name.items():
            if refs.get(name, 0) == len(calls):
                self._funcs[name] = FuncContext(tuple(calls), unused, sum(counts) > 1, network)


def _references(mod, names: set) -> dict:
    """How often each PrimFunc name is referenced from the module's graph-level functions."""
    count: dict = {}
    for _, f in mod.graph_funcs():
        def visit(n):
            if isinstance(n, GlobalVar) and n.name in names:
                count[n.name] = count.get(n.name, 0) + 1
            return True
        pre_order_visit(f, visit)
    return count


def _vars_in(expr) -> set:
    """ids of the graph-level variables an expression uses."""
    found = set()

    def visit(n):
        if isinstance(n, RVar):
            found.add(id(n))
        return True
    if expr is not None:
        pre_order_visit(expr, visit)
    return found


def _type_of(expr, types: dict, graph: dict):
    """The type of a graph-level expression, None when it is not known."""
    if isinstance(expr, RVar):
        return types.get(id(expr), expr.type)
    if isinstance(expr, (CallTIR, CallDPSPacked)):
        return expr.out_type
    if isinstance(expr, Constant):
        return expr.type
    if isinstance(expr, Tuple):
        return TupleType(tuple(_type_of(f, types, graph) for f in expr.fields))
    if isinstance(expr, TupleGetItem):
        t = _type_of(expr.tuple_value, types, graph)
        if isinstance(t, TupleType) and 0 <= expr.index < len(t.fields):
            return t.fields[expr.index]
        return None
    if isinstance(expr, Call):
        callee = graph.get(expr.func.name)
        return callee.ret_type if callee is not None else None
    return None


def _tensor_types(t) -> list:
    """The tensor types a value of type ``t`` holds (None: a value of unknown type)."""
    if isinstance(t, TensorType):
        return [t]
    if isinstance(t, TupleType):
        out = []
        for f in t.fields:
            out.extend(_tensor_types(f))
        return out
    if isinstance(t, ShapeType):
        return []  # a shape is not a tensor
    return [UNKNOWN]  # unknown, or R.Object: could be a tensor of any shape
