"""C emitter: ``emit_c(func)`` prints a PrimFunc as one C99 function.

The function takes one ``restrict`` pointer per buffer parameter, then the scalar parameters,
then the symbolic extents the buffers use (``int64_t n``), in the order of
:func:`c_signature`. Index arithmetic is int64; blocks become scopes binding their iteration
variables; an init runs where all reduction variables are at their minimum, as in TVM. Loop
nests around one block are scheduled by :mod:`tir.codegen_c_sched` (OpenMP over a safe outer
spatial loop, reductions in a local accumulator or with the innermost spatial loop last).
``build(func)`` (in :mod:`tir.codegen_c_build`) compiles it with gcc.
"""
from __future__ import annotations

import attrs

from . import expr as E
from . import stmt as S
from .codegen_c_expr import CodegenError, ExprPrinter, Namer, bf16_round, c_type, prelude
from .function import PrimFunc
from .functor import post_order_visit

__all__ = ["emit_c", "build", "c_signature", "CodegenError", "CSignature"]


@attrs.frozen
class CSignature:
    """How a PrimFunc's arguments map to the C function's parameters."""

    symbol: str
    """The C function name."""
    buffers: tuple
    """Buffer parameters, in order (one pointer each)."""
    scalars: tuple
    """Scalar parameters (Vars), in order."""
    shape_vars: tuple
    """Symbolic extents/strides used by the buffers, passed after the scalars."""


def c_signature(func: PrimFunc) -> CSignature:
    """The parameter order of the emitted C function."""
    namer = Namer()
    symbol = "tir_" + namer.fresh(func.name or "main")
    scalars = func.scalar_params
    seen, shape_vars = set(scalars), []
    for buf in func.buffers:
        for e in (*buf.shape, *buf.strides, *([buf.elem_offset] if buf.elem_offset is not None else [])):
            for v in _vars(e):
                if v not in seen:
                    seen.add(v)
                    shape_vars.append(v)
    return CSignature(symbol, func.buffers, tuple(scalars), tuple(shape_vars))


def _vars(e) -> list:
    found = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, E.Var) else None)
    return found


def emit_c(func: PrimFunc) -> str:
    """Readable C99 source defining the function described by :func:`c_signature`."""
    sig = c_signature(func)
    em = Emitter()
    params = []
    for buf in sig.buffers:
        params.append(f"{c_type(buf.dtype)}* restrict {em.buffer_name(buf)}")
    for v in (*sig.scalars, *sig.shape_vars):
        params.append(f"{c_type(v.dtype)} {em.var(v)}")
    for buf in sig.buffers:
        em.declare_layout(buf)
    em.stmt(func.body)
    body = "\n".join(em.lines)
    header = f"/* generated from PrimFunc {_comment(func.name or 'main')} by tir.codegen_c */"
    return f"{prelude()}\n{header}\nvoid {sig.symbol}({', '.join(params) or 'void'}) {{\n{body}\n}}\n"


def _comment(text: str) -> str:
    return "".join(c if c.isalnum() or c in " _.-" else "?" for c in text)[:60]


class Emitter:
    """Accumulates C lines for statements; knows the C names and layouts of buffers."""

    def __init__(self):
        self.names = Namer()
        self.lines: list = []
        self.depth = 1
        self.in_parallel = False
        self.locals: dict = {}
        """Buffer -> (C variable, indices): accesses at these indices use the local."""
        self._layout: dict = {}
        self.print = ExprPrinter(self.var, self.load)

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def open(self, text: str) -> None:
        self.line(text + " {")
        self.depth += 1

    def close(self) -> None:
        self.depth -= 1
        self.line("}")

    def var(self, v) -> str:
        return self.names(v, v.name)

    def buffer_name(self, buf) -> str:
        return self.names(buf, buf.name)

    def expr(self, e) -> str:
        return self.print(e)

    def index(self, e) -> str:
        text = self.expr(e)
        return text if str(e.dtype) == "int64" else f"((int64_t){text})"

    def declare_layout(self, buf) -> None:
        """Record the C text of each stride (and the offset) of ``buf``."""
        if buf.strides:
            strides = [self.index(s) for s in buf.strides]
        elif all(isinstance(s, E.IntImm) for s in buf.shape):
            from .interp_data import compact_strides

            strides = [str(s) for s in compact_strides([s.value for s in buf.shape])]
        else:
            strides, acc = [], None
            for s in reversed(buf.shape):
                strides.append(acc or "1")
                text = self.index(s)
                acc = text if acc is None else f"({acc} * {text})"
            strides.reverse()
        offset = self.index(buf.elem_offset) if buf.elem_offset is not None else None
        self._layout[buf] = (strides, offset)

    def offset(self, buf, indices) -> str:
        if buf not in self._layout:
            raise CodegenError(f"buffer {buf.name!r} is used outside of where it is allocated")
        strides, offset = self._layout[buf]
        terms = [offset] if offset else []
        for idx, stride in zip(indices, strides):
            i = self.index(idx)
            terms.append(i if stride == "1" else f"{i} * {stride}")
        return " + ".join(terms) or "0"

    def load(self, e) -> str:
        local = self.locals.get(e.buffer)
        if local is not None and _same(local[1], e.indices):
            return local[0]
        return f"{self.buffer_name(e.buffer)}[{self.offset(e.buffer, e.indices)}]"

    def stmt(self, s) -> None:
        handler = getattr(self, "_" + type(s).__name__.lower(), None)
        if handler is None:
            raise CodegenError(f"the C engine cannot express {type(s).__name__}")
        handler(s)

    def _seqstmt(self, s):
        for c in s.seq:
            self.stmt(c)

    def _bufferstore(self, s):
        value = bf16_round(self.expr(s.value), s.buffer.dtype)
        local = self.locals.get(s.buffer)
        if local is not None and _same(local[1], s.indices):
            self.line(f"{local[0]} = {value};")
            return
        self.line(f"{self.buffer_name(s.buffer)}[{self.offset(s.buffer, s.indices)}] = {value};")

    def _letstmt(self, s):
        self.open("")
        self.line(f"{c_type(s.var.dtype)} {self.var(s.var)} = {self.expr(s.value)};")
        self.stmt(s.body)
        self.close()

    def _ifthenelse(self, s):
        self.open(f"if ({self.expr(s.condition)})")
        self.stmt(s.then_case)
        self.close()
        if s.else_case is not None:
            self.open("else")
            self.stmt(s.else_case)
            self.close()

    def _attrstmt(self, s):
        self.line(f"/* attr {_comment(' '.join(s.attrs))} */")
        self.stmt(s.body)

    def _evaluate(self, s):
        v = s.value
        if isinstance(v, E.Call) and v.op == "call_packed" and v.args and isinstance(v.args[0], E.StringImm) \
                and v.args[0].value == "tvm.contrib.sort.argsort":
            self._argsort(v.args[1:])
            return
        self.line(f"(void)({self.expr(v)});")

    def _argsort(self, args) -> None:
        """TVM's runtime ``argsort`` (median's legalization): along ``axis``, the positions
        that sort the data, stably (equal values keep their order), as the interpreter's
        :mod:`.interp_packed` does; an insertion sort per row."""
        if len(args) != 4:
            raise CodegenError("tvm.contrib.sort.argsort takes (data, out, axis, is_ascend)")
        from .interp_packed import constant_flag, stack_array

        arrays = [stack_array(a) for a in args[:2]]
        if None in arrays:
            raise CodegenError("tvm.contrib.sort.argsort expects T.tvm_stack_make_array arguments over buffers")
        (src, dims), (dst, _) = arrays
        axis, ascend = constant_flag(args[2]), constant_flag(args[3])
        if axis is None or ascend is None or not -len(dims) <= axis < len(dims):
            raise CodegenError("tvm.contrib.sort.argsort needs a constant axis in range and order")
        axis %= len(dims)
        prod = lambda ds: " * ".join(f"(int64_t)({self.index(d)})" for d in ds) or "1"
        zeros = lambda b: [E.const(0, "int64")] * len(b.shape)
        data = f"({self.buffer_name(src)} + {self.offset(src, zeros(src))})"
        out = f"({self.buffer_name(dst)} + {self.offset(dst, zeros(dst))})"
        worse = ">" if ascend else "<"
        self.open("")
        self.line(f"int64_t n_ = {prod([dims[axis]])}, inner_ = {prod(dims[axis + 1:])}, outer_ = {prod(dims[:axis])};")
        self.line("int64_t* idx_ = (int64_t*)malloc(sizeof(int64_t) * (n_ > 0 ? n_ : 1));")
        self.open("for (int64_t o_ = 0; o_ < outer_; ++o_)")
        self.open("for (int64_t i_ = 0; i_ < inner_; ++i_)")
        self.line(f"const {c_type(src.dtype)}* row_ = {data} + o_ * n_ * inner_ + i_;")
        self.line("for (int64_t k_ = 0; k_ < n_; ++k_) idx_[k_] = k_;")
        self.open("for (int64_t a_ = 1; a_ < n_; ++a_)")
        self.line("int64_t t_ = idx_[a_], b_ = a_ - 1;")
        self.line(f"while (b_ >= 0 && row_[idx_[b_] * inner_] {worse} row_[t_ * inner_]) {{ idx_[b_ + 1] = idx_[b_]; --b_; }}")
        self.line("idx_[b_ + 1] = t_;")
        self.close()
        self.line(f"for (int64_t k_ = 0; k_ < n_; ++k_) {out}[o_ * n_ * inner_ + i_ + k_ * inner_] = "
                  f"({c_type(dst.dtype)})idx_[k_];")
        self.close()
        self.close()
        self.line("free(idx_);")
        self.close()

    def _while(self, s):
        self.open(f"while ({self.expr(s.condition)})")
        self.stmt(s.body)
        self.close()

    def _allocatebuffer(self, s):
        self.open("")
        if s.source is not None:
            self._view(s)
        elif _on_stack(s.buffer):
            self.declare_layout(s.buffer)
            self.line(f"{c_type(s.buffer.dtype)} {self.buffer_name(s.buffer)}[{_size(s.buffer)}] = {{0}};")
            self.stmt(s.body)
        else:
            self.allocate(s.buffer)
            self.stmt(s.body)
            self.line(f"free({self.buffer_name(s.buffer)});")
        self.close()

    def _view(self, s) -> None:
        """``b = src.view(...)``: a pointer into ``src``'s storage (derived from it, so a
        ``restrict`` source stays sound), ``b``'s own compact layout."""
        src = s.source
        if src.strides or src not in self._layout:
            raise CodegenError(f"view {s.buffer.name!r}: {src.name!r} is not a compact buffer in scope")
        _, offset = self._layout[src]
        t = c_type(s.buffer.dtype)
        start = self.buffer_name(src) + (f" + {offset}" if offset else "")
        if s.buffer.dtype != src.dtype:  # the storage's bytes read as another type (TVM's reuse)
            start = f"({t}*)({start})"
        self.declare_layout(s.buffer)
        self.line(f"{t}* {self.buffer_name(s.buffer)} = {start};")
        self.stmt(s.body)

    def allocate(self, buf) -> None:
        """Declare and zero-allocate ``buf`` (freed by the caller at the end of the scope)."""
        self.declare_layout(buf)
        t = c_type(buf.dtype)
        size = " * ".join(f"(size_t){self.index(x)}" for x in buf.shape) or "1"
        self.line(f"{t}* restrict {self.buffer_name(buf)} = ({t}*)calloc({size} + 1, sizeof({t}));")

    def _for(self, s):
        from .codegen_c_sched import emit_nest

        if emit_nest(self, s):
            return
        self.loop(s, parallel=s.kind == S.ForKind.PARALLEL and not _scatters(s.body))

    def loop(self, s, parallel: bool = False, body=None) -> None:
        """Emit ``s`` as a C for loop (OpenMP when ``parallel`` and not nested in one)."""
        v = self.var(s.loop_var)
        t = c_type(s.loop_var.dtype)
        lo, ext = self.expr(s.min), self.expr(s.extent)
        outer = self.in_parallel
        if parallel and not outer:
            self.line("#pragma omp parallel for schedule(static)")
            self.in_parallel = True
        end = ext if lo == "0" else f"{lo} + {ext}"
        self.open(f"for ({t} {v} = {lo}; {v} < {end}; ++{v})")
        if body is None:
            self.stmt(s.body)
        else:
            body()
        self.close()
        self.in_parallel = outer

    def _blockrealize(self, s):
        block = s.block
        self.open("")
        for iv, value in zip(block.iter_vars, s.iter_values):
            self.line(f"{c_type(iv.var.dtype)} {self.var(iv.var)} = {self.expr(value)};")
        pred = s.predicate
        guarded = not (isinstance(pred, E.IntImm) and pred.value)
        if guarded:
            self.open(f"if ({self.expr(pred)})")
        self.block_body(block)
        if guarded:
            self.close()
        self.close()

    def block_body(self, block) -> None:
        """Allocations, init under its condition, body, frees."""
        if block.match_buffers:
            raise CodegenError(f"block {block.name!r}: match_buffer is not supported by the C engine")
        for buf in block.alloc_buffers:
            self.allocate(buf)
        if block.init is not None:
            self.open(f"if ({self.init_condition(block)})")
            self.stmt(block.init)
            self.close()
        self.stmt(block.body)
        for buf in block.alloc_buffers:
            self.line(f"free({self.buffer_name(buf)});")

    def init_condition(self, block) -> str:
        conds = [f"{self.var(iv.var)} == {self.expr(iv.dom.min)}" for iv in block.iter_vars
                 if iv.kind == S.IterKind.REDUCE]
        return " && ".join(conds) or "1"


_STACK_LIMIT = 256
"""Elements of the largest local buffer held in a C array on the stack (per thread, as
TVM's "local" scope is) rather than allocated on the heap."""


def _on_stack(buf) -> bool:
    return (buf.scope == "local" and not buf.strides and buf.elem_offset is None
            and all(isinstance(x, E.IntImm) for x in buf.shape) and _size(buf) <= _STACK_LIMIT)


def _size(buf) -> int:
    n = 1
    for x in buf.shape:
        n *= x.value
    return max(n, 1)


def _same(a, b) -> bool:
    from .structural import same_ir

    return same_ir(tuple(a), tuple(b))


def build(func: PrimFunc):
    """Compile ``func`` with gcc and return a callable on numpy arrays (see codegen_c_build)."""
    from .codegen_c_build import build as _build

    return _build(func)


def _scatters(body) -> bool:
    """Some store under ``body`` is indexed by loaded data (index_put, scatter): iterations of a
    ``T.parallel`` loop around it may write one element, and run in parallel the last writer
    would be whichever thread came last. Such a loop runs in order, as the interpreter (and
    TVM's build, measured on index_put with repeated indices) runs it."""
    found = []

    def in_index(n):
        if isinstance(n, E.BufferLoad):
            found.append(n)

    def visit(n):
        if isinstance(n, S.BufferStore):
            for index in n.indices:
                post_order_visit(index, in_index)
    post_order_visit(body, visit)
    return bool(found)
