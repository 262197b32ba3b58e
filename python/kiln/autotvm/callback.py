"""AutoTVM's tuning callbacks: progress_bar, log_to_file (TVM's v0.2 log lines, byte for byte
what `kiln export --format tvm` writes for the same records) and log_to_database (kiln's record
store: tuning resumes from it, shares it with concurrent tuners, and learns from its records)."""

import os
import sys
import time


def log_to_file(file_out, protocol="json"):
    """Appends one TVM log line per result to `file_out` (a path or an open text file)."""
    if protocol != "json":
        raise ValueError("log_to_file: kiln writes protocol 'json' only, got %r" % (protocol,))

    def _callback(_, inputs, results):
        lines = "".join(r._tvm_line + "\n" for r in results if r._tvm_line is not None)
        if isinstance(file_out, (str, os.PathLike)):
            with open(file_out, "a") as f:
                f.write(lines)
        else:
            file_out.write(lines)
            file_out.flush()

    return _callback


class _DatabaseCallback:
    def __init__(self, path):
        self.path = os.fspath(path)

    def __call__(self, tuner, inputs, results):
        pass  # the tuning loop has committed the batch to the store already


def log_to_database(db):
    """Tunes into kiln's record store `db` (a path or sqlite://PATH): resumed from, leased and
    learned from as `kiln tune --db` does."""
    return _DatabaseCallback(db)


def progress_bar(total, prefix="", si_prefix="G"):
    """AutoTVM's progress bar: "Current/Best: x/y GFLOPS | Progress: (k/n) | t s"."""
    scale = {"G": 1e9, "M": 1e6, "K": 1e3, "T": 1e12}.get(si_prefix, 1e9)
    state = {"ct": 0, "cur": 0.0, "best": 0.0, "start": time.time()}

    def _callback(tuner, inputs, results):
        state["ct"] += len(inputs)
        flops = 0.0
        for inp, res in zip(inputs, results):
            if res.error_no == 0:
                flops = inp.task.flop / (sum(res.costs) / len(res.costs))
        state["cur"] = flops
        state["best"] = tuner.best_flops
        sys.stdout.write("\r%s Current/Best: %7.2f/%7.2f %sFLOPS | Progress: (%d/%d) | %.2f s"
                         % (prefix, state["cur"] / scale, state["best"] / scale, si_prefix,
                            state["ct"], total, time.time() - state["start"]))
        if state["ct"] >= total:
            sys.stdout.write(" Done.\n")
        sys.stdout.flush()

    return _callback
