"""kiln.relay: TVM's relay entry points a tuning script uses (frontend.from_onnx, build, op)."""
from types import SimpleNamespace

from ..build_module import build  # noqa: F401
from . import frontend  # noqa: F401


class IRModule:
    """What relay.frontend.from_onnx returns as `mod`: mod["main"] is the model."""

    def __init__(self, model):
        self._model = model

    def __getitem__(self, name):
        if name != "main":
            raise KeyError("the module has one function, 'main'; got %r" % (name,))
        return self._model


op = SimpleNamespace(get=lambda name: SimpleNamespace(name=name))
