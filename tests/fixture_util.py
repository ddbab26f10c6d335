"""TVM-printed fixtures (tests/fixtures/) and checking that two PrimFuncs compute the same."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import tir

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_func(name: str, edit=lambda text: text):
    """The one PrimFunc of ``fixtures/NAME.py`` (its text passed through ``edit`` first)."""
    (_, func), = tir.parse(edit((FIXTURES / f"{name}.py").read_text())).prim_funcs()
    return func


def assert_same_values(a, b, tol: float = 1e-5) -> None:
    """``a`` and ``b`` (static float32 shapes, output last) agree on random inputs."""
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, [int(s.value) for s in buf.shape]).astype("float32") for buf in a.buffers[:-1]]
    np.testing.assert_allclose(tir.run(b, *args), tir.run(a, *args), rtol=1e-5, atol=tol)
