"""kiln.contrib: graph_executor, as TVM's tvm.contrib."""
from . import graph_executor  # noqa: F401
