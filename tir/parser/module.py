"""The top level of a TVMScript file: ``@I.ir_module class``, a lone ``@T.prim_func``, TypeVars."""
from __future__ import annotations

import ast

from .. import dtype as dt
from .. import relax as rx
from ..expr import SizeVar
from ..function import PrimFunc
from ..module import IRModule
from .context import Context, describe, dotted, error
from .literals import literal_dict
from .prim_func import decorator_flags, prim_func
from .relax import function
from .tir_calls import positional


def read_file(ctx: Context, tree: ast.Module):
    """An IRModule for a module class, a PrimFunc for a lone prim_func."""
    result = None
    for node in tree.body:
        if _skippable(node):
            continue
        if _type_var(ctx, node):
            continue
        if result is not None:
            raise error(node, "expected a single @I.ir_module class or @T.prim_func per file")
        result = _definition(ctx, node)
    if result is None:
        raise error(tree, "no @I.ir_module class or @T.prim_func found")
    return result


def _skippable(node) -> bool:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return True
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _type_var(ctx, node) -> bool:
    """``n = TypeVar("n")``: a module-wide symbolic size (an int64 size variable)."""
    if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
        return False
    name = dotted(node.value.func)
    if name not in ("TypeVar", "typing.TypeVar", "T.int64", "T.int32"):
        return False
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        raise error(node, "expected one name on the left of '='")
    target = node.targets[0].id
    if name.endswith("TypeVar"):
        (arg,) = positional(node.value, 1, 1, ("bound",))
        ctx.define(target, SizeVar(target, dt.int64))
        return True
    from .tir_stmt import symbolic_var

    ctx.define(target, symbolic_var(ctx, node, node.value, name))
    return True


def _definition(ctx, node):
    if isinstance(node, ast.ClassDef):
        return _module(ctx, node)
    if isinstance(node, ast.FunctionDef):
        flags = decorator_flags(ctx, node, "T.prim_func")
        if flags is not None:
            return prim_func(ctx, node, flags)
        flags = decorator_flags(ctx, node, "R.function")
        if flags is not None:
            return function(ctx, node, flags)
        raise error(node, f"function {node.name!r} needs the @T.prim_func (or @R.function) decorator")
    raise error(node, f"unexpected {describe(node)!r} at the top level; expected @I.ir_module class or @T.prim_func")


MODULE_DECORATORS = ("I.ir_module", "tvm.script.ir_module", "tvm.script.ir.ir_module", "ir_module")
"""``@I.ir_module`` as TVM prints it, ``@tvm.script.ir_module`` as TVM 0.9-0.11 and hand-written
scripts spell it (with or without arguments such as ``check_well_formed=False``)."""


def _module(ctx, node: ast.ClassDef) -> IRModule:
    if not any(dotted(d.func if isinstance(d, ast.Call) else d) in MODULE_DECORATORS for d in node.decorator_list):
        raise error(node, f"class {node.name!r} needs the @I.ir_module decorator")
    ctx.module_name = node.name
    functions, attrs = {}, {}
    for item in node.body:
        if _module_attrs(ctx, item, attrs):
            continue
        name, func = _member(ctx, item)
        if name in functions:
            raise error(item, f"function {name!r} is defined twice")
        functions[name] = func
    for name, ref in ctx.global_refs:
        if name not in functions:
            raise error(ref, f"module has no function {name!r}")
    prims = {n: f for n, f in functions.items() if isinstance(f, PrimFunc)}
    for name, func in functions.items():
        if isinstance(func, rx.Function):
            functions[name] = rx.type_metadata_constants(func, prims)
    return IRModule(functions, attrs)


def _module_attrs(ctx, item, attrs: dict) -> bool:
    if isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str):
        return True
    if not (isinstance(item, ast.Expr) and isinstance(item.value, ast.Call)):
        return False
    if dotted(item.value.func) != "I.module_attrs":
        return False
    (arg,) = positional(item.value, 1)
    attrs.update(literal_dict(ctx, arg))
    return True


def _member(ctx, item):
    if not isinstance(item, ast.FunctionDef):
        raise error(item, f"unexpected {describe(item)!r} in a module; expected @T.prim_func or @R.function")
    flags = decorator_flags(ctx, item, "T.prim_func")
    if flags is not None:
        return item.name, prim_func(ctx, item, flags)
    flags = decorator_flags(ctx, item, "R.function")
    if flags is not None:
        return item.name, function(ctx, item, flags)
    raise error(item, f"function {item.name!r} needs @T.prim_func or @R.function")
