"""kiln.build and relay.build: a model compiled into one library (kiln's `kiln compile`), with
the best records of the enclosing apply_history_best block, else kiln's default configs."""

import logging
import os

from . import _kiln
from .autotvm.apply_history import current_db
from .autotvm.task import _model_of
from .runtime import Library
from .target import as_target

_log = logging.getLogger("kiln")


def build(mod, target=None, params=None, target_host=None, executor=None, runtime=None,
          mod_name="default", jobs=None):
    """Compiles the model for `target` (default: this machine). Each task of the model uses the
    best record of the apply_history_best block around the call, or kiln's default config: the
    library's .tasks say which."""
    model = _model_of(mod)
    target = as_target(target)
    jobs = jobs or max(1, len(os.sched_getaffinity(0)))
    artifact, tasks = _kiln.compile(model.graph, str(target), current_db(), int(jobs))
    tuned = sum(1 for t in tasks if t["tuned"])
    _log.info("kiln.build: %d tasks: %d tuned, %d with kiln's default configs", len(tasks), tuned,
              len(tasks) - tuned)
    for t in tasks:
        _log.info("  %-7s %-26s x%-2d %s %s", "tuned" if t["tuned"] else "untuned", t["name"],
                  t["count"], t["workload"], t["config"])
    return Library(artifact, tasks)
