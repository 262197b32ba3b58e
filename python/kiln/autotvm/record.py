"""Reading TVM log lines: autotvm.record.load_from_file, as pairs (MeasureInput, MeasureResult)."""

import json

from .measure import MeasureInput, MeasureResult
from .task import ConfigEntity, Task


def load_from_file(filename):
    """Yields (MeasureInput, MeasureResult) for each record line of a TVM log; '#' and blank
    lines are skipped, as TVM does."""
    with open(filename) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            row = json.loads(line)
            target_text, name, args, _ = row["input"]
            cfg = row["config"]
            task = Task({"name": name, "op": "", "workload": "", "args": json.dumps(args),
                         "flop": 0, "count": 1}, target_text)
            config = ConfigEntity({"index": cfg["index"], "entity": json.dumps(cfg["entity"]),
                                   "repr": ""})
            costs, error_no, all_cost, timestamp = row["result"]
            inp = MeasureInput(target_text, task, config)
            inp._line = line
            yield inp, MeasureResult(tuple(costs), error_no, all_cost, timestamp, tvm_line=line)
