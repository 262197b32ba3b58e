"""Shared fixtures of the Python module's tests. Each test file starts with
pytest.importorskip("kiln"): without the module (not built) its tests are skipped, not failed;
ctest of a build with the module sets KILN_REQUIRE_MODULE=1, and a module that does not import
then fails them."""

import os
import subprocess

import pytest

SOURCE_DIR = os.environ.get("KILN_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
SHARED_DIR = os.environ.get("KILN_SHARED_DIR", os.path.join(SOURCE_DIR, "..", "shared"))
MODELS = os.path.join(SHARED_DIR, "models")

if os.environ.get("KILN_REQUIRE_MODULE") == "1":
    # ctest of a build with the module: an import error is a failure, not a skipped test.
    import kiln  # noqa: F401


def model_dir(name):
    d = os.path.join(MODELS, name)
    if not os.path.isdir(d):
        pytest.skip("no shared model %s (%s)" % (name, d))
    return d


@pytest.fixture
def kiln_binary():
    path = os.environ.get("KILN_BINARY")
    if not path or not os.path.exists(path):
        pytest.skip("KILN_BINARY is not set (ctest sets it)")
    return path


def run_kiln(binary, *args, cwd=None):
    return subprocess.run([binary, *args], capture_output=True, text=True, cwd=cwd)


# A tiny real task: tuned in a second or two with a handful of trials.
SMALL_DENSE = ("dense_nopack.x86", "dense:M=1,N=64,K=64")


def quick_measure():
    from kiln import autotvm

    return autotvm.measure_option(
        builder=autotvm.LocalBuilder(n_parallel=2),
        runner=autotvm.LocalRunner(number=2, repeat=2, cooldown_interval=0))
