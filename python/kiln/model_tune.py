"""kiln.tune(model, ...): a whole model's tasks under one budget and kiln's task scheduler (the
round to run next goes where the estimated end-to-end latency drops most), as `kiln tune
MODEL.onnx`."""

import sys

from . import _kiln
from .autotvm.measure import measure_call
from .frontend import from_onnx
from .target import as_target


def tune(model, target=None, db="kiln.db", time=None, trials=None, trials_per_task=None,
         ops=None, measure_option=None, scheduler="gradient", tuner="xgb", early_stopping=None,
         seed=0, winograd=True, progress=True):
    """Tunes into the record store `db` (resumed if it has records) until the budget is spent:
    time ("8h", "30m", seconds), trials (in all) and/or trials_per_task. Returns a summary dict
    (the estimated latency, trials, the per-task table). Ctrl-C stops after the batch in flight,
    which is committed, and raises KeyboardInterrupt."""
    m = from_onnx(model)
    c = _kiln.ModelTuneCall()
    c.model = m.path
    c.input_shapes = m.shape
    c.target = str(as_target(target))
    c.ops = list(ops or [])
    c.trials = trials
    c.trials_per_task = trials_per_task
    if time is not None:
        c.seconds = float(time) if isinstance(time, (int, float)) else _kiln.parse_duration(time)
    c.scheduler = scheduler
    c.tuner = tuner
    c.seed = int(seed)
    c.early_stopping = early_stopping
    c.winograd = bool(winograd)
    c.measure = measure_call(measure_option, str(db))

    def on_progress(st):
        if progress:
            sys.stdout.write("\r[%d trials | %.0f s] est. latency %.3f ms" % (
                st["trials"], st["elapsed_s"], st["latency_s"] * 1e3))
            sys.stdout.flush()

    summary = _kiln.tune_model(c, on_progress)
    if progress:
        sys.stdout.write("\n")
    return summary
