// `kiln bench --profile --db --onnx`'s comparison of a run with the tuner's estimate: the sum
// kiln tune shows (tuner::ModelTuneJob::estimated_latency) over the ONNX model's tasks, from the
// store's best records for the target the model was compiled for.
#pragma once

#include <string>

#include "cli/board_commands.h"

namespace kiln::cli {

// Exits with kiln's usual messages on a model, target or store that cannot be read.
RecordsEstimate records_estimate(const std::string& db, const std::string& onnx,
                                 const std::string& target);

}  // namespace kiln::cli
