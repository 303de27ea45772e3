"""What fp8dot reads off an array: the description the C++ binding turns into a TensorSpec.

numpy arrays (with ml_dtypes for float8/bfloat16) and torch tensors are read without a copy:
fp8dot takes their data pointer, shape and element strides; the C++ side decides whether the
strides form a dense layout (row-major, column-major or any permutation) and refuses
non-contiguous views with a message that says so.
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple


class ArrayInfo(NamedTuple):
    description: tuple  # (dtype name, shape, element strides): the binding's ArrayDescription
    pointer: int
    device: str  # "cpu" or "cuda:N"


def row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Element strides of a dense row-major array of `shape` (as torch and XLA lay it out)."""
    strides, stride = [], 1
    for size in reversed(shape):
        strides.append(stride)
        stride *= max(size, 1)
    return tuple(reversed(strides))


def layout_strides(shape: tuple[int, ...], minor_to_major: tuple[int, ...] = ()) -> tuple[int, ...]:
    """Element strides of a dense array of `shape` laid out minor-to-major (XLA's notation; empty
    is row-major)."""
    if not minor_to_major:
        return row_major_strides(shape)
    strides, stride = [0] * len(shape), 1
    for dim in minor_to_major:
        strides[dim] = stride
        stride *= max(shape[dim], 1)
    return tuple(strides)


def _is_torch_tensor(array: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(array, torch.Tensor)


def storage_reach(tensor: Any) -> tuple[int, int]:
    """(the bytes a torch tensor's shape, strides and offset reach in its storage, the bytes the
    storage holds); (0, held) for an empty tensor."""
    held = tensor.untyped_storage().nbytes()
    if tensor.numel() == 0:
        return 0, held
    last = tensor.storage_offset() + sum((size - 1) * stride
                                         for size, stride in zip(tensor.shape, tensor.stride()))
    return (last + 1) * tensor.element_size(), held


def check_storage_holds_elements(tensor: Any, what: str) -> None:
    """torch lets a storage shrink under the tensors that view it (FSDP2 resizes a gathered
    parameter's storage to 0 bytes between its passes): the kernels would read past its end."""
    needed, held = storage_reach(tensor)
    if needed > held:
        raise ValueError(f"{what}: its storage holds {held} bytes but its shape, strides and "
                         f"offset reach {needed} bytes (a storage resized after this tensor was "
                         "made, such as a sharded model's gathered parameter freed between passes)")


def describe(array: Any, what: str) -> ArrayInfo:
    """The description, data pointer and device of a numpy array or torch tensor."""
    if _is_torch_tensor(array):
        device = array.device
        device_name = "cpu" if device.type == "cpu" else f"{device.type}:{device.index}"
        if device.type not in ("cpu", "cuda"):
            raise ValueError(f"{what}: fp8dot runs on cpu and cuda tensors, got {device}")
        check_storage_holds_elements(array, what)
        return ArrayInfo((str(array.dtype), tuple(array.shape), tuple(array.stride())), array.data_ptr(), device_name)
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(array, numpy.ndarray):
        if not array.dtype.isnative:  # its name would not say so, and the kernels read native
            raise ValueError(f"{what}: dtype {array.dtype.str!r} is not in this machine's byte "
                             "order; convert it with array.astype(array.dtype.newbyteorder('='))")
        itemsize = array.dtype.itemsize
        if any(stride % itemsize for stride in array.strides):
            raise ValueError(f"{what}: strides {array.strides} are not whole elements of {array.dtype}")
        strides = tuple(stride // itemsize for stride in array.strides)
        return ArrayInfo((array.dtype.name, tuple(array.shape), strides), array.ctypes.data, "cpu")
    raise TypeError(f"{what}: expected a numpy array or a torch tensor, got {type(array).__name__}")
