// Which records may choose a kernel's config when a model is compiled or benched: the records of
// its TVM task (both spellings of a dense task: without the bias, as TVM and this kiln key them,
// and with it, as an older kiln did), of the run's exact target, or with RecordsFrom::kAnyCpu,
// when the exact target has none, of other CPUs of the same architecture and vector ISA (AutoTVM
// matches records by the target's keys; kiln's default stays the exact CPU, since a config tuned
// on another CPU is no evidence for this one). Among them, those measured at the run's thread
// count are preferred when there are some, and before that those measured with the caches
// flushed (a model's timing, tuner::use_model_timing) when there are some.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "exchange/target.h"
#include "ops/template.h"
#include "ops/workload.h"
#include "store/store.h"

namespace kiln::store {

enum class RecordsFrom { kExactTarget, kAnyCpu };

// "exact" or "any-cpu" -> RecordsFrom; the error lists both.
Result<RecordsFrom> parse_records_from(const std::string& text);

struct RecordChoice {
  RecordsFrom from = RecordsFrom::kExactTarget;
  std::optional<int> threads;  // the run's kernel threads; nullopt: no preference
};

// Where the records that chose a kernel's config came from.
struct RecordOrigin {
  std::string target;         // their target: the run's, or (any-cpu) the other CPU's
  bool other_target = false;  // from another CPU of the same ISA family
  // The thread count they were measured at when they all share one (nullopt: unknown or mixed).
  std::optional<int> threads;
  bool threads_differ = false;  // a known count that is not the run's
};

// Records of one kernel that may serve it.
struct UsableRecords {
  std::vector<Record> records;  // successful comparable records, ordered by id
  RecordOrigin origin;
};

// The successful records for kernel workload `w` (normalized by `tmpl`) on `run_target`. With
// kAnyCpu and none for the exact target, the records of the one other target of the ISA family
// whose best record is fastest (one target, so that the chosen configs come from one machine).
Result<UsableRecords> usable_records(Store& store, const ops::Template& tmpl,
                                     const ops::Workload& w, const Target& run_target,
                                     const RecordChoice& choice);

// The record with the smallest mean cost (the earliest on ties), nullopt when `records` is empty.
std::optional<Record> fastest(const std::vector<Record>& records);

// Whether a record's target text names a CPU of the same architecture and vector ISA as
// `run_target` (false when its ISA cannot be told: a target without -mcpu or -mattr).
bool same_isa_family(const std::string& record_target, const Target& run_target);

// The kernel thread count of a record's measure options, nullopt when unknown.
std::optional<int> record_threads(const Record& record);

// Whether a record was timed with the caches flushed before each repeat (its measure options
// say cache_flush: true).
bool record_cache_flushed(const Record& record);

}  // namespace kiln::store
