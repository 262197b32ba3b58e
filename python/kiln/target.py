"""kiln.Target and kiln.target.Target: a code generation target, as TVM's tvm.target.Target."""

from . import _kiln


class Target:
    """A target such as "llvm" (this machine's CPU) or "llvm -mcpu=znver4".

    The text is checked against what this kiln can generate code for; str() is kiln's canonical
    form, which the record store and the compiled artifacts carry."""

    def __init__(self, target="llvm", host=None):
        if isinstance(target, Target):
            target = target.text
        if not isinstance(target, str):
            raise TypeError("Target: expected a target string such as 'llvm', got %r" % (target,))
        self.text = _kiln.parse_target(target)
        self.kind = "llvm"
        self.keys = ("cpu",)
        self.host = host

    @staticmethod
    def current():
        return None

    def __str__(self):
        return self.text

    def __repr__(self):
        return "Target(%r)" % self.text

    def __eq__(self, other):
        return isinstance(other, Target) and other.text == self.text

    def __hash__(self):
        return hash(self.text)


def as_target(target):
    """A Target from a Target, a string, None (the host) or TVM's {"llvm": ...} dict."""
    if target is None:
        return Target("llvm")
    if isinstance(target, dict):
        if len(target) != 1:
            raise ValueError("target: expected one target, got %r" % (target,))
        target = next(iter(target.values()))
    return Target(target)
