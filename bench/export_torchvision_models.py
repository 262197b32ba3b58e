#!/usr/bin/python3
"""Exports more benchmark models than ../shared holds, from Debian's python3-torch and
python3-torchvision, each into OUT/NAME/ as model_bench (and the shared models) lay them out:
NAME.onnx, input.bin, output.bin (raw little-endian float32) and io.json.

  /usr/bin/python3 bench/export_torchvision_models.py [--out build/bench/models] [--models a,b]

Weights are random and fixed: torch.manual_seed(0) before each model is built (torchvision's
default init, no download), then BatchNorm's gamma ~ U(0.5, 1.5) and beta ~ U(-0.2, 0.2), and its
running statistics calibrated (cumulative average) on 4 batches of 8 normal inputs, so that
activations keep a realistic scale. The reference output is torch's eager forward in eval mode
on the input torch.manual_seed(1); torch.randn(shape). The ONNX files are generated, never
committed (they are tens to hundreds of MB).

  model_bench --models build/bench/models/resnet50,build/bench/models/bert_encoder ...
"""
import argparse
import json
import os
import sys

import torch
import torchvision

OPSET = 13


class BertEncoder(torch.nn.Module):
    """A BERT-style encoder: 2 post-norm layers of torch.nn.TransformerEncoder over a sequence
    of 128 token embeddings of width 256 (4 heads, a 1024-wide GELU feed-forward)."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(
            d_model=256, nhead=4, dim_feedforward=1024, dropout=0.0, activation="gelu",
            batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        # TransformerEncoder deep-copies one layer: draw each layer's weights anew so they differ.
        for mod in self.encoder.layers:
            for p in mod.parameters():
                if p.dim() > 1:
                    torch.nn.init.xavier_uniform_(p)
                else:
                    torch.nn.init.uniform_(p, -0.1, 0.1)

    def forward(self, x):
        return self.encoder(x)


MODELS = {
    "resnet50": (lambda: torchvision.models.resnet50(weights=None), [1, 3, 224, 224]),
    "densenet121": (lambda: torchvision.models.densenet121(weights=None), [1, 3, 224, 224]),
    "vgg11": (lambda: torchvision.models.vgg11(weights=None), [1, 3, 224, 224]),
    "mnasnet1_0": (lambda: torchvision.models.mnasnet1_0(weights=None), [1, 3, 224, 224]),
    "regnet_y_400mf": (lambda: torchvision.models.regnet_y_400mf(weights=None), [1, 3, 224, 224]),
    "bert_encoder": (BertEncoder, [1, 128, 256]),
}


def calibrate_batchnorm(model, shape):
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for bn in bns:
        with torch.no_grad():
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.2, 0.2)
        bn.reset_running_stats()
        bn.momentum = None  # cumulative average over the calibration batches
    model.train()
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn([8] + shape[1:], generator=g))


def export(name, out_dir):
    build, shape = MODELS[name]
    torch.manual_seed(0)
    model = build()
    calibrate_batchnorm(model, shape)
    model.eval()
    torch.manual_seed(1)
    x = torch.randn(shape, dtype=torch.float32)
    with torch.no_grad():
        y = model(x)
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    onnx_file = name + ".onnx"
    torch.onnx.export(model, (x,), os.path.join(d, onnx_file), opset_version=OPSET,
                      do_constant_folding=True, input_names=["input"], output_names=["output"])
    x.numpy().astype("<f4").tofile(os.path.join(d, "input.bin"))
    y.numpy().astype("<f4").tofile(os.path.join(d, "output.bin"))
    io = {
        "model": name,
        "onnx": onnx_file,
        "producer": {
            "torch": torch.__version__,
            "torchvision": torchvision.__version__,
            "opset": OPSET,
            "do_constant_folding": True,
            "batch": 1,
            "weights": "random init: torch.manual_seed(0) before constructing the model "
                       "(weights=None); BatchNorm gamma~U(0.5,1.5), beta~U(-0.2,0.2), running "
                       "stats calibrated on 4 batches of 8 randn (Generator seed 2); eval mode",
            "input": "torch.manual_seed(1); torch.randn(shape, dtype=float32)",
            "output": "torch eager forward on CPU (fp32), torch.no_grad()",
            "script": "bench/export_torchvision_models.py",
        },
        "inputs": [{"name": "input", "file": "input.bin", "shape": shape, "dtype": "float32",
                    "byte_order": "little", "layout": "row-major (C order)"}],
        "outputs": [{"name": "output", "file": "output.bin", "shape": list(y.shape),
                     "dtype": "float32", "byte_order": "little",
                     "layout": "row-major (C order)"}],
    }
    with open(os.path.join(d, "io.json"), "w") as f:
        json.dump(io, f, indent=2)
        f.write("\n")
    params = sum(p.numel() for p in model.parameters())
    print(f"{name}: {d} ({params / 1e6:.1f} M parameters, input {shape}, output "
          f"{list(y.shape)})", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default="build/bench/models", help="directory of NAME/ folders")
    p.add_argument("--models", default=",".join(MODELS),
                   help="comma-separated, of: " + ", ".join(MODELS))
    args = p.parse_args()
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"export_torchvision_models: unknown model {unknown[0]!r} (known: "
              f"{', '.join(MODELS)})", file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    for name in names:
        export(name, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
