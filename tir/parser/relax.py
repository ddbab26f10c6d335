"""``@R.function`` -> graph-level Function: typed parameters, dataflow blocks of bindings."""
from __future__ import annotations

import ast

import attrs

from .. import dtype as dt
from .. import relax as rx
from ..expr import IntImm, PrimExpr, StringImm, Var
from ..errors import ParseError
from .context import describe, dotted, error
from .expr import dim_text, expr
from .literals import literal_dict
from .tir_calls import dtype_arg, keyword, positional
from .tir_stmt import _SYMBOLIC, symbolic_var


class ModuleRef:
    """The value of ``cls = Module`` inside a graph function."""


MODULE = ModuleRef()


def function(ctx, node: ast.FunctionDef, flags: dict) -> rx.Function:
    """Read an ``@R.function``; a non-private one gets ``global_symbol`` = its name."""
    a = node.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
        raise error(node, f"function {node.name!r}: only plain annotated parameters are supported")
    with ctx.scope():
        params = [_param(ctx, p) for p in a.args]
        ret_type = struct_info(ctx, node.returns) if node.returns is not None else None
        attrs, blocks, ret = _body(ctx, node)
    if not flags.get("private", False) and "global_symbol" not in attrs:
        attrs["global_symbol"] = node.name
    return rx.Function(tuple(params), tuple(blocks), ret, ret_type, attrs)


def _param(ctx, arg: ast.arg) -> rx.RVar:
    if arg.annotation is None:
        raise error(arg, f"parameter {arg.arg!r} needs a type such as R.Tensor((n, 4), \"float32\")")
    var = rx.RVar(arg.arg, struct_info(ctx, arg.annotation))
    ctx.define(arg.arg, var)
    return var


def _body(ctx, node):
    attrs, blocks, loose, ret = {}, [], [], None
    for k, s in enumerate(node.body):
        if ret is not None:
            raise error(s, "statement after return")
        ret = _guard(s, _statement, ctx, s, attrs, blocks, loose)
    if ret is None:
        raise error(node, f"function {node.name!r} has no return statement")
    if loose:
        blocks.append(rx.BindingBlock(tuple(loose)))
    return attrs, blocks, ret


def _guard(node, fn, *args):
    try:
        return fn(*args)
    except ParseError:
        raise
    except Exception as err:  # noqa: BLE001 - an IR constructor refused the parts
        raise error(node, f"invalid statement {describe(node)!r}: {err}") from None


def _statement(ctx, s, attrs, blocks, loose):
    """Read one statement of a graph function; returns the returned value for ``return``."""
    if isinstance(s, ast.Return):
        if s.value is None:
            raise error(s, "return needs a value")
        return value(ctx, s.value)
    if isinstance(s, ast.With):
        if loose:
            blocks.append(rx.BindingBlock(tuple(loose)))
            loose.clear()
        blocks.append(_dataflow(ctx, s))
        return None
    if isinstance(s, ast.Expr) and dotted(getattr(s.value, "func", None)) == "R.func_attr":
        (arg,) = positional(s.value, 1)
        attrs.update(literal_dict(ctx, arg))
        return None
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
        return None  # a docstring
    if _is_module_alias(ctx, s):
        ctx.define(s.targets[0].id, MODULE)
        return None
    if _is_symbolic_declaration(s):
        _declare(ctx, s)
        return None
    if _is_allocation(s):
        _allocate(ctx, s)
        return None
    if _is_storage(s):
        ctx.define(s.target.id if isinstance(s, ast.AnnAssign) else s.targets[0].id, _STORAGE)
        return None
    if isinstance(s, ast.Expr) and dotted(getattr(s.value, "func", None)) in _KILLS:
        return None  # the end of a lifetime the memory planner chose: nothing to compute
    if _is_shape_heap(s):
        ctx.define(s.target.id, _STORAGE)
        return None
    if isinstance(s, ast.Expr) and _is_static_check(s.value):
        return None  # VMShapeLower's checks of the parameters against main's (static) types
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and global_ref(ctx, s.value.func) is not None:
        loose.extend(_dps_call(ctx, s.value))
        return None
    loose.append(binding(ctx, s))
    return None


# ------------------------------------------------------------------ after CallTIRRewrite
# TVM's build pipeline (CallTIRRewrite) turns ``lv = R.call_tir(cls.f, (x,), out_ty=T)`` into
# ``alloc: T = R.builtin.alloc_tensor(...)`` and a statement ``cls.f(x, alloc)`` that writes
# it; StaticPlanBlockMemory / LowerAllocTensor place the allocation in planned storage
# (``R.memory.alloc_tensor(storage, ...)``), KillAfterLastUse adds ``R.memory.kill_*``
# statements, LowerRuntimeBuiltin renames them ``R.vm.*`` and a reshape becomes
# ``R.call_packed("vm.builtin.reshape", x, shape)``, VMShapeLower checks the parameters
# (static shapes only: its shape heap of symbolic dimensions is not read). Read back, the pair is that call_tir again, bound to the allocation's name at
# the call; kills end lifetimes and compute nothing.

@attrs.frozen(eq=False)
class _Allocation:
    """A name bound to an allocation (``R.builtin.alloc_tensor``, ``R.memory.alloc_tensor``),
    not yet written by a call."""

    name: str
    out_type: object


_STORAGE = object()
"""What a name bound to ``R.memory.alloc_storage`` stands for: storage only tensors use."""

_KILLS = ("R.memory.kill_tensor", "R.memory.kill_storage", "R.vm.kill_object")
_ALLOCATIONS = ("R.builtin.alloc_tensor", "R.memory.alloc_tensor", "R.vm.alloc_tensor")
_PLACED = ("R.memory.alloc_tensor", "R.vm.alloc_tensor")
_STORAGES = ("R.memory.alloc_storage", "R.vm.alloc_storage")


def _is_allocation(s) -> bool:
    """``R.builtin.alloc_tensor(...)``, or (after StaticPlanBlockMemory) a tensor placed in
    planned storage, ``R.memory.alloc_tensor(storage, offset, shape, dtype)``: the planner
    gives tensors whose lifetimes overlap distinct bytes, so each is a value of its own."""
    return (isinstance(s, (ast.Assign, ast.AnnAssign)) and isinstance(s.value, ast.Call)
            and dotted(s.value.func) in _ALLOCATIONS)


def _is_storage(s) -> bool:
    return (isinstance(s, (ast.Assign, ast.AnnAssign)) and isinstance(s.value, ast.Call)
            and dotted(s.value.func) in _STORAGES
            and isinstance(s.target if isinstance(s, ast.AnnAssign) else s.targets[0], ast.Name))


_CHECKS = ("vm.builtin.check_tensor_info", "vm.builtin.check_shape_info", "vm.builtin.check_tuple_info",
           "vm.builtin.check_prim_value_info")


def _is_shape_heap(s) -> bool:
    """``shape_heap: R.Any = R.null_value()``: VMShapeLower's store of symbolic dimensions."""
    return (isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and isinstance(s.value, ast.Call)
            and dotted(s.value.func) == "R.null_value" and not s.value.args)


def _is_static_check(call) -> bool:
    """``R.call_packed("vm.builtin.check_tensor_info", x, ...)``, or a
    ``"vm.builtin.match_shape"`` that only compares dimensions with constants (each
    dimension's code 0): VMShapeLower's checks of values main's types already state. A
    match_shape that stores a symbolic dimension (another code) is refused: the shape heap it
    fills is not read."""
    if not (isinstance(call, ast.Call) and dotted(call.func) == "R.call_packed" and call.args
            and isinstance(call.args[0], ast.Constant)):
        return False
    name = call.args[0].value
    if name in _CHECKS:
        return True
    if name != "vm.builtin.match_shape":
        return False
    rest = call.args[3:]
    if not rest or not isinstance(rest[0], ast.Constant):
        return False
    ndim = rest[0].value
    codes = rest[1:1 + 2 * ndim:2]
    if len(codes) != ndim or not all(isinstance(c, ast.Constant) and c.value == 0 for c in codes):
        raise error(call, "vm.builtin.match_shape binds symbolic dimensions (VMShapeLower's shape heap): not read; "
                          "print the module before VMShapeLower")
    return True


def _allocate(ctx, s) -> None:
    call = s.value
    if dotted(call.func) in _PLACED:
        first = call.args[0] if call.args else None
        if not (isinstance(first, ast.Name) and ctx.lookup(first.id, first) is _STORAGE):
            raise error(call, f"{dotted(call.func)} takes storage from {dotted(call.func).replace('tensor', 'storage')} first")
    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
        ctx.define(s.target.id, _Allocation(s.target.id, struct_info(ctx, s.annotation)))
        return
    raise error(s, f"{dotted(call.func)}: write the allocation as name: R.Tensor(...) = ..., as TVM prints it")


def _dps_call(ctx, node) -> list:
    """``cls.f(inputs..., outputs...)``: the outputs are the trailing allocations."""
    gv = global_ref(ctx, node.func)
    positional(node, 1, len(node.args))
    args = []
    for a in node.args:
        found = ctx.lookup(a.id, a) if isinstance(a, ast.Name) else None
        args.append(found if isinstance(found, _Allocation) else value(ctx, a))
    k = len(args)
    while k and isinstance(args[k - 1], _Allocation):
        k -= 1
    inputs, outputs = args[:k], args[k:]
    if not outputs:
        raise error(node, f"{describe(node.func)}(...): a call statement writes its trailing arguments, which must be "
                          "allocations (name: R.Tensor(...) = R.builtin.alloc_tensor(...))")
    if len({id(o) for o in outputs}) != len(outputs):
        raise error(node, f"{describe(node.func)}(...): one allocation is written twice by the call")
    if any(isinstance(a, _Allocation) for a in inputs):
        raise error(node, f"{describe(node.func)}(...): an allocation is read before a call writes it")
    if len(outputs) == 1:
        out = outputs[0]
        var = rx.RVar(out.name, out.out_type)
        ctx.define(out.name, var)
        return [rx.Binding(var, rx.CallTIR(gv, tuple(inputs), out.out_type))]
    types = rx.TupleType(tuple(o.out_type for o in outputs))
    whole = rx.RVar("_".join(o.name for o in outputs), types)
    bindings = [rx.Binding(whole, rx.CallTIR(gv, tuple(inputs), types))]
    for i, out in enumerate(outputs):
        var = rx.RVar(out.name, out.out_type)
        ctx.define(out.name, var)
        bindings.append(rx.Binding(var, rx.TupleGetItem(whole, i)))
    return bindings


def _is_symbolic_declaration(s) -> bool:
    """``s = T.int64()``: a shape variable a later ``R.match_cast`` binds."""
    return (isinstance(s, ast.Assign) and isinstance(s.value, ast.Call) and not s.value.args
            and dotted(s.value.func) in _SYMBOLIC)


def _declare(ctx, s) -> None:
    var = symbolic_var(ctx, s, s.value, dotted(s.value.func))  # as a prim_func declares one
    ctx.define(var.name, var)


def _is_module_alias(ctx, s) -> bool:
    return (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
            and isinstance(s.value, ast.Name) and s.value.id == ctx.module_name)


def _dataflow(ctx, node: ast.With) -> rx.DataflowBlock:
    if len(node.items) != 1 or dotted(getattr(node.items[0].context_expr, "func", None)) != "R.dataflow":
        raise error(node, "expected with R.dataflow():")
    bindings, outputs = [], None
    for s in node.body:
        if outputs is not None:
            raise error(s, "statement after R.output(...) in a dataflow block")
        if isinstance(s, ast.Expr) and dotted(getattr(s.value, "func", None)) == "R.output":
            outputs = tuple(_output(ctx, a) for a in positional(s.value, 0, len(s.value.args)))
            continue
        if _is_symbolic_declaration(s):
            _declare(ctx, s)
            continue
        bindings.append(_guard(s, binding, ctx, s))
    return rx.DataflowBlock(tuple(bindings), outputs or ())


def _output(ctx, node) -> rx.RVar:
    v = value(ctx, node)
    if not isinstance(v, rx.RVar):
        raise error(node, "R.output takes variables bound in the dataflow block")
    return v


def binding(ctx, s) -> rx.Binding:
    """``lv = value`` or ``gv: R.Tensor(...) = value``."""
    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value is not None:
        target, ann = s.target, struct_info(ctx, s.annotation)
    elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
        target, ann = s.targets[0], None
    else:
        raise error(s, f"unsupported statement {describe(s)!r} in a graph function; expected name = value")
    rhs = value(ctx, s.value)
    var = rx.RVar(target.id, ann)
    ctx.define(target.id, var)
    return rx.Binding(var, rhs)


# ---------------------------------------------------------------------------- values

def value(ctx, node):
    """A graph-level expression: variable, tuple, tuple item, call_tir, call_dps_packed, call."""
    if isinstance(node, ast.Name):
        v = ctx.lookup(node.id, node)
        if isinstance(v, _Allocation):
            raise error(node, f"{node.id!r} is an allocation (R.builtin.alloc_tensor) read before a call writes it")
        if isinstance(v, PrimExpr):
            return rx.PrimValue(v)
        if not isinstance(v, rx.RExpr):
            raise error(node, f"{node.id!r} is not a graph-level value")
        return v
    if isinstance(node, ast.Tuple):
        return rx.Tuple(tuple(value(ctx, e) for e in node.elts))
    if isinstance(node, ast.Subscript):
        return _item(ctx, node)
    if isinstance(node, ast.Call) and dotted(node.func) in ("R.prim_value", "R.PrimValue"):
        (arg,) = positional(node, 1)
        return prim_value(ctx, arg)
    if _is_tir_call(node) or isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Constant)):
        return prim_value(ctx, node)
    if isinstance(node, ast.Call):
        return _call(ctx, node)
    raise error(node, f"unsupported graph-level expression {describe(node)!r}")


def prim_value(ctx, node) -> rx.PrimValue:
    """A scalar passed as a graph-level value: ``n``, ``n * 18``, ``T.int64(4)``; a bare
    integer is int64, as ``R.prim_value(4)`` is in TVM."""
    v = expr(ctx, node)
    if type(v) is int:
        return rx.PrimValue(IntImm(dt.int64, v))
    if isinstance(v, PrimExpr) and not isinstance(v, StringImm):
        return rx.PrimValue(v)
    raise error(node, f"expected a graph-level value or a scalar expression, got {describe(node)!r}")


def _metadata(node) -> "str | None":
    """``metadata["kind"][i]`` (a constant printed without its metadata section) -> its text."""
    inner = node.value
    if (isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Name) and inner.value.id == "metadata"
            and isinstance(inner.slice, ast.Constant) and isinstance(inner.slice.value, str)
            and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int):
        return f'metadata["{inner.slice.value}"][{node.slice.value}]'
    return None


def _item(ctx, node):
    ref = _metadata(node)
    if ref is not None:
        return rx.Constant(None, None, ref)
    base = value(ctx, node.value)
    idx = node.slice
    if not (isinstance(idx, ast.Constant) and type(idx.value) is int):
        raise error(idx, "a tuple index must be an integer literal")
    return rx.TupleGetItem(base, idx.value)


def _call(ctx, node):
    name = dotted(node.func)
    if name == "R.call_tir":
        return _call_tir(ctx, node)
    if name == "R.call_dps_packed":
        args = positional(node, 2, 3, OUT_TY)
        func = expr(ctx, args[0])
        if not isinstance(func, str):
            raise error(args[0], "R.call_dps_packed needs the external function's name as a string")
        return rx.CallDPSPacked(func, _args(ctx, args[1]), _out_ty(ctx, node, args))
    if name == "R.tuple":
        positional(node, 0, len(node.args))
        return rx.Tuple(tuple(value(ctx, a) for a in node.args))
    gv = global_ref(ctx, node.func)
    if gv is not None:
        positional(node, 0, len(node.args))
        return rx.Call(gv, tuple(value(ctx, a) for a in node.args))
    if name is not None and name.startswith("R.") and name.count(".") <= 2:
        return _op_call(ctx, node, name[2:])
    raise error(node, f"unsupported call {describe(node.func)!r}; expected R.call_tir, R.call_dps_packed, "
                      "R.<op>(...) or cls.f(...)")


def _op_call(ctx, node, op: str) -> rx.OpCall:
    """``R.cumsum(x, axis=0)``: an op TVM did not lower, kept opaque with its arguments."""
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            raise error(arg, f"R.{op}: *arguments are not supported")
    kwargs = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise error(kw, f"R.{op}: **arguments are not supported")
        kwargs[kw.arg] = op_arg(ctx, kw.value)
    return rx.OpCall(op, tuple(op_arg(ctx, a) for a in node.args), kwargs)


def op_arg(ctx, node):
    """An argument of an opaque op: a graph-level value, or data (numbers, strings, None,
    PrimExprs, lists and tuples of these)."""
    if isinstance(node, ast.Name):
        found = ctx.names.get(node.id)
        if isinstance(found, rx.RExpr):
            return found
    if _non_finite(node):
        return float(node.args[0].value)
    if isinstance(node, (ast.Call, ast.Subscript)) and not _is_tir_call(node):
        return value(ctx, node)
    if isinstance(node, (ast.Tuple, ast.List)):
        return _op_sequence(ctx, node)
    if isinstance(node, ast.Dict):
        raise error(node, "a dict is not supported as an argument of an opaque op")
    from .literals import literal

    return literal(ctx, node)


def _non_finite(node) -> bool:
    """``float("inf")``, ``float("-inf")``, ``float("nan")``: how a non-finite number is written."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float"
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in ("inf", "-inf", "nan"))


def _is_tir_call(node) -> bool:
    return isinstance(node, ast.Call) and (dotted(node.func) or "").startswith("T.")


def _op_sequence(ctx, node):
    """A sequence of graph-level values is a Tuple; any other sequence stays data (a
    Python tuple, which may still hold graph-level values among constants)."""
    items = [op_arg(ctx, e) for e in node.elts]
    if items and all(isinstance(v, rx.RExpr) for v in items):
        return rx.Tuple(tuple(items))
    return tuple(items)


def _call_tir(ctx, node):
    args = positional(node, 2, 3, OUT_TY + ("tir_vars",))
    gv = global_ref(ctx, args[0])
    if gv is None:
        raise error(args[0], "R.call_tir needs a function of the module, written cls.name")
    tv_node = keyword(node, "tir_vars")
    tir_vars = _tir_vars(ctx, tv_node) if tv_node is not None else None
    return rx.CallTIR(gv, _args(ctx, args[1]), _out_ty(ctx, node, args), tir_vars)


def _tir_vars(ctx, node) -> tuple:
    if isinstance(node, ast.Call) and dotted(node.func) in ("R.shape", "R.ShapeExpr"):
        (node,) = positional(node, 1)
    if not isinstance(node, (ast.List, ast.Tuple)):
        raise error(node, "tir_vars must be R.shape([...])")
    return tuple(dim(ctx, e) for e in node.elts)


def _args(ctx, node) -> tuple:
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(value(ctx, e) for e in node.elts)
    if isinstance(node, ast.Call) and dotted(node.func) == "R.tuple":
        return value(ctx, node).fields
    return (value(ctx, node),)


OUT_TY = ("out_ty", "out_sinfo")
"""The output type's keyword: ``out_ty`` since TVM 0.27, ``out_sinfo`` before."""


def _out_ty(ctx, node, args):
    given = [kw for kw in node.keywords if kw.arg in OUT_TY]
    if len(given) + (len(args) > 2) > 1:
        raise error(node, f"{describe(node.func)}: the output type is given twice (out_ty and out_sinfo are one "
                          "argument)")
    out = args[2] if len(args) > 2 else given[0].value if given else None
    if out is None:
        raise error(node, f"{describe(node.func)} needs out_ty=R.Tensor(...) (out_sinfo= in TVM before 0.27)")
    return struct_info(ctx, out)


def global_ref(ctx, node) -> "rx.GlobalVar | None":
    """``cls.f`` -> GlobalVar("f"); the name is checked once the whole module is read."""
    if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name):
        return None
    owner = ctx.names.get(node.value.id)
    if owner is not MODULE and node.value.id != ctx.module_name:
        return None
    ctx.global_refs.append((node.attr, node))
    return rx.GlobalVar(node.attr)


# ---------------------------------------------------------------------------- types

def struct_info(ctx, node):
    """``R.Tensor(...)``, ``R.Tuple(...)``, a list of types, ``R.Shape(...)`` or ``R.Object``."""
    if isinstance(node, ast.List):
        return rx.TupleType(tuple(struct_info(ctx, e) for e in node.elts))
    name = dotted(node.func) if isinstance(node, ast.Call) else dotted(node)
    if name == "R.Tensor":
        return _tensor(ctx, node) if isinstance(node, ast.Call) else rx.TensorType(None, dt.float32, -1)
    if name == "R.Tuple":
        elts = node.args if isinstance(node, ast.Call) else []
        return rx.TupleType(tuple(struct_info(ctx, e) for e in elts))
    if name == "R.Shape":
        return _shape_type(ctx, node)
    if name == "R.Object":
        return rx.ObjectType()
    raise error(node, f"unsupported type {describe(node)!r}; expected R.Tensor, R.Tuple, R.Shape or R.Object")


def _tensor(ctx, node):
    args = positional(node, 0, 2, ("dtype", "ndim", "shape"))
    shape_node = args[0] if args else keyword(node, "shape")
    d_node = args[1] if len(args) > 1 else keyword(node, "dtype")
    if d_node is None:
        raise error(node, "R.Tensor needs a dtype, e.g. R.Tensor((n, 4), dtype=\"float32\")")
    shape = None if shape_node is None or _is_none(shape_node) else _dims(ctx, shape_node)
    ndim_node = keyword(node, "ndim")
    ndim = len(shape) if shape is not None else -1
    if ndim_node is not None:
        if not (isinstance(ndim_node, ast.Constant) and type(ndim_node.value) is int):
            raise error(ndim_node, "ndim must be an integer")
        ndim = ndim_node.value
        if shape is not None and ndim != len(shape):
            raise error(ndim_node, f"ndim={ndim} does not match a shape of {len(shape)} dimensions")
    return rx.TensorType(shape, dtype_arg(ctx, d_node), ndim if shape is None else -1)


def _shape_type(ctx, node):
    if not isinstance(node, ast.Call) or not node.args:
        return rx.ShapeType(None)
    (arg,) = positional(node, 1)
    return rx.ShapeType(_dims(ctx, arg))


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _dims(ctx, node) -> tuple:
    if not isinstance(node, (ast.Tuple, ast.List)):
        raise error(node, "a shape is a tuple such as (n, 4)")
    return tuple(dim(ctx, e) for e in node.elts)


def dim(ctx, node):
    """One dimension: an int, or an int64 PrimExpr; ``"n"`` names (and declares) a variable."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        found = ctx.names.get(node.value)
        if isinstance(found, Var):
            return found
        if not node.value.isidentifier():
            return dim_text(ctx, node)
        var = Var(node.value, dt.int64)
        ctx.define(node.value, var)
        return var
    v = expr(ctx, node)
    if type(v) is int:
        return v
    if isinstance(v, PrimExpr) and v.dtype.is_integer:
        return v
    raise error(node, f"expected an integer dimension, got {describe(node)!r}")
