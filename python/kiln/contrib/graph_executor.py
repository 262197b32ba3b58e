"""kiln.contrib.graph_executor.GraphModule: runs a compiled model, as TVM's GraphModule."""

import os

import numpy as np

from .. import _kiln
from ..errors import InvalidInputError
from ..nd import NDArray


def _threads():
    env = os.environ.get("TVM_NUM_THREADS") or os.environ.get("KILN_NUM_THREADS")
    if env:
        return max(1, int(env))
    return len(os.sched_getaffinity(0))


class BenchmarkResult:
    """Timings of whole-model runs, TVM's fields: seconds in .results/.mean/.median/.std/.min/
    .max; str() prints them in ms as TVM does."""

    def __init__(self, results):
        self.results = list(results)
        a = np.array(self.results)
        self.mean = float(a.mean())
        self.median = float(np.median(a))
        self.std = float(a.std())
        self.min = float(a.min())
        self.max = float(a.max())

    def __str__(self):
        return ("Execution time summary:\n"
                " mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)  \n"
                "  %8.4f     %8.4f     %8.4f     %8.4f     %8.4f   \n"
                % (self.mean * 1e3, self.median * 1e3, self.max * 1e3, self.min * 1e3,
                   self.std * 1e3))

    __repr__ = __str__


class GraphModule:
    """GraphModule(lib) or GraphModule(lib["default"](dev))."""

    def __init__(self, module, threads=None):
        from ..runtime import Library

        if isinstance(module, GraphModule):
            module = module._lib
        if not isinstance(module, Library):
            raise TypeError("GraphModule: expected a kiln library (kiln.build, "
                            "kiln.runtime.load_module), got %s" % type(module).__name__)
        self._lib = module
        self._exec = _kiln.Executor(module._artifact, threads or _threads())
        self._inputs = self._exec.inputs
        self._outputs = self._exec.outputs

    def _input(self, key):
        if isinstance(key, int):
            if not 0 <= key < len(self._inputs):
                raise InvalidInputError("set_input: input index %d out of range: the model has "
                                        "%d inputs" % (key, len(self._inputs)))
            return self._inputs[key]
        for info in self._inputs:
            if info["name"] == key:
                return info
        raise InvalidInputError("set_input: the model has no input '%s' (inputs: %s)"
                                % (key, ", ".join(i["name"] for i in self._inputs)))

    def set_input(self, key=None, value=None, **params):
        if key is not None:
            self._set(key, value)
        for k, v in params.items():
            self._set(k, v)

    def _set(self, key, value):
        info = self._input(key)
        if isinstance(value, NDArray):
            value = value.numpy()
        arr = np.asarray(value)
        want = tuple(info["shape"])
        if arr.dtype != np.dtype(info["dtype"]) or tuple(arr.shape) != want:
            raise InvalidInputError(
                "set_input: input '%s' is %s of shape %s, got %s of shape %s"
                % (info["name"], info["dtype"], want, arr.dtype, tuple(arr.shape)))
        self._exec.set_input(info["name"], arr)

    def run(self, **input_dict):
        if input_dict:
            self.set_input(**input_dict)
        self._exec.run()

    def get_output(self, index, out=None):
        result = self._exec.get_output(int(index))
        if out is not None:
            np.copyto(out.numpy() if isinstance(out, NDArray) else out, result)
            return out
        return NDArray(result)

    def get_num_outputs(self):
        return len(self._outputs)

    def get_num_inputs(self):
        return len(self._inputs)

    def get_input_name(self, index):
        return self._input(int(index))["name"]

    def get_input_index(self, name):
        return [i["name"] for i in self._inputs].index(self._input(name)["name"])

    def get_input_info(self):
        shapes = {i["name"]: tuple(i["shape"]) for i in self._inputs}
        dtypes = {i["name"]: i["dtype"] for i in self._inputs}
        return shapes, dtypes

    def benchmark(self, device=None, func_name="run", repeat=5, number=5, min_repeat_ms=None,
                  end_to_end=False, cooldown_interval_ms=0, repeats_to_cooldown=1):
        """Times run(): one warm-up, then `repeat` timings of `number` runs each; the result's
        values are seconds per run."""
        if func_name != "run":
            raise ValueError("benchmark: only func_name='run' is supported")
        return BenchmarkResult(self._exec.time(int(number), int(repeat), int(min_repeat_ms or 0)))


def create(graph_json_str, libmod, device):
    """TVM's graph_executor.create(graph, lib, dev), for scripts that unpack relay.build's result
    into graph, lib and params: `graph_json_str` must be the graph `libmod` was built with
    (libmod.get_graph_json()), because a kiln library carries its own graph and runs only that
    one. device is one of kiln's devices (tvm.cpu(0)) or a list of them."""
    from ..runtime import Device, Library

    if not isinstance(libmod, Library):
        raise TypeError("graph_executor.create: libmod must be a kiln library (relay.build, "
                        "kiln.runtime.load_module), got %s" % type(libmod).__name__)
    devices = device if isinstance(device, (list, tuple)) else [device]
    if not devices or not all(isinstance(d, Device) for d in devices):
        raise TypeError("graph_executor.create: device must be kiln's device (tvm.cpu(0)), got %r"
                        % (device,))
    if not isinstance(graph_json_str, str):
        raise TypeError("graph_executor.create: graph_json_str must be the graph's JSON text, "
                        "got %s" % type(graph_json_str).__name__)
    import json

    try:
        given = json.loads(graph_json_str)
    except ValueError as e:
        raise InvalidInputError("graph_executor.create: graph_json_str is not JSON: %s" % e)
    if given != json.loads(libmod.get_graph_json()):
        raise InvalidInputError("graph_executor.create: the graph is not the one this library "
                                "was built with (a kiln library runs its own graph: pass "
                                "lib.get_graph_json())")
    return GraphModule(libmod)
