"""Creation ops and ``*_like`` ops named from the graph-level ``main`` (opinfo.graph_context,
opinfo.graph_naming, opinfo.recognize.fill): TVMScript modules written the way TVM 0.27
prints ``full``, ``full_like``, ``eye``, ``eye_like``, ``ones``, ``zeros`` and
``collapse_sum_like``; the ambiguous ones (a 0 or 1 fill, a shape another tensor of ``main``
has) and functions without a context must stay unnamed."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tir
from opinfo.api import analyze, analyze_module
from opinfo.cli.analyze import module_record
from opinfo.graph_context import ModuleContext
from opinfo.recognize.fill import Diagonal, Filled, recognize_fill

HEADER = ("# from tvm.script import ir as I\n# from tvm.script import tir as T\n"
          "# from tvm.script import relax as R\n\n")


def _dims(shape) -> str:
    return ", ".join(d if isinstance(d, str) else f"T.int64({d})" for d in shape) + ("," if len(shape) == 1 else "")


def _rdims(shape) -> str:
    return ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")


def _typevars(*shapes) -> str:
    names = sorted({d for s in shapes for d in s if isinstance(d, str)})
    if not names:
        return ""
    return "from typing import TypeVar\n" + "".join(f'{n} = TypeVar("{n}")\n' for n in names)


def _lit(value, dtype: str) -> str:
    if dtype.startswith("float"):
        return f"T.{dtype}({float(value)!r})"
    if dtype == "bool":
        return f"T.bool({bool(value)})"
    return str(int(value))


def fill_func(shape, value, dtype="float32", name="full") -> str:
    axes = [f"ax{i}" for i in range(len(shape))]
    vs = [f"v_ax{i}" for i in range(len(shape))]
    grid = ", ".join(d if isinstance(d, str) else f"T.int64({d})" for d in shape)
    return f'''
    @T.prim_func(private=True)
    def {name}(T_full: T.Buffer(({_dims(shape)}), "{dtype}")):
        T.func_attr({{"tir.noalias": True}})
        for {", ".join(axes)} in T.grid({grid}):
            with T.block("T_full"):
                {", ".join(vs)} = T.axis.remap("{"S" * len(shape)}", [{", ".join(axes)}])
                T.reads()
                T.writes(T_full[{", ".join(vs)}])
                T_full[{", ".join(vs)}] = {_lit(value, dtype)}
'''


def eye_func(n, m, k, dtype="float32", name="eye") -> str:
    cond = "v_i == v_j" if k == 0 else (f"v_i == v_j - T.int64({k})" if k > 0 else f"v_i == v_j + T.int64({-k})")
    grid = ", ".join(d if isinstance(d, str) else f"T.int64({d})" for d in (n, m))
    return f'''
    @T.prim_func(private=True)
    def {name}(eye: T.Buffer(({_dims((n, m))}), "{dtype}")):
        T.func_attr({{"tir.noalias": True}})
        for i, j in T.grid({grid}):
            with T.block("eye"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                T.reads()
                T.writes(eye[v_i, v_j])
                eye[v_i, v_j] = T.if_then_else({cond}, {_lit(1, dtype)}, {_lit(0, dtype)})
'''


def module(funcs: str, main: str, *shapes) -> str:
    return HEADER + _typevars(*shapes) + "@I.ir_module\nclass Module:" + funcs + main


def creation_main(out_shape, dtype="float32", params=(), callee="full") -> str:
    """``main(params...)`` calling ``callee`` with no arguments; params: (name, shape, dtype)."""
    ps = ", ".join(f'{n}: R.Tensor(({_rdims(s)}), dtype="{d}")' for n, s, d in params)
    ty = f'R.Tensor(({_rdims(out_shape)}), dtype="{dtype}")'
    return f'''
    @R.function
    def main({ps}) -> {ty}:
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.{callee}, R.tuple(), out_ty={ty})
            gv: {ty} = lv
            R.output(gv)
        return gv
'''


def ops_of(text: str) -> list:
    infos = analyze_module(tir.parse(text))
    return [op for info in infos.values() for op in info.ops]


def only_op(text: str):
    ops = ops_of(text)
    assert len(ops) == 1, ops
    return ops[0]


# ---------------------------------------------------------------- full / full_like

def test_full_without_parameters_is_full():
    op = only_op(module(fill_func((4, 4, 3), -2.5), creation_main((4, 4, 3))))
    assert op.name == "full"
    assert dict(op.attrs) == {"shape": (4, 4, 3), "fill_value": -2.5, "dtype": "float32"}
    assert op.operands == ()


def test_full_like_of_the_unused_parameter():
    text = module(fill_func((6,), 3.0), creation_main((6,), params=[("x", (6,), "float32")]))
    op = only_op(text)
    assert op.name == "full_like"
    assert op.attrs["dtype"] is None and op.attrs["fill_value"] == 3.0
    assert op.operands[0].buffer == "x" and op.operands[0].param is None


def test_full_like_of_another_dtype_reports_the_dtype():
    text = module(fill_func((2, 5), -2.5), creation_main((2, 5), params=[("x", (2, 5), "int32")]))
    op = only_op(text)
    assert op.name == "full_like" and op.attrs["dtype"] == "float32"


def test_unused_parameter_of_another_shape_leaves_full():
    text = module(fill_func((3, 4), 7.5), creation_main((3, 4), params=[("x", (4, 3), "float32")]))
    op = only_op(text)
    assert op.name == "full" and op.attrs["shape"] == (3, 4)


def test_two_unused_parameters_of_the_shape_abstain():
    params = [("x", (3, 4), "float32"), ("y", (3, 4), "float32")]
    assert ops_of(module(fill_func((3, 4), 7.5), creation_main((3, 4), params=params))) == []


def test_symbolic_full_like():
    text = module(fill_func(("n", 7, 7), -2.5), creation_main(("n", 7, 7), params=[("x", ("n", 7, 7), "float32")]),
                  ("n",))
    op = only_op(text)
    assert op.name == "full_like" and op.attrs["dtype"] is None


def test_symbolic_output_with_a_used_tensor_of_unknown_extent_abstains():
    # x (m, 7) is used by another call: it may be the operand of a full_like whose output is (n, 7)
    funcs = fill_func(("n", 7), -2.5) + '''
    @T.prim_func(private=True)
    def neg(x: T.Buffer((m, T.int64(7)), "float32"), y: T.Buffer((m, T.int64(7)), "float32")):
        for i, j in T.grid(m, T.int64(7)):
            with T.block("T_negative"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                y[v_i, v_j] = T.float32(0.0) - x[v_i, v_j]
'''
    main = '''
    @R.function
    def main(x: R.Tensor((m, 7), dtype="float32")) -> R.Tuple(R.Tensor((n, 7), dtype="float32"), R.Tensor((m, 7), dtype="float32")):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.full, R.tuple(), out_ty=R.Tensor((n, 7), dtype="float32"))
            lv1 = R.call_tir(cls.neg, (x,), out_ty=R.Tensor((m, 7), dtype="float32"))
            gv = (lv, lv1)
            R.output(gv)
        return gv
'''
    infos = analyze_module(tir.parse(module(funcs, main, ("n", "m"))))
    assert infos["full"].ops == ()


@pytest.mark.parametrize("value", [0.0, 1.0, -0.0])
@pytest.mark.parametrize("with_param", [False, True])
def test_zero_and_one_fills_abstain(value, with_param):
    params = [("x", (3, 5), "float32")] if with_param else []
    text = module(fill_func((3, 5), value, name="ones"), creation_main((3, 5), params=params, callee="ones"))
    assert ops_of(text) == []


def test_integer_fill_abstains():
    assert ops_of(module(fill_func((3, 5), 4, "int32"), creation_main((3, 5), "int32"))) == []


def test_one_element_fill_abstains():
    assert ops_of(module(fill_func((1,), -2.5), creation_main((1,)))) == []


def test_full_beside_a_tensor_of_its_shape_abstains():
    # masked_fill's legalization: full(x.shape, v) then where(mask, full, x): x has the shape,
    # so no `full`; the where makes it masked_fill (tests/test_s21_masked_fill.py); any other
    # use leaves full(shape) and full_like(x) open
    main = '''
    @R.function
    def main(x: R.Tensor((4, 3), dtype="float32"), y: R.Tensor((4, 3), dtype="bool")) -> R.Tensor((4, 3), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.full, R.tuple(), out_ty=R.Tensor((4, 3), dtype="float32"))
            lv1: R.Tensor((4, 3), dtype="float32") = R.where(y, lv, x)
            gv: R.Tensor((4, 3), dtype="float32") = lv1
            R.output(gv)
        return gv
'''
    assert [op.name for op in ops_of(module(fill_func((4, 3), 5.5), main))] == ["masked_fill"]
    added = main.replace("R.where(y, lv, x)", "R.where(y, x, lv)")
    assert ops_of(module(fill_func((4, 3), 5.5), added)) == []


def test_full_beside_an_unlowered_call_of_unknown_shape_abstains():
    main = '''
    @R.function
    def main(x: R.Tensor((6,), dtype="float32")) -> R.Tensor((4, 3), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv0 = R.cumsum(x, axis=0)
            lv = R.call_tir(cls.full, R.tuple(), out_ty=R.Tensor((4, 3), dtype="float32"))
            gv: R.Tensor((4, 3), dtype="float32") = lv
            R.output(gv)
        return gv
'''
    assert ops_of(module(fill_func((4, 3), 5.5), main)) == []


def test_values_computed_from_the_result_do_not_count():
    funcs = fill_func((4, 3), 5.5) + '''
    @T.prim_func(private=True)
    def neg(x: T.Buffer((T.int64(4), T.int64(3)), "float32"), y: T.Buffer((T.int64(4), T.int64(3)), "float32")):
        for i, j in T.grid(T.int64(4), T.int64(3)):
            with T.block("T_negative"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                y[v_i, v_j] = T.float32(0.0) - x[v_i, v_j]
'''
    main = '''
    @R.function
    def main() -> R.Tensor((4, 3), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.full, R.tuple(), out_ty=R.Tensor((4, 3), dtype="float32"))
            lv1 = R.call_tir(cls.neg, (lv,), out_ty=R.Tensor((4, 3), dtype="float32"))
            gv: R.Tensor((4, 3), dtype="float32") = lv1
            R.output(gv)
        return gv
'''
    infos = analyze_module(tir.parse(module(funcs, main)))
    # neg (written 0 - x, not TVM's negative) is not named: in this graph of two kernels
    # full's reading is withheld, and it is the full the context names
    assert infos["neg"].ops == () and infos["full"].ops == ()
    assert [o.name for o in infos["full"].withheld] == ["full"]


def test_called_twice_with_the_same_answer_is_named_once_per_function():
    main = '''
    @R.function
    def main(x: R.Tensor((4, 3), dtype="float32")) -> R.Tensor((4, 3), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.full, R.tuple(), out_ty=R.Tensor((4, 3), dtype="float32"))
            lv1 = R.call_tir(cls.full, R.tuple(), out_ty=R.Tensor((4, 3), dtype="float32"))
            gv = (lv, lv1)
            R.output(gv)
        return gv
'''
    # both calls read the same, and x may be their like-operand: full_like twice
    ops = ops_of(module(fill_func((4, 3), 5.5), main))
    assert [o.name for o in ops] == ["full_like"]


def test_called_twice_with_different_answers_abstains():
    # the same symbolic function called for x's shape (full_like of the unused x) and for
    # another shape (no like-operand; x may have it): the two calls disagree
    main = '''
    @R.function
    def main(x: R.Tensor((n,), dtype="float32"), y: R.Tensor((m,), dtype="float32")) -> R.Tuple(R.Tensor((n,), dtype="float32"), R.Tensor((m,), dtype="float32")):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.full, R.tuple(), out_ty=R.Tensor((n,), dtype="float32"))
            lv1 = R.call_tir(cls.full, R.tuple(), out_ty=R.Tensor((m,), dtype="float32"))
            lv2: R.Tensor((m,), dtype="float32") = R.add(lv1, y)
            gv = (lv, lv2)
            R.output(gv)
        return gv
'''
    text = module(fill_func(("k",), 5.5), main, ("n", "m", "k"))
    assert analyze_module(tir.parse(text))["full"].ops == ()
    # each call alone is decided
    one = main.replace("lv1 = R.call_tir(cls.full, R.tuple(), out_ty=R.Tensor((m,), dtype=\"float32\"))",
                       "lv1: R.Tensor((m,), dtype=\"float32\") = R.negative(y)")
    assert [o.name for o in analyze_module(tir.parse(module(fill_func(("k",), 5.5), one, ("n", "m", "k"))))["full"].ops] \
        == ["full_like"]


# ---------------------------------------------------------------- eye / eye_like

@pytest.mark.parametrize("n,m,k,dtype", [(6, 6, 0, "float32"), (3, 3, -1, "int32"), (3, 6, 0, "int32"),
                                         (4, 4, 1, "float32"), (5, 3, 2, "float16"), (2, 7, -1, "bool")])
def test_eye(n, m, k, dtype):
    text = module(eye_func(n, m, k, dtype), creation_main((n, m), dtype, callee="eye"))
    op = only_op(text)
    assert op.name == "eye"
    assert dict(op.attrs) == {"n": n, "m": m, "k": k, "dtype": dtype}


@pytest.mark.parametrize("k", [-1, 0, 1])
def test_eye_like(k):
    text = module(eye_func(8, 3, k, name="eye_like"),
                  creation_main((8, 3), callee="eye_like", params=[("x", (8, 3), "float32")]))
    op = only_op(text)
    assert op.name == "eye_like" and dict(op.attrs) == {"k": k, "dtype": None}


def test_symbolic_eye_like():
    text = module(eye_func("n", 3, -1, name="eye_like"),
                  creation_main(("n", 3), callee="eye_like", params=[("x", ("n", 3), "float32")]), ("n",))
    op = only_op(text)
    assert op.name == "eye_like" and op.attrs["k"] == -1


@pytest.mark.parametrize("n,m,k", [(2, 2, 2), (3, 4, -3), (1, 1, 0)])
def test_constant_eye_abstains(n, m, k):
    # no 1 on the grid (all zeros) or a single 1: the same tensor as a fill
    assert ops_of(module(eye_func(n, m, k), creation_main((n, m), callee="eye"))) == []


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 7), m=st.integers(1, 7), k=st.integers(-3, 3), dtype=st.sampled_from(["float32", "int32"]))
def test_eye_reading_matches_numpy(n, m, k, dtype):
    func = tir.parse(module(eye_func(n, m, k, dtype), creation_main((n, m), dtype, callee="eye")))["eye"]
    got = recognize_fill(func)
    ref = np.eye(n, m, k)
    if not ref.any() or ref.all():
        assert got is None or isinstance(got, Filled)
    else:
        assert got == Diagonal(k, dtype)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
       value=st.floats(-1e6, 1e6, allow_nan=False, width=32))
def test_full_reading(shape, value):
    text = module(fill_func(tuple(shape), value), creation_main(tuple(shape)))
    ops = ops_of(text)
    if value in (0.0, 1.0) or np.prod(shape) == 1:
        assert ops == []
    else:
        (op,) = ops
        assert op.name == "full" and list(op.attrs["shape"]) == shape
        assert np.float32(op.attrs["fill_value"]) == np.float32(value)


def test_fill_reads_the_printed_literal():
    # float16 rounds 0.1; the value reported is the printed constant, not its rounding
    func = tir.parse(module(fill_func((3, 2), 0.1, "float16"), creation_main((3, 2), "float16")))["full"]
    assert recognize_fill(func) == Filled(0.1, "float16")


def test_partial_write_is_not_a_fill():
    text = HEADER + '''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def full(T_full: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(3)):
            with T.block("T_full"):
                v_i = T.axis.spatial(T.int64(4), i)
                T.reads()
                T.writes(T_full[v_i])
                T_full[v_i] = T.float32(2.5)
''' + creation_main((4,))
    assert recognize_fill(tir.parse(text)["full"]) is None


# ---------------------------------------------------------------- collapse_sum_like

def collapse_module(src, tgt, axes, keep_rank: bool, params_extra=True) -> str:
    """sum of x (src) over ``axes`` into x_red (tgt), as TVM's collapse_sum prints it."""
    r = len(src)
    spatial = [i for i in range(r) if i not in axes]
    out_idx = []
    loops, kinds, vs = [], [], []
    for i in range(r):
        if i in axes:
            loops.append(f"k{i}")
            kinds.append("R")
            vs.append(f"v_k{i}")
            if keep_rank:
                out_idx.append("T.int64(0)")
        else:
            loops.append(f"ax{i}")
            kinds.append("S")
            vs.append(f"v_ax{i}")
            out_idx.append(f"v_ax{i}")
    order = [loops[i] for i in spatial] + [loops[i] for i in axes]
    vorder = [vs[i] for i in spatial] + [vs[i] for i in axes]
    korder = "".join(kinds[i] for i in spatial) + "".join(kinds[i] for i in axes)
    grid = ", ".join(f"T.int64({src[i]})" for i in spatial + list(axes))
    func = f'''
    @T.prim_func(private=True)
    def collapse_sum(x: T.Buffer(({_dims(src)}), "float32"), x_red: T.Buffer(({_dims(tgt)}), "float32")):
        T.func_attr({{"tir.noalias": True}})
        for {", ".join(order)} in T.grid({grid}):
            with T.block("x_red"):
                {", ".join(vorder)} = T.axis.remap("{korder}", [{", ".join(order)}])
                T.reads(x[{", ".join(vs)}])
                T.writes(x_red[{", ".join(out_idx)}])
                with T.init():
                    x_red[{", ".join(out_idx)}] = T.float32(0.0)
                x_red[{", ".join(out_idx)}] = x_red[{", ".join(out_idx)}] + x[{", ".join(vs)}]
'''
    ps = f'x: R.Tensor(({_rdims(src)}), dtype="float32")'
    if params_extra:
        ps += f', y: R.Tensor(({_rdims(tgt)}), dtype="float32")'
    ty = f'R.Tensor(({_rdims(tgt)}), dtype="float32")'
    main = f'''
    @R.function
    def main({ps}) -> {ty}:
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.collapse_sum, (x,), out_ty={ty})
            gv: {ty} = lv
            R.output(gv)
        return gv
'''
    return module(func, main)


@pytest.mark.parametrize("src,tgt,axes,keep", [((6, 2, 3), (3,), (0, 1), False),
                                               ((8, 8, 9), (1, 8, 1), (0, 2), True),
                                               ((5, 4), (1, 4), (0,), True)])
def test_collapse_sum_like(src, tgt, axes, keep):
    op = only_op(collapse_module(src, tgt, axes, keep))
    assert op.name == "collapse_sum_like" and dict(op.attrs) == {}
    assert [o.role for o in op.operands] == ["data", "collapse_target"]
    assert op.operands[0].param == 0 and op.operands[1].buffer == "y"


def test_collapse_without_the_unused_parameter_is_not_named():
    # sum over leading axes or collapse_sum_to(x, (3,)): the same loops, nothing in main
    mod = tir.parse(collapse_module((6, 2, 3), (3,), (0, 1), False, params_extra=False))
    assert analyze_module(mod)["collapse_sum"].ops == ()
    (op,) = analyze(mod["collapse_sum"], conventions=True).ops
    assert op.name == "sum" and list(op.attrs["axis"]) == [0, 1] and op.assumed == ("op",)


def test_sum_over_other_axes_stays_sum():
    # (3, 3) summed over axis 1 has the shape (3,) of y, but collapsing to (3,) sums axis 0
    op = only_op(collapse_module((3, 3), (3,), (1,), False))
    assert op.name == "sum" and list(op.attrs["axis"]) == [1]


def test_without_context_sum_is_a_convention_and_fills_abstain():
    mod = tir.parse(collapse_module((6, 2, 3), (3,), (0, 1), False))
    assert analyze(mod["collapse_sum"]).ops == ()
    assert [o.name for o in analyze(mod["collapse_sum"], conventions=True).ops] == ["sum"]
    mod = tir.parse(module(fill_func((4, 4, 3), -2.5), creation_main((4, 4, 3))))
    assert analyze(mod["full"]).ops == ()


# ---------------------------------------------------------------- odd modules, CLI

def test_lone_prim_func_has_no_context():
    text = HEADER + "@T.prim_func" + fill_func((4, 3), 5.5).split("@T.prim_func(private=True)", 1)[1]
    text = text.replace("\n    ", "\n")
    node = tir.parse(text)
    assert analyze(node).ops == ()


def test_context_of_odd_modules_is_none_not_an_error():
    class NoMain:
        main = None

        def prim_funcs(self):
            return []

        def graph_funcs(self):
            return []
    assert ModuleContext(NoMain()).for_function("full") is None
    assert ModuleContext(object()).for_function("full") is None
    text = module(fill_func((4, 3), 5.5), "")
    assert analyze_module(tir.parse(text))["full"].ops == ()


def test_cli_record_names_with_context(tmp_path):
    text = module(eye_func(4, 4, 1), creation_main((4, 4), callee="eye"))
    rec = module_record(tir.parse(text), "m.py")
    fn = json.loads(json.dumps(rec))["functions"][0]
    assert fn["ops"][0]["op"] == "eye" and fn["ops"][0]["attrs"] == {"n": 4, "m": 4, "k": 1, "dtype": "float32"}
