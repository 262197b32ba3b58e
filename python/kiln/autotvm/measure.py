"""measure_option, LocalBuilder, LocalRunner, RPCRunner and the measurement results AutoTVM
hands to callbacks. Builds run in kiln's builder processes; runs in its isolated runner process,
or on a kiln farm's runners (RPCRunner)."""

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


class RPCRunner(LocalRunner):
    """Measures on a kiln farm: the runners registered with key `key` at the tracker
    `host:port` (`kiln tracker`, `kiln runner --key KEY`). AutoTVM's arguments, plus the farm's
    credentials, which kiln requires: runners execute only signed artifacts, so one of `certs`
    (a `kiln certs init` directory: mutual TLS, its token signs), `token_file` (a bearer token,
    which also signs) or `signing_key` must be given; `insecure=True` talks plaintext to a
    tracker started with --insecure. `n_parallel` is accepted for AutoTVM's sake: kiln leases
    every free runner of the key. `wait` is how long a batch waits for its first runner (s)."""

    def __init__(self, key, host, port, priority=1, timeout=10, n_parallel=None, number=4,
                 repeat=3, min_repeat_ms=0, cooldown_interval=0.1, enable_cpu_cache_flush=False,
                 module_loader=None, certs=None, token_file=None, signing_key=None,
                 insecure=False, wait=60):
        super().__init__(timeout=timeout, number=number, repeat=repeat,
                         min_repeat_ms=min_repeat_ms, cooldown_interval=cooldown_interval,
                         enable_cpu_cache_flush=enable_cpu_cache_flush)
        if not isinstance(key, str) or not key:
            raise ValueError("RPCRunner: key must name the runners' device kind, got %r" % (key,))
        if not isinstance(host, str) or not host:
            raise ValueError("RPCRunner: host must be the tracker's host, got %r" % (host,))
        if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
            raise ValueError("RPCRunner: port must be a TCP port (1..65535), got %r" % (port,))
        if wait is None or wait < 0:
            raise ValueError("RPCRunner: wait=%r is out of range" % (wait,))
        if certs is None and token_file is None and signing_key is None:
            raise ValueError("RPCRunner: runners execute only signed artifacts: give certs=DIR "
                             "(kiln certs init), token_file=F or signing_key=F")
        if insecure and (certs is not None or token_file is not None):
            raise ValueError("RPCRunner: insecure=True is plaintext: it cannot be combined with "
                             "certs or token_file (give signing_key=F)")
        if certs is None and not insecure:
            raise ValueError("RPCRunner: give certs=DIR for the farm's TLS, or insecure=True "
                             "for a tracker started with --insecure")
        self.key = key
        self.host = host
        self.port = port
        self.priority = int(priority)
        self.certs = certs
        self.token_file = token_file
        self.signing_key = signing_key
        self.insecure = bool(insecure)
        self.wait = wait


def measure_option(builder, runner):
    """AutoTVM's measure_option: {"builder": ..., "runner": ...}; "local" means the defaults."""
    if builder == "local":
        builder = LocalBuilder()
    if runner == "local":
        runner = LocalRunner()
    if not isinstance(builder, LocalBuilder):
        raise TypeError("measure_option: builder must be a LocalBuilder, got %r" % (builder,))
    if not isinstance(runner, LocalRunner):
        raise TypeError("measure_option: runner must be a LocalRunner or RPCRunner, got %r"
                        % (runner,))
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
    if isinstance(r, RPCRunner):
        c.tracker = "%s:%d" % (r.host, r.port)
        c.key = r.key
        c.priority = r.priority
        c.runner_wait = float(r.wait)
        c.certs_dir = str(r.certs or "")
        c.token_file = str(r.token_file or "")
        c.signing_key_file = str(r.signing_key or "")
        c.insecure = r.insecure
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
