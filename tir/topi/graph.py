"""GraphBuilder: build a graph-level module (a Relax ``main`` of ``call_tir`` bindings) op by op.

    g = GraphBuilder()
    x = g.input("x", (n, 3, 32, 32))
    w = g.input("w", (16, 3, 3, 3))
    y = g.relu(g.conv2d(x, w, padding=[1, 1, 1, 1]))
    mod = g.build(y)

Every op of :mod:`tir.topi` is a method: ``g.call("nn.conv2d", x, w, ...)`` or ``g.conv2d(...)``
(the ``nn.``/``image.`` prefix may be dropped). Each call lowers its PrimFunc at once, so shape
and attribute errors surface there as ``ValueError`` naming the op and the argument. Identical
PrimFuncs are shared, named like TVM (``conv2d``, ``conv2d1``, ...).
"""
from __future__ import annotations

from ..builder import Builder
from ..expr import as_int
from ..function import PrimFunc
from ..module import IRModule
from ..relax import (Binding, CallTIR, DataflowBlock, Function, GlobalVar, RVar, TensorType,
                     TupleGetItem, TupleType)
from ..structural import structural_equal, structural_hash
from . import lower_into, op_names

# Relax op -> the PrimFunc name TVM's legalization gives it, where it is not the op's own name.
_FUNC_NAMES = {
    "permute_dims": "transpose", "concat": "concatenate", "astype": "cast", "clip": "tir_clip",
    "nn.relu6": "tir_clip", "nn.leakyrelu": "leaky_relu", "image.resize2d": "resize2d", "erf": "erf",
    "layout_transform": "te_layout_transform",
}
_TIR_PREFIXED = {"exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "abs", "negative", "sin", "cos", "floor",
                 "ceil", "round", "square", "sign", "tan"}


def func_name_hint(op_name: str) -> str:
    """The name TVM gives the PrimFunc of ``op_name`` (``tir_exp``, ``conv2d``, ``transpose``...)."""
    if op_name in _FUNC_NAMES:
        return _FUNC_NAMES[op_name]
    if op_name in _TIR_PREFIXED:
        return f"tir_{op_name}"
    return op_name.split(".")[-1]


def _relax_shape(shape) -> tuple:
    return tuple(as_int(e) if as_int(e) is not None else e for e in shape)


class GraphBuilder:
    """Collects graph inputs and op calls; :meth:`build` returns the IRModule."""

    def __init__(self):
        self.params: list = []
        self.bindings: list = []
        self.funcs: dict = {}
        self._by_hash: dict = {}
        self._counts: dict = {}

    def input(self, name: str, shape, dtype="float32") -> RVar:
        """A graph parameter of ``shape`` (ints, or int64 ``tir.SizeVar`` for symbolic extents)."""
        from ..dtype import dtype as parse

        var = RVar(name, TensorType(_relax_shape(shape), parse(dtype)))
        self.params.append(var)
        return var

    # ------------------------------------------------------------------ ops
    def call(self, op_name: str, *args: RVar, **attrs) -> RVar:
        """Lower ``op_name`` on the tensors ``args`` and bind a ``call_tir`` to it."""
        b = Builder()
        buffers = []
        for i, a in enumerate(args):
            if not isinstance(a, RVar) or not isinstance(a.type, TensorType):
                raise ValueError(f"{op_name}: argument {i} must be a tensor of this graph, got {a!r}")
            buffers.append(b.placeholder(a.type.shape, a.type.dtype, a.name))
        out = lower_into(b, op_name, buffers, **attrs)
        outs = list(out) if isinstance(out, tuple) else [out]
        func = b.build(buffers, outs)
        gvar = GlobalVar(self._intern(func, func_name_hint(op_name)))
        types = [TensorType(_relax_shape(o.shape), o.dtype) for o in outs]
        out_type = types[0] if len(types) == 1 else TupleType(tuple(types))
        return self._bind(CallTIR(gvar, tuple(args), out_type), out_type)

    def item(self, value: RVar, index: int) -> RVar:
        """Element ``index`` of a tuple result (e.g. of ``batch_norm``)."""
        if not isinstance(value.type, TupleType) or not 0 <= index < len(value.type.fields):
            raise ValueError(f"item: {value.name} is not a tuple with an element {index}")
        return self._bind(TupleGetItem(value, index), value.type.fields[index])

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        known = set(op_names())
        for candidate in (name, f"nn.{name}", f"image.{name}"):
            if candidate in known:
                return lambda *args, **attrs: self.call(candidate, *args, **attrs)
        raise AttributeError(f"GraphBuilder has no op {name!r}; ops: {', '.join(sorted(known))}")

    # ------------------------------------------------------------------ module
    def build(self, *outputs: RVar) -> IRModule:
        """The module: the shared PrimFuncs and a ``main`` returning ``outputs`` (one or a tuple)."""
        if not outputs:
            raise ValueError("build: name at least one output")
        bindings = list(self.bindings)
        if len(outputs) == 1:
            gv = RVar("gv", outputs[0].type)
            bindings.append(Binding(gv, outputs[0]))
        else:
            from ..relax import Tuple

            gv = RVar("gv", TupleType(tuple(o.type for o in outputs)))
            bindings.append(Binding(gv, Tuple(tuple(outputs))))
        block = DataflowBlock(tuple(bindings), (gv,))
        main = Function(tuple(self.params), (block,), gv, gv.type)
        funcs = dict(sorted(self.funcs.items()))
        funcs["main"] = main
        return IRModule(funcs)

    def _bind(self, value, type_) -> RVar:
        n = len(self.bindings)
        var = RVar("lv" if n == 0 else f"lv{n}", type_)
        self.bindings.append(Binding(var, value))
        return var

    def _intern(self, func: PrimFunc, hint: str) -> str:
        key = structural_hash(func)
        for name in self._by_hash.get(key, []):
            if structural_equal(self.funcs[name], func):
                return name
        count = self._counts.get(hint, 0)
        self._counts[hint] = count + 1
        name = hint if count == 0 else f"{hint}{count}"
        self.funcs[name] = func
        self._by_hash.setdefault(key, []).append(name)
        return name
