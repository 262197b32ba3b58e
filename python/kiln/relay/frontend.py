"""relay.frontend.from_onnx(model, shape=None) -> (mod, params), as TVM's."""

from .. import frontend as _frontend


def from_onnx(model, shape=None, dtype="float32", opset=None, freeze_params=True,
              convert_config=None, export_node_renamed_model_path=None):
    """The weights stay in the model (kiln pre-packs them at build time): params is empty."""
    from . import IRModule

    return IRModule(_frontend.from_onnx(model, shape)), {}
