"""kiln.nd: arrays as TVM's tvm.nd hands them around (a numpy array underneath)."""

import numpy as np


class NDArray:
    def __init__(self, data, device=None):
        self._data = np.asarray(data)
        self.device = device

    def numpy(self):
        return self._data

    asnumpy = numpy

    @property
    def shape(self):
        return tuple(self._data.shape)

    @property
    def dtype(self):
        return str(self._data.dtype)

    def __repr__(self):
        return "<kiln.nd.NDArray shape=%s dtype=%s>" % (self.shape, self.dtype)


def array(arr, device=None):
    """tvm.nd.array: wraps a copy of `arr`."""
    if isinstance(arr, NDArray):
        arr = arr.numpy()
    return NDArray(np.array(arr), device)


def empty(shape, dtype="float32", device=None):
    return NDArray(np.empty(shape, dtype=dtype), device)
