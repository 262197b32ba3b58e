// Building one MeasureInput in this process: the builder's step between the exchange types
// (exchange/measure_input.h in, exchange/build_result.h out). Pools of builder processes and
// `kiln measure` call it.
#pragma once

#include "exchange/build_result.h"
#include "exchange/measure_input.h"

namespace kiln::builder {

// Instantiates and builds one input in this process; on success the result carries the
// artifact's SHA-256. Never fails: an invalid config is kInstantiationError, anything else that
// goes wrong kCompileHost.
BuildResult build_measure_input(const MeasureInput& input);

}  // namespace kiln::builder
