"""``opinfo show PATH``: a short summary of a TVMScript file, or ``--script`` to re-print it."""
from __future__ import annotations

import json

import tir
from tir import relax as rx
from tir.expr import as_int
from tir.stmt import LaunchThread

from .common import InputError, fail, read_module, with_examples


def add_parser(subparsers) -> None:
    """Register the ``show`` subcommand."""
    p = subparsers.add_parser("show", help="summarise a TVMScript file (functions, buffers, blocks, loops)",
                               **with_examples("opinfo show model.py", "opinfo show model.py --script --dialect tir",
                                               "opinfo show model.py --json"))
    p.add_argument("path", help="a TVMScript file: an @I.ir_module or a single @T.prim_func")
    p.add_argument("--script", action="store_true", help="re-print the file as TVMScript instead")
    p.add_argument("--dialect", choices=("tirx", "tir"), default="tirx",
                   help="TVMScript dialect for --script (default: tirx, TVM 0.25+)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")


def run(args) -> int:
    """Print the summary (or the script); exit 2 on a file that cannot be read."""
    try:
        node = read_module(args.path)
    except InputError as err:
        return fail(str(err))
    if args.script:
        print(tir.to_script(node, dialect=args.dialect), end="")
        return 0
    funcs = _functions(node)
    if args.json:
        print(json.dumps({"file": args.path, "functions": [_func_json(n, f) for n, f in funcs]}))
        return 0
    print(f"{args.path}: {len(funcs)} function(s)")
    for name, f in funcs:
        print("\n".join(_func_lines(name, f)))
    return 0


def _functions(node) -> list:
    if isinstance(node, tir.IRModule):
        return list(node.functions.items())
    return [(node.name or "main", node)]


def dim(e) -> str:
    """A shape entry as text: a number or the expression's script."""
    if isinstance(e, int):
        return str(e)
    v = as_int(e)
    return str(v) if v is not None else tir.to_script(e)


def _jdim(e):
    """A shape entry for JSON: an int when constant, else the expression's script."""
    if isinstance(e, int):
        return e
    v = as_int(e)
    return v if v is not None else tir.to_script(e)


def _shape(shape) -> str:
    return "[" + ", ".join(dim(d) for d in shape) + "]"


# ---------------------------------------------------------------------------- text

def _func_lines(name: str, f) -> list:
    if isinstance(f, rx.Function):
        return _graph_lines(name, f)
    params = ", ".join(_param_text(p, f) for p in f.params)
    lines = [f"prim_func {name}({params})"]
    root = f.root_block
    for b in root.alloc_buffers if root is not None else ():
        lines.append(f"  alloc {b.name}: {b.dtype}{_shape(b.shape)}")
    lines += _outline(root.body if root is not None else f.body, 1)
    return lines


def _param_text(p, f) -> str:
    buf = f.buffer_map.get(p)
    if buf is None:
        return f"{p.name}: {p.dtype}"
    return f"{buf.name}: {buf.dtype}{_shape(buf.shape)}"


def _outline(s, depth: int) -> list:
    """Loops and blocks of a statement, one line each, indented by nesting."""
    pad = "  " * depth
    if isinstance(s, tir.SeqStmt):
        return [line for x in s.seq for line in _outline(x, depth)]
    if isinstance(s, tir.For):
        nest = [s]
        while isinstance(nest[-1].body, tir.For):
            nest.append(nest[-1].body)
        loops = ", ".join(f"{f.loop_var.name}<{dim(f.extent)}>" + _kind(f) for f in nest)
        return [f"{pad}for {loops}"] + _outline(nest[-1].body, depth + 1)
    if isinstance(s, tir.BlockRealize):
        b = s.block
        its = ", ".join(f"{iv.var.name}:{iv.kind.value[0].upper()}<{dim(iv.dom.extent)}>" for iv in b.iter_vars)
        init = " (with init)" if b.init is not None else ""
        return [f"{pad}block {b.name} [{its}]{init}"] + _outline(b.body, depth + 1)
    if isinstance(s, tir.AllocateBuffer):  # in the body: TIR after TVM's lowering passes
        b = s.buffer
        scope = f" ({b.scope})" if b.scope != "global" else ""
        what = f"view {b.name}: {b.dtype}{_shape(b.shape)} of {s.source.name}" if s.source is not None \
            else f"alloc {b.name}: {b.dtype}{_shape(b.shape)}{scope}"
        return [pad + what] + _outline(s.body, depth)
    if isinstance(s, LaunchThread):
        return [f"{pad}launch {s.tag} {s.var.name}<{dim(s.extent)}>"] + _outline(s.body, depth + 1)
    if isinstance(s, (tir.LetStmt, tir.AttrStmt, tir.IfThenElse)):
        inner = [s.then_case, s.else_case] if isinstance(s, tir.IfThenElse) else [s.body]
        return [line for x in inner if x is not None for line in _outline(x, depth)]
    return []


def _kind(f) -> str:
    return "" if f.kind is tir.ForKind.SERIAL else f" {f.kind.value}"


def _graph_lines(name: str, f) -> list:
    params = ", ".join(f"{p.name}: {_type_text(p.type)}" for p in f.params)
    calls = [b.value for b in f.bindings if isinstance(b.value, (rx.CallTIR, rx.CallDPSPacked))]
    lines = [f"graph function {name}({params})" if len(f.params) <= 6 else
             f"graph function {name}({len(f.params)} parameters)"]
    lines.append(f"  {len(f.bindings)} bindings in {len(f.blocks)} block(s), {len(calls)} calls")
    counts = _callee_counts(calls)
    if counts:
        lines.append("  calls: " + ", ".join(f"{k} x{n}" if n > 1 else k for k, n in counts.items()))
    return lines


def _callee_counts(calls) -> dict:
    counts: dict = {}
    for c in calls:
        key = c.func.name if isinstance(c, rx.CallTIR) else c.func
        counts[key] = counts.get(key, 0) + 1
    return counts


def _type_text(t) -> str:
    if isinstance(t, rx.TensorType):
        return f"{t.dtype}{_shape(t.shape)}" if t.shape is not None else f"{t.dtype}[ndim={t.ndim}]"
    if isinstance(t, rx.TupleType):
        return "(" + ", ".join(_type_text(x) for x in t.fields) + ")"
    return type(t).__name__


# ---------------------------------------------------------------------------- json

def _func_json(name: str, f) -> dict:
    if isinstance(f, rx.Function):
        calls = [b.value for b in f.bindings if isinstance(b.value, (rx.CallTIR, rx.CallDPSPacked))]
        return {"name": name, "kind": "graph", "params": [{"name": p.name, "type": _type_text(p.type)} for p in f.params],
                "bindings": len(f.bindings), "calls": _callee_counts(calls)}
    params = []
    for p in f.params:
        buf = f.buffer_map.get(p)
        params.append({"name": p.name, "dtype": str(p.dtype)} if buf is None else
                      {"name": buf.name, "dtype": str(buf.dtype), "shape": [_jdim(d) for d in buf.shape]})
    blocks = [{"name": b.name, "iter_vars": [{"name": iv.var.name, "kind": iv.kind.value, "extent": _jdim(iv.dom.extent)}
                                             for iv in b.iter_vars]} for b in f.blocks()]
    return {"name": name, "kind": "prim_func", "params": params, "blocks": blocks}
