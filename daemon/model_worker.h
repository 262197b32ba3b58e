// kiln serve's work on a job's model, in a child process: importing an ONNX file runs ONNX's
// checker and shape inference and kiln's compiler over whatever a user submitted, and a model
// that crashes them (a division by zero inside ONNX's shape inference, say) must fail its job
// alone, not kill the daemon and every job with it at each restart.
//
// The child is `kiln model-worker` (hidden), exec'd fresh for each call (the daemon has threads),
// answering one request on fds 3 and 4 and exiting. A child that dies or runs past its time is
// the job's error (kInvalidArgument "model: <what> crashed kiln's model worker (<how it ended>)
// ..."); any other error is the one the work itself returned. With an empty worker_binary (tests
// of the manager alone) the work runs in this process.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "tuner/model_tune.h"

namespace kiln::daemon {

// The child's side: one request on request_fd, its reply on response_fd.
void serve_model_worker(int request_fd, int response_fd);

// The job's tasks (job_tasks of the spec parsed against base_dir).
Result<std::vector<tuner::ModelTask>> job_tasks_in_child(const std::string& worker_binary,
                                                         const std::string& spec_yaml,
                                                         const std::string& base_dir);

// Compiles the job's model with the best records of the store at `db` (opened read-only) and
// writes it to the spec's export.compiled_model (write_file_atomically).
Status export_compiled_model_in_child(const std::string& worker_binary,
                                      const std::string& spec_yaml, const std::string& base_dir,
                                      const std::string& db);

}  // namespace kiln::daemon
