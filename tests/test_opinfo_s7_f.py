"""T.where predicates of fused-and-split loops that only restate the block's domain.

TVM writes them through floor divisions and remainders of the fused index ``f``
(``f // 2 * 2 + f % 2 < 7`` is ``f < 7``; ``f % 56 // 2 % 4 * 2 + f % 2 < 7`` is
``f % 8 < 7``; ``f // (n * 8) * 2 + f % (n * 8) // (n * 4) < 5`` is ``f // (n * 4) < 5``),
and one conjunct may only follow from another (``f % 4 * 2 + k < 7`` is ``2 * f + k < 7``
once ``f < 4`` is shown). Fixtures are TVM 0.27 output; predicates that really cut
elements keep the op abstaining, and a brute-force check confirms every predicate dropped
holds on every loop point where the block's iterators are in their domains.
"""
from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tir
import opinfo
from opinfo.predicates import drop_predicates

FIXTURES = Path(__file__).parent / "fixtures"


def _ops(text: str) -> list:
    infos = opinfo.analyze_module(tir.parse(text))
    return sorted((op.name, dict(op.attrs)) for info in infos.values() for op in info.ops)


def _text(name: str) -> str:
    return (FIXTURES / f"s7f_{name}.py").read_text()


@pytest.mark.parametrize("name, want", [
    ("argmin_bind_fused", [("argmin", {"axis": 2, "keepdims": False})]),
    ("argmin_bind_conjunct_fact", [("argmin", {"axis": 0, "keepdims": True})]),
    ("argmin_bind_symbolic", [("argmin", {"axis": 1, "keepdims": False})]),
    ("permute_bind_symbolic", [("permute_dims", {"axes": [2, 0, 3, 1]})]),
    ("dequantize_bind_axis2", [("dequantize", {"axis": 2, "out_dtype": "float32"})]),
])
def test_split_predicates_of_fused_loops_are_dropped(name, want):
    got = _ops(_text(name))
    assert [(n, {k: (list(v) if isinstance(v, tuple) else v) for k, v in a.items()}) for n, a in got] == want


CUTS = [
    # f // 2 * 2 + f % 2 is f: f < 6 drops v_ax0 == 6
    ("argmin_bind_fused", "% T.int64(2) < T.int64(7) and", "% T.int64(2) < T.int64(6) and"),
    # f < 3 drops v_ax1 in {6} (2 * 3 + 0): the conjunct used as a fact must itself hold
    ("argmin_bind_conjunct_fact", "ax0_ax1_0_fused_1 < T.int64(4))", "ax0_ax1_0_fused_1 < T.int64(3))"),
    # f // (n * 4) < 4 drops v_ax0 == 4
    ("permute_bind_symbolic", "// (n * T.int64(4)) < T.int64(5)", "// (n * T.int64(4)) < T.int64(4)"),
    # f % 8 < 6 drops v_ax2 == 6
    ("argmin_bind_symbolic", "% T.int64(2) < T.int64(7))", "% T.int64(2) < T.int64(6))"),
    # a remainder by 3 is not a digit of f % 8: f % 8 // 2 * 2 + f % 3 is not f % 8
    ("dequantize_bind_axis2", "i0_i1_0_i1_1_fused_1) % T.int64(2) < T.int64(7)",
     "i0_i1_0_i1_1_fused_1) % T.int64(3) < T.int64(7)"),
]


@pytest.mark.parametrize("name, old, new", CUTS)
def test_predicates_that_cut_elements_keep_the_op_abstaining(name, old, new):
    text = _text(name)
    assert old in text
    funcs = [f for _, f in tir.parse(text.replace(old, new, 1)).prim_funcs()]
    # refused, or (a leading part of the domain run: predicates.prefix_box) read as a
    # block over fewer points, which then writes part of the output
    assert any(drop_predicates(f) is None or _domains(drop_predicates(f)) != _domains(f) for f in funcs)
    assert _ops(text.replace(old, new, 1)) == []


def _domains(func):
    return [[iv.dom.extent for iv in b.iter_vars] for b in func.blocks()]


def test_a_bound_only_weaker_than_the_domain_is_kept():
    """``f < n * 24`` alone follows from ``f // (n * 4) < 5`` (the iterator's domain) but
    lets the block run where ``v_ax0 == 5``: only another conjunct may imply it."""
    text = _text("permute_bind_symbolic")
    start = text.index("T.where(")
    end = text.index("\n", start)
    edited = text[:start] + "T.where(ax0_0_ax0_1_ax1_ax2_fused_0 * T.int64(32) + ax0_0_ax0_1_ax1_ax2_fused_1 < n * T.int64(24))" + text[end:]
    (_, func), = tir.parse(edited).prim_funcs()
    assert drop_predicates(func) is None
    assert _ops(edited) == []


# ---------------------------------------------------------------- brute force over templates

PROGRAM = '''
@T.prim_func
def main(x: T.Buffer((T.int64({K}),), "float32"), out: T.Buffer((T.int64({K}),), "float32")):
    for b, t, k in T.grid(T.int64({B}), T.int64({T}), T.int64({R})):
        with T.block("copy"):
            v = T.axis.spatial(T.int64({K}), {binding})
            T.where({pred})
            T.reads(x[v])
            T.writes(out[v])
            out[v] = x[v]
'''

# (binding, predicate) templates over f = b * T + t and k; {a}, {m}, {c}, {e} are constants
TEMPLATES = [
    ("{f}", "{f} // {a} * {a} + {f} % {a} < {c}"),
    ("{f}", "{f} // {a} * {a} + {f} % {a} < {c} and {f} < {e}"),
    ("{f} % {m}", "{f} % {m} // {a} * {a} + {f} % {a} < {c}"),
    ("{f} % {m}", "{f} % ({m} * {e}) // {a} % {e} * {a} + {f} % {a} < {c}"),
    ("{f} // {a}", "{f} // ({a} * {m}) * {m} + {f} % ({a} * {m}) // {a} < {c}"),
    ("{f} // {a}", "{f} // ({a} * {m}) * {m} + {f} % ({a} * {m}) // {a} < {c} and {f} < {e}"),
    ("{f} * {R} + k", "{f} % {m} * {R} + k < {c} and {f} < {e}"),
    ("{f} * {R} + k", "{f} % {m} * {R} + k < {c}"),
    ("{f} % {m} * {R} + k", "{f} % ({m} * {e}) % {m} * {R} + k < {c}"),
    ("{f} % {m}", "{f} % {m} // {a} * {a} + {f} % {e} < {c}"),
]


def _fill(template: str, lit, **values) -> str:
    f = f"(b * {lit(values['T'])} + t)"
    return template.format(f=f, **{k: lit(v) for k, v in values.items()})


@settings(max_examples=200, deadline=None)
@given(which=st.integers(0, len(TEMPLATES) - 1), B=st.integers(1, 4), T=st.sampled_from([1, 2, 4, 8, 16]),
       R=st.integers(1, 3), a=st.sampled_from([1, 2, 3, 4]), m=st.sampled_from([1, 2, 3, 4, 8]),
       c=st.integers(1, 40), e=st.integers(1, 20), K=st.integers(1, 40))
def test_dropped_predicates_hold_wherever_the_domain_does(which, B, T, R, a, m, c, e, K):
    binding, pred = TEMPLATES[which]
    values = dict(B=B, T=T, R=R, a=a, m=m, c=c, e=e)
    text = PROGRAM.format(K=K, B=B, T=T, R=R, binding=_fill(binding, lambda v: f"T.int64({v})", **values),
                          pred=_fill(pred, lambda v: f"T.int64({v})", **values))
    func = tir.parse(text)
    dropped = drop_predicates(func)
    if dropped is None:
        return
    # the domain the block is read with: K, or a leading part of it the predicate runs
    # whole (predicates.prefix_box). The copy is the only writer of ``out`` and does not
    # read it, so running a point again changes nothing (a predicate may drop some of a
    # point's repeats): the predicate drops no point the loops run inside the domain, or
    # the points run are exactly the leading part (whether the loops reach every point of
    # the domain is realize_check's question, not drop_predicates')
    (K2,) = [int(iv.dom.extent.value) for b in dropped.blocks() if b.name == "copy" for iv in b.iter_vars]
    assert K2 <= K
    py_binding, py_pred = _fill(binding, str, **values), _fill(pred, str, **values)
    run, looped = set(), set()
    for b, t, k in itertools.product(range(B), range(T), range(R)):
        env = {"b": b, "t": t, "k": k}
        if 0 <= eval(py_binding, env) < K:
            looped.add(eval(py_binding, env))
            if eval(py_pred, env):
                run.add(eval(py_binding, env))
    assert run == (looped if K2 == K else set(range(K2))), (text, K2)


@pytest.mark.parametrize("binding, pred, K", [
    ("f", "f // 2 * 2 + f % 2 < 7 and f < 8", 7),
    ("f % 8", "f % 56 // 2 % 4 * 2 + f % 2 < 7", 7),
    ("f // 9", "f // 18 * 2 + f % 18 // 9 < 5 and f < 54", 5),
    ("f * 2 + k", "f % 4 * 2 + k < 7 and f < 4", 7),
])
def test_identities_of_digits_are_recognised(binding, pred, K):
    lit = lambda s: re.sub(r"(?<![\w(])(\d+)", r"T.int64(\1)", s.replace("f", "(b * 32 + t)"))
    text = PROGRAM.format(K=K, B=2, T=32, R=2, binding=lit(binding), pred=lit(pred))
    func = tir.parse(text)
    assert drop_predicates(func) is not None
