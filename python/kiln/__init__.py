"""kiln from Python, with AutoTVM's names: a TVM tuning script runs on kiln once its imports
read `import kiln as tvm`, `from kiln import relay, autotvm`, `from kiln.contrib import
graph_executor`. See examples/from_autotvm.md."""

from . import _kiln  # noqa: F401
from .errors import (InternalError, InvalidInputError, KilnError, KilnIOError,  # noqa: F401
                     MeasureError, UnsupportedError)
from . import autotvm, contrib, frontend, nd, relay, runtime, target, transform  # noqa: F401
from .build_module import build  # noqa: F401
from .model_tune import tune  # noqa: F401
from .runtime import cpu, device, load_module  # noqa: F401
from .target import Target  # noqa: F401

__version__ = "0.1.0"
