"""Compiled models: kiln.build's result and kiln.runtime.load_module(path), devices."""

import os

from . import _kiln


class Device:
    """tvm.device / tvm.cpu: kiln runs on this machine's CPU only."""

    def __init__(self, kind="cpu", index=0):
        self.kind = kind
        self.index = index

    def __repr__(self):
        return "%s(%d)" % (self.kind, self.index)


def device(dev_type="cpu", index=0):
    """tvm.device(str(target), 0): "llvm ..." and "cpu" are this machine's CPU."""
    kind = str(dev_type).split()[0] if dev_type else "cpu"
    if kind not in ("cpu", "llvm"):
        raise ValueError("device: kiln runs on the CPU only ('cpu' or an llvm target), got %r"
                         % (dev_type,))
    return Device("cpu", index)


def cpu(index=0):
    return Device("cpu", index)


class Library:
    """A compiled model: kernels, pre-packed weights and the graph (kiln's .kiln artifact).

    `tasks` lists, for a fresh build, each tuning task with whether the store had a record for
    it (tuned) or kiln's default config was used."""

    def __init__(self, artifact, tasks=()):
        self._artifact = artifact
        self.tasks = list(tasks)

    @property
    def target(self):
        return self._artifact.target

    def export_library(self, path, *args, **kwargs):
        """Writes the .kiln artifact to `path` (whatever its extension)."""
        self._artifact.write(os.fspath(path))

    def get_graph_json(self):
        """The graph the library runs (JSON text): kiln's libraries carry it, so
        graph_executor.create(lib.get_graph_json(), lib, dev) is GraphModule(lib)."""
        return self._artifact.graph_json

    def get_lib(self):
        """TVM's factory-module accessor: the kernels are part of this library."""
        return self

    def get_params(self):
        """Empty: kiln pre-packs the weights into the library at build time."""
        return {}

    def __getitem__(self, name):
        if name != "default":
            raise KeyError("a kiln library has one graph, 'default'; got %r" % (name,))
        from .contrib.graph_executor import GraphModule

        return lambda *devices: GraphModule(self)

    def __repr__(self):
        return "<kiln.runtime.Library target=%r>" % self.target


def load_module(path, fmt=""):
    """Reads a .kiln artifact (kiln.build(...).export_library or `kiln compile -o`)."""
    return Library(_kiln.Artifact.read(os.fspath(path)))
