"""ONNX import: kiln.frontend.from_onnx(model, shape=None) -> a Model."""

import os
import tempfile

from . import _kiln


class Model:
    """An imported ONNX model: static shapes, constants folded, every operator supported.

    `path` is the .onnx file it was read from (an onnx.ModelProto is written to a private
    temporary file that lives as long as the Model)."""

    def __init__(self, path, shape, graph, tmpdir=None):
        self.path = path
        self.shape = dict(shape or {})
        self.graph = graph
        self._tmpdir = tmpdir

    @property
    def input_names(self):
        return list(self.graph.inputs)

    @property
    def output_names(self):
        return list(self.graph.outputs)

    def __repr__(self):
        return "Model(%r)" % self.path


def _shapes(shape):
    out = {}
    for name, dims in (shape or {}).items():
        try:
            out[str(name)] = [int(d) for d in dims]
        except (TypeError, ValueError):
            raise ValueError("shape: input '%s': expected a tuple of integers, got %r"
                             % (name, dims)) from None
    return out


def from_onnx(model, shape=None):
    """Imports an ONNX model given as a path or an onnx.ModelProto; `shape` maps input names to
    full shapes for inputs with symbolic dimensions. Raises kiln.InvalidInputError naming the
    file and node for a bad model, kiln.UnsupportedError for what kiln does not support."""
    tmpdir = None
    if isinstance(model, Model):
        return model
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
    elif hasattr(model, "SerializeToString"):
        tmpdir = tempfile.TemporaryDirectory(prefix="kiln-onnx-")
        path = os.path.join(tmpdir.name, "model.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
    else:
        raise TypeError("from_onnx: expected a path or an onnx.ModelProto, got %s"
                        % type(model).__name__)
    shapes = _shapes(shape)
    graph = _kiln.import_onnx(path, shapes)
    return Model(path, shapes, graph, tmpdir)
