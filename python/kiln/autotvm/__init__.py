"""kiln.autotvm: AutoTVM's names and arguments on kiln's tuners, builder, runner and store."""
from . import callback, record, task, tuner  # noqa: F401
from .apply_history import apply_history_best, ApplyHistoryBest  # noqa: F401
from .measure import (LocalBuilder, LocalRunner, MeasureErrorNo, MeasureInput,  # noqa: F401
                      MeasureResult, RPCRunner, measure_option)
from .record import load_from_file  # noqa: F401
