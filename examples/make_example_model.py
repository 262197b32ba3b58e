#!/usr/bin/env python3
"""Writes a small image classifier (example.onnx: 1x3x32x32 -> Flatten -> Gemm -> Relu -> Gemm ->
10 classes, random weights) and a test picture (example.png), so that the other examples run
without a download:

    python3 examples/make_example_model.py [--dir DIR]"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from PIL import Image


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", default=".")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array((rng.standard_normal((64, 3 * 32 * 32)) * 0.02).astype("float32"), "w1")
    b1 = numpy_helper.from_array(np.zeros(64, dtype="float32"), "b1")
    w2 = numpy_helper.from_array((rng.standard_normal((10, 64)) * 0.1).astype("float32"), "w2")
    b2 = numpy_helper.from_array(np.zeros(10, dtype="float32"), "b2")
    nodes = [helper.make_node("Flatten", ["input"], ["flat"], axis=1),
             helper.make_node("Gemm", ["flat", "w1", "b1"], ["h"], transB=1),
             helper.make_node("Relu", ["h"], ["hr"]),
             helper.make_node("Gemm", ["hr", "w2", "b2"], ["output"], transB=1)]
    graph = helper.make_graph(
        nodes, "example", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 10])], [w1, b1, w2, b2])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(args.dir, "example.onnx"))
    pixels = (rng.uniform(0, 255, (64, 64, 3))).astype("uint8")
    Image.fromarray(pixels).save(os.path.join(args.dir, "example.png"))
    print("wrote %s and %s" % (os.path.join(args.dir, "example.onnx"),
                                os.path.join(args.dir, "example.png")))


if __name__ == "__main__":
    main()
