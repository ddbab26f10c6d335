"""The walk over ``main`` that :func:`layout.plan` drives (see :mod:`layout.planner`)."""
from __future__ import annotations

import attrs

from tir.expr import as_int
from tir.function import PrimFunc
from tir.functor import substitute
from tir.relax import (
    Binding, BindingBlock, CallTIR, Constant, DataflowBlock, Function, GlobalVar, RVar, TensorType,
    Tuple, TupleGetItem, TupleType,
)

from .func_plan import plan_function
from .records import PlanRecords
from .tensor_layout import pair
from .transform_func import layout_transform_between

DATA_ROLES = frozenset({"data", "input"})
"""Roles of an op's main tensor: a graph parameter consumed so is an input, not a weight."""


def _shape(ty: TensorType) -> tuple:
    return tuple(as_int(s) if as_int(s) is not None else s for s in ty.shape)


class GraphWalk:
    """State of one planning walk: the versions of every value, new bindings and functions."""

    def __init__(self, mod, targets: dict, analyze):
        self.mod, self.targets, self.analyze = mod, targets, analyze
        self.infos: dict = {}
        self.versions: dict = {}
        """id(original value) -> {layout: expression holding it in that layout}"""
        self.produced: dict = {}
        """id(original value) -> the layout it is produced in"""
        self.fields: dict = {}
        """id(original tuple value) -> layouts of its fields"""
        self.params = {id(p) for p in mod.main.params}
        self._const_names: dict = {}
        self.prefix: list = []
        self.body: list = []
        self.new_funcs: dict = {}
        self._func_names: dict = {}
        self._lt_names: dict = {}
        self._plans: dict = {}
        """(function name, arrival layouts) -> its FuncPlan: a kernel called many times with
        its inputs in the same layouts is converted once (densenet's 1,146 calls of 452)"""
        self.records = PlanRecords()

    # ------------------------------------------------------------------ values
    def info(self, name: str, func: PrimFunc):
        if name not in self.infos:
            self.infos[name] = self.analyze(func)
        return self.infos[name]

    def current(self, value):
        """The expression holding ``value`` in the layout it is produced in."""
        if not isinstance(value, RVar) or id(value) not in self.versions:
            return value
        return self.versions[id(value)][self.produced[id(value)]]

    def get(self, value, layout, reason: str, consumer: "str | None" = None, role: "str | None" = None):
        """``value`` in ``layout`` (None: original), inserting a layout_transform if needed."""
        if not isinstance(value, RVar) or id(value) not in self.versions:
            return value if layout is None else self._transform_new(value, None, layout, reason, consumer, role)
        have = self.versions[id(value)]
        if layout in have:
            return have[layout]
        src_layout = self.produced[id(value)]
        out = self._transform_new(value, src_layout, layout, reason, consumer, role)
        have[layout] = out
        return out

    def _transform_new(self, value, src_layout, layout, reason, consumer, role):
        src = self.current(value)
        ty = src.type if isinstance(src, RVar) else value.type
        p_src, p_dst = pair(src_layout, layout, len(ty.shape))
        shape = _shape(ty)
        fname = self._layout_transform(shape, ty.dtype, p_src, p_dst)
        new_shape = p_dst.shape_of(shape, p_src)
        new_ty = TensorType(tuple(new_shape), ty.dtype)
        name = self._value_name(value)
        var = RVar(f"{name}_{str(p_dst).lower()}", new_ty)
        binding = Binding(var, CallTIR(GlobalVar(fname), (src,), new_ty))
        # a constant argument (a weight TVM's importer folded into main) is re-laid-out once,
        # before the graph runs, like a parameter
        is_param = id(value) in self.params or isinstance(value, Constant)
        (self.prefix if is_param else self.body).append(binding)
        kind = self._kind(is_param, role, reason)
        self.records.transform(name, fname, str(p_src), str(p_dst), kind, reason, consumer)
        return var

    def _value_name(self, value) -> str:
        """The name a transformed value's new variable is derived from: a variable's own, a
        constant's ``const`` with a number (constants have no name)."""
        if not isinstance(value, Constant):
            return value.name
        if id(value) not in self._const_names:
            self._const_names[id(value)] = f"const{len(self._const_names)}"
        return self._const_names[id(value)]

    @staticmethod
    def _kind(is_param: bool, role, reason: str) -> str:
        if reason.startswith("output"):
            return "output"
        if is_param:
            return "input" if role in DATA_ROLES else "weight"
        return "activation"

    def _layout_transform(self, shape, dtype, p_src, p_dst) -> str:
        key = (shape, str(dtype), str(p_src), str(p_dst))
        if key not in self._lt_names:
            name = self._fresh("layout_transform")
            self._lt_names[key] = name
            self.new_funcs[name] = layout_transform_between(shape, dtype, p_src, p_dst, name)
        return self._lt_names[key]

    def _fresh(self, base: str) -> str:
        taken = set(self.mod.functions) | set(self.new_funcs)
        name, k = base, 0
        while name in taken:
            k += 1
            name = f"{base}{k}"
        return name

    # ------------------------------------------------------------------ bindings
    def run(self) -> Function:
        main = self.mod.main
        for p in main.params:
            self.versions[id(p)] = {None: p}
            self.produced[id(p)] = None
        blocks = []
        for k, blk in enumerate(main.blocks):
            self.body = []
            for b in blk.bindings:
                self.binding(b)
            last = k == len(main.blocks) - 1
            outputs = self._block_outputs(blk, last)
            bindings = tuple(self.prefix + self.body) if k == 0 else tuple(self.body)
            if k == 0:
                self.prefix = []
            blocks.append(DataflowBlock(bindings, outputs) if isinstance(blk, DataflowBlock)
                          else BindingBlock(bindings))
        ret = self._restore(main.ret)
        if not main.blocks and self.prefix:
            blocks.append(DataflowBlock(tuple(self.prefix), ()))
        return attrs.evolve(main, blocks=tuple(blocks), ret=ret)

    def _block_outputs(self, blk, last: bool) -> tuple:
        outs = getattr(blk, "outputs", ())
        if last:
            return tuple(self._restore(v) for v in outs)
        return tuple(self.current(v) for v in outs)

    def _restore(self, value):
        if isinstance(value, Tuple):
            return Tuple(tuple(self._restore(f) for f in value.fields))
        if isinstance(value, RVar) and id(value) in self.fields:
            return self._restore_tuple(value)
        return self.get(value, None, "output keeps its original layout")

    def _restore_tuple(self, value):
        layouts = self.fields[id(value)]
        if all(t is None for t in layouts):
            return self.current(value)
        items = []
        for i, _ in enumerate(layouts):
            item = RVar(f"{value.name}_{i}", value.type.fields[i])
            self.binding(Binding(item, TupleGetItem(value, i)))
            items.append(self.get(item, None, "output keeps its original layout"))
        return Tuple(tuple(items))

    def binding(self, b: Binding) -> None:
        value = b.value
        if isinstance(value, CallTIR) and isinstance(self.mod.functions.get(value.func.name), PrimFunc):
            return self.call_tir(b.var, value)
        if isinstance(value, TupleGetItem) and isinstance(value.tuple_value, RVar) \
                and id(value.tuple_value) in self.fields:
            return self.tuple_item(b.var, value)
        if isinstance(value, RVar) and id(value) in self.versions and id(value) not in self.fields:
            return self.alias(b.var, value)
        return self.opaque(b)

    def alias(self, var: RVar, value: RVar) -> None:
        """``var = value``: the alias keeps the value's layout."""
        src = self.current(value)
        self._bind(var, src, self.produced[id(value)], src.type)

    def _bind(self, var: RVar, value, layout, ty) -> None:
        new = RVar(var.name, ty)
        self.body.append(Binding(new, value))
        self.versions[id(var)] = {layout: new}
        self.produced[id(var)] = layout

    def opaque(self, b: Binding) -> None:
        """A binding the planner does not look into: its inputs in the original layout."""
        used = {}

        def visit(v):
            if isinstance(v, RVar) and id(v) in self.versions:
                used[v] = self.get(v, None, "input of a graph-level expression")

        from tir.functor import post_order_visit

        post_order_visit(b.value, visit)
        self._bind(b.var, substitute(b.value, used), None, b.var.type)

    def tuple_item(self, var: RVar, value: TupleGetItem) -> None:
        layout = self.fields[id(value.tuple_value)][value.index]
        src = self.current(value.tuple_value)
        ty = src.type.fields[value.index] if isinstance(src.type, TupleType) else var.type
        self._bind(var, TupleGetItem(src, value.index), layout, ty)

    def call_tir(self, var: RVar, call: CallTIR) -> None:
        name = call.func.name
        func = self.mod.functions[name]
        info = self.info(name, func)
        n_in = len(call.args)
        arrive = [self.produced.get(id(a)) if isinstance(a, RVar) else None for a in call.args]
        key = (name, tuple(arrive))
        fplan = self._plans.get(key)
        if fplan is None:
            fplan = self._plans[key] = plan_function(func, info, arrive, self.targets)
        roles = {o.param: o.role for op in info.ops for o in op.operands}
        args = tuple(self.get(a, fplan.params[i], f"input of {name}", name, roles.get(i))
                     for i, a in enumerate(call.args))
        out_layouts = list(fplan.params[n_in:])
        new_name = self._converted_name(name, fplan) if fplan.changed else name
        self.records.call(name, new_name, info, fplan, self.analyze)
        out_type = self._out_type(call.out_type, out_layouts)
        new_call = attrs.evolve(call, func=GlobalVar(new_name), args=args, out_type=out_type)
        if isinstance(call.out_type, TupleType):
            self.fields[id(var)] = out_layouts
            self._bind(var, new_call, None, out_type)
        else:
            self._bind(var, new_call, out_layouts[0] if out_layouts else None, out_type)

    def _out_type(self, out_type, layouts):
        if isinstance(out_type, TupleType):
            return TupleType(tuple(self._out_type(t, [l]) for t, l in zip(out_type.fields, layouts)))
        layout = layouts[0] if layouts else None
        if layout is None:
            return out_type
        return TensorType(tuple(layout.shape(_shape(out_type))), out_type.dtype)

    def _converted_name(self, name: str, fplan) -> str:
        key = (name, fplan.params)
        if key not in self._func_names:
            tag = next(str(t.physical).lower() for t in fplan.params if t is not None)
            new = self._fresh(f"{name}_{tag}")
            self._func_names[key] = new
            self.new_funcs[new] = fplan.func.with_attr("global_symbol", new) \
                if fplan.func.name is not None else fplan.func
        return self._func_names[key]

    def summary(self):
        return self.records.summary()
