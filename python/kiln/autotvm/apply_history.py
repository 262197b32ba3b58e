"""apply_history_best(path_or_db): kiln.build inside it uses the best records of a TVM log file
or of a kiln record store (a log is imported into a private temporary store, as `kiln import`
would, for the duration of the block)."""

import os
import tempfile
import threading
import warnings

from .. import _kiln

_local = threading.local()


def _is_store(path):
    if path.startswith("sqlite://"):
        return True
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


class ApplyHistoryBest:
    def __init__(self, records):
        self.records = os.fspath(records)
        self.db = None
        self._tmp = None

    def __enter__(self):
        if _is_store(self.records):
            self.db = self.records
        else:
            if not os.path.exists(self.records):
                from ..errors import KilnIOError

                raise KilnIOError("apply_history_best: %s: no such file" % self.records)
            self._tmp = tempfile.TemporaryDirectory(prefix="kiln-history-")
            self.db = os.path.join(self._tmp.name, "records.db")
            report = _kiln.import_log(self.db, self.records)
            for reason in report["skipped"]:
                warnings.warn("apply_history_best: skipped %s" % reason)
        stack = getattr(_local, "stack", [])
        stack.append(self)
        _local.stack = stack
        return self

    def __exit__(self, *exc):
        _local.stack.pop()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        return False


def apply_history_best(records):
    return ApplyHistoryBest(records)


def current_db():
    """The store of the innermost apply_history_best block, or ""."""
    stack = getattr(_local, "stack", [])
    return stack[-1].db if stack else ""
