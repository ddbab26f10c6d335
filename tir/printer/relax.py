"""Graph-level functions as TVMScript (``@R.function`` with dataflow blocks of bindings)."""
from __future__ import annotations

import json
import math

from .. import relax as rx
from ..expr import IntImm, Var
from .expr import ExprPrinter, float_text
from .tir_stmt import literal


class RelaxPrinter:
    """Prints one graph function into ``lines``."""

    def __init__(self, namer, lines: list, module_vars=frozenset(), module_name="Module"):
        self.namer = namer
        self.lines = lines
        self.expr = ExprPrinter(namer, bare_int64=True)
        self.module_vars = module_vars
        self.module_name = module_name

    def line(self, ind: int, text: str) -> None:
        self.lines.append("    " * ind + text)

    def function(self, f: rx.Function, name: str, ind: int) -> None:
        items = list(f.attrs.items())
        private = not (items and items[-1] == ("global_symbol", name))
        attrs_ = dict(items if private else items[:-1])
        self.line(ind, "@R.function(private=True)" if private else "@R.function")
        params = ", ".join(f"{self.namer(p)}: {self.type(p.type)}" for p in f.params)
        ret = f" -> {self.type(f.ret_type, quote=True)}" if f.ret_type is not None else ""
        self.line(ind, f"def {name}({params}){ret}:")
        if attrs_:
            self.line(ind + 1, f"R.func_attr({literal(self, attrs_)})")
        if _uses_globals(f):
            self.line(ind + 1, f"cls = {self.module_name}")
        for blk in f.blocks:
            self._block(blk, ind + 1)
        self.line(ind + 1, f"return {self.value(f.ret)}")

    def _block(self, blk, ind: int) -> None:
        if isinstance(blk, rx.DataflowBlock):
            self.line(ind, "with R.dataflow():")
            for b in blk.bindings:
                self._binding(b, ind + 1)
            self.line(ind + 1, f"R.output({', '.join(self.namer(v) for v in blk.outputs)})")
            return
        for b in blk.bindings:
            self._binding(b, ind)

    def _binding(self, b: rx.Binding, ind: int) -> None:
        value = self.value(b.value)
        ann = f": {self.type(b.var.type)}" if b.var.type is not None else ""
        self.line(ind, f"{self.namer(b.var)}{ann} = {value}")

    # ------------------------------------------------------------------ values and types

    def value(self, v) -> str:
        if isinstance(v, rx.RVar):
            return self.namer(v)
        if isinstance(v, rx.Tuple):
            return self._tuple(v.fields)
        if isinstance(v, rx.TupleGetItem):
            return f"{self.value(v.tuple_value)}[{v.index}]"
        if isinstance(v, rx.Constant) and v.data is None and v.ref:
            return v.ref
        if isinstance(v, rx.PrimValue):
            return f"R.prim_value({self.scalar(v.value)})"
        if isinstance(v, rx.CallTIR):
            extra = f", tir_vars=R.shape([{self.dims(v.tir_vars)}])" if v.tir_vars is not None else ""
            args = self._tuple(v.args, self._call_tir_arg)
            return f"R.call_tir(cls.{v.func.name}, {args}, out_ty={self.type(v.out_type, True)}{extra})"
        if isinstance(v, rx.CallDPSPacked):
            return f"R.call_dps_packed({json.dumps(v.func)}, {self._tuple(v.args)}, out_ty={self.type(v.out_type, True)})"
        if isinstance(v, rx.Call):
            return f"cls.{v.func.name}({', '.join(self.value(a) for a in v.args)})"
        if isinstance(v, rx.OpCall):
            return self._op_call(v)
        raise TypeError(f"cannot print graph-level value {type(v).__name__}")

    def _op_call(self, v: rx.OpCall) -> str:
        parts = [self._op_arg(a) for a in v.args]
        parts += [f"{k}={self._op_arg(a)}" for k, a in v.attrs.items()]
        return f"R.{v.op}({', '.join(parts)})"

    def _op_arg(self, a) -> str:
        """An argument of an opaque op: a graph-level value or data (tuples as lists)."""
        if isinstance(a, rx.RExpr):
            return self.value(a)
        if isinstance(a, tuple):
            return f"[{', '.join(self._op_arg(x) for x in a)}]"
        if isinstance(a, str):
            return json.dumps(a)
        if a is None or isinstance(a, (bool, int)):
            return repr(a)
        if isinstance(a, float):
            # inf and nan as Python writes them (a bare float_text would read back as a name)
            return float_text(a) if math.isfinite(a) else f'float("{a!r}")'
        return self.expr(a)

    def scalar(self, e) -> str:
        """A scalar graph value as TVM writes it (``3``, ``n * 18``); a constant other than
        int64 keeps its type (``T.int32(3)``), since a bare integer reads back as int64."""
        if isinstance(e, IntImm) and str(e.dtype) == "int32":
            return f"T.int32({e.value})"
        return self.expr(e)

    def _call_tir_arg(self, a) -> str:
        """An argument of ``R.call_tir``: a scalar is written bare (``(lv, n)``), as TVM does."""
        return self.scalar(a.value) if isinstance(a, rx.PrimValue) else self.value(a)

    def _tuple(self, items, show=None) -> str:
        if not items:
            return "R.tuple()"
        texts = [(show or self.value)(a) for a in items]
        return f"({texts[0]},)" if len(texts) == 1 else f"({', '.join(texts)})"

    def type(self, t, as_list: bool = False, quote: bool = False) -> str:
        """A struct info; a tuple type is a list in ``out_ty`` and ``R.Tuple`` elsewhere.

        ``quote`` writes compound dimensions as strings (``"n + 8"``), as TVM does in a
        function's return type.
        """
        if isinstance(t, rx.TensorType):
            return self._tensor(t, quote)
        if isinstance(t, rx.TupleType):
            inner = ", ".join(self.type(x, quote=quote) for x in t.fields)
            return f"[{inner}]" if as_list else f"R.Tuple({inner})"
        if isinstance(t, rx.ShapeType):
            return "R.Shape" if t.values is None else f"R.Shape([{self.dims(t.values)}])"
        if isinstance(t, rx.ObjectType):
            return "R.Object"
        raise TypeError(f"cannot print graph-level type {type(t).__name__}")

    def _tensor(self, t: rx.TensorType, quote: bool = False) -> str:
        if t.shape is None:
            nd = f", ndim={t.ndim}" if t.ndim != -1 else ""
            return f'R.Tensor(dtype="{t.dtype}"{nd})'
        dims = ", ".join(self._tensor_dim(d) for d in t.shape) if quote else self.dims(t.shape)
        shape = f"({dims},)" if len(t.shape) == 1 else f"({dims})"
        return f'R.Tensor({shape}, dtype="{t.dtype}")'

    def _tensor_dim(self, d) -> str:
        """A dimension of a return type; TVM quotes compound ones (``"n + 8"``)."""
        text = self._dim(d)
        if isinstance(d, (int, Var, IntImm)):
            return text
        return json.dumps(text)

    def dims(self, values) -> str:
        return ", ".join(self._dim(d) for d in values)

    def _dim(self, d) -> str:
        if isinstance(d, int):
            return str(d)
        if isinstance(d, Var) and id(d) not in self.module_vars:
            return json.dumps(self.namer(d))
        return self.expr(d)


def _uses_globals(f: rx.Function) -> bool:
    return any(isinstance(b.value, (rx.CallTIR, rx.Call)) for b in f.bindings) or _has_global(f.ret)


def _has_global(v) -> bool:
    if isinstance(v, rx.Call):
        return True
    if isinstance(v, rx.Tuple):
        return any(_has_global(x) for x in v.fields)
    return False
