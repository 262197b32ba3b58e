"""AutoTVM's tuners on kiln's: XGBTuner (model-based, simulated annealing), GATuner, RandomTuner,
GridSearchTuner, with Tuner.tune(n_trial, measure_option, early_stopping, callbacks).

tune() runs kiln's tuning loop in C++ with the GIL released: batches of n_parallel configs are
built and measured, each committed to the record store (a temporary one unless a
log_to_database callback names one), then handed to the callbacks as (tuner, inputs, results).
Ctrl-C stops the tune once the batch in flight is committed and raises KeyboardInterrupt."""

from .. import _kiln
from ..errors import MeasureError
from .callback import _DatabaseCallback
from .measure import MeasureInput, MeasureResult, measure_call
from .task import ConfigEntity


class Tuner:
    _kiln_name = None

    def __init__(self, task, seed=0):
        self.task = task
        self.seed = seed
        self.best_config = None
        self.best_flops = 0
        self.best_measure_pair = None
        self.best_iter = 0
        self._history = []
        self._settings = {}

    def load_history(self, data_set, min_seed_records=500):
        """Seeds the cost model from earlier records of the same template (AutoTVM's transfer
        learning): `data_set` is autotvm.record.load_from_file(path) or a log path. As in
        AutoTVM, fewer than min_seed_records usable records mean no transfer."""
        from .record import load_from_file

        if isinstance(data_set, str):
            data_set = load_from_file(data_set)
        lines = [inp._line for inp, _ in data_set if inp.task.name == self.task.name]
        self._history = lines if len(lines) >= min_seed_records else []

    def _call(self, n_trial, early_stopping, db):
        c = _kiln.TuneCall()
        c.task_name = self.task.name
        c.workload = self.task.kiln_workload
        c.target = str(self.task.target)
        c.tuner = self._kiln_name
        c.seed = int(self.seed)
        c.n_trial = int(n_trial)
        c.early_stopping = None if early_stopping is None else int(early_stopping)
        c.transfer = bool(db)
        c.history_lines = self._history
        for k, v in self._settings.items():
            setattr(c, k, v)
        return c

    def tune(self, n_trial, measure_option=None, early_stopping=None, callbacks=(), si_prefix="G"):
        if int(n_trial) < 1:
            raise ValueError("tune: n_trial must be at least 1, got %r" % (n_trial,))
        if early_stopping is not None and int(early_stopping) < 1:
            raise ValueError("tune: early_stopping must be at least 1, got %r" % (early_stopping,))
        callbacks = list(callbacks or ())
        dbs = [cb.path for cb in callbacks if isinstance(cb, _DatabaseCallback)]
        if len(set(dbs)) > 1:
            raise ValueError("tune: more than one log_to_database callback: %s" % ", ".join(dbs))
        call = self._call(n_trial, early_stopping, dbs[0] if dbs else "")
        call.measure = measure_call(measure_option, dbs[0] if dbs else "")
        space = self.task.config_space
        trial = [0]

        def on_batch(progress, records):
            inputs, results = [], []
            for r in records:
                config = ConfigEntity({"index": r["config_index"], "entity": r["entity"],
                                       "repr": space.get(r["config_index"])._repr})
                costs = tuple(r["costs"]) if r["error_no"] == 0 else (MeasureError(r["error_msg"]),)
                res = MeasureResult(costs, r["error_no"], r["all_cost"], r["timestamp"],
                                    r["error_msg"], r["tvm_line"])
                inp = MeasureInput(self.task.target, self.task, config)
                trial[0] += 1
                flops = r["flop"] / (sum(r["costs"]) / len(r["costs"])) if r["error_no"] == 0 \
                    else 0
                if flops > self.best_flops:
                    self.best_flops, self.best_config = flops, config
                    self.best_measure_pair, self.best_iter = (inp, res), trial[0]
                inputs.append(inp)
                results.append(res)
            for cb in callbacks:
                cb(self, inputs, results)

        self.summary = _kiln.tune_task(call, on_batch)
        return self.summary


class XGBTuner(Tuner):
    _kiln_name = "xgb"

    def __init__(self, task, plan_size=64, feature_type="itervar", loss_type="rank",
                 num_threads=None, optimizer="sa", diversity_filter_ratio=None, log_interval=50,
                 seed=0):
        super().__init__(task, seed)
        if optimizer != "sa":
            raise ValueError("XGBTuner: kiln's optimizer is simulated annealing ('sa'), got %r"
                             % (optimizer,))
        self._settings = {"plan_size": int(plan_size), "feature": feature_type, "loss": loss_type,
                          "diversity_filter_ratio": diversity_filter_ratio}


class GATuner(Tuner):
    _kiln_name = "ga"

    def __init__(self, task, pop_size=100, elite_num=3, mutation_prob=0.1, seed=0):
        super().__init__(task, seed)
        if (pop_size, elite_num, mutation_prob) != (100, 3, 0.1):
            raise ValueError("GATuner: kiln's genetic tuner has AutoTVM's defaults (pop_size=100, "
                             "elite_num=3, mutation_prob=0.1) and no others")


class RandomTuner(Tuner):
    _kiln_name = "random"

    def __init__(self, task, range_idx=None, seed=0):
        super().__init__(task, seed)
        if range_idx is not None:
            raise ValueError("RandomTuner: range_idx is not supported by kiln")


class GridSearchTuner(Tuner):
    _kiln_name = "grid"

    def __init__(self, task, range_idx=None):
        super().__init__(task)
        if range_idx is not None:
            raise ValueError("GridSearchTuner: range_idx is not supported by kiln")
