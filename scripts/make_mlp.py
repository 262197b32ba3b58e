#!/usr/bin/python3
"""Writes a small ONNX model that kiln's README examples tune, compile and bench.

An MLP for 28x28 images: input [1, 784] -> Gemm 256 + Relu -> Gemm 10 (opset 13), with seeded
random weights, so a fresh clone has a model without downloading one:

    /usr/bin/python3 scripts/make_mlp.py mlp.onnx

Needs Debian's python3-onnx and python3-numpy (scripts/install-deps.sh installs them). It refuses
to write over anything that is not a regular file.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mlp(seed=0):
    rng = np.random.default_rng(seed)

    def weight(name, rows, cols):
        bound = 1.0 / np.sqrt(cols)
        return numpy_helper.from_array(
            rng.uniform(-bound, bound, size=(rows, cols)).astype(np.float32), name)

    def bias(name, n):
        return numpy_helper.from_array(rng.uniform(-0.1, 0.1, size=(n,)).astype(np.float32), name)

    nodes = [
        helper.make_node("Gemm", ["input", "fc1.weight", "fc1.bias"], ["fc1"], transB=1),
        helper.make_node("Relu", ["fc1"], ["relu1"]),
        helper.make_node("Gemm", ["relu1", "fc2.weight", "fc2.bias"], ["output"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 784])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 10])],
        initializer=[weight("fc1.weight", 256, 784), bias("fc1.bias", 256),
                     weight("fc2.weight", 10, 256), bias("fc2.bias", 10)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="kiln scripts/make_mlp.py")
    onnx.checker.check_model(model)
    return model


def main(argv):
    if len(argv) != 2:
        print("usage: make_mlp.py OUTPUT.onnx", file=sys.stderr)
        return 2
    path = argv[1]
    if os.path.lexists(path) and (os.path.islink(path) or not os.path.isfile(path)):
        print(f"make_mlp.py: {path}: not a regular file; refusing to write over it",
              file=sys.stderr)
        return 74
    tmp = path + ".tmp"
    onnx.save(mlp(), tmp)
    os.replace(tmp, path)
    print(f"wrote {path} (MLP 784-256-10, opset 13)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
