"""A dlight-scheduled matmul over a symbolic row count: the Matmul rule pads the rows to a
multiple of its 32-row tile (``(n + 31) // 32 * 32`` rows in the shared copy, a crop under
``T.where(... < n)``), which the symbolic readers do not follow. A function a scheduler
marked scheduled is read at concrete row counts past its tile constants (as windowed ops
over symbolic spatial extents are), and the answer checked at every count from 1 up.

Fixture: TVM 0.27's ``matmul`` of (n, 6) x (6, 9) float16 into float32, scheduled by
``dlight.ApplyDefaultSchedule(dl.gpu.Matmul(), ...)`` for target ``cuda``."""
from __future__ import annotations

import attrs

import tir
from opinfo import analyze
from opinfo import specialize
from opinfo.unit_axes import SCHEDULED

from tests.fixture_util import FIXTURES


def _func():
    mod = tir.parse((FIXTURES / "s46_dlight_matmul_symbolic_rows.py").read_text())
    (func,) = [f for _, f in mod.prim_funcs()]
    return func


def _read(func, monkeypatch):
    swept = []
    monkeypatch.setattr(specialize, "_holds_below", lambda f, vs, first, ops: swept.append(first) or True)
    return specialize.read_specialized(func, lambda static: analyze(static)), swept


def test_read_at_row_counts_past_the_tiles(monkeypatch):
    found, swept = _read(_func(), monkeypatch)
    assert found is not None
    ops, _ = found
    assert [op.name for op in ops] == ["matmul"]
    assert swept and swept[0] > 64  # past the 64-column tile


def test_a_symbolic_batch_of_an_unscheduled_function_is_left_to_the_symbolic_readers(monkeypatch):
    func = _func()
    plain = attrs.evolve(func, attrs={k: v for k, v in dict(func.attrs).items() if k not in SCHEDULED})
    found, swept = _read(plain, monkeypatch)
    assert found is None and not swept
