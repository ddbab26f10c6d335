"""Data types of the mini TIR: ``DataType("float", 32)`` prints as ``float32``."""
from __future__ import annotations

import functools
import re

import attrs

_CODES = ("int", "uint", "float", "bfloat", "bool", "handle")
_PATTERN = re.compile(r"^(int|uint|float|bfloat|bool|handle)(\d*)(?:x(\d+))?$")


@attrs.frozen(cache_hash=True)
class DataType:
    """A scalar (or vector) element type."""

    code: str = attrs.field(validator=attrs.validators.in_(_CODES))
    """Type class: int, uint, float, bfloat, bool or handle."""
    bits: int
    """Width of one lane in bits."""
    lanes: int = 1
    """Vector lanes; 1 for scalars."""

    def __str__(self) -> str:
        if self.code == "bool":
            base = "bool"
        elif self.code == "handle":
            base = "handle"
        else:
            base = f"{self.code}{self.bits}"
        return base if self.lanes == 1 else f"{base}x{self.lanes}"

    def __repr__(self) -> str:
        return f"DataType({str(self)!r})"

    @property
    def is_float(self) -> bool:
        return self.code in ("float", "bfloat")

    @property
    def is_int(self) -> bool:
        return self.code == "int"

    @property
    def is_uint(self) -> bool:
        return self.code == "uint"

    @property
    def is_integer(self) -> bool:
        """True for signed and unsigned integers (not bool)."""
        return self.code in ("int", "uint")

    @property
    def is_bool(self) -> bool:
        return self.code == "bool"

    @property
    def is_handle(self) -> bool:
        return self.code == "handle"

    @property
    def numpy(self) -> str:
        """The numpy dtype name that holds this type (bfloat16 is held as float32)."""
        if self.code == "bfloat":
            return "float32"
        return str(self)


@functools.lru_cache(maxsize=None)
def dtype(value: "str | DataType") -> DataType:
    """Parse ``"float32"``, ``"int64"``, ``"bool"``, ``"bfloat16"``... into a DataType."""
    if isinstance(value, DataType):
        return value
    text = str(value)
    match = _PATTERN.match(text)
    if not match:
        raise ValueError(f"unknown data type {text!r}")
    code, bits, lanes = match.groups()
    if code == "bool":
        return DataType("bool", 1, int(lanes or 1))
    if code == "handle":
        return DataType("handle", 64)
    if not bits:
        raise ValueError(f"data type {text!r} needs a bit width")
    return DataType(code, int(bits), int(lanes or 1))


bool_ = dtype("bool")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
float16 = dtype("float16")
float32 = dtype("float32")
float64 = dtype("float64")
bfloat16 = dtype("bfloat16")
handle = dtype("handle")
