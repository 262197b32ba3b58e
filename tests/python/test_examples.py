"""examples/classify.py on a generated model and picture: its top 5 are numpy's."""

import pytest

pytest.importorskip("kiln", reason="the kiln Python module is not built")

import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper
from PIL import Image

from conftest import SOURCE_DIR

EXAMPLES = os.path.join(SOURCE_DIR, "examples")


def test_classify_prints_the_top5_numpy_computes(tmp_path):
    subprocess.run([sys.executable, os.path.join(EXAMPLES, "make_example_model.py"), "--dir",
                    str(tmp_path)], check=True, capture_output=True)
    labels = tmp_path / "labels.txt"
    labels.write_text("".join("label%d\n" % i for i in range(10)))
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "classify.py"),
                        str(tmp_path / "example.onnx"), str(tmp_path / "example.png"),
                        "--labels", str(labels)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 5

    # The same preprocessing and model in numpy.
    w = {t.name: numpy_helper.to_array(t) for t in
         onnx.load(str(tmp_path / "example.onnx")).graph.initializer}
    img = np.asarray(Image.open(tmp_path / "example.png").convert("RGB").resize((32, 32)))
    x = (img.astype("float32") / 255 - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]
    x = x.transpose(2, 0, 1).reshape(1, -1).astype("float32")
    h = np.maximum(x @ w["w1"].T + w["b1"], 0)
    s = (h @ w["w2"].T + w["b2"]).reshape(-1)
    p = np.exp(s - s.max())
    p /= p.sum()
    top = np.argsort(p)[::-1][:5]
    for line, c in zip(lines, top):
        assert "label%d" % c in line
        assert abs(float(line.split()[-1]) - p[c]) < 1e-3
