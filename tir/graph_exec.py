"""Executor of graph-level functions: a module's ``main`` of ``call_tir`` bindings.

``call_tir`` runs a PrimFunc of the module through the interpreter or the C engine (each
compiled once per executor); ``call_dps_packed`` calls an external function looked up by
symbol in an explicit ``registry`` (a mapping ``symbol -> callable``; the module attribute
``"external_mods"`` may hold one too). An external function is called with the inputs then
the preallocated outputs and either fills the outputs or returns them. Symbolic extents of
the tensor types (``n`` in ``R.Tensor((n, 4))``) are bound from the arguments; a scalar
argument of ``call_tir`` (``(lv, n)``, a PrimValue) is evaluated with them and passed to the
PrimFunc's scalar parameter.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from . import expr as E
from . import relax as R
from .function import PrimFunc
from .graph_ops import NUMPY_OPS
from .interp_data import InterpError, np_dtype
from .interp_expr import Ctx, evaluate
from .module import IRModule


class GraphExecutor:
    """Runs the graph functions of one module; compiled PrimFuncs are cached per executor."""

    def __init__(self, module: IRModule, engine: str = "interp", registry: "Mapping | None" = None):
        self.module = module
        self.engine = engine
        attr_registry = module.attrs.get("external_mods")
        merged = dict(attr_registry) if isinstance(attr_registry, Mapping) else {}
        merged.update(registry or {})
        self.registry = merged
        self._runners: dict = {}

    def run(self, *args, name: str = "main"):
        """Call graph function ``name`` on numpy arrays; returns an array or a tuple."""
        func = self.module[name]
        if isinstance(func, PrimFunc):
            from .execute import run_prim_func

            return run_prim_func(func, args, self.engine, self._runner(name, func))
        return self.call_function(func, args, name)

    def call_function(self, func: R.Function, args, name: str):
        if len(args) != len(func.params):
            raise InterpError(f"graph function {name!r} expects {len(func.params)} arguments, got {len(args)}")
        env, sym = {}, Ctx(where=f"graph function {name!r}")
        for p, a in zip(func.params, args):
            check_value(p.type, a, sym, f"argument {p.name!r} of {name!r}")
            env[p] = a
        for blk in func.blocks:
            for b in blk.bindings:
                env[b.var] = self.eval(b.value, env, sym)
        return self.eval(func.ret, env, sym)

    def eval(self, e, env: dict, sym: Ctx):
        """The value of a graph expression."""
        if isinstance(e, R.RVar):
            if e not in env:
                raise InterpError(f"{sym.where}: {e.name!r} is used before it is bound")
            return env[e]
        if isinstance(e, R.Tuple):
            return tuple(self.eval(f, env, sym) for f in e.fields)
        if isinstance(e, R.TupleGetItem):
            return self.eval(e.tuple_value, env, sym)[e.index]
        if isinstance(e, R.Constant):
            return constant_array(e)
        if isinstance(e, R.PrimValue):
            return evaluate(e.value, sym)
        if isinstance(e, R.CallTIR):
            return self._call_tir(e, env, sym)
        if isinstance(e, R.CallDPSPacked):
            return self._call_packed(e, env, sym)
        if isinstance(e, R.Call):
            args = [self.eval(a, env, sym) for a in e.args]
            return self.run(*args, name=e.func.name)
        if isinstance(e, R.OpCall) and e.op in _GRAPH_OPS:
            return getattr(self, "_" + e.op)(e, env, sym)
        if isinstance(e, R.OpCall) and e.op == "call_packed":
            return self._runtime_call(e, env, sym)
        if isinstance(e, R.OpCall) and e.op in NUMPY_OPS:
            args = [self.eval(a, env, sym) for a in e.args]
            try:
                return NUMPY_OPS[e.op](args, dict(e.attrs))
            except InterpError as err:
                raise InterpError(f"{sym.where}: {err}") from None
        if isinstance(e, R.OpCall):
            raise InterpError(f"{sym.where}: R.{e.op} is not lowered to TIR; cannot execute")
        raise InterpError(f"{sym.where}: cannot execute {type(e).__name__}")

    # a data-dependent output shape, as TVM prints it: ``lv1 = R.tensor_to_shape(lv)``,
    # ``lv2 = R.match_cast(lv1, R.Shape([s, s_1]))`` binds s, s_1 for the calls after it
    def _tensor_to_shape(self, e: R.OpCall, env, sym):
        (arg,) = e.args
        value = self.eval(arg, env, sym)
        if not isinstance(value, np.ndarray) or value.ndim != 1 or not np.issubdtype(value.dtype, np.integer):
            raise InterpError(f"{sym.where}: R.tensor_to_shape takes a 1-D integer tensor")
        return ShapeValue(int(v) for v in value)

    def _shape_of(self, e: R.OpCall, env, sym):
        (arg,) = e.args
        value = self.eval(arg, env, sym)
        if not isinstance(value, np.ndarray):
            raise InterpError(f"{sym.where}: R.shape_of takes a tensor")
        return ShapeValue(value.shape)

    # ``R.shape([1, n * 4])``: a shape value
    def _shape(self, e: R.OpCall, env, sym):
        if len(e.args) != 1 or e.attrs or not isinstance(e.args[0], tuple):
            raise InterpError(f"{sym.where}: R.shape takes one list of dimensions")
        return ShapeValue(_dim_value(d.value if isinstance(d, R.PrimValue) else d, sym) for d in e.args[0])

    # ``R.reshape(x, R.shape([...]))``: the same elements in row-major order
    def _reshape(self, e: R.OpCall, env, sym):
        if len(e.args) != 2 or e.attrs:
            raise InterpError(f"{sym.where}: R.reshape takes a tensor and a shape")
        return self._reshaped(*e.args, env, sym)

    def _reshaped(self, data, shape, env, sym):
        x, shape = self.eval(data, env, sym), self.eval(shape, env, sym)
        if not isinstance(x, np.ndarray) or not isinstance(shape, ShapeValue):
            raise InterpError(f"{sym.where}: R.reshape takes a tensor and a shape")
        if int(np.prod(shape)) != x.size:
            raise InterpError(f"{sym.where}: R.reshape: {x.size} elements cannot take the shape {tuple(shape)}")
        return x.reshape(tuple(shape))

    # ``R.call_packed("vm.builtin.reshape", x, shape)``: LowerRuntimeBuiltin's R.reshape
    def _runtime_call(self, e: R.OpCall, env, sym):
        name = e.args[0] if e.args else None
        if name != "vm.builtin.reshape":
            raise InterpError(f"{sym.where}: R.call_packed({name!r}) calls a function of the TVM runtime; cannot execute")
        if len(e.args) != 3:
            raise InterpError(f"{sym.where}: vm.builtin.reshape takes a tensor and a shape")
        return self._reshaped(e.args[1], e.args[2], env, sym)

    # ``R.where(cond, x1, x2)`` left unlegalized (a symbolic broadcast: masked_fill of a
    # batch of unknown size), run with numpy's broadcasting; the result has x1's type
    def _where(self, e: R.OpCall, env, sym):
        if len(e.args) != 3 or e.attrs:
            raise InterpError(f"{sym.where}: R.where takes a condition and two tensors")
        cond, x1, x2 = (self.eval(a, env, sym) for a in e.args)
        if not all(isinstance(v, np.ndarray) for v in (cond, x1, x2)) or cond.dtype != np.bool_:
            raise InterpError(f"{sym.where}: R.where takes a bool tensor and two tensors")
        try:
            out = np.where(cond, x1, x2)
        except ValueError as err:
            raise InterpError(f"{sym.where}: R.where: shapes {cond.shape}, {x1.shape}, {x2.shape} do not "
                              f"broadcast ({err})") from None
        return np.ascontiguousarray(out.astype(x1.dtype, copy=False))

    # ``R.const(0.0, "float32")`` written inline as an argument: a 0-d (or literal list) tensor
    def _const(self, e: R.OpCall, env, sym):
        args = list(e.args) + ([e.attrs["dtype"]] if "dtype" in e.attrs else [])
        if not 1 <= len(args) <= 2 or isinstance(args[0], R.RExpr):
            raise InterpError(f"{sym.where}: R.const takes a value and a dtype")
        value, dtype = args[0], (args[1] if len(args) == 2 else None)
        if dtype is None and not isinstance(value, (float, bool)):
            raise InterpError(f"{sym.where}: R.const({value!r}) needs its dtype")
        try:
            return np.array(value, dtype=np.dtype(str(dtype)) if dtype is not None else
                            (np.bool_ if isinstance(value, bool) else np.float32))
        except (TypeError, ValueError) as err:
            raise InterpError(f"{sym.where}: R.const({value!r}, {dtype!r}): {err}") from None

    def _match_cast(self, e: R.OpCall, env, sym):
        value, target = self.eval(e.args[0], env, sym), e.args[1]
        if not (isinstance(target, R.OpCall) and target.op == "Shape" and len(target.args) == 1):
            raise InterpError(f"{sym.where}: R.match_cast is executed to a shape R.Shape([...]) only")
        dims = target.args[0]
        if not isinstance(value, ShapeValue) or len(value) != len(dims):
            raise InterpError(f"{sym.where}: R.match_cast: {value!r} is not a shape of {len(dims)} dimensions")
        for d, actual in zip(dims, value):
            if isinstance(d, E.Var) and d not in sym.vars:
                sym.vars[d] = np_dtype(d.dtype).type(actual)
            elif _dim_value(d, sym) != actual:
                raise InterpError(f"{sym.where}: R.match_cast: shape {tuple(value)} does not match {dims}")
        return value

    def _runner(self, name: str, func: PrimFunc):
        runner = self._runners.get(name)
        if runner is None:
            from .execute import prim_runner

            runner = self._runners[name] = prim_runner(func, self.engine)
        return runner

    def _call_tir(self, e: R.CallTIR, env, sym):
        func = self.module[e.func.name]
        if not isinstance(func, PrimFunc):
            raise InterpError(f"{sym.where}: call_tir target {e.func.name!r} is not a PrimFunc")
        inputs = [self.eval(a, env, sym) for a in e.args]
        outs = allocate_outputs(e.out_type, sym, f"call_tir of {e.func.name!r}")
        extra = [int(evaluate(v, sym)) for v in (e.tir_vars or ())]
        self._runner(e.func.name, func)(*inputs, *outs, *extra)
        return outs[0] if not isinstance(e.out_type, R.TupleType) else tuple(outs)

    def _call_packed(self, e: R.CallDPSPacked, env, sym):
        fn = self.registry.get(e.func)
        if fn is None:
            known = ", ".join(sorted(self.registry)) or "none registered"
            raise InterpError(f"{sym.where}: no external function {e.func!r} in the registry ({known})")
        inputs = [self.eval(a, env, sym) for a in e.args]
        outs = allocate_outputs(e.out_type, sym, f"call_dps_packed of {e.func!r}")
        returned = fn(*inputs, *outs)
        if returned is not None:
            outs = list(returned) if isinstance(returned, (tuple, list)) else [returned]
            outs = [np.asarray(o) for o in outs]
        return outs[0] if not isinstance(e.out_type, R.TupleType) else tuple(outs)


_GRAPH_OPS = ("tensor_to_shape", "shape_of", "match_cast", "where", "const", "shape", "reshape")
"""Graph-level Relax ops the executor runs itself: shape ops, a where LegalizeOps left, and
the ``R.reshape`` TVM's build pipeline writes for a reshape PrimFunc (RewriteDataflowReshape)."""


class ShapeValue(tuple):
    """A shape as a graph-level value (``R.Shape``): a tuple of ints."""


def _dim_value(d, sym: Ctx):
    if isinstance(d, (int, np.integer)):
        return int(d)
    return int(evaluate(d, sym))


def check_value(ty, value, sym: Ctx, what: str) -> None:
    """Check ``value`` against a graph type, binding symbolic extents on first sight."""
    if isinstance(ty, R.TupleType):
        if not isinstance(value, tuple) or len(value) != len(ty.fields):
            raise InterpError(f"{what}: expected a tuple of {len(ty.fields)} values")
        for t, v in zip(ty.fields, value):
            check_value(t, v, sym, what)
        return
    if not isinstance(ty, R.TensorType):
        return
    if not isinstance(value, np.ndarray):
        raise InterpError(f"{what}: expected a numpy array, got {type(value).__name__}")
    if value.dtype != np_dtype(ty.dtype):
        raise InterpError(f"{what}: expected dtype {ty.dtype}, got {value.dtype}")
    if ty.rank >= 0 and value.ndim != ty.rank:
        raise InterpError(f"{what}: expected rank {ty.rank}, got shape {value.shape}")
    for dim, (d, actual) in enumerate(zip(ty.shape or (), value.shape)):
        if isinstance(d, E.Var) and d not in sym.vars:
            sym.vars[d] = np_dtype(d.dtype).type(actual)
        elif _dim_value(d, sym) != actual:
            raise InterpError(f"{what}: expected shape {_shape_text(ty, sym)}, got {value.shape}")


def _shape_text(ty, sym) -> str:
    try:
        return str(tuple(_dim_value(d, sym) for d in ty.shape))
    except InterpError:
        return str(ty.shape)


def allocate_outputs(out_type, sym: Ctx, what: str) -> list:
    """Zeroed arrays for a call's output type (one, or one per tuple field)."""
    types = out_type.fields if isinstance(out_type, R.TupleType) else (out_type,)
    outs = []
    for t in types:
        if not isinstance(t, R.TensorType) or t.shape is None:
            raise InterpError(f"{sym.where}: {what}: output type needs a known shape")
        try:
            shape = tuple(_dim_value(d, sym) for d in t.shape)
        except InterpError as err:
            raise InterpError(f"{sym.where}: {what}: cannot determine the output shape: {err}") from None
        outs.append(np.zeros(shape, dtype=np_dtype(t.dtype)))
    return outs


def constant_array(c: R.Constant) -> np.ndarray:
    """The value of a graph constant as a numpy array."""
    if isinstance(c.data, np.ndarray):
        return c.data
    if c.data is None:
        raise InterpError(f"the value of constant {c.ref or '?'} is not in the script "
                          "(TVM printed it without its metadata section; print with show_meta=True)")
    shape = tuple(int(d) if not isinstance(d, E.IntImm) else d.value for d in c.type.shape)
    return np.frombuffer(c.data, dtype=np_dtype(c.type.dtype)).reshape(shape).copy()
