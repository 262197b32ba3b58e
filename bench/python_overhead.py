#!/usr/bin/env python3
"""Per-trial overhead of tuning through Python (kiln.autotvm) against `kiln tune`, on the same
workload, tuner, seed, measure options and budget, each into a fresh store; runs alternate so
that a change in the machine's load hits both.

    PYTHONPATH=build/python python3 bench/python_overhead.py --kiln build/cli/kiln

Prints each run's seconds per trial and the ratio of the medians (Python / CLI); exits 1 when
Python is more than 5 % slower. Measured (Intel Xeon, Sapphire Rapids class, AVX-512, 2 cores,
otherwise idle; dense_pack.x86 64x64x64, random, 64 trials x 3 runs): --cooldown 0, kiln tune
0.0166, python 0.0167 s/trial, ratio 1.004; --cooldown 0.1, 0.1051 and 0.1054, ratio 1.002.
Both pay the same build, run and cooldown; the Python side adds one store read and a few Python
objects per batch."""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kiln", default="build/cli/kiln")
    p.add_argument("--workload", default="dense:M=64,N=64,K=64")
    p.add_argument("--template", default="dense_pack.x86")
    p.add_argument("--tuner", default="random", choices=["random", "xgb", "ga", "grid"])
    p.add_argument("--trials", type=int, default=64)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--cooldown", type=float, default=0.1,
                   help="cooldown_interval in seconds (AutoTVM's default 0.1; 0 leaves only "
                        "build, run and the two front ends' own costs)")
    args = p.parse_args()

    import kiln
    from kiln import autotvm

    classes = {"random": autotvm.tuner.RandomTuner, "xgb": autotvm.tuner.XGBTuner,
               "ga": autotvm.tuner.GATuner, "grid": autotvm.tuner.GridSearchTuner}
    runner = dict(number=4, repeat=3, cooldown_interval=args.cooldown)
    task = autotvm.task.create(args.template, args.workload, target=kiln.Target("llvm"))
    measure = autotvm.measure_option(builder=autotvm.LocalBuilder(),
                                     runner=autotvm.LocalRunner(**runner))
    cli, py = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            db = os.path.join(tmp, "cli%d.db" % i)
            t = time.perf_counter()
            subprocess.run([args.kiln, "tune", "-w", args.workload, "--template", args.template,
                            "--tuner", args.tuner, "--trials", str(args.trials), "--db", db,
                            "--plan-size", "64", "--number", "4", "--repeat", "3",
                            "--cooldown-interval", str(args.cooldown), "--no-transfer"],
                           check=True, stdout=subprocess.DEVNULL)
            cli.append((time.perf_counter() - t) / args.trials)

            db = os.path.join(tmp, "py%d.db" % i)
            t = time.perf_counter()
            tuner = classes[args.tuner](task)
            tuner.tune(n_trial=args.trials, measure_option=measure,
                       callbacks=[autotvm.callback.log_to_database(db),
                                  autotvm.callback.log_to_file(os.path.join(tmp, "py%d.log" % i))])
            py.append((time.perf_counter() - t) / args.trials)
            print("run %d: kiln tune %.4f s/trial, python %.4f s/trial" % (i + 1, cli[-1], py[-1]))
    ratio = statistics.median(py) / statistics.median(cli)
    print("%s %s, %s, %d trials x %d runs, cooldown %g s: median kiln tune %.4f s/trial, python "
          "%.4f s/trial, python/cli = %.3f" % (args.template, args.workload, args.tuner,
                                               args.trials, args.runs, args.cooldown,
                                               statistics.median(cli), statistics.median(py),
                                               ratio))
    return 0 if ratio <= 1.05 else 1


if __name__ == "__main__":
    sys.exit(main())
