"""Models through kiln's Python names and TVM's: import, tasks, build, export, load, run."""

import pytest

pytest.importorskip("kiln", reason="the kiln Python module is not built")

import os

import numpy as np

import kiln
from kiln import autotvm, relay
from kiln.contrib import graph_executor

from conftest import model_dir


def read_io(name):
    d = model_dir(name)
    x = np.fromfile(os.path.join(d, "input.bin"), dtype="<f4")
    y = np.fromfile(os.path.join(d, "output.bin"), dtype="<f4")
    return os.path.join(d, name + ".onnx"), x, y


def rel_err(got, want):
    return float(np.abs(got.reshape(-1) - want).max() / np.abs(want).max())


@pytest.fixture(scope="module")
def mlp_lib():
    path, _, _ = read_io("mlp")
    return kiln.build(kiln.frontend.from_onnx(path))


def test_extract_from_program_lists_the_models_tasks():
    path, _, _ = read_io("mlp")
    tasks = autotvm.task.extract_from_program(kiln.frontend.from_onnx(path), target="llvm")
    # dense is both dense_nopack.x86 and dense_pack.x86, as in TVM.
    assert [t.name for t in tasks] == ["dense_nopack.x86", "dense_pack.x86"] * 3
    assert tasks[0].args[0] == ("TENSOR", (1, 784), "float32")
    assert tasks[0].flop == 2 * 512 * 784 and len(tasks[0].config_space) > 1
    assert autotvm.task.extract_from_program(kiln.frontend.from_onnx(path),
                                             ops=("conv2d",)) == []


def test_build_run_matches_output_bin(mlp_lib):
    _, x, y = read_io("mlp")
    m = graph_executor.GraphModule(mlp_lib)
    assert m.get_num_outputs() == 1 and m.get_num_inputs() == 1
    name = m.get_input_name(0)
    shape = m.get_input_info()[0][name]
    m.set_input(name, x.reshape(shape))
    m.run()
    assert rel_err(m.get_output(0).numpy(), y) <= 1e-4
    assert all(not t["tuned"] for t in mlp_lib.tasks)  # no history: kiln's default configs
    b = m.benchmark(repeat=3, number=2)
    assert len(b.results) == 3 and 0 < b.min <= b.median <= b.max and b.std >= 0
    assert "mean (ms)" in str(b)


def test_export_library_and_load_module(mlp_lib, tmp_path):
    _, x, y = read_io("mlp")
    path = tmp_path / "mlp.kiln"
    mlp_lib.export_library(str(path))
    lib = kiln.runtime.load_module(str(path))
    m = graph_executor.GraphModule(lib)
    m.run(**{m.get_input_name(0): x.reshape(1, 784)})
    assert rel_err(m.get_output(0).numpy(), y) <= 1e-4


def test_tvm_spellings(tmp_path):
    import onnx

    path, x, y = read_io("mlp")
    onnx_model = onnx.load(path)
    mod, params = relay.frontend.from_onnx(onnx_model, {"input": (1, 784)})
    target = kiln.target.Target("llvm")
    tasks = autotvm.task.extract_from_program(mod["main"], target=target, params=params,
                                              ops=(relay.op.get("nn.dense"),))
    assert len(tasks) == 6
    with kiln.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target=target, params=params)
    dev = kiln.device(str(target), 0)
    m = graph_executor.GraphModule(lib["default"](dev))
    m.set_input("input", kiln.nd.array(x.reshape(1, 784).astype("float32")))
    m.run()
    assert rel_err(m.get_output(0).numpy(), y) <= 1e-4
    b = m.benchmark(kiln.cpu(0), repeat=2, number=1)
    assert b.mean < 1.0  # seconds, as TVM's


def test_graph_executor_create_with_the_librarys_own_graph(mlp_lib):
    # TVM's older spelling: graph, lib, params unpacked from the build, then create(...).
    _, x, y = read_io("mlp")
    graph, lib, params = mlp_lib.get_graph_json(), mlp_lib.get_lib(), mlp_lib.get_params()
    assert params == {} and '"steps"' in graph
    m = graph_executor.create(graph, lib, kiln.cpu(0))
    m.set_input(**params)
    m.set_input("input", x.reshape(1, 784).astype("float32"))
    m.run()
    assert rel_err(m.get_output(0).numpy(), y) <= 1e-4
    with pytest.raises(kiln.InvalidInputError, match="not the one this library was built with"):
        graph_executor.create(graph.replace("input", "other"), lib, kiln.cpu(0))
    with pytest.raises(kiln.InvalidInputError, match="not JSON"):
        graph_executor.create("{", lib, kiln.cpu(0))
    with pytest.raises(TypeError, match="libmod"):
        graph_executor.create(graph, "lib.so", kiln.cpu(0))


def test_apply_history_best_uses_the_logs_records(tmp_path):
    path, x, y = read_io("mlp")
    model = kiln.frontend.from_onnx(path)
    task = autotvm.task.extract_from_program(model)[4]  # dense_nopack.x86 of the 1x256x10 layer
    log = str(tmp_path / "mlp.log")
    autotvm.tuner.RandomTuner(task).tune(
        n_trial=2, measure_option=autotvm.measure_option(
            builder=autotvm.LocalBuilder(n_parallel=2),
            runner=autotvm.LocalRunner(number=1, repeat=1, cooldown_interval=0)),
        callbacks=[autotvm.callback.log_to_file(log)])
    with autotvm.apply_history_best(log):
        lib = kiln.build(model)
    tuned = [t for t in lib.tasks if t["tuned"]]
    # The compiled kernel fuses the layer's bias, which TVM's task (the record's key) has not.
    assert len(tuned) == 1 and tuned[0]["name"] == task.name
    assert tuned[0]["workload"].replace(",bias=1", ",bias=0") == task.kiln_workload
    m = graph_executor.GraphModule(lib)
    m.run(input=x.reshape(1, 784))
    assert rel_err(m.get_output(0).numpy(), y) <= 1e-4


def test_set_input_wrong_dtype_or_shape_is_a_value_error(mlp_lib):
    m = graph_executor.GraphModule(mlp_lib)
    with pytest.raises(ValueError, match=r"input 'input'.*\(1, 784\).*\(1, 783\)"):
        m.set_input("input", np.zeros((1, 783), dtype="float32"))
    with pytest.raises(ValueError, match=r"input 'input' is float32.*got float64"):
        m.set_input("input", np.zeros((1, 784)))
    with pytest.raises(kiln.InvalidInputError, match="no input 'nope'"):
        m.set_input("nope", np.zeros((1, 784), dtype="float32"))
    with pytest.raises(IndexError):
        m.get_output(5)


def test_bad_files_raise_documented_errors(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(kiln.InvalidInputError, match="bad.onnx"):
        kiln.frontend.from_onnx(str(bad))
    with pytest.raises(kiln.InvalidInputError, match="missing.onnx"):  # as `kiln compile`: exit 2
        kiln.frontend.from_onnx(str(tmp_path / "missing.onnx"))
    with pytest.raises(kiln.KilnIOError):
        kiln.runtime.load_module(str(tmp_path / "missing.kiln"))
    junk = tmp_path / "junk.kiln"
    junk.write_bytes(b"KILNMODL" + b"\0" * 40)
    with pytest.raises(kiln.InvalidInputError, match="junk.kiln"):
        kiln.runtime.load_module(str(junk))
    with pytest.raises(kiln.KilnIOError):
        with autotvm.apply_history_best(str(tmp_path / "missing.log")):
            pass
    assert issubclass(kiln.InvalidInputError, kiln.KilnError)
    assert issubclass(kiln.MeasureError, kiln.KilnError)
    assert issubclass(kiln.KilnIOError, OSError)


def test_kiln_tune_a_whole_model_then_build_from_its_store(tmp_path):
    path, x, y = read_io("mlp")
    db = str(tmp_path / "mlp.db")
    summary = kiln.tune(path, db=db, trials=4, winograd=False, progress=False,
                        measure_option=autotvm.measure_option(
                            builder=autotvm.LocalBuilder(n_parallel=2),
                            runner=autotvm.LocalRunner(number=1, repeat=1, cooldown_interval=0)))
    assert summary["trials"] >= 4 and summary["fresh"] >= 4 and len(summary["tasks"]) == 6
    with autotvm.apply_history_best(db):
        lib = kiln.build(kiln.frontend.from_onnx(path))
    assert any(t["tuned"] for t in lib.tasks)
    m = graph_executor.GraphModule(lib)
    m.run(input=x.reshape(1, 784))
    assert rel_err(m.get_output(0).numpy(), y) <= 1e-4
    with pytest.raises(kiln.InvalidInputError, match="budget"):
        kiln.tune(path, db=db)
    with pytest.raises(kiln.InvalidInputError, match="unknown operator"):
        kiln.tune(path, db=db, trials=1, ops=["softmax_of_doom"])
