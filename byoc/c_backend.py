"""The ``c`` backend (placeholder until the region C codegen lands)."""
from __future__ import annotations

import attrs

from .region import Unsupported


@attrs.frozen
class CBackend:
    """Offload regions to one compiled C function each."""

    name: str = "c"

    def check(self, op) -> "str | None":
        return None

    def patterns(self) -> list:
        return []

    def codegen(self, mod, func_name: str, analyze=None):
        raise Unsupported("the c backend is not available yet")
