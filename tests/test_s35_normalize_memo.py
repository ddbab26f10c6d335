"""normalize remembers its last answers by function identity: the decomposition and a
whole-function recognizer (through ``tags.under_tag``) normalize the same function, and a
slow normalization (a scheduled conv2d_transpose: seconds) is not done twice."""
from __future__ import annotations

import opinfo.normalize as normalize_mod
from opinfo.normalize import normalize
from opinfo.tags import under_tag
from tests.fixture_util import fixture_func
from tir import structural_equal

ADD = "s35_blockized_add_partitioned"


def test_same_function_normalized_once(monkeypatch):
    calls = []
    real = normalize_mod._normalize
    monkeypatch.setattr(normalize_mod, "_normalize", lambda f: calls.append(f) or real(f))
    func = fixture_func(ADD)
    first = normalize(func)
    assert first is not None and normalize(func) is first
    assert under_tag(func, "T_add") is first  # the tag reader asks again: remembered
    assert len(calls) == 1


def test_another_function_is_normalized_afresh(monkeypatch):
    calls = []
    real = normalize_mod._normalize
    monkeypatch.setattr(normalize_mod, "_normalize", lambda f: calls.append(f) or real(f))
    a, b = fixture_func(ADD), fixture_func(ADD)  # equal, not the same object
    assert structural_equal(normalize(a), normalize(b))
    assert len(calls) == 2
