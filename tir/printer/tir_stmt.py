"""TIR statements as TVMScript lines: loops (``T.grid`` for perfect serial nests), blocks, stores."""
from __future__ import annotations

import json

import attrs

from .. import stmt as S
from ..buffer import Buffer
from ..expr import Add, Call, IntImm, Ramp, Var
from ..intrinsics import CALL_STATEMENTS
from ..node import Target
from ..functor import post_order_visit
from ..stmt import ForKind, IterKind

_KIND_NAMES = {ForKind.PARALLEL: "T.parallel", ForKind.VECTORIZED: "T.vectorized",
               ForKind.UNROLLED: "T.unroll", ForKind.SERIAL: "T.serial"}
_AXIS = {IterKind.SPATIAL: "spatial", IterKind.REDUCE: "reduce", IterKind.SCAN: "scan",
         IterKind.OPAQUE: "opaque"}
_REMAP = {IterKind.SPATIAL: "S", IterKind.REDUCE: "R"}


def literal(p, value) -> str:
    """An attribute value (numbers, strings, lists, Maps, expressions) as text."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(literal(p, v) for v in value) + "]"
    if hasattr(value, "items"):
        return "{" + ", ".join(f"{literal(p, k)}: {literal(p, v)}" for k, v in value.items()) + "}"
    if isinstance(value, Buffer):
        return p.namer(value)
    if isinstance(value, Target):
        return f"T.target({literal(p, value.config)})"
    return p.expr(value)


def _annotation_buffers(value) -> list:
    if isinstance(value, Buffer):
        return [value]
    if isinstance(value, (list, tuple)):
        return [b for v in value for b in _annotation_buffers(v)]
    if hasattr(value, "items"):
        return [b for v in value.values() for b in _annotation_buffers(v)]
    return []


def span_text(p, lo, ext) -> str:
    """The end ``lo + ext`` of a range, written so the reader recovers ``ext`` exactly."""
    if isinstance(lo, IntImm) and isinstance(ext, IntImm) and lo.dtype == ext.dtype:
        return p.expr(IntImm(ext.dtype, lo.value + ext.value))
    if isinstance(lo, IntImm) and lo.value == 0 and lo.dtype == ext.dtype:
        return p.expr(ext)
    return p.expr(Add(lo, ext))


def _zero_min(lo, ext) -> bool:
    return isinstance(lo, IntImm) and lo.value == 0 and lo.dtype == ext.dtype


class StmtPrinter:
    """Appends the lines of statements to ``p.lines`` (``p`` is the function printer)."""

    def __init__(self, p):
        self.p = p
        self.loops: dict = {}
        """id(loop var) -> For, for the loops around the statement being printed."""

    def stmt(self, s, ind: int) -> None:
        handler = getattr(self, "_" + type(s).__name__, None)
        if handler is None:
            raise TypeError(f"cannot print statement {type(s).__name__}")
        handler(s, ind)

    def line(self, ind: int, text: str) -> None:
        self.p.lines.append("    " * ind + text)

    # ------------------------------------------------------------------ simple statements

    def _SeqStmt(self, s, ind):
        for k, x in enumerate(s.seq):
            if isinstance(x, S.AttrStmt) and k < len(s.seq) - 1:
                self._attr_scope(x, ind)  # statements follow: the concise form would take them in
            elif isinstance(x, S.AllocateBuffer) and x.source is None and k < len(s.seq) - 1:
                self._decl_buffer(x, ind)  # likewise for T.alloc_local
            elif isinstance(x, S.LaunchThread) and k < len(s.seq) - 1:
                self._launch_scope(x, ind)
            else:
                self.stmt(x, ind)

    def _AttrStmt(self, s, ind):
        """TVM's concise form: ``T.attr(...)`` followed by the body at the same level."""
        self.line(ind, self._attr_call(s))
        self.stmt(s.body, ind)

    def _attr_scope(self, s, ind):
        self.line(ind, f"with {self._attr_call(s)}:")
        self.stmt(s.body, ind + 1)

    def _attr_call(self, s) -> str:
        if s.node is None:
            return f"T.attr({literal(self.p, s.attrs)})"
        ((key, value),) = s.attrs.items()
        return f"T.attr({literal(self.p, s.node)}, {json.dumps(key)}, {literal(self.p, value)})"

    def _BufferStore(self, s, ind):
        e = self.p.expr
        idx = ", ".join(self._store_index(i) for i in s.indices) if s.indices else "()"
        self.line(ind, f"{self.p.namer(s.buffer)}[{idx}] = {e(s.value)}")

    def _store_index(self, i) -> str:
        """A store's index; a constant-stride Ramp as TVM writes it, ``base:base + lanes``
        (``base:base + lanes * stride:stride``)."""
        if isinstance(i, Ramp) and isinstance(i.stride, IntImm) and i.stride.value >= 1:
            step = i.stride.value
            stop = self.p.expr(Add(i.base, IntImm(i.base.dtype, i.lanes * step)))
            return f"{self.p.expr(i.base)}:{stop}" + (f":{step}" if step != 1 else "")
        return self.p.expr(i)

    def _Evaluate(self, s, ind):
        text = self.p.expr(s.value)
        # a runtime call is a statement on its own, as TVM prints it
        bare = isinstance(s.value, Call) and s.value.op in CALL_STATEMENTS
        self.line(ind, text if bare and text.startswith("T.call_") else f"T.evaluate({text})")

    def _LetStmt(self, s, ind):
        self.line(ind, f"{self.p.namer(s.var)}: T.let[T.{s.var.dtype}] = {self.p.expr(s.value)}")
        self.stmt(s.body, ind)
        self.p.namer.release(s.var)

    def _IfThenElse(self, s, ind):
        self.line(ind, f"if {self.p.expr(s.condition)}:")
        self.stmt(s.then_case, ind + 1)
        if s.else_case is not None:
            self.line(ind, "else:")
            self.stmt(s.else_case, ind + 1)

    def _While(self, s, ind):
        self.line(ind, f"while {self.p.expr(s.condition)}:")
        self.stmt(s.body, ind + 1)

    def _LaunchThread(self, s, ind):
        """TVM's concise form, ``tx = T.launch_thread("threadIdx.x", 32)``, the body after it."""
        self.line(ind, f"{self.p.namer(s.var)} = {self._launch_call(s)}")
        self.stmt(s.body, ind)

    def _launch_scope(self, s, ind):
        self.line(ind, f"with {self._launch_call(s)} as {self.p.namer(s.var)}:")
        self.stmt(s.body, ind + 1)

    def _launch_call(self, s) -> str:
        return f"T.launch_thread({json.dumps(s.tag)}, {self.p.expr(s.extent)})"

    def _AllocateBuffer(self, s, ind):
        """A local (shared) buffer as TVM 0.27 writes it, ``b = T.alloc_local(...)``
        (``T.alloc_shared``) followed by the body at the same level; a view as ``b =
        src.view(...)``; any other as ``with T.decl_buffer(...) as b:``."""
        b = s.buffer
        if s.source is not None:
            if b.dtype != s.source.dtype:  # storage reused with another type: TVM's form
                call = self.p.buffer_call("T.decl_buffer", b)
                self.line(ind, f"{self.p.namer(b)} = {call[:-1]}, data={self.p.namer(s.source)}.data)")
                return self.stmt(s.body, ind)
            dims = ", ".join(self.p.expr(d) for d in b.shape)
            self.line(ind, f"{self.p.namer(b)} = {self.p.namer(s.source)}.view({dims})")
            return self.stmt(s.body, ind)
        if b.scope not in ("local", "shared") or b.strides or b.elem_offset is not None:
            return self._decl_buffer(s, ind)
        plain = attrs.evolve(b, scope="global")
        self.line(ind, f"{self.p.namer(b)} = {self.p.buffer_call(f'T.alloc_{b.scope}', plain)}")
        self.stmt(s.body, ind)

    def _decl_buffer(self, s, ind):
        name = self.p.namer(s.buffer)
        self.line(ind, f"with {self.p.buffer_call('T.decl_buffer', s.buffer)} as {name}:")
        self.stmt(s.body, ind + 1)

    # ------------------------------------------------------------------ loops

    def _For(self, s, ind):
        if self._plain_serial(s):
            return self._grid(s, ind)
        e = self.p.expr
        bounds = e(s.extent) if _zero_min(s.min, s.extent) else f"{e(s.min)}, {span_text(self.p, s.min, s.extent)}"
        extra = ""
        if s.kind is ForKind.THREAD_BINDING:
            extra += f", thread={json.dumps(s.thread_binding)}"
        if s.annotations:
            extra += f", annotations={literal(self.p, s.annotations)}"
        if s.kind is ForKind.SERIAL and not extra:
            head = f"range({bounds})"
        else:
            head = f"{_KIND_NAMES.get(s.kind, 'T.thread_binding')}({bounds}{extra})"
        self._loop_body([s], f"for {self.p.namer(s.loop_var)} in {head}:", ind)

    @staticmethod
    def _plain_serial(s) -> bool:
        return s.kind is ForKind.SERIAL and not s.annotations and _zero_min(s.min, s.extent)

    def _grid(self, s, ind):
        nest = [s]
        while isinstance(nest[-1].body, S.For) and self._plain_serial(nest[-1].body):
            if _uses_any(nest[-1].body.extent, nest):
                break
            nest.append(nest[-1].body)
        names = ", ".join(self.p.namer(f.loop_var) for f in nest)
        if len(nest) == 1:
            head = f"for {names} in range({self.p.expr(s.extent)}):"
        else:
            head = f"for {names} in T.grid({', '.join(self.p.expr(f.extent) for f in nest)}):"
        self._loop_body(nest, head, ind)

    def _loop_body(self, nest, head, ind):
        self.line(ind, head)
        for f in nest:
            self.loops[id(f.loop_var)] = f
        self.stmt(nest[-1].body, ind + 1)
        for f in nest:
            del self.loops[id(f.loop_var)]
            self.p.namer.release(f.loop_var)

    # ------------------------------------------------------------------ blocks

    def _BlockRealize(self, s, ind):
        b = s.block
        self.line(ind, f"with {self.p.dialect.block}({json.dumps(b.name)}):")
        self.block_header(s, ind + 1)
        if b.init is not None:
            self.line(ind + 1, "with T.init():")
            self.stmt(b.init, ind + 2)
        self.stmt(b.body, ind + 1)
        for x in [iv.var for iv in b.iter_vars] + list(b.alloc_buffers) + [m.buffer for m in b.match_buffers]:
            self.p.namer.release(x)

    def block_header(self, s, ind):
        b = s.block
        self._iter_vars(s, ind)
        if not (isinstance(s.predicate, IntImm) and s.predicate.value == 1):
            self.line(ind, f"T.where({self.p.expr(s.predicate)})")
        self.line(ind, f"T.reads({self.regions(b.reads)})")
        self.line(ind, f"T.writes({self.regions(b.writes)})")
        if b.annotations:
            for buf in _annotation_buffers(b.annotations):
                if id(buf) not in self.p.namer.names:  # declared nowhere else: name it here
                    self.line(ind, f"{self.p.namer(buf)} = {self.p.buffer_call('T.Buffer', buf)}")
            self.line(ind, f"{self.p.dialect.block_attr}({literal(self.p, b.annotations)})")
        self.allocs(b.alloc_buffers, ind)
        for m in b.match_buffers:
            call = self.p.buffer_call("T.match_buffer", m.buffer, first=self.region(m.source))
            self.line(ind, f"{self.p.namer(m.buffer)} = {call}")

    def allocs(self, buffers, ind):
        for buf in buffers:
            self.line(ind, f"{self.p.namer(buf)} = {self.p.buffer_call(self.p.dialect.alloc, buf, alloc=True)}")

    def _iter_vars(self, s, ind):
        items = list(zip(s.block.iter_vars, s.iter_values))
        k = 0
        while k < len(items):
            run = k
            while run < len(items) and self._remappable(*items[run]):
                run += 1
            if run - k >= 2:
                self._remap(items[k:run], ind)
                k = run
                continue
            self._axis(*items[k], ind)
            k += 1

    def _remappable(self, iv, value) -> bool:
        loop = self.loops.get(id(value)) if isinstance(value, Var) else None
        if loop is None or iv.kind not in _REMAP or iv.var.dtype != value.dtype:
            return False
        from ..structural import same_ir

        return same_ir(iv.dom.min, loop.min) and same_ir(iv.dom.extent, loop.extent)

    def _remap(self, items, ind):
        names = ", ".join(self.p.namer(iv.var) for iv, _ in items)
        kinds = "".join(_REMAP[iv.kind] for iv, _ in items)
        loops = ", ".join(self.p.namer(v) for _, v in items)
        self.line(ind, f'{names} = T.axis.remap("{kinds}", [{loops}])')

    def _axis(self, iv, value, ind):
        lo, ext = iv.dom.min, iv.dom.extent
        dom = self.p.expr(ext) if _zero_min(lo, ext) else f"({self.p.expr(lo)}, {span_text(self.p, lo, ext)})"
        name = self.p.namer(iv.var)
        self.line(ind, f"{name} = T.axis.{_AXIS[iv.kind]}({dom}, {self.p.expr(value)})")

    def regions(self, regions) -> str:
        return ", ".join(self.region(r) for r in regions)

    def region(self, r) -> str:
        parts = []
        for rg in r.region:
            lo, ext = rg.min, rg.extent
            if isinstance(ext, IntImm) and ext.value == 1 and ext.dtype == lo.dtype:
                parts.append(self.p.expr(lo))
            else:
                parts.append(f"{self.p.expr(lo)}:{span_text(self.p, lo, ext)}")
        return f"{self.p.namer(r.buffer)}[{', '.join(parts) or '()'}]"


def _uses_any(e, loops) -> bool:
    ids = {id(f.loop_var) for f in loops}
    found = []
    post_order_visit(e, lambda n: found.append(n) if id(n) in ids else None)
    return bool(found)

