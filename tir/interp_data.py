"""Storage of buffers for the interpreter: flat numpy arrays with checked, masked access."""
from __future__ import annotations

import attrs
import numpy as np

from .dtype import DataType


class InterpError(RuntimeError):
    """A run-time error of the interpreter (out-of-bounds access, bad argument, ...)."""


def np_dtype(d: DataType) -> np.dtype:
    """The numpy dtype holding values of ``d`` (bfloat16 is held as float32)."""
    if d.lanes != 1:
        raise InterpError(f"vector type {d} is not supported by the interpreter")
    if d.is_handle:
        raise InterpError("handle values cannot be evaluated")
    return np.dtype(d.numpy)


def round_bfloat16(x):
    """Round float32 values to the nearest bfloat16 (ties to even), kept as float32."""
    a = np.asarray(x, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32)
    out = np.where(np.isnan(a), a, out)
    return out if isinstance(x, np.ndarray) else np.float32(out)


@attrs.define
class BufferData:
    """The memory behind one Buffer: a flat array plus the layout to index it."""

    name: str
    """The buffer's name, for error messages."""
    flat: np.ndarray
    """All elements, one dimension."""
    shape: tuple
    """Extent of each dimension (ints)."""
    strides: tuple
    """Stride of each dimension, in elements."""
    offset: int = 0
    """Element offset of index (0, ..., 0)."""
    bf16: bool = False
    """Values are bfloat16 held as float32: stores round."""

    @staticmethod
    def allocate(name: str, shape, dtype: np.dtype, strides=None, offset: int = 0, bf16=False) -> "BufferData":
        shape = tuple(int(s) for s in shape)
        strides = tuple(int(s) for s in strides) if strides else compact_strides(shape)
        size = offset + 1 + sum((s - 1) * st for s, st in zip(shape, strides)) if all(shape) else 0
        return BufferData(name, np.zeros(max(size, 0), dtype=dtype), shape, strides, offset, bf16)

    def view(self) -> np.ndarray:
        """The logical n-d view of the storage (shares memory)."""
        item = self.flat.itemsize
        base = self.flat[self.offset:] if self.flat.size else self.flat
        return np.lib.stride_tricks.as_strided(base, self.shape, tuple(s * item for s in self.strides))

    def flat_index(self, indices, mask, where: str):
        """Flat positions of ``indices`` (broadcast arrays); lanes off ``mask`` point at 0."""
        if len(indices) != len(self.shape):
            raise InterpError(f"{where}: buffer {self.name!r} has rank {len(self.shape)}, indexed with {len(indices)}")
        flat = self.offset
        for dim, (idx, extent, stride) in enumerate(zip(indices, self.shape, self.strides)):
            idx = self._checked(idx, extent, mask, dim, indices, where)
            flat = flat + idx * stride if stride != 1 else flat + idx
        return flat

    def _checked(self, idx, extent, mask, dim, indices, where):
        if mask is not None and not np.all(mask):
            idx = np.where(mask, idx, 0)
        bad = (idx < 0) | (idx >= extent)
        if np.any(bad):
            self._raise_oob(bad, indices, mask, dim, where)
        return idx

    def _raise_oob(self, bad, indices, mask, dim, where):
        first = tuple(np.argwhere(np.atleast_1d(bad))[0]) if np.ndim(bad) else ()
        point = []
        for idx in indices:
            arr = np.broadcast_to(idx, np.shape(bad)) if np.ndim(bad) else idx
            point.append(int(arr[first]) if np.ndim(bad) else int(arr))
        raise InterpError(
            f"{where}: index {tuple(point)} is out of bounds for buffer {self.name!r} of shape "
            f"{self.shape} (dimension {dim})"
        )

    def load(self, indices, mask, where: str):
        """Gather the elements at ``indices``."""
        flat = self.flat_index(indices, mask, where)
        return self.flat.take(flat) if isinstance(flat, np.ndarray) else self.flat[int(flat)]

    def store(self, indices, value, mask, where: str) -> None:
        """Scatter ``value`` at ``indices`` where ``mask`` holds (later lanes win, as in loop order)."""
        flat = self.flat_index(indices, mask, where)
        if self.bf16:
            value = round_bfloat16(value)
        if not isinstance(flat, np.ndarray) and not isinstance(value, np.ndarray) and mask is None:
            self.flat[int(flat)] = value
            return
        flat, value = np.broadcast_arrays(flat, value)
        if mask is not None:
            keep = np.broadcast_to(mask, flat.shape)
            flat, value = flat[keep], value[keep]
        self.flat[flat.ravel()] = value.ravel()


def compact_strides(shape) -> tuple:
    """Row-major strides (in elements) of ``shape``."""
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= int(s)
    return tuple(reversed(strides))
