"""Soundness on ops opinfo has never seen: for every PrimFunc of the unknown-ops bench
(tests/unknown_ops*.py: Relax ops outside the corpus in TVM's legalized forms, and chains
of known ops FuseOps never fuses), ``opinfo.analyze`` abstains or gives one of the case's
accepted answers: never another op, other attributes, or several ops for one op.

``python3 tests/test_opinfo_unknown_ops.py`` prints what opinfo says for every case.
"""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pad_inline import inline_pads  # noqa: E402
from schedule_helpers import random_schedule  # noqa: E402
from unknown_ops import cases  # noqa: E402

from opinfo.api import analyze  # noqa: E402
from tir.verifier import verify  # noqa: E402

CASES = cases()


def _answer(func) -> tuple:
    return tuple((o.name, o.to_json()["attrs"]) for o in analyze(func).ops)


def _agrees(got: tuple, want: tuple) -> bool:
    """Same op names, and every attribute the case states has the stated value."""
    if len(got) != len(want):
        return False
    return all(g[0] == w[0] and all(g[1].get(k) == v for k, v in w[1].items()) for g, w in zip(got, want))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_unknown_op_abstains_or_is_right(case):
    func = case.build()
    verify(func)
    got = _answer(func)
    assert not got or any(_agrees(got, want) for want in case.accept), got


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_unknown_op_after_schedules(case):
    """The same after loops are split and reordered and pad blocks inlined: the hidden
    corpus's ``scheduled`` variant."""
    for seed in (1, 2):
        func = inline_pads(random_schedule(case.build(), seed))
        got = _answer(func)
        assert not got or any(_agrees(got, want) for want in case.accept), (seed, got)


if __name__ == "__main__":
    for case in CASES:
        got = _answer(case.build())
        ok = not got or any(_agrees(got, w) for w in case.accept)
        shown = ", ".join(f"{n}{a if a else ''}" for n, a in got) or "(abstains)"
        print(f"{'ok ' if ok else 'BAD'}  {case.name:42s} {shown}")
