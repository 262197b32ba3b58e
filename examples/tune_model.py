#!/usr/bin/env python3
"""The AutoTVM walkthrough on kiln: extract a model's tasks, tune each with an XGBTuner (progress
bar, TVM log file), compile with the best records, run and time the model.

    python3 examples/tune_model.py model.onnx --trials 200 --log tune.log

--input/--expect read raw float32 files (the model's input, its reference output) and check the
output against them; --tasks tunes only the first N tasks (a quick try)."""

import argparse
import sys
import timeit

import numpy as np

import kiln
from kiln import autotvm
from kiln.autotvm.tuner import XGBTuner
from kiln.contrib import graph_executor


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", help="an ONNX model")
    p.add_argument("--target", default="llvm", help="default: this machine's CPU")
    p.add_argument("--trials", type=int, default=200, help="trials per task")
    p.add_argument("--early-stopping", type=int, default=None)
    p.add_argument("--tasks", type=int, default=None, help="tune only the first N tasks")
    p.add_argument("--log", default="tune.log", help="TVM log file the records are appended to")
    p.add_argument("--input", help="the model's input, raw float32 (default: random)")
    p.add_argument("--expect", help="the expected output, raw float32: checked to 1e-4")
    p.add_argument("--repeat", type=int, default=10, help="timed runs of the model")
    args = p.parse_args()

    target = kiln.Target(args.target)
    model = kiln.frontend.from_onnx(args.model)
    tasks = autotvm.task.extract_from_program(model, target=target)
    print("%s: %d tasks" % (args.model, len(tasks)))

    measure_option = autotvm.measure_option(
        builder=autotvm.LocalBuilder(),
        runner=autotvm.LocalRunner(number=1, repeat=10, min_repeat_ms=0,
                                   enable_cpu_cache_flush=True))
    for i, task in enumerate(tasks[:args.tasks]):
        prefix = "[Task %2d/%2d] %s" % (i + 1, len(tasks), task.name)
        tuner = XGBTuner(task, loss_type="rank")
        n_trial = min(args.trials, len(task.config_space))
        tuner.tune(n_trial=n_trial, early_stopping=args.early_stopping,
                   measure_option=measure_option,
                   callbacks=[autotvm.callback.progress_bar(n_trial, prefix=prefix),
                              autotvm.callback.log_to_file(args.log)])

    with autotvm.apply_history_best(args.log):
        lib = kiln.build(model, target=target)
    tuned = sum(1 for t in lib.tasks if t["tuned"])
    print("compiled: %d of %d tasks tuned, the others with kiln's default configs"
          % (tuned, len(lib.tasks)))

    module = graph_executor.GraphModule(lib)
    shapes, _ = module.get_input_info()
    name = module.get_input_name(0)
    if args.input:
        data = np.fromfile(args.input, dtype="<f4").reshape(shapes[name])
    else:
        data = np.random.default_rng(0).uniform(-1, 1, shapes[name]).astype("float32")
    module.set_input(name, data)
    module.run()
    out = module.get_output(0).numpy()

    timer = timeit.Timer(module.run)
    ms = np.array(timer.repeat(repeat=args.repeat, number=1)) * 1e3
    print("mean %.3f ms, median %.3f ms, std %.3f ms (%d runs)"
          % (ms.mean(), np.median(ms), ms.std(), args.repeat))

    if args.expect:
        want = np.fromfile(args.expect, dtype="<f4").reshape(out.shape)
        err = float(np.abs(out - want).max() / max(np.abs(want).max(), 1e-30))
        print("max relative error vs %s: %.2e" % (args.expect, err))
        if err > 1e-4:
            print("error: the output differs from %s by more than 1e-4" % args.expect,
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
