"""kiln's exceptions. Every failure the C++ libraries report arrives as one of these, with kiln's
one-line message; the class says what kind of failure it is."""


class KilnError(Exception):
    """Base class of every kiln error."""


class InvalidInputError(KilnError, ValueError):
    """Bad input: a model, a target, a workload, a config index, an array, a file's contents."""


class UnsupportedError(InvalidInputError):
    """Valid input that kiln does not handle: an operator, an opset, a data type."""


class MeasureError(KilnError):
    """Building or running code failed: LLVM or the linker, loading or running a module."""


class KilnIOError(KilnError, OSError):
    """A file or process operation failed."""


class InternalError(KilnError):
    """A bug in kiln."""
