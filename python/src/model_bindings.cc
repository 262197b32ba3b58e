// Targets, ONNX import, tasks and their config spaces, compiling a model and running it.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>

#include "builder/target.h"
#include "compiler/compile_model.h"
#include "exchange/target_description.h"
#include "frontend/onnx_import.h"
#include "frontend/task_extraction.h"
#include "ops/registry.h"
#include "python/src/bindings.h"
#include "python/src/status_error.h"
#include "runtime/graph_executor.h"
#include "runtime/model_artifact.h"
#include "runtime/time_evaluator.h"
#include "store/formats/tvm_log.h"
#include "store/open_store.h"

namespace py = pybind11;

namespace kiln::python {

namespace {

const ops::Template& template_named(const std::string& name) {
  const ops::Template* t = ops::find_template(name);
  if (!t) invalid("unknown task name '" + name + "' (see `kiln templates`)");
  return *t;
}

// A task's config space, made once: AutoTVM's task.config_space.
struct Space {
  const ops::Template* tmpl;
  ops::Workload workload;
  ConfigSpace space;
};

py::dict config_dict(const ConfigEntity& c) {
  py::dict d;
  d["index"] = c.index();
  d["entity"] = c.to_json()["entity"].dump();
  d["repr"] = c.entity_string();
  return d;
}

py::dict tensor_info(const TensorInfo& t) {
  py::dict d;
  d["name"] = t.name;
  d["shape"] = t.shape;
  d["dtype"] = t.dtype == ModelDType::kInt64 ? "int64" : "float32";
  return d;
}

// A compiled model held in memory (kiln.build's result, runtime.load_module's).
struct Artifact {
  ModelArtifact model;
  std::string label;
};

}  // namespace

void add_model_bindings(py::module_& m) {
  m.def(
      "parse_target",
      [](const std::string& text) { return value(builder::parse_target(text)).to_string(); },
      py::arg("text"), "the canonical kiln target string; InvalidInputError for a bad one");
  m.def("target_simd_lanes",
        [](const std::string& text) { return value(builder::parse_target(text)).simd_lanes(); });

  py::class_<frontend::Graph, std::shared_ptr<frontend::Graph>>(m, "Graph")
      .def_property_readonly("inputs", [](const frontend::Graph& g) { return g.inputs; })
      .def_property_readonly("outputs", [](const frontend::Graph& g) { return g.outputs; });
  m.def(
      "import_onnx",
      [](const std::string& path, const std::map<std::string, std::vector<int64_t>>& shapes) {
        frontend::ImportOptions options;
        options.input_shapes = shapes;
        py::gil_scoped_release release;
        return std::make_shared<frontend::Graph>(value(frontend::import_onnx(path, options)));
      },
      py::arg("path"), py::arg("input_shapes") = std::map<std::string, std::vector<int64_t>>{});

  m.def(
      "extract_tasks",
      [](const frontend::Graph& graph) {
        frontend::TaskExtraction extraction = frontend::extract_tasks(graph);
        py::list out;
        for (const frontend::ModelTask& t : extraction.tasks) {
          py::dict d;
          d["name"] = std::string(t.tmpl->name());
          d["op"] = std::string(t.tmpl->op());
          d["workload"] = t.workload.to_string();
          d["args"] = t.tmpl->tvm_args(t.workload).dump();
          d["count"] = t.count;
          d["flop"] = t.flops;
          out.append(d);
        }
        return py::make_tuple(out, extraction.not_tunable);
      },
      py::arg("graph"));
  m.def(
      "task_of",
      [](const std::string& name, const std::string& workload) {
        const ops::Template& t = template_named(name);
        ops::Workload w = value(t.normalize(value(ops::Workload::parse(workload))));
        py::dict d;
        d["name"] = name;
        d["op"] = std::string(t.op());
        d["workload"] = w.to_string();
        d["args"] = t.tvm_args(w).dump();
        d["count"] = 1;
        d["flop"] = t.flop(w);
        return d;
      },
      py::arg("name"), py::arg("workload"));

  py::class_<Space, std::shared_ptr<Space>>(m, "Space")
      .def(py::init([](const std::string& name, const std::string& workload) {
        const ops::Template& t = template_named(name);
        ops::Workload w = value(t.normalize(value(ops::Workload::parse(workload))));
        ConfigSpace space = t.space(w);
        return std::make_shared<Space>(Space{&t, w, std::move(space)});
      }))
      .def("__len__", [](const Space& s) { return s.space.size(); })
      .def_property_readonly("range_length", [](const Space& s) { return s.space.range_length(); })
      .def_property_readonly("dims", [](const Space& s) { return s.space.dims(); })
      .def("get",
           [](const Space& s, int64_t index) {
             return config_dict(
                 value(s.space.checked_get(index)));  // InvalidInputError outside the range
           })
      .def("is_index_valid", [](const Space& s, int64_t i) { return s.space.is_index_valid(i); })
      .def("fallback",
           [](const Space& s, const std::string& target) {
             Target t = value(builder::parse_target(target));
             return config_dict(s.tmpl->fallback(s.workload, s.space, describe(t).template_info()));
           })
      .def("__str__", [](const Space& s) { return s.space.debug_string(); });

  py::class_<Artifact, std::shared_ptr<Artifact>>(m, "Artifact")
      .def_property_readonly("target", [](const Artifact& a) { return a.model.target; })
      .def_property_readonly("graph_json",
                             [](const Artifact& a) { return model_graph_json(a.model); })
      .def("write",
           [](const Artifact& a, const std::string& path) {
             py::gil_scoped_release release;
             check(write_model_file(a.model, path));
           })
      .def_static("read", [](const std::string& path) {
        py::gil_scoped_release release;
        return std::make_shared<Artifact>(Artifact{value(read_model_file(path)), path});
      });

  m.def(
      "compile",
      [](const frontend::Graph& graph, const std::string& target, const std::string& db, int jobs) {
        std::unique_ptr<store::Store> store;
        compiler::CompileOptions options;
        options.target = target;
        options.jobs = jobs;
        compiler::CompileReport report;
        ModelArtifact model;
        {
          py::gil_scoped_release release;
          value(builder::parse_target(target));
          if (!db.empty()) store = value(store::open_store(db, /*read_only=*/true));
          options.store = store.get();
          model = value(compiler::compile_model(graph, options, &report));
        }
        py::list tasks;
        for (const compiler::CompiledTask& t : report.tasks) {
          py::dict d;
          d["name"] = t.template_name;
          d["workload"] = t.workload;
          d["count"] = t.count;
          d["tuned"] = t.tuned;
          d["config"] = t.config;
          tasks.append(d);
        }
        return py::make_tuple(std::make_shared<Artifact>(Artifact{std::move(model), "model"}),
                              tasks);
      },
      py::arg("graph"), py::arg("target"), py::arg("db"), py::arg("jobs"));

  py::class_<GraphExecutor>(m, "Executor")
      .def(py::init([](const Artifact& a, int threads) {
             py::gil_scoped_release release;
             return value(GraphExecutor::create(a.model, threads, a.label));
           }),
           py::arg("artifact"), py::arg("threads"))
      .def_property_readonly("inputs",
                             [](const GraphExecutor& e) {
                               py::list l;
                               for (int i = 0; i < e.num_inputs(); ++i)
                                 l.append(tensor_info(e.input_info(i)));
                               return l;
                             })
      .def_property_readonly("outputs",
                             [](const GraphExecutor& e) {
                               py::list l;
                               for (int i = 0; i < e.num_outputs(); ++i)
                                 l.append(tensor_info(e.output_info(i)));
                               return l;
                             })
      // The Python side has checked the array's dtype and shape against the input's.
      .def("set_input",
           [](GraphExecutor& e, const std::string& name,
              py::array_t<float, py::array::c_style | py::array::forcecast> data) {
             check(e.set_input(name, std::span<const float>(data.data(), data.size())));
           })
      .def("run",
           [](GraphExecutor& e) {
             py::gil_scoped_release release;
             e.run();
           })
      .def("get_output",
           [](const GraphExecutor& e, int i) -> py::array {
             if (i < 0 || i >= e.num_outputs()) {
               throw py::index_error("output " + std::to_string(i) +
                                     " out of range: the model has " +
                                     std::to_string(e.num_outputs()) + " outputs");
             }
             const TensorInfo& info = e.output_info(i);
             if (info.dtype == ModelDType::kInt64) {
               std::span<const int64_t> s = e.get_output_int64(i);
               py::array_t<int64_t> a(info.shape);
               std::memcpy(a.mutable_data(), s.data(), s.size_bytes());
               return a;
             }
             std::span<const float> s = e.get_output(i);
             py::array_t<float> a(info.shape);
             std::memcpy(a.mutable_data(), s.data(), s.size_bytes());
             return a;
           })
      // Seconds per run, `repeat` of them, each the mean of `number` back-to-back runs after one
      // warm-up (runtime/time_evaluator.h, as TVM's time_evaluator).
      .def("time",
           [](GraphExecutor& e, int number, int repeat, int min_repeat_ms) {
             TimeOptions options;
             options.number = number;
             options.repeat = repeat;
             options.min_repeat_ms = min_repeat_ms;
             py::gil_scoped_release release;
             return value(time_function([&e] { e.run(); }, options, {}));
           })
      .def_property("threads", &GraphExecutor::threads, &GraphExecutor::set_threads);
}

}  // namespace kiln::python
