"""Tasks and config spaces: extract_from_program, Task, ConfigSpace, ConfigEntity."""

import json

from .. import _kiln
from ..target import as_target

# TVM's relay op names for extract_from_program(ops=...), and kiln's operator names.
_OP_NAMES = {"nn.conv2d": "conv2d", "nn.dense": "dense", "nn.batch_matmul": "batch_matmul",
             "nn.depthwise_conv2d": "conv2d", "nn.matmul": "dense"}


def _tuples(value):
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


class ConfigEntity:
    """One config of a space. str() is AutoTVM's: "[('tile_y', [-1, 1]), ...],None,68"."""

    def __init__(self, d):
        self.index = d["index"]
        self.code_hash = None
        self._entity = json.loads(d["entity"])
        self._repr = d["repr"]
        self.is_fallback = False

    def to_json_dict(self):
        return {"index": self.index, "code_hash": None, "entity": self._entity}

    def __str__(self):
        return "%s,%s,%d" % (self._repr, self.code_hash, self.index)

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, ConfigEntity) and other.index == self.index and \
            other._entity == self._entity

    def __hash__(self):
        return hash(self.index)


class ConfigSpace:
    """A task's configs (AutoTVM semantics): len() counts the valid ones, get(i) decodes index i."""

    def __init__(self, name, workload):
        self._space = _kiln.Space(name, workload)

    def __len__(self):
        return len(self._space)

    @property
    def range_length(self):
        return self._space.range_length

    def get(self, index):
        return ConfigEntity(self._space.get(int(index)))

    def is_index_valid(self, index):
        return self._space.is_index_valid(int(index))

    def __str__(self):
        return str(self._space)


class Task:
    """A tuning task: a template (.name, e.g. "dense_pack.x86") and its arguments (.args, TVM's),
    with .workload = (name,) + args, .flop and .config_space. `kiln_workload` is kiln's text of
    the same shapes; `count` how many nodes of the model it stands for."""

    def __init__(self, d, target):
        self.name = d["name"]
        self.op = d["op"]
        self.kiln_workload = d["workload"]
        self.args = _tuples(json.loads(d["args"]))
        self.kwargs = {}
        self.flop = d["flop"]
        self.count = d["count"]
        self.target = target
        self._space = None

    @property
    def workload(self):
        return (self.name,) + self.args

    @property
    def config_space(self):
        if self._space is None:
            self._space = ConfigSpace(self.name, self.kiln_workload)
        return self._space

    def __repr__(self):
        return "Task(func_name=%s, args=%s, kwargs={}, workload=%s)" % (
            self.name, self.args, self.workload)


def create(task_name, workload, target=None):
    """A task from a template name and kiln's workload text ("dense:M=1,N=1000,K=512")."""
    return Task(_kiln.task_of(task_name, workload), as_target(target))


def _model_of(mod):
    from ..frontend import Model
    from ..relay import IRModule

    if isinstance(mod, IRModule):
        return mod["main"]
    if isinstance(mod, Model):
        return mod
    raise TypeError("expected a model (kiln.frontend.from_onnx, relay.frontend.from_onnx's mod or "
                    "mod['main']), got %s" % type(mod).__name__)


def extract_from_program(mod, params=None, target=None, target_host=None, ops=None):
    """TVM's extract_from_program: the model's tunable tasks, one per template of each distinct
    workload, in graph order. `ops` keeps only those operators (kiln names: conv2d, dense,
    batch_matmul; TVM's relay.op.get("nn.conv2d") also)."""
    model = _model_of(mod)
    target = as_target(target)
    tasks, _ = _kiln.extract_tasks(model.graph)
    if ops is not None:
        wanted = set()
        for op in ops:
            name = getattr(op, "name", op)
            wanted.add(_OP_NAMES.get(name, name))
        if "conv2d" in wanted:
            wanted.add("depthwise_conv2d")
        tasks = [t for t in tasks if t["op"] in wanted]
    return [Task(t, target) for t in tasks]
