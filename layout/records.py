"""Collecting the records of a plan (converted ops, transforms, ops left alone)."""
from __future__ import annotations

from tir.node import Map

from .rules import Decision, Refusal
from .summary import Converted, PlanSummary, Transform, Unchanged


def _plain(value):
    if isinstance(value, Map):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


def _changed_attrs(op, decision: Decision) -> dict:
    return {k: _plain(v) for k, v in decision.attrs.items() if op.attrs.get(k) != v}


def _verify(new_info, index: int, op, expected: dict) -> bool:
    if new_info is None or index >= len(new_info.ops) or new_info.ops[index].name != op.name:
        return False
    got = new_info.ops[index].attrs
    return all(_plain(got.get(k)) == v for k, v in expected.items())


class PlanRecords:
    """Accumulates records; each converted PrimFunc is re-analysed once."""

    def __init__(self):
        self.converted: list = []
        self.transforms: list = []
        self.unchanged: list = []
        self._seen_calls: set = set()
        self._reanalysed: dict = {}

    def transform(self, value, func, src, dst, kind, reason, consumer) -> None:
        self.transforms.append(Transform(value, func, src, dst, kind, reason, consumer))

    def call(self, name: str, new_name: str, info, fplan, analyze) -> None:
        """Records for one call (once per distinct converted function)."""
        if (name, new_name) in self._seen_calls:
            return
        self._seen_calls.add((name, new_name))
        if not info.ops:
            self.unchanged.append(Unchanged(name, None, "op recognition abstained: kept in the original layout"))
            return
        new_info = None
        if fplan.changed:
            if new_name not in self._reanalysed:
                self._reanalysed[new_name] = analyze(fplan.func)
            new_info = self._reanalysed[new_name]
        for index, (op, decision) in enumerate(fplan.decisions):
            self._op(name, new_name, index, op, decision, new_info, fplan.changed)

    def _op(self, name, new_name, index, op, decision, new_info, changed) -> None:
        op_name = op.name if op is not None else None
        if isinstance(decision, Refusal):
            self.unchanged.append(Unchanged(name, op_name, decision.reason))
            return
        if not changed or not decision.changes:
            self.unchanged.append(Unchanged(name, op_name, "no input arrives converted and not a target"))
            return
        expected = _changed_attrs(op, decision)
        verified = _verify(new_info, index, op, expected)
        self.converted.append(Converted(new_name, name, op_name, expected, verified))

    def summary(self) -> PlanSummary:
        return PlanSummary(tuple(self.converted), tuple(self.transforms), tuple(self.unchanged))
