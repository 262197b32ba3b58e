"""Tuning through kiln.autotvm: real kernels, a few trials each; callbacks, logs and the store."""

import pytest

pytest.importorskip("kiln", reason="the kiln Python module is not built")

import json
import signal
import subprocess
import sys
import textwrap
import time


import kiln
from kiln import autotvm
from kiln.autotvm import tuner as tuners

from conftest import SMALL_DENSE, quick_measure, run_kiln


def small_task():
    return autotvm.task.create(*SMALL_DENSE, target=kiln.Target("llvm"))


def test_task_fields_and_config_space():
    task = small_task()
    assert task.name == "dense_nopack.x86"
    assert task.args == (("TENSOR", (1, 64), "float32"), ("TENSOR", (64, 64), "float32"), None,
                         "float32")
    assert task.workload == ("dense_nopack.x86",) + task.args
    assert task.flop == 2 * 64 * 64
    space = task.config_space
    assert len(space) == 1 * 7 * 7  # tile_y, tile_x, tile_k: 2-way "factors" splits
    c = space.get(8)
    assert str(c) == "[('tile_y', [-1, 1]), ('tile_x', [-1, 2]), ('tile_k', [-1, 2])],None,8"
    assert c.to_json_dict()["entity"][1] == ["tile_x", "sp", [-1, 2]]
    with pytest.raises(kiln.InvalidInputError):
        space.get(len(space))


@pytest.mark.parametrize("cls", [tuners.XGBTuner, tuners.GATuner, tuners.RandomTuner,
                                 tuners.GridSearchTuner])
def test_every_tuner_measures_and_calls_back_each_result(cls, tmp_path):
    task = small_task()
    seen = []
    log = tmp_path / "tune.log"
    tuner = cls(task)
    tuner.tune(n_trial=4, measure_option=quick_measure(),
               callbacks=[lambda t, inputs, results: seen.append((t, inputs, results)),
                          autotvm.callback.log_to_file(str(log))])
    results = [r for _, _, rs in seen for r in rs]
    inputs = [i for _, ins, _ in seen for i in ins]
    assert len(results) == 4 and all(t is tuner for t, _, _ in seen)
    for inp, res in zip(inputs, results):
        assert inp.task is task and inp.config.index >= 0
        assert res.error_no == 0, res.error_msg
        assert len(res.costs) == 2 and all(c > 0 for c in res.costs)
        assert res.all_cost > 0 and abs(res.timestamp - time.time()) < 600
    assert len({i.config.index for i in inputs}) == 4  # never a config twice
    assert tuner.best_flops > 0 and tuner.best_config is not None
    assert len(log.read_text().splitlines()) == 4


def test_log_to_file_is_kiln_export_byte_for_byte(tmp_path, kiln_binary):
    task = small_task()
    log = tmp_path / "tune.log"
    db = tmp_path / "tune.db"
    tuners.RandomTuner(task, seed=3).tune(
        n_trial=3, measure_option=quick_measure(),
        callbacks=[autotvm.callback.log_to_file(str(log)),
                   autotvm.callback.log_to_database(str(db))])
    exported = tmp_path / "export.log"
    r = run_kiln(kiln_binary, "export", "--db", str(db), "--format", "tvm", "-o", str(exported))
    assert r.returncode == 0, r.stderr
    assert log.read_bytes() == exported.read_bytes()
    row = json.loads(log.read_text().splitlines()[0])
    assert row["input"][1] == "dense_nopack.x86" and row["version"] == 0.2

    # Read back by kiln import (nothing skipped) and kiln best.
    other = tmp_path / "other.db"
    r = run_kiln(kiln_binary, "import", str(log), "--db", str(other))
    assert r.returncode == 0, r.stderr
    assert "imported 3 records" in r.stdout and " 0 skipped" in r.stdout, r.stdout
    r = run_kiln(kiln_binary, "best", "--db", str(other))
    assert r.returncode == 0 and "dense_nopack.x86" in r.stdout, r.stdout + r.stderr


def test_log_to_database_resumes(tmp_path):
    task = small_task()
    db = str(tmp_path / "resume.db")
    first = tuners.RandomTuner(task).tune(n_trial=2, measure_option=quick_measure(),
                                          callbacks=[autotvm.callback.log_to_database(db)])
    assert first["fresh"] == 2
    seen = []
    second = tuners.RandomTuner(task).tune(
        n_trial=4, measure_option=quick_measure(),
        callbacks=[autotvm.callback.log_to_database(db),
                   lambda t, i, r: seen.extend(r)])
    assert second["done"] == 4 and second["fresh"] == 2 and len(seen) == 2


def test_load_history_reads_a_log(tmp_path):
    task = small_task()
    log = str(tmp_path / "h.log")
    tuners.RandomTuner(task).tune(n_trial=2, measure_option=quick_measure(),
                                  callbacks=[autotvm.callback.log_to_file(log)])
    pairs = list(autotvm.record.load_from_file(log))
    assert len(pairs) == 2 and pairs[0][0].task.name == task.name
    t = tuners.XGBTuner(task)
    t.load_history(pairs)  # fewer than 500 records: no transfer, as AutoTVM
    t.tune(n_trial=2, measure_option=quick_measure())


def test_progress_bar_prints_autotvm_line(capsys):
    tuners.RandomTuner(small_task()).tune(
        n_trial=2, measure_option=quick_measure(),
        callbacks=[autotvm.callback.progress_bar(2, prefix="[Task  1/ 1]")])
    out = capsys.readouterr().out
    assert "[Task  1/ 1] Current/Best:" in out and "GFLOPS | Progress: (2/2)" in out


def test_callback_exception_stops_the_tune_after_its_batch(tmp_path):
    db = str(tmp_path / "stop.db")

    def boom(tuner, inputs, results):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        tuners.RandomTuner(small_task()).tune(
            n_trial=20, measure_option=quick_measure(),
            callbacks=[autotvm.callback.log_to_database(db), boom])
    # The first batch (n_parallel=2) was committed, nothing after it.
    again = tuners.RandomTuner(small_task()).tune(
        n_trial=2, measure_option=quick_measure(), callbacks=[autotvm.callback.log_to_database(db)])
    assert again["fresh"] == 0


def test_bad_arguments_raise_documented_errors():
    task = small_task()
    with pytest.raises(ValueError):
        tuners.RandomTuner(task).tune(n_trial=0)
    with pytest.raises(ValueError):
        autotvm.LocalRunner(number=0)
    with pytest.raises(ValueError):
        tuners.XGBTuner(task, optimizer="ga")
    with pytest.raises(kiln.InvalidInputError, match="loss"):
        tuners.XGBTuner(task, loss_type="bogus").tune(n_trial=1, measure_option=quick_measure())
    with pytest.raises(kiln.InvalidInputError):
        autotvm.task.create("nonexistent.x86", "dense:M=1,N=1,K=1")
    with pytest.raises(kiln.InvalidInputError):
        autotvm.task.create("dense_nopack.x86", "dense:M=one")
    with pytest.raises(kiln.InvalidInputError):
        kiln.Target("cuda -arch=sm_80")
    with pytest.raises(kiln.KilnIOError):
        tuners.RandomTuner(task).tune(
            n_trial=1, measure_option=quick_measure(),
            callbacks=[autotvm.callback.log_to_database("/nonexistent/dir/x.db")])


def test_ctrl_c_commits_the_batch_in_flight_and_raises_keyboard_interrupt(tmp_path, kiln_binary):
    db = tmp_path / "int.db"
    marker = tmp_path / "first-batch"
    script = textwrap.dedent("""
        import sys
        import kiln
        from kiln import autotvm
        task = autotvm.task.create("dense_nopack.x86", "dense:M=1,N=64,K=64")
        def mark(tuner, inputs, results):
            open(sys.argv[2], "a").write("%d\\n" % len(results))
        try:
            autotvm.tuner.RandomTuner(task).tune(
                n_trial=40, measure_option=autotvm.measure_option(
                    builder=autotvm.LocalBuilder(n_parallel=1),
                    runner=autotvm.LocalRunner(number=1, repeat=1, cooldown_interval=0.3)),
                callbacks=[autotvm.callback.log_to_database(sys.argv[1]), mark])
        except KeyboardInterrupt:
            print("interrupted")
            sys.exit(3)
        print("finished")
    """)
    p = subprocess.Popen([sys.executable, "-c", script, str(db), str(marker)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not marker.exists() and time.time() < deadline and p.poll() is None:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 3 and "interrupted" in out, out + err
    batches = len(marker.read_text().splitlines())
    exported = tmp_path / "int.log"
    r = run_kiln(kiln_binary, "export", "--db", str(db), "--format", "tvm", "-o", str(exported))
    assert r.returncode == 0, r.stderr
    # Every batch the callback saw is in the store (one config each), and the tune stopped.
    assert batches <= len(exported.read_text().splitlines()) < 40


def test_tune_releases_the_gil():
    import threading

    ticks, done = [0], threading.Event()

    def spin():
        while not done.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    t = threading.Thread(target=spin)
    t.start()
    try:
        start = time.time()
        tuners.RandomTuner(small_task()).tune(n_trial=2, measure_option=quick_measure())
        elapsed = time.time() - start
    finally:
        done.set()
        t.join()
    # The thread kept running while the tune was in C++ (at most one tick per millisecond).
    assert ticks[0] > max(10, 0.02 * elapsed * 1000), (ticks[0], elapsed)
