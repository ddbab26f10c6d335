"""Well-formedness checks: ``tir.verify(node)`` raises :class:`VerifyError` naming the place.

Checked: variables and buffers defined before use and bound once (SSA), ranks of loads,
stores and regions against their buffers, block bindings (count and dtypes), dtypes of
stores, loop variables and conditions, and, in graph functions, variables defined before
use, dataflow outputs, and ``call_tir`` targets and arities.
"""
from __future__ import annotations

from . import relax as rx
from .buffer import Buffer, BufferRegion
from .expr import BufferLoad, Let, Var, access_dtype
from .function import PrimFunc
from .functor import children
from .module import IRModule
from .stmt import AllocateBuffer, BlockRealize, BufferStore, For, IfThenElse, LaunchThread, LetStmt


class VerifyError(Exception):
    """Ill-formed IR; the message names the function, block and buffer or variable."""


def verify(node) -> None:
    """Check an IRModule, PrimFunc or graph Function; raise VerifyError on the first problem."""
    if isinstance(node, IRModule):
        for name, f in node.functions.items():
            _verify_func(f, name, node)
    elif isinstance(node, (PrimFunc, rx.Function)):
        _verify_func(node, getattr(node, "name", None) or node.attrs.get("global_symbol", "main"), None)
    else:
        raise TypeError(f"verify expects an IRModule, PrimFunc or Function, got {type(node).__name__}")


def _verify_func(f, name: str, mod) -> None:
    if isinstance(f, PrimFunc):
        _TirChecker(f"function {name!r}").func(f)
    elif isinstance(f, rx.Function):
        _GraphChecker(f"function {name!r}", mod).func(f)
    else:
        raise VerifyError(f"function {name!r}: unexpected member of type {type(f).__name__}")


class _TirChecker:
    def __init__(self, where: str):
        self.path = [where]
        self.live: set = set()
        self.ever: set = set()

    def fail(self, message: str):
        raise VerifyError(f"{', '.join(self.path)}: {message}")

    def bind(self, x) -> None:
        if id(x) in self.ever:
            kind = "buffer" if isinstance(x, Buffer) else "variable"
            self.fail(f"{kind} {x.name!r} is bound twice")
        self.ever.add(id(x))
        self.live.add(id(x))

    def unbind(self, *xs) -> None:
        for x in xs:
            self.live.discard(id(x))

    # ------------------------------------------------------------------ entry

    def func(self, f: PrimFunc) -> None:
        for p in f.params:
            self.bind(p)
        for p, buf in f.buffer_map.items():
            if p not in f.params:
                self.fail(f"buffer_map key {p.name!r} is not a parameter")
            self.bind(buf)
        for buf in f.buffer_map.values():
            for v in _vars_of(buf.shape + buf.strides + ((buf.elem_offset,) if buf.elem_offset is not None else ())):
                if id(v) not in self.live:
                    self.bind(v)  # symbolic extents are defined by the parameter buffers
        self.visit(f.body)

    # ------------------------------------------------------------------ traversal

    def visit(self, node) -> None:
        handler = _TIR_HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node)
            return
        if isinstance(node, Var):
            if id(node) not in self.live:
                self.fail(f"variable {node.name!r} is used outside the scope that defines it")
            return
        if isinstance(node, Buffer):
            if id(node) not in self.live:
                self.fail(f"buffer {node.name!r} is used but not defined (not a parameter or allocated in scope)")
            return
        for c in children(node):
            self.visit(c)

    def visit_all(self, nodes) -> None:
        for n in nodes:
            self.visit(n)

    def _for(self, s: For) -> None:
        self.visit(s.min)
        self.visit(s.extent)
        if not (s.loop_var.dtype == s.min.dtype == s.extent.dtype):
            self.fail(f"loop {s.loop_var.name!r}: variable is {s.loop_var.dtype} but its range is "
                      f"{s.min.dtype}/{s.extent.dtype}")
        self.bind(s.loop_var)
        self.visit(s.body)
        self.unbind(s.loop_var)

    def _realize(self, s: BlockRealize) -> None:
        b = s.block
        self.visit_all(s.iter_values)
        self.visit(s.predicate)
        if not s.predicate.dtype.is_bool:
            self.fail(f"block {b.name!r}: predicate is {s.predicate.dtype}, expected bool")
        self.path.append(f"block {b.name!r}")
        for iv, value in zip(b.iter_vars, s.iter_values):
            self._iter_var(iv, value)
        for buf in b.alloc_buffers:
            self.visit_all(buf.shape)
            self.bind(buf)
        for m in b.match_buffers:
            self.visit(m.source)
            self.bind(m.buffer)
        self.visit_all(b.reads + b.writes)
        if b.init is not None:
            self.visit(b.init)
        self.visit(b.body)
        self.unbind(*[iv.var for iv in b.iter_vars], *b.alloc_buffers, *[m.buffer for m in b.match_buffers])
        self.path.pop()

    def _iter_var(self, iv, value) -> None:
        self.visit(iv.dom)
        if value.dtype != iv.var.dtype:
            self.fail(f"iteration variable {iv.var.name!r} is {iv.var.dtype} but bound to a {value.dtype} value")
        self.bind(iv.var)

    def _let(self, s) -> None:
        self.visit(s.value)
        if s.value.dtype != s.var.dtype:
            self.fail(f"let {s.var.name!r} is {s.var.dtype} but its value is {s.value.dtype}")
        self.bind(s.var)
        self.visit(s.body)
        self.unbind(s.var)

    def _launch(self, s: LaunchThread) -> None:
        self.visit(s.extent)
        if s.var.dtype != s.extent.dtype:
            self.fail(f"thread {s.var.name!r} is {s.var.dtype} but its extent is {s.extent.dtype}")
        self.bind(s.var)
        self.visit(s.body)
        self.unbind(s.var)

    def _allocate(self, s: AllocateBuffer) -> None:
        self.visit_all(s.buffer.shape)
        if s.source is not None:
            self.visit(s.source)  # a view of a buffer in scope (of another type: storage reuse)
            if s.source.dtype != s.buffer.dtype and "bfloat" in (s.source.dtype.code, s.buffer.dtype.code):
                self.fail(f"view {s.buffer.name!r} is {s.buffer.dtype} but {s.source.name!r} is {s.source.dtype} "
                          "(bfloat16 storage is held as float32: no view of another type)")
        self.bind(s.buffer)
        self.visit(s.body)
        self.unbind(s.buffer)

    def _store(self, s: BufferStore) -> None:
        self._rank(s.buffer, len(s.indices), "stored with")
        want = access_dtype(s.buffer, s.indices)  # a vector for a vector store
        if s.value.dtype != want:
            into = f"{want} buffer" if want.lanes == 1 else f"{want} elements of buffer"
            self.fail(f"store of a {s.value.dtype} value into {into} {s.buffer.name!r}")
        self.visit(s.buffer)
        self.visit(s.value)
        self.visit_all(s.indices)

    def _load(self, e: BufferLoad) -> None:
        self._rank(e.buffer, len(e.indices), "loaded with")
        self.visit(e.buffer)
        self.visit_all(e.indices)

    def _region(self, r: BufferRegion) -> None:
        self._rank(r.buffer, len(r.region), "accessed with a region of")
        self.visit(r.buffer)
        self.visit_all(r.region)

    def _if(self, s: IfThenElse) -> None:
        if not s.condition.dtype.is_bool:
            self.fail(f"if condition is {s.condition.dtype}, expected bool")
        self.visit(s.condition)
        self.visit(s.then_case)
        if s.else_case is not None:
            self.visit(s.else_case)

    def _rank(self, buf, n: int, how: str) -> None:
        if n != len(buf.shape):
            self.fail(f"buffer {buf.name!r} has rank {len(buf.shape)} but is {how} {n} indices")


_TIR_HANDLERS = {
    For: _TirChecker._for, BlockRealize: _TirChecker._realize, LetStmt: _TirChecker._let,
    Let: _TirChecker._let, AllocateBuffer: _TirChecker._allocate, BufferStore: _TirChecker._store,
    BufferLoad: _TirChecker._load, BufferRegion: _TirChecker._region, IfThenElse: _TirChecker._if,
    LaunchThread: _TirChecker._launch,
}


def _vars_of(exprs) -> list:
    from .functor import post_order_visit

    found = []
    for e in exprs:
        post_order_visit(e, lambda n: found.append(n) if isinstance(n, Var) else None)
    return found


class _GraphChecker:
    def __init__(self, where: str, mod):
        self.where = where
        self.mod = mod
        self.live: set = set()

    def fail(self, message: str):
        raise VerifyError(f"{self.where}: {message}")

    def bind(self, v) -> None:
        if id(v) in self.live:
            self.fail(f"variable {v.name!r} is bound twice")
        self.live.add(id(v))

    def func(self, f: rx.Function) -> None:
        for p in f.params:
            self.bind(p)
        for blk in f.blocks:
            for b in blk.bindings:
                self.value(b.value, b.var.name)
                self.bind(b.var)
            outputs = getattr(blk, "outputs", ())
            bound = {id(b.var) for b in blk.bindings}
            for o in outputs:
                if id(o) not in bound:
                    self.fail(f"R.output({o.name}) names a variable not bound in its dataflow block")
        self.value(f.ret, "return")

    def value(self, v, where: str) -> None:
        if isinstance(v, rx.RVar):
            if id(v) not in self.live:
                self.fail(f"{where}: variable {v.name!r} is used before it is defined")
        elif isinstance(v, rx.Tuple):
            for x in v.fields:
                self.value(x, where)
        elif isinstance(v, rx.TupleGetItem):
            self.value(v.tuple_value, where)
        elif isinstance(v, (rx.CallTIR, rx.CallDPSPacked, rx.Call)):
            for x in v.args:
                self.value(x, where)
            if isinstance(v, rx.CallTIR):
                self._call_tir(v, where)
        elif isinstance(v, rx.OpCall):
            for x in (*v.args, *v.attrs.values()):
                if isinstance(x, rx.RExpr):
                    self.value(x, where)

    def _call_tir(self, v: rx.CallTIR, where: str) -> None:
        if self.mod is None:
            return
        f = self.mod.functions.get(v.func.name)
        if not isinstance(f, PrimFunc):
            self.fail(f"{where}: R.call_tir target {v.func.name!r} is not a prim_func of the module")
        outs = len(v.out_type.fields) if isinstance(v.out_type, rx.TupleType) else 1
        tensors = [a for a in v.args if not isinstance(a, rx.PrimValue)]
        if len(f.buffers) != len(tensors) + outs:
            self.fail(f"{where}: {v.func.name!r} takes {len(f.buffers)} buffers but is called with "
                      f"{len(tensors)} inputs and {outs} outputs")
