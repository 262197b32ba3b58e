"""The issue's acceptance: examples/tune_model.py on resnet18 end to end, and a TVM AutoTVM script
that runs on kiln once its import lines (and nothing else) are changed."""

import pytest

pytest.importorskip("kiln", reason="the kiln Python module is not built")

import os
import re
import subprocess
import sys

import numpy as np

from conftest import SOURCE_DIR, model_dir, run_kiln

TVM_SCRIPT = '''\
import sys
import timeit

import numpy as np
import onnx
import tvm
from tvm import relay, autotvm
from tvm.autotvm.tuner import XGBTuner
from tvm.contrib import graph_executor

model_path, log_file, input_path, output_path = sys.argv[1:5]
onnx_model = onnx.load(model_path)
shape_dict = {"input": (1, 784)}
mod, params = relay.frontend.from_onnx(onnx_model, shape_dict)
target = tvm.target.Target("llvm")

tasks = autotvm.task.extract_from_program(mod["main"], target=target, params=params)
measure_option = autotvm.measure_option(
    builder=autotvm.LocalBuilder(),
    runner=autotvm.LocalRunner(number=1, repeat=2, min_repeat_ms=0, enable_cpu_cache_flush=True))
for i, task in enumerate(tasks[:2]):
    prefix = "[Task %2d/%2d] " % (i + 1, len(tasks))
    tuner = XGBTuner(task, loss_type="rank")
    n_trial = min(2, len(task.config_space))
    tuner.tune(n_trial=n_trial, early_stopping=None, measure_option=measure_option,
               callbacks=[autotvm.callback.progress_bar(n_trial, prefix=prefix),
                          autotvm.callback.log_to_file(log_file)])

with autotvm.apply_history_best(log_file):
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target=target, params=params)

dev = tvm.device(str(target), 0)
module = graph_executor.GraphModule(lib["default"](dev))
data = np.fromfile(input_path, dtype="float32").reshape(1, 784)
module.set_input("input", tvm.nd.array(data))
module.run()
out = module.get_output(0).numpy()
timing = np.array(timeit.Timer(lambda: module.run()).repeat(repeat=3, number=1)) * 1000
print("mean %.3f ms median %.3f ms std %.3f ms" % (timing.mean(), np.median(timing), timing.std()))
print(module.benchmark(dev, repeat=2, number=1))
np.save(output_path, out)
'''


def port(script):
    """What a user does: change the import lines, nothing else."""
    out = []
    for line in script.splitlines(keepends=True):
        if line.startswith("import tvm"):
            line = line.replace("import tvm", "import kiln as tvm", 1)
        elif line.startswith("from tvm"):
            line = re.sub(r"^from tvm\b", "from kiln", line)
        out.append(line)
    return "".join(out)




def test_tvm_script_runs_with_its_imports_changed(tmp_path, kiln_binary):
    d = model_dir("mlp")
    ported = port(TVM_SCRIPT)
    changed = [(a, b) for a, b in zip(TVM_SCRIPT.splitlines(), ported.splitlines()) if a != b]
    assert len(changed) == 4 and all(a.startswith(("import tvm", "from tvm")) for a, _ in changed)
    script = tmp_path / "tune_mlp.py"
    script.write_text(ported)
    log, out = tmp_path / "mlp.log", tmp_path / "out.npy"
    r = subprocess.run([sys.executable, str(script), os.path.join(d, "mlp.onnx"), str(log),
                        os.path.join(d, "input.bin"), str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Current/Best:" in r.stdout and "mean (ms)" in r.stdout
    got = np.load(out).reshape(-1)
    want = np.fromfile(os.path.join(d, "output.bin"), dtype="<f4")
    assert np.abs(got - want).max() / np.abs(want).max() <= 1e-4
    assert len(log.read_text().splitlines()) == 4
    r = run_kiln(kiln_binary, "import", str(log), "--db", str(tmp_path / "mlp.db"))
    assert r.returncode == 0 and "imported 4 records" in r.stdout and " 0 skipped" in r.stdout, r.stdout + r.stderr


def test_tune_model_example_on_resnet18(tmp_path, kiln_binary):
    d = model_dir("resnet18")
    log = tmp_path / "resnet18.log"
    r = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "examples", "tune_model.py"),
                        os.path.join(d, "resnet18.onnx"), "--tasks", "1", "--trials", "2",
                        "--log", str(log), "--input", os.path.join(d, "input.bin"),
                        "--expect", os.path.join(d, "output.bin"), "--repeat", "2"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 of 12 tasks tuned" in r.stdout and "max relative error" in r.stdout, r.stdout
    r = run_kiln(kiln_binary, "import", str(log), "--db", str(tmp_path / "r18.db"))
    assert r.returncode == 0, r.stderr
    assert "imported 2 records" in r.stdout and " 0 skipped" in r.stdout, r.stdout
