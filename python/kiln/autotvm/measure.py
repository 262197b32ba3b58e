"""measure_option, LocalBuilder, LocalRunner and the measurement results AutoTVM hands to
callbacks. Builds run in kiln's builder processes, runs in its isolated runner process."""

import enum

from .. import _kiln


class MeasureErrorNo(enum.IntEnum):
    NO_ERROR = 0
    INSTANTIATION_ERROR = 1
    COMPILE_HOST = 2
    COMPILE_DEVICE = 3
    RUNTIME_DEVICE = 4
    WRONG_ANSWER = 5
    BUILD_TIMEOUT = 6
    RUN_TIMEOUT = 7
    UNKNOWN_ERROR = 8


class LocalBuilder:
    def __init__(self, timeout=10, n_parallel=None, build_kwargs=None, build_func="default",
                 do_fork=False, runtime=None):
        if not timeout or timeout <= 0:
            raise ValueError("LocalBuilder: timeout must be a positive number of seconds, got %r"
                             % (timeout,))
        if n_parallel is not None and n_parallel < 1:
            raise ValueError("LocalBuilder: n_parallel must be at least 1, got %r" % (n_parallel,))
        self.timeout = timeout
        self.n_parallel = n_parallel


class LocalRunner:
    def __init__(self, timeout=10, number=4, repeat=3, min_repeat_ms=0, cooldown_interval=0.1,
                 enable_cpu_cache_flush=False, module_loader=None):
        for name, v, low in (("timeout", timeout, 0), ("number", number, 1),
                             ("repeat", repeat, 1), ("min_repeat_ms", min_repeat_ms, 0),
                             ("cooldown_interval", cooldown_interval, 0)):
            if v is None or v < low or (name == "timeout" and v == 0):
                raise ValueError("LocalRunner: %s=%r is out of range" % (name, v))
        self.timeout = timeout
        self.number = number
        self.repeat = repeat
        self.min_repeat_ms = min_repeat_ms
        self.cooldown_interval = cooldown_interval
        self.enable_cpu_cache_flush = enable_cpu_cache_flush


class RPCRunner:
    def __init__(self, key, host, port, *args, **kwargs):
        raise NotImplementedError(
            "RPCRunner: measuring on a kiln farm from Python is not available yet; run "
            "`kiln tune --tracker HOST:PORT --key KEY` (examples/from_autotvm.md)")


def measure_option(builder, runner):
    """AutoTVM's measure_option: {"builder": ..., "runner": ...}; "local" means the defaults."""
    if builder == "local":
        builder = LocalBuilder()
    if runner == "local":
        runner = LocalRunner()
    if not isinstance(builder, LocalBuilder):
        raise TypeError("measure_option: builder must be a LocalBuilder, got %r" % (builder,))
    if not isinstance(runner, LocalRunner):
        raise TypeError("measure_option: runner must be a LocalRunner, got %r" % (runner,))
    return {"builder": builder, "runner": runner}


def measure_call(option, db=""):
    """The C++ side's MeasureCall for a measure_option dict."""
    option = option or measure_option("local", "local")
    b, r = option["builder"], option["runner"]
    c = _kiln.MeasureCall()
    c.n_parallel = b.n_parallel or 0
    c.build_timeout = float(b.timeout)
    c.number = int(r.number)
    c.repeat = int(r.repeat)
    c.min_repeat_ms = int(r.min_repeat_ms)
    c.timeout = float(r.timeout)
    c.cooldown_interval = float(r.cooldown_interval)
    c.enable_cpu_cache_flush = bool(r.enable_cpu_cache_flush)
    c.db = db
    return c


class MeasureInput:
    def __init__(self, target, task, config):
        self.target = target
        self.task = task
        self.config = config


class MeasureResult:
    """costs (seconds per run; for a failure, a tuple holding the error), error_no, all_cost
    (seconds spent on the trial), timestamp (unix seconds)."""

    def __init__(self, costs, error_no, all_cost, timestamp, error_msg="", tvm_line=None):
        self.costs = costs
        self.error_no = error_no
        self.all_cost = all_cost
        self.timestamp = timestamp
        self.error_msg = error_msg
        self._tvm_line = tvm_line

    def __repr__(self):
        return "MeasureResult(costs=%r, error_no=%d, all_cost=%r, timestamp=%r)" % (
            self.costs, self.error_no, self.all_cost, self.timestamp)
