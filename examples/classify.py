#!/usr/bin/env python3
"""Image classification with a compiled model, the TVM way: an image through PIL, resized,
normalised (ImageNet's mean and std), NCHW with a batch dimension, through GraphModule, then
softmax and the top 5 with a labels file (one label per line; class numbers without one).

    python3 examples/classify.py model.onnx cat.jpg --labels labels.txt

With --library, a model compiled earlier (kiln compile -o model.kiln) is loaded instead of
compiled."""

import argparse
import sys

import numpy as np
from PIL import Image

import kiln
from kiln.contrib import graph_executor


def preprocess(path, size):
    image = Image.open(path).convert("RGB").resize((size, size))
    data = np.asarray(image).astype("float32") / 255.0
    mean = np.array([0.485, 0.456, 0.406], dtype="float32")
    std = np.array([0.229, 0.224, 0.225], dtype="float32")
    data = (data - mean) / std
    return np.expand_dims(data.transpose(2, 0, 1), 0)  # HWC -> NCHW with a batch dimension


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="an ONNX model, or a .kiln library with --library")
    p.add_argument("image")
    p.add_argument("--labels", help="a text file with one label per line")
    p.add_argument("--library", action="store_true", help="MODEL is a compiled .kiln file")
    p.add_argument("--db", help="a record store or TVM log whose best configs to compile with")
    args = p.parse_args()

    if args.library:
        lib = kiln.runtime.load_module(args.model)
    elif args.db:
        with kiln.autotvm.apply_history_best(args.db):
            lib = kiln.build(kiln.frontend.from_onnx(args.model))
    else:
        lib = kiln.build(kiln.frontend.from_onnx(args.model))
    module = graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    shapes, _ = module.get_input_info()
    name = module.get_input_name(0)
    size = shapes[name][-1]
    module.set_input(name, preprocess(args.image, size))
    module.run()
    scores = module.get_output(0).numpy().reshape(-1)
    prob = np.exp(scores - scores.max())
    prob /= prob.sum()
    labels = None
    if args.labels:
        with open(args.labels) as f:
            labels = [line.strip() for line in f]
    for rank, c in enumerate(np.argsort(prob)[::-1][:5]):
        label = labels[c] if labels and c < len(labels) else "class %d" % c
        print("#%d %-30s %.4f" % (rank + 1, label, prob[c]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
