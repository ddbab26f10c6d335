"""Locating the shared ground-truth corpus for tests (skipped cleanly when absent)."""
from __future__ import annotations

from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def corpus_files() -> list:
    """Every TVMScript file of the corpus (ops and models), sorted; empty when absent."""
    if not CORPUS.is_dir():
        return []
    return sorted(CORPUS.glob("ops/*.py")) + sorted(CORPUS.glob("models/*.py"))
