"""A region function flattened for a backend: its calls and its recovered ops over named values.

A ``Compiler`` function (from ``partition_graph``) calls composite functions, which hold
``call_tir``s. :func:`flatten` inlines them all into one list of :class:`CallStep` (for
backends that reuse the PrimFuncs, like ``c``) and one list of :class:`OpStep` (for
backends that rebuild the ops from their recovered attributes, like ``onnxruntime``), both
over string-named values. Values inside a fused PrimFunc are named too.
"""
from __future__ import annotations

from typing import Callable

import attrs

from tir import relax as R
from tir.expr import as_int
from tir.module import IRModule
from tir.stmt import Block
from tir.functor import post_order_visit

from .graph import call_outputs


class Unsupported(Exception):
    """The region cannot be handled; the message says why."""


def constant_value(const, name: str):
    """The value of a region's graph constant (a numpy array); Unsupported when the script
    does not hold it (TVM printed ``metadata[...]`` without its metadata section)."""
    from tir.graph_exec import constant_array

    if const.data is None:
        raise Unsupported(f"the value of constant {const.ref or name} is not in the script (TVM printed "
                          "it without its metadata section): an external module cannot hold it")
    return constant_array(const)


@attrs.frozen
class OpStep:
    """One recovered op over named values."""

    info: object
    inputs: tuple
    output: str


@attrs.frozen
class CallStep:
    """One ``call_tir`` over named values (outputs in order)."""

    func: str
    inputs: tuple
    outputs: tuple


@attrs.frozen
class Region:
    """What a backend needs to compile one region."""

    symbol: str
    params: tuple
    """Names of the region's inputs, in call order."""
    outputs: tuple
    """Names of the region's results, in order."""
    types: dict = attrs.field(eq=False)
    """Graph types of the params and outputs, by name."""
    shapes: dict = attrs.field(eq=False)
    """Static shapes of values where known (tuples of ints), by name."""
    consts: dict = attrs.field(eq=False)
    """Constants used by the region: name -> R.Constant."""
    dtypes: dict = attrs.field(eq=False, factory=dict)
    """numpy dtypes of values where known, by name."""
    calls: tuple = ()
    ops: tuple = ()


def buffer_shapes(func) -> dict:
    """``{buffer name: (static shape or None, numpy dtype)}`` for a PrimFunc's parameters and allocations."""
    from tir.interp_data import np_dtype

    bufs = list(func.buffers)

    def visit(n):
        if isinstance(n, Block):
            bufs.extend(n.alloc_buffers)

    post_order_visit(func.body, visit)
    out = {}
    for b in bufs:
        dims = [as_int(d) for d in b.shape]
        shape = None if any(d is None for d in dims) else tuple(dims)
        out.setdefault(b.name, (shape, np_dtype(b.dtype)))
    return out


def _static(ty) -> "tuple | None":
    if not isinstance(ty, R.TensorType) or ty.shape is None:
        return None
    dims = [d if isinstance(d, int) else as_int(d) for d in ty.shape]
    return None if any(d is None for d in dims) else tuple(dims)


class _Flattener:
    def __init__(self, mod: IRModule, analyze: Callable):
        self.mod = mod
        self.analyze = analyze
        self.infos: dict = {}
        self.calls: list = []
        self.ops: list = []
        self.shapes: dict = {}
        self.dtypes: dict = {}
        self.consts: dict = {}
        self.count = 0

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def value(self, expr, env: dict):
        if isinstance(expr, R.Constant):
            name = self.fresh("const")
            self.consts[name] = expr
            self.shapes[name] = _static(expr.type)
            return name
        if isinstance(expr, R.Tuple):
            return tuple(self.value(f, env) for f in expr.fields)
        if isinstance(expr, R.TupleGetItem):
            return self.value(expr.tuple_value, env)[expr.index]
        if isinstance(expr, R.RVar):
            return env[expr]
        if isinstance(expr, R.Call):
            return self.call_graph(expr, env)
        if isinstance(expr, R.CallTIR):
            return self.call_tir(expr, env)
        raise Unsupported(f"cannot offload a {type(expr).__name__}")

    def function(self, func: R.Function, args: list):
        env = dict(zip(func.params, args))
        for b in func.bindings:
            env[b.var] = self.value(b.value, env)
        return self.value(func.ret, env)

    def call_graph(self, call: R.Call, env: dict):
        return self.function(self.mod[call.func.name], [self.value(a, env) for a in call.args])

    def call_tir(self, call: R.CallTIR, env: dict):
        name = call.func.name
        prim = self.mod[name]
        info = self.infos.get(name) or self.infos.setdefault(name, self.analyze(prim))
        if not info.ops:
            raise Unsupported(f"{name}: opinfo did not recognise this PrimFunc")
        inputs = [self.value(a, env) for a in call.args]
        n_out = call_outputs(call)
        outputs = [self.fresh(name) for _ in range(n_out)]
        self.calls.append(CallStep(name, tuple(inputs), tuple(outputs)))
        names = self._op_steps(prim, info.ops, inputs, outputs)
        produced = [names.get(len(inputs) + k) for k in range(n_out)]
        return tuple(produced) if n_out > 1 else produced[0]

    def _op_steps(self, prim, ops, inputs: list, outputs: list) -> dict:
        """Append the op steps of one call; returns {param index: name} of produced outputs."""
        shapes = buffer_shapes(prim)
        local: dict = {}
        produced: dict = {}
        for op in ops:
            args = tuple(self._operand(o, inputs, local) for o in op.operands)
            out = op.output
            if out is None:
                raise Unsupported(f"{op.name}: recovered without an output")
            name = outputs[out.param - len(inputs)] if _is_output(out, inputs, outputs) else self.fresh(out.buffer)
            shape, dtype = shapes.get(out.buffer, (None, None))
            self.shapes.setdefault(name, shape)
            if dtype is not None:
                self.dtypes.setdefault(name, dtype)
            local[out.buffer] = name
            if out.param is not None:
                produced[out.param] = name
            self.ops.append(OpStep(op, args, name))
        return produced

    def _operand(self, o, inputs: list, local: dict) -> str:
        if o.param is not None and o.param < len(inputs):
            return inputs[o.param]
        if o.param is None and o.buffer in local:
            return local[o.buffer]
        raise Unsupported(f"operand {o.buffer!r} ({o.role}) is not an input of its call")


def _is_output(out, inputs, outputs) -> bool:
    return out.param is not None and 0 <= out.param - len(inputs) < len(outputs)


def flatten(mod: IRModule, name: str, analyze: "Callable | None" = None) -> Region:
    """The region function ``mod[name]`` as calls and ops over named values."""
    if analyze is None:
        from opinfo import analyze_in_network as analyze
    func = mod[name]
    fl = _Flattener(mod, analyze)
    params = [f"in{i}" for i in range(len(func.params))]
    for p, n in zip(func.params, params):
        fl.shapes[n] = _static(p.type)
    result = fl.function(func, params)
    outputs = result if isinstance(result, tuple) else (result,)
    if any(o is None for o in outputs):
        raise Unsupported("a result of the region is not produced by any recognised op")
    ret_types = func.ret_type.fields if isinstance(func.ret_type, R.TupleType) else (func.ret_type,)
    types = {n: p.type for n, p in zip(params, func.params)}
    types.update(zip(outputs, ret_types))
    return Region(name, tuple(params), tuple(outputs), types, fl.shapes, fl.consts, fl.dtypes,
                  tuple(fl.calls), tuple(fl.ops))
