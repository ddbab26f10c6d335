"""Corrupted TVMScript never crashes the reader: it parses or raises tir.ParseError."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tir
from corpus_util import CORPUS, corpus_files

_SMALL = [p for p in corpus_files() if p.stat().st_size < 6000]


def _texts():
    if not _SMALL:
        pytest.skip(f"corpus not found at {CORPUS}")
    return [p.read_text() for p in _SMALL]


def _parse_or_parse_error(text: str) -> None:
    try:
        tir.parse(text)
    except tir.ParseError as err:
        assert err.line >= 0 and err.col >= 0 and err.message
        assert str(err).startswith(f"{err.line}:{err.col}: ")


@st.composite
def corrupted(draw, texts):
    text = draw(st.sampled_from(texts))
    how = draw(st.sampled_from(["delete_line", "cut", "swap_tokens", "replace_char", "duplicate_line"]))
    lines = text.splitlines()
    if how == "delete_line":
        k = draw(st.integers(0, len(lines) - 1))
        return "\n".join(lines[:k] + lines[k + 1:])
    if how == "duplicate_line":
        k = draw(st.integers(0, len(lines) - 1))
        return "\n".join(lines[:k + 1] + lines[k:])
    if how == "cut":
        k = draw(st.integers(0, len(text)))
        return text[:k]
    if how == "replace_char":
        k = draw(st.integers(0, len(text) - 1))
        c = draw(st.sampled_from(list("()[]:,.=+-*/0123456789xTRn \"'")))
        return text[:k] + c + text[k + 1:]
    tokens = text.split(" ")
    i, j = draw(st.integers(0, len(tokens) - 1)), draw(st.integers(0, len(tokens) - 1))
    tokens[i], tokens[j] = tokens[j], tokens[i]
    return " ".join(tokens)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_corrupted_corpus_files_parse_or_raise_parse_error(data):
    text = data.draw(corrupted(_texts()))
    _parse_or_parse_error(text)
