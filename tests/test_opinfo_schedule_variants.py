"""opinfo after TVM schedule primitives (fuse, non-divisible split with T.where, reorder,
decompose_reduction, cache_read/cache_write, compute_inline, loop kinds).

Each primitive is first checked to compute the same values (interpreter) and to verify.
Then random sequences of them are applied to every corpus op and to lowered ops with
random attributes: ``opinfo.analyze`` must give the ground-truth op and attributes (compared
as the corpus scorer does) or abstain, and TVM's kind on the scheduled form. The kind is
the unscheduled one except where TVM's analyzer answers differently on the new form:
a ``cache_write`` copy block writing the output after a pure reduction turns
``comm_reduce`` into ``out_ewise_fusable`` (the analyzer's output-block rule), and
``compute_inline`` changes the loads a block's rules look at (checked against
:func:`opinfo.kind.pattern_kind` of the inlined form, whose rules test_opinfo_kind covers).
"""
from __future__ import annotations

import importlib.util
import json
import random

import numpy as np
import pytest
import tir
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from tir.verifier import verify

import opinfo
from corpus_util import CORPUS
from opinfo.kind import pattern_kind
from opinfo.normalize import normalize
from schedule_helpers import random_schedule
from schedule_more import PRIMITIVES

ALL = dict(PRIMITIVES, split_reorder=lambda f, rng: random_schedule(f, rng.randrange(1 << 30)))
INDEX = CORPUS / "ops" / "index.json"


def _scorer():
    spec = importlib.util.spec_from_file_location("score_corpus", CORPUS.parent / "tools" / "score_corpus.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _inputs(func, rng):
    out = []
    for buf in func.buffers[:-1]:
        shape = [int(s.value) for s in buf.shape]
        out.append(rng.uniform(0.5, 2.0, shape).astype(str(buf.dtype)))
    return out


UNDONE = ("decompose_reduction", "cache_read", "cache_write")
"""Primitives :func:`opinfo.normalize.normalize` undoes (it keeps executable IR for them)."""

NUMERIC_OPS = [
    ("nn.conv2d", [((1, 4, 7, 7), "float32"), ((4, 2, 3, 3), "float32")], {"padding": [1, 0, 2, 1], "groups": 2}),
    ("sum", [((3, 5, 4), "float32")], {"axis": [1]}),
    ("nn.softmax", [((3, 6), "float32")], {"axis": 1}),
    ("nn.max_pool2d", [((1, 2, 6, 6), "float32")], {"pool_size": [3, 3], "padding": [1, 1, 1, 1]}),
    ("matmul", [((3, 5), "float32"), ((5, 4), "float32")], {}),
    ("add", [((3, 4), "float32"), ((4,), "float32")], {}),
    ("nn.gelu", [((3, 4), "float32")], {}),
    ("nn.layer_norm", [((3, 4), "float32"), ((4,), "float32"), ((4,), "float32")], {"axes": [1]}),
]


@pytest.mark.parametrize("prim", sorted(ALL))
@pytest.mark.parametrize("case", NUMERIC_OPS, ids=[c[0] for c in NUMERIC_OPS])
def test_primitive_keeps_values(prim, case):
    op, inputs, attrs = case
    func = tir.topi.lower(op, inputs, **attrs)
    args = _inputs(func, np.random.default_rng(0))
    want = tir.run(func, *args)
    for seed in range(3):
        got = ALL[prim](func, random.Random(seed))
        verify(got)
        np.testing.assert_allclose(tir.run(got, *args), want, rtol=1e-5, atol=1e-6)
        reparsed = tir.parse(tir.to_script(got))  # the printed TVMScript form reads back
        assert tir.structural_equal(reparsed, got)
        if prim in UNDONE:  # what normalize makes of it computes the same values
            back = normalize(got)
            verify(back)
            assert len(list(back.blocks())) == len(list(func.blocks()))
            np.testing.assert_allclose(tir.run(back, *args), want, rtol=1e-5, atol=1e-6)


def _apply(func, names, seed):
    """``func`` after the primitives ``names`` in order; also whether a cache_write copy
    writes a parameter (TVM's output-block rule may then change the kind)."""
    rng = random.Random(seed)
    params = {id(b) for b in func.buffers}
    copy_out = False
    for name in names:
        new = ALL[name](func, rng)
        if name == "cache_write" and new is not func:
            copies = [b for b in new.blocks() if b.name.endswith("_local") and id(b.writes[0].buffer) in params]
            copy_out = copy_out or bool(copies)
        func = new
    return func, copy_out


def _expected_kind(base: str, names, scheduled, copy_out: bool) -> str:
    if "compute_inline" in names or "reverse_compute_inline" in names:
        return pattern_kind(scheduled)
    if copy_out and base == "comm_reduce":
        return "out_ewise_fusable"
    return base


def _sequence(rng) -> list:
    return [rng.choice(sorted(ALL)) for _ in range(rng.randint(1, 4))]


def _check(func, name, want: list, base_kind, seed, scorer):
    """Analyze ``func`` after a random sequence; ``want`` holds the ground truth ops
    (``{"op", "attrs"}``). Returns whether the ops were recovered (not abstained)."""
    names = _sequence(random.Random(seed))
    sched, copy_out = _apply(func, names, seed)
    verify(sched)
    normalized = normalize(sched)
    if normalized is not None:  # the form the recognizers read is well formed too
        verify(normalized)
    info = opinfo.analyze(sched, name)
    assert info.kind == _expected_kind(base_kind, names, sched, copy_out), names
    if not info.ops:
        return False
    got = [o.to_json() for o in info.ops]
    assert len(got) == len(want), (names, got)
    rank = len(func.buffers[0].shape) if len(want) == 1 else 4
    for g, w in zip(got, want):
        name_ok, attrs_ok, bad = scorer.compare(w["op"], w.get("attrs", {}), g, rank)
        assert name_ok and attrs_ok, (names, bad)
    return True


def _corpus_cases():
    if not INDEX.is_file():
        return []
    cases = json.loads(INDEX.read_text())["cases"]
    return [c for c in cases if c.get("n_primfuncs", 1) == 1]


@pytest.mark.parametrize("case", _corpus_cases(), ids=lambda c: c["id"])
def test_corpus_op_after_schedules(case):
    scorer = _scorer()
    mod = tir.parse((CORPUS / "ops" / f"{case['id']}.py").read_text())
    funcs = mod.prim_funcs()
    if len(funcs) != 1:
        pytest.skip("ground truth is per module; this one has several PrimFuncs")
    (name, func), = funcs
    base_kind = case["tvm_kind"][name]
    want = case["fused_ops"] if case["op"] == "fused" else [case]
    for seed in range(4):
        _check(func, name, want, base_kind, seed, scorer)


@st.composite
def lowered_case(draw):
    """A lowered op with random attributes (small shapes)."""
    kind = draw(st.sampled_from(["conv2d", "pool", "reduce", "softmax", "matmul"]))
    if kind == "conv2d":
        pad = draw(st.lists(st.integers(0, 2), min_size=4, max_size=4))
        strides = draw(st.lists(st.integers(1, 2), min_size=2, max_size=2))
        attrs = {"padding": pad, "strides": strides, "dilation": [1, 1], "groups": 1,
                 "data_layout": "NCHW", "kernel_layout": "OIHW"}
        return "nn.conv2d", [((1, 2, 6, 7), "float32"), ((3, 2, 3, 2), "float32")], attrs
    if kind == "pool":
        pad = draw(st.lists(st.integers(0, 1), min_size=4, max_size=4))
        attrs = {"pool_size": [2, 3], "strides": draw(st.lists(st.integers(1, 2), min_size=2, max_size=2)),
                 "padding": pad, "layout": "NCHW"}
        return "nn.max_pool2d", [((1, 2, 7, 6), "float32")], attrs
    if kind == "reduce":
        axes = sorted(draw(st.sets(st.integers(0, 2), min_size=1, max_size=2)))
        op = draw(st.sampled_from(["sum", "max", "min", "prod"]))
        return op, [((3, 5, 4), "float32")], {"axis": axes, "keepdims": draw(st.booleans())}
    if kind == "softmax":
        return "nn.softmax", [((3, 5, 4), "float32")], {"axis": draw(st.integers(0, 2))}
    return "matmul", [((3, 5), "float32"), ((5, 4), "float32")], {}


@settings(max_examples=40)
@given(lowered_case(), st.integers(0, 10_000))
def test_lowered_op_after_schedules(case, seed):
    op, inputs, attrs = case
    func = tir.topi.lower(op, inputs, **attrs)
    base = opinfo.analyze(func)
    assume(base.ops)  # the unscheduled reading may itself abstain (an ambiguous pool)
    _check(func, None, [{"op": op, "attrs": attrs}], base.kind, seed, _scorer())


def test_predicate_that_drops_elements_abstains():
    """A T.where that is not implied by the block's domain changes the op: abstain."""
    from tir.expr import LT, const
    from tir.functor import transform
    from tir.stmt import BlockRealize

    func = tir.topi.lower("nn.relu", [((4, 6), "float32")])

    def post(n):
        if isinstance(n, BlockRealize) and n.block.name != "root":
            return BlockRealize(n.iter_values, LT(n.iter_values[1], const(3, "int64")), n.block)
        return None

    guarded = transform(func, post)
    assert opinfo.analyze(func).ops
    assert not opinfo.analyze(guarded).ops


def _with_predicate(func, make):
    """``func`` with the predicate ``make(realize)`` on its (only) non-root block."""
    from tir.functor import transform
    from tir.stmt import BlockRealize

    def post(n):
        if isinstance(n, BlockRealize) and n.block.name != "root":
            return BlockRealize(n.iter_values, make(n), n.block)
        return None

    return transform(func, post)


@pytest.mark.parametrize("bound, kept", [(24, True), (20, False), (22, False), (30, True)])
def test_fused_split_predicate(bound, kept):
    """After fusing (6, 4) into 24: ``f < 24`` is implied by ``v0 = f // 4 < 6`` and
    ``f < 30`` always holds; tighter bounds drop elements (abstain)."""
    from tir.expr import LT, const

    func = PRIMITIVES["fuse"](tir.topi.lower("nn.relu", [((6, 4), "float32")]), random.Random(0))
    guarded = _with_predicate(func, lambda r: LT(r.iter_values[0].a, const(bound, "int64")))
    assert bool(opinfo.analyze(guarded).ops) == kept


def test_copy_through_global_intermediate_is_kept():
    """A cache copy is told by its buffer's scope: through a global intermediate the same
    copy may be an op of a fused kernel (an identity broadcast_to), so it stays."""
    import attrs as _attrs

    func = tir.topi.lower("sum", [((3, 4), "float32")], axis=[1])
    cached = PRIMITIVES["cache_read"](func, random.Random(0))
    assert len(list(normalize(cached).blocks())) == len(list(func.blocks()))
    shared = cached.body.block.alloc_buffers[-1]
    as_global = _attrs.evolve(shared, scope="global")
    renamed = tir.substitute(cached, {shared: as_global})
    assert len(list(normalize(renamed).blocks())) == len(list(cached.blocks()))


SPLIT_THEN_FUSED = '''
@T.prim_func(private=True)
def tir_atanh(x: T.Buffer((T.int64(5),), "float32"), compute: T.Buffer((T.int64(5),), "float32")):
    for i0_0_i0_1_fused in range(T.int64(6)):
        with T.sblock("compute"):
            v_i0 = T.axis.spatial(T.int64(5), i0_0_i0_1_fused)
            T.where(i0_0_i0_1_fused // T.int64(2) * T.int64(2) + i0_0_i0_1_fused % T.int64(2) < T.int64(5))
            T.reads(x[v_i0])
            T.writes(compute[v_i0])
            compute[v_i0] = T.atanh(x[v_i0])
'''

FUSED_WITH_SYMBOLIC = '''
@T.prim_func(private=True)
def tir_rsqrt(var_x: T.handle, var_compute: T.handle):
    n = T.int64()
    x = T.match_buffer(var_x, (n, T.int64(5), T.int64(2)))
    compute = T.match_buffer(var_compute, (n, T.int64(5), T.int64(2)))
    for i0_i1_0_fused, i1_1, i2 in T.grid(n * T.int64(3), T.int64(2), T.int64(2)):
        with T.sblock("compute"):
            v_i0 = T.axis.spatial(n, i0_i1_0_fused // T.int64(3))
            v_i1 = T.axis.spatial(T.int64(5), i0_i1_0_fused % T.int64(3) * T.int64(2) + i1_1)
            v_i2 = T.axis.spatial(T.int64(2), i2)
            T.where(i0_i1_0_fused % T.int64(3) * T.int64(2) + i1_1 < T.int64(5))
            T.reads(x[v_i0, v_i1, v_i2])
            T.writes(compute[v_i0, v_i1, v_i2])
            compute[v_i0, v_i1, v_i2] = T.rsqrt(x[v_i0, v_i1, v_i2])
'''


@pytest.mark.parametrize("text, op", [(SPLIT_THEN_FUSED, "atanh"), (FUSED_WITH_SYMBOLIC, "rsqrt")])
def test_split_predicate_after_fuse(text, op):
    """TVM's split-then-fuse predicate ``f // 2 * 2 + f % 2 < 5`` is ``f < 5``; a loop fused
    with a symbolic one and split keeps ``f % 3`` in [0, 3) whatever ``n`` is."""
    func = tir.parse(text)
    assert normalize(func) is not None
    assert [o.name for o in opinfo.analyze(func).ops] == [op]


@given(st.integers(2, 9), st.integers(-3, 3).filter(bool), st.integers(-5, 5))
def test_affine_folds_divmod_pairs(d, c, k):
    """``c * d * (x // d) + c * (x % d) + k`` has the affine form ``c * x + k``."""
    from tir.expr import Add, FloorDiv, FloorMod, Mul, Var, const
    from opinfo.affine import ONE, affine
    from tir import dtype as dt

    x = Var("x", dt.int64)
    e = Add(Add(Mul(FloorDiv(x, const(d, "int64")), const(c * d, "int64")),
                Mul(FloorMod(x, const(d, "int64")), const(c, "int64"))), const(k, "int64"))
    assert affine(e) == ({x: c, ONE: k} if k else {x: c})
