"""RPCRunner: AutoTVM's remote runner measuring on a real kiln farm (a `kiln tracker` and a
`kiln runner` on 127.0.0.1 with mutual TLS), and its bad arguments."""

import pytest

pytest.importorskip("kiln", reason="the kiln Python module is not built")

import json
import re
import subprocess
import time

import kiln
from kiln import autotvm

from conftest import SMALL_DENSE, run_kiln


class Server:
    """A kiln server process, once it printed "<ready> ADDRESS"."""

    def __init__(self, binary, args, ready):
        self.proc = subprocess.Popen([binary, *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.lines = []
        self.address = None
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            m = re.search(re.escape(ready) + r" (\S+)", line)
            if m:
                self.address = m.group(1)
                break
        assert self.address, "%s did not start:\n%s" % (args[0], "".join(self.lines))

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def farm(kiln_binary, tmp_path):
    certs = str(tmp_path / "certs")
    r = run_kiln(kiln_binary, "certs", "init", certs)
    assert r.returncode == 0, r.stderr
    tracker = Server(kiln_binary, ["tracker", "--listen", "127.0.0.1:0", "--certs", certs],
                     "kiln tracker listening on")
    runner = None
    try:
        runner = Server(kiln_binary, ["runner", "--tracker", tracker.address, "--key", "py1",
                                      "--name", "r1", "--certs", certs],
                        "kiln runner r1 listening on")
        deadline = time.time() + 60
        while time.time() < deadline:
            s = run_kiln(kiln_binary, "farm", "status", "--json", "--tracker", tracker.address,
                         "--certs", certs)
            if s.returncode == 0 and any(
                    r["id"] == "r1" and r["state"] == "free"
                    for k in json.loads(s.stdout)["keys"] for r in k["runners"]):
                break
            time.sleep(0.2)
        else:
            pytest.fail("runner r1 never became free at the tracker")
        host, port = tracker.address.rsplit(":", 1)
        yield {"host": host, "port": int(port), "certs": certs, "binary": kiln_binary,
               "tracker": tracker.address}
    finally:
        if runner:
            runner.stop()
        tracker.stop()


def runner_trials(farm):
    s = run_kiln(farm["binary"], "farm", "status", "--json", "--tracker", farm["tracker"],
                 "--certs", farm["certs"])
    assert s.returncode == 0, s.stderr
    return sum(r["trials"] for k in json.loads(s.stdout)["keys"] for r in k["runners"]
               if r["id"] == "r1")


def test_rpc_runner_measures_on_the_farm_and_logs_tvm_lines(farm, tmp_path):
    task = autotvm.task.create(*SMALL_DENSE, target=kiln.Target("llvm"))
    option = autotvm.measure_option(
        builder=autotvm.LocalBuilder(n_parallel=2),
        runner=autotvm.RPCRunner("py1", farm["host"], farm["port"], number=2, repeat=2,
                                 cooldown_interval=0, certs=farm["certs"]))
    seen = []
    log = tmp_path / "farm.log"
    tuner = autotvm.tuner.RandomTuner(task)
    tuner.tune(n_trial=4, measure_option=option,
               callbacks=[lambda t, i, r: seen.extend(r), autotvm.callback.log_to_file(str(log))])
    assert len(seen) == 4
    for res in seen:
        assert res.error_no == 0, res.error_msg
        assert len(res.costs) == 2 and all(c > 0 for c in res.costs)
    # The runner, not this process, measured them; the log is TVM's and imports whole.
    assert runner_trials(farm) == 4
    lines = log.read_text().splitlines()
    assert len(lines) == 4 and all(json.loads(l)["input"][0].startswith("llvm") for l in lines)
    db = str(tmp_path / "farm.db")
    r = run_kiln(farm["binary"], "import", str(log), "--db", db)
    assert r.returncode == 0, r.stderr
    assert "imported 4 records" in r.stdout and "0 skipped" in r.stdout


def test_rpc_runner_of_an_absent_key_fails_with_the_farms_reason(farm):
    task = autotvm.task.create(*SMALL_DENSE, target=kiln.Target("llvm"))
    option = autotvm.measure_option(
        builder=autotvm.LocalBuilder(n_parallel=2),
        runner=autotvm.RPCRunner("nobody-has-this-key", farm["host"], farm["port"], number=1,
                                 repeat=1, certs=farm["certs"], wait=1))
    with pytest.raises(kiln.MeasureError, match="nobody-has-this-key"):
        autotvm.tuner.RandomTuner(task).tune(n_trial=2, measure_option=option)


def test_rpc_runner_with_a_token_that_is_not_the_farms_is_refused(farm, tmp_path):
    forged = tmp_path / "forged.token"
    forged.write_text("f" * 40 + "\n")
    task = autotvm.task.create(*SMALL_DENSE, target=kiln.Target("llvm"))
    option = autotvm.measure_option(
        builder=autotvm.LocalBuilder(n_parallel=2),
        runner=autotvm.RPCRunner("py1", farm["host"], farm["port"], number=1, repeat=1,
                                 certs=farm["certs"], signing_key=str(forged), wait=5))
    seen = []
    # The runner refuses to load what the forged key signed; the tune stops with the reason.
    with pytest.raises(kiln.MeasureError, match="signature: does not match"):
        autotvm.tuner.RandomTuner(task).tune(n_trial=2, measure_option=option,
                                             callbacks=[lambda t, i, r: seen.extend(r)])
    assert seen and all(r.error_no == autotvm.MeasureErrorNo.RUNTIME_DEVICE for r in seen)


@pytest.mark.parametrize("kwargs, message", [
    (dict(key="", host="127.0.0.1", port=9190, certs="c"), "key"),
    (dict(key="k", host="127.0.0.1", port=0, certs="c"), "port"),
    (dict(key="k", host="127.0.0.1", port="9190", certs="c"), "port"),
    (dict(key="k", host="127.0.0.1", port=9190), "signed artifacts"),
    (dict(key="k", host="127.0.0.1", port=9190, signing_key="f"), "insecure"),
    (dict(key="k", host="127.0.0.1", port=9190, certs="c", insecure=True), "insecure"),
    (dict(key="k", host="127.0.0.1", port=9190, certs="c", number=0), "number"),
])
def test_rpc_runner_bad_arguments_are_value_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        autotvm.RPCRunner(**kwargs)


def test_rpc_runner_with_a_missing_certs_directory_is_an_io_error(tmp_path):
    task = autotvm.task.create(*SMALL_DENSE, target=kiln.Target("llvm"))
    option = autotvm.measure_option(
        builder="local",
        runner=autotvm.RPCRunner("k", "127.0.0.1", 9, certs=str(tmp_path / "absent")))
    with pytest.raises(kiln.KilnIOError, match="absent"):
        autotvm.tuner.RandomTuner(task).tune(n_trial=1, measure_option=option)
