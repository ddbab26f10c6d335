"""PrimFuncs as TVMScript: decorator, signature, attributes, symbolic variables, root block."""
from __future__ import annotations

import json

import attrs

from ..buffer import Buffer
from ..expr import IntImm, SizeVar, Var
from ..function import PrimFunc
from ..functor import post_order_visit
from ..stmt import BlockRealize, For, IterVar, LaunchThread, LetStmt
from ..expr import Let
from .expr import ExprPrinter
from .names import Namer
from .tir_stmt import StmtPrinter, literal


@attrs.frozen
class Dialect:
    """The spellings that differ between the ``tirx`` (0.25+) and ``tir`` dialects."""

    module: str
    block: str
    alloc: str
    block_attr: str
    s_tir: bool


DIALECTS = {
    "tirx": Dialect("tirx", "T.sblock", "T.sblock_alloc_buffer", "T.sblock_attr", True),
    "tir": Dialect("tir", "T.block", "T.alloc_buffer", "T.block_attr", False),
}


class FuncPrinter:
    """Prints one PrimFunc into ``lines``."""

    def __init__(self, namer: Namer, dialect: Dialect, lines: list, module_vars=frozenset()):
        self.namer = namer
        self.dialect = dialect
        self.lines = lines
        self.expr = ExprPrinter(namer)
        self.module_vars = module_vars

    def buffer_call(self, fn: str, buf: Buffer, first: "str | None" = None, alloc: bool = False,
                    quote: bool = False) -> str:
        """``T.Buffer((4, n), "float32", ...)``-style text for a buffer declaration.

        ``quote`` writes compound extents as strings (``"n + T.int64(8)"``), as TVM does
        in a signature.
        """
        shape = ", ".join(self._extent(s, quote) for s in buf.shape)
        parts = [first] if first is not None else []
        parts.append(f"({shape},)" if len(buf.shape) == 1 else f"({shape})")
        if not (alloc and str(buf.dtype) == "float32"):
            parts.append(f'"{buf.dtype}"')
        if buf.strides:
            parts.append("strides=(" + ", ".join(self.expr(s) for s in buf.strides) + (",)" if len(buf.strides) == 1 else ")"))
        if buf.elem_offset is not None:
            parts.append(f"elem_offset={self.expr(buf.elem_offset)}")
        if buf.scope != "global":
            parts.append(f'scope="{buf.scope}"')
        return f"{fn}({', '.join(parts)})"

    def _extent(self, e, quote: bool) -> str:
        text = self.expr(e)
        if not quote or isinstance(e, (IntImm, Var)):
            return text
        return json.dumps(text)

    def function(self, f: PrimFunc, name: str, ind: int) -> None:
        """The decorator, signature and body of ``f`` defined as ``name``."""
        attrs_, private = _visible_attrs(f, name)
        flags = (["private=True"] if private else []) + (["s_tir=True"] if self.dialect.s_tir and _has_root(f) else [])
        self.line(ind, "@T.prim_func" + (f"({', '.join(flags)})" if flags else ""))
        free = [v for v in free_vars(f) if id(v) not in self.module_vars]
        for v in free:
            self.namer(v)
        params = ", ".join(self._param(p, f) for p in f.params)
        self.line(ind, f"def {name}({params}):")
        if attrs_:
            self.line(ind + 1, f"T.func_attr({literal(self, attrs_)})")
        for v in free:
            flag = "is_size_var=True" if isinstance(v, SizeVar) else ""
            self.line(ind + 1, f"{self.namer(v)} = T.{v.dtype}({flag})")
        self._match_buffers(f, ind + 1)
        self._body(f.body, ind + 1)

    def line(self, ind: int, text: str) -> None:
        self.lines.append("    " * ind + text)

    def _param(self, p: Var, f: PrimFunc) -> str:
        buf = f.buffer_map.get(p)
        if buf is None:
            return f"{self.namer(p)}: T.{p.dtype}"
        if buf.data is p:
            return f"{self.namer(p)}: T.handle"
        return f"{self.namer(buf)}: {self.buffer_call('T.Buffer', buf, quote=True)}"

    def _match_buffers(self, f: PrimFunc, ind: int) -> None:
        for p in f.params:
            buf = f.buffer_map.get(p)
            if buf is not None and buf.data is p:
                call = self.buffer_call("T.match_buffer", buf, first=self.namer(p))
                self.line(ind, f"{self.namer(buf)} = {call}")

    def _body(self, body, ind: int) -> None:
        stmts = StmtPrinter(self)
        if _is_implicit_root(body):
            root = body.block
            self.line(ind, f'# with {self.dialect.block}("root"):')
            stmts.allocs(root.alloc_buffers, ind)
            stmts.stmt(root.body, ind)
            return
        stmts.stmt(body, ind)


def _visible_attrs(f: PrimFunc, name: str):
    """(attributes to print, private flag): a trailing global_symbol equal to the name is implied."""
    items = list(f.attrs.items())
    if items and items[-1] == ("global_symbol", name):
        return dict(items[:-1]), False
    return dict(items), True


def _has_root(f: PrimFunc) -> bool:
    return isinstance(f.body, BlockRealize) and f.body.block.name == "root"


def _is_implicit_root(body) -> bool:
    if not isinstance(body, BlockRealize) or body.block.name != "root" or body.iter_values:
        return False
    b = body.block
    plain = not (b.reads or b.writes or b.init is not None or b.match_buffers or b.annotations)
    return plain and isinstance(body.predicate, IntImm) and body.predicate.value == 1


def free_vars(node) -> list:
    """Scalar variables used in ``node`` but bound nowhere inside it (in first-use order)."""
    bound, used, seen = set(), [], set()

    def visit(n):
        if isinstance(n, For):
            bound.add(id(n.loop_var))
        elif isinstance(n, (IterVar, LetStmt, Let, LaunchThread)):
            bound.add(id(n.var))
        elif isinstance(n, PrimFunc):
            bound.update(id(p) for p in n.params)
        elif isinstance(n, Buffer) and n.data is not None:
            bound.add(id(n.data))
        elif isinstance(n, Var) and id(n) not in seen:
            seen.add(id(n))
            used.append(n)

    post_order_visit(node, visit)
    return [v for v in used if id(v) not in bound]
