#include "store/record_selection.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "exchange/target_description.h"
#include "ops/tvm_args_parse.h"

namespace kiln::store {

namespace {

// The -mcpu, -mattr and -mtriple of a kiln target text, as plain data (no LLVM: the records of a
// store name CPUs this machine's LLVM need not know).
Target target_of_text(const std::string& text, const std::string& default_triple) {
  Target t;
  t.triple = default_triple;
  std::istringstream in(text);
  std::string token;
  while (in >> token) {
    auto value = [&](const char* prefix) -> std::optional<std::string> {
      std::string p = prefix;
      if (token.rfind(p, 0) != 0) return std::nullopt;
      return token.substr(p.size());
    };
    if (auto v = value("-mcpu=")) t.cpu = *v;
    if (auto v = value("-mattr=")) {
      t.features = *v;
      t.explicit_features = true;
    }
    if (auto v = value("-mtriple=")) {
      t.triple = *v;
      t.explicit_triple = true;
    }
  }
  return t;
}

// The records of the task (both workload spellings), every target unless `target` is given.
Result<std::vector<Record>> task_records(Store& store, const ops::Template& tmpl,
                                         const ops::Workload& w,
                                         const std::optional<std::string>& target) {
  std::vector<std::string> workloads = {ops::task_workload(tmpl, w).to_string()};
  if (w.to_string() != workloads.front()) workloads.push_back(w.to_string());
  std::vector<Record> out;
  for (const std::string& workload : workloads) {
    RecordFilter filter;
    filter.target = target;
    filter.task_name = std::string(tmpl.name());
    filter.workload = workload;
    filter.only_ok = true;
    filter.versions = Versions::kComparable;
    KILN_ASSIGN_OR_RETURN(std::vector<Record> records, store.records(filter));
    out.insert(out.end(), records.begin(), records.end());
  }
  std::sort(out.begin(), out.end(), [](const Record& a, const Record& b) { return a.id < b.id; });
  return out;
}

// Keeps the records measured at `threads` when there are some; fills in the thread facts.
void prefer_threads(UsableRecords& usable, const std::optional<int>& threads) {
  if (threads) {
    std::vector<Record> matching;
    for (const Record& r : usable.records) {
      if (record_threads(r) == threads) matching.push_back(r);
    }
    if (!matching.empty()) usable.records = std::move(matching);
  }
  std::optional<int> shared;
  bool mixed = false;
  for (const Record& r : usable.records) {
    std::optional<int> t = record_threads(r);
    if (!t || (shared && *shared != *t)) mixed = true;
    shared = t;
  }
  usable.origin.threads = mixed ? std::nullopt : shared;
  usable.origin.threads_differ =
      threads && usable.origin.threads && *usable.origin.threads != *threads;
}

// Keeps the records measured with the caches flushed when there are some: a config timed warm
// is faster than the same config timed as in a model (tuner::use_model_timing), so warm and
// flushed times of one task are not compared.
void prefer_cache_flushed(UsableRecords& usable) {
  std::vector<Record> flushed;
  for (const Record& r : usable.records) {
    if (record_cache_flushed(r)) flushed.push_back(r);
  }
  if (!flushed.empty()) usable.records = std::move(flushed);
}

// A measure option of a record's options text, null when absent or unreadable.
nlohmann::json measure_option(const Record& record, const char* key) {
  if (record.measure_options.empty()) return nullptr;
  nlohmann::json options = nlohmann::json::parse(record.measure_options, nullptr, false);
  if (!options.is_object()) return nullptr;
  auto it = options.find(key);
  return it == options.end() ? nlohmann::json(nullptr) : *it;
}

}  // namespace

Result<RecordsFrom> parse_records_from(const std::string& text) {
  if (text == "exact") return RecordsFrom::kExactTarget;
  if (text == "any-cpu") return RecordsFrom::kAnyCpu;
  return InvalidArgument("--records-from: '" + text +
                         "' is not one of exact (the run's target only) or any-cpu (other CPUs "
                         "of the same architecture and vector ISA when it has none)");
}

bool same_isa_family(const std::string& record_target, const Target& run_target) {
  Target t = target_of_text(record_target, run_target.triple);
  if (!t.explicit_features && isa_of_cpu(t.cpu).empty()) return false;
  TargetDescription mine = describe(run_target), theirs = describe(t);
  return mine.arch == theirs.arch && mine.isa == theirs.isa;
}

std::optional<int> record_threads(const Record& record) {
  nlohmann::json threads = measure_option(record, "threads");
  if (!threads.is_number_integer()) return std::nullopt;
  return threads.get<int>();
}

bool record_cache_flushed(const Record& record) {
  nlohmann::json flushed = measure_option(record, "cache_flush");
  return flushed.is_boolean() && flushed.get<bool>();
}

std::optional<Record> fastest(const std::vector<Record>& records) {
  const Record* best = nullptr;
  for (const Record& r : records) {
    if (!best || r.mean_cost() < best->mean_cost() ||
        (r.mean_cost() == best->mean_cost() && r.id < best->id)) {
      best = &r;
    }
  }
  return best ? std::optional<Record>(*best) : std::nullopt;
}

Result<UsableRecords> usable_records(Store& store, const ops::Template& tmpl,
                                     const ops::Workload& w, const Target& run_target,
                                     const RecordChoice& choice) {
  UsableRecords usable;
  usable.origin.target = run_target.to_string();
  KILN_ASSIGN_OR_RETURN(usable.records, task_records(store, tmpl, w, usable.origin.target));
  if (usable.records.empty() && choice.from == RecordsFrom::kAnyCpu) {
    KILN_ASSIGN_OR_RETURN(std::vector<Record> all, task_records(store, tmpl, w, std::nullopt));
    std::map<std::string, std::vector<Record>> by_target;
    for (Record& r : all) {
      if (same_isa_family(r.target, run_target)) by_target[r.target].push_back(std::move(r));
    }
    double best_cost = 0;
    for (auto& [target, records] : by_target) {
      UsableRecords candidate{std::move(records), {target, true, std::nullopt, false}};
      prefer_cache_flushed(candidate);
      prefer_threads(candidate, choice.threads);
      double cost = fastest(candidate.records)->mean_cost();
      if (usable.records.empty() || cost < best_cost) {
        usable = std::move(candidate);
        best_cost = cost;
      }
    }
    return usable;
  }
  prefer_cache_flushed(usable);
  prefer_threads(usable, choice.threads);
  return usable;
}

}  // namespace kiln::store
