// What a tuning run records about how it measured, and how long its claims on configs last.
//
// Measure options are everything that can change a trial's outcome: the timing protocol
// (number, repeat, min_repeat_ms, cache flush), the limits (run and build timeouts), the kernels'
// threads, and the correctness check (input seed, tolerance). They are stored with each record
// (store::Record::measure_options) so that a failure caused by the environment, such as a
// timeout, condemns its config only under the options it was measured with (tune_loop.h).
#pragma once

#include <string>

#include "runner/local_runner.h"

namespace kiln::tuner {

// The canonical measure options text (store::canonical_measure_options) of a run with these
// runner options and this build timeout. Threads are resolved (0 becomes the core count), so
// "all cores" on two different machines are different options.
std::string measure_options_text(const runner::RunnerOptions& runner, double build_timeout_s);

// The timing protocol of a whole model's tasks unless the user gives one: TVM's for tuning a model
// on a CPU (tune_relay_x86: number 1, repeat 10, min_repeat_ms 0, the caches flushed before each
// repeat). In a model a kernel finds its weights in memory, not in the caches a kernel timed
// again and again leaves them in, and the tuner must rank configs as the model will run them: on
// Zen 5, ResNet-18 tuned warm took Winograd for its 512-channel 7x7 convs (36 C K floats of
// transformed weights, 37.7 MB each, mostly L3-resident between repeats), which in the model
// stream from memory and ran slower than the direct conv.
void use_model_timing(TimeOptions& time);

// A lease long enough for a tuner to build and measure one batch of `batch_size` configs even
// when every build and every run hits its timeout, plus a margin for computing the task's
// reference data: the tuning loop renews its leases at every batch boundary, so a lease only has
// to outlast one batch. A killed tuner's claims block others at most this long.
double lease_seconds(const runner::RunnerOptions& runner, double build_timeout_s, int batch_size);

}  // namespace kiln::tuner
