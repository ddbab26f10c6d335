"""What a layout plan did, as records a person or a program can read."""
from __future__ import annotations

import attrs


@attrs.frozen
class Converted:
    """An op now running in new layouts."""

    func: str
    """The PrimFunc that now implements it."""
    source: str
    """The PrimFunc it was converted from."""
    op: str
    attrs: dict
    """Its layout-related attributes after the conversion."""
    verified: "bool | None"
    """Re-analysis of the converted PrimFunc reports these attributes (None: not checked)."""

    def to_json(self) -> dict:
        return attrs.asdict(self)


@attrs.frozen
class Transform:
    """A ``layout_transform`` call inserted into ``main``."""

    value: str
    """The graph value transformed."""
    func: str
    """The layout_transform PrimFunc called."""
    src: str
    dst: str
    kind: str
    """"weight" (a parameter, foldable ahead of time), "input", "activation" or "output"."""
    reason: str
    consumer: "str | None" = None
    """The PrimFunc (and op) that needs the value in ``dst``."""

    @property
    def foldable(self) -> bool:
        return self.kind == "weight"

    def to_json(self) -> dict:
        out = attrs.asdict(self)
        out["from"], out["to"] = out.pop("src"), out.pop("dst")
        out["foldable"] = self.foldable
        return out


@attrs.frozen
class Unchanged:
    """An op left in its original layout."""

    func: str
    op: "str | None"
    reason: str

    def to_json(self) -> dict:
        return attrs.asdict(self)


@attrs.frozen
class PlanSummary:
    converted: tuple = ()
    transforms: tuple = ()
    unchanged: tuple = ()

    def to_json(self) -> dict:
        return {"converted": [c.to_json() for c in self.converted],
                "transforms": [t.to_json() for t in self.transforms],
                "unchanged": [u.to_json() for u in self.unchanged]}

    def activation_transforms(self) -> list:
        return [t for t in self.transforms if t.kind != "weight"]

    def text(self, limit: "int | None" = None) -> str:
        """A readable report; with ``limit``, at most that many lines per section."""
        lines = [f"converted ({len(self.converted)}):"]
        lines += _capped([_converted_line(c) for c in self.converted], limit)
        lines.append(f"transforms inserted ({len(self.transforms)}):")
        lines += _capped([f"  {t.value}: {t.src} -> {t.dst} [{t.kind}] {t.reason}" for t in self.transforms], limit)
        lines.append(f"left in their layout ({len(self.unchanged)}):")
        lines += _capped([f"  {u.func}: {u.op or '-'}: {u.reason}" for u in self.unchanged], limit)
        return "\n".join(lines)


def _converted_line(c: Converted) -> str:
    check = {True: "re-analysed ok", False: "re-analysis differs", None: "not re-analysed"}[c.verified]
    attrs_text = ", ".join(f"{k}={v}" for k, v in c.attrs.items())
    return f"  {c.source} -> {c.func}: {c.op} ({attrs_text}) [{check}]"


def _capped(lines: list, limit: "int | None") -> list:
    if limit is None or len(lines) <= limit:
        return lines
    return lines[:limit] + [f"  ... and {len(lines) - limit} more"]
