// kiln best / export / import / store copy: read and move the records of a store.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/common.h"
#include "cli/tuner_client.h"
#include "common/safe_file.h"
#include "ops/tvm_args_parse.h"
#include "store/formats/log_file.h"
#include "store/open_store.h"
#include "store/record_selection.h"
#include "store/store_copy.h"

namespace kiln::cli {

namespace {

std::string iso_time(double unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::unique_ptr<store::Store> open_store(const std::string& path, bool read_only) {
  return value_or_exit(store::open_store(path, read_only));
}

// kiln export --job: the daemon's ExportJob, to -o FILE or standard output.
int export_job(const std::string& job, const std::string& output,
               const TunerClientOptions& client) {
  v1::ExportJobRequest req;
  req.set_job_id(parse_job_id("--job", job));
  req.set_format("tvm");
  v1::ExportJobReply reply;
  auto ctx = tuner_context(client);
  grpc::Status s = tuner_stub(client)->ExportJob(ctx.get(), req, &reply);
  if (!s.ok()) throw_rpc_error(client, s);
  if (output.empty()) {
    std::cout << reply.log();
    std::cout.flush();
  } else {
    ok_or_exit(write_file_atomically(output, reply.log()));
  }
  std::fprintf(stderr, "exported %lld records of job %s\n", static_cast<long long>(reply.lines()),
               job.c_str());
  return 0;
}

// --records-from any-cpu: per (task, workload), the exact target's best where it has one, else
// the fastest best of another CPU of the same architecture and vector ISA; ordered by id.
std::vector<store::Record> any_cpu_best(const std::vector<store::Record>& all,
                                        const Target& target) {
  const std::string exact = target.to_string();
  std::map<std::pair<std::string, std::string>, store::Record> chosen;
  for (const store::Record& r : all) {
    if (r.target != exact && !store::same_isa_family(r.target, target)) continue;
    auto [it, inserted] = chosen.emplace(std::make_pair(r.task_name, r.workload), r);
    if (inserted) continue;
    store::Record& have = it->second;
    bool have_exact = have.target == exact, is_exact = r.target == exact;
    if (is_exact != have_exact ? is_exact : r.mean_cost() < have.mean_cost()) have = r;
  }
  std::vector<store::Record> out;
  for (auto& [key, r] : chosen) out.push_back(std::move(r));
  std::sort(out.begin(), out.end(),
            [](const store::Record& a, const store::Record& b) { return a.id < b.id; });
  return out;
}

std::string other_cpu_note(const std::string& target) {
  return "another CPU's record: '" + target + "' has none for this task (--records-from any-cpu)";
}

// What a record's mean is over: AutoTVM's costs are `repeat` means, each of `number` runs.
std::string runs_text(const store::Record& r) {
  std::string text = "mean of " + std::to_string(r.costs.size()) + " repeats";
  nlohmann::json options = nlohmann::json::parse(r.measure_options, nullptr, false);
  if (options.is_object() && options.contains("number") && options["number"].is_number_integer())
    text += " of " + std::to_string(options["number"].get<int64_t>()) + " runs each";
  return text;
}

}  // namespace

Command add_best_command(CLI::App& app) {
  struct Options {
    TaskOptions task;
    std::string db;
    bool json = false;
    std::string records_from = "exact";
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("best", "print the best config of each tuned workload");
  add_task_options(cmd, &o->task, /*workload_required=*/false);
  cmd->get_option("--target")
      ->description("only records tuned for this target (default: every target in the store)");
  cmd->add_option("--db", o->db, "record store (a path or sqlite://PATH)")->required();
  cmd->add_flag("--json", o->json, "one JSON object per line");
  add_records_from_option(cmd, &o->records_from);
  return [o, cmd] {
    store::RecordsFrom records_from = value_or_exit(store::parse_records_from(o->records_from));
    // A config tuned for one CPU is no answer for another: with --target, only its records.
    std::optional<std::string> target;
    std::optional<Target> run_target;
    if (cmd->count("--target") > 0 || records_from == store::RecordsFrom::kAnyCpu) {
      run_target = resolve_target(o->task.target);
      target = run_target->to_string();
    }
    std::vector<std::pair<std::string, std::string>> wanted;  // (task, workload)
    if (!o->task.workload.empty()) {
      for (const Task& t : resolve_tasks(o->task).tasks) {
        wanted.emplace_back(std::string(t.tmpl->name()), t.workload.to_string());
        wanted.emplace_back(std::string(t.tmpl->name()),
                            ops::task_workload(*t.tmpl, t.workload).to_string());
      }
    }
    std::unique_ptr<store::Store> db = open_store(o->db, true);
    std::vector<store::Record> best = value_or_exit(
        db->best_per_workload(records_from == store::RecordsFrom::kAnyCpu ? std::nullopt : target));
    if (records_from == store::RecordsFrom::kAnyCpu) best = any_cpu_best(best, *run_target);
    int shown = 0;
    for (const store::Record& r : best) {
      if (!wanted.empty() && std::find(wanted.begin(), wanted.end(),
                                       std::make_pair(r.task_name, r.workload)) == wanted.end()) {
        continue;
      }
      ++shown;
      double gflops = r.flop / r.mean_cost() / 1e9;
      if (o->json) {
        nlohmann::ordered_json j;
        j["task"] = r.task_name;
        j["workload"] = r.workload;
        j["target"] = r.target;
        j["config_index"] = r.config_index;
        j["entity"] = r.entities;
        j["mean_cost_s"] = r.mean_cost();
        j["costs"] = r.costs;
        j["gflops"] = gflops;
        j["timestamp"] = r.timestamp;
        j["source"] = r.source;
        j["record_id"] = r.id;
        if (std::optional<int> threads = store::record_threads(r)) j["threads"] = *threads;
        if (target && r.target != *target) j["note"] = other_cpu_note(*target);
        std::printf("%s\n", j.dump().c_str());
      } else {
        std::string note =
            target && r.target != *target ? " (" + other_cpu_note(*target) + ")" : "";
        std::printf(
            "%s %s\n  target %s%s\n  config %lld %s\n  %.4f ms, %s, %.2f GFLOPS\n"
            "  measured %s by %s (record %lld)\n",
            r.task_name.c_str(), r.workload.c_str(), r.target.c_str(), note.c_str(),
            static_cast<long long>(r.config_index), r.entities.dump().c_str(), r.mean_cost() * 1e3,
            runs_text(r).c_str(), gflops, iso_time(r.timestamp).c_str(), r.source.c_str(),
            static_cast<long long>(r.id));
      }
    }
    if (shown == 0 && !o->json) {
      std::printf("no successful record%s%s in %s\n", wanted.empty() ? "" : " for this workload",
                  target ? (" for target '" + *target + "'").c_str() : "", o->db.c_str());
    }
    // Successful records of an older measurement version never compete (store/store.h).
    store::RecordFilter outdated;
    outdated.target = target;
    outdated.only_ok = true;
    outdated.versions = store::Versions::kOutdated;
    int64_t ignored = 0;
    if (wanted.empty()) {
      ignored = value_or_exit(db->count(outdated));
    } else {
      for (const auto& [task_name, workload] : wanted) {
        outdated.task_name = task_name;
        outdated.workload = workload;
        ignored += value_or_exit(db->count(outdated));
      }
    }
    if (ignored > 0) {
      std::fprintf(stderr,
                   "note: %lld records are ignored: of an older measurement version (they timed "
                   "another program than kiln measures now; tune again to replace them) or "
                   "measured on an emulator (not the device's speed)\n",
                   static_cast<long long>(ignored));
    }
    return 0;
  };
}

Command add_export_command(CLI::App& app) {
  struct Options {
    std::string db;
    std::string format = "kiln";
    bool best_only = false;
    std::string output;
    std::string job;
    TunerClientOptions client;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "export", "write records as a log (kiln or TVM autotvm JSON), or a kiln serve job's best");
  cmd->add_option("--db", o->db, "SQLite record store");
  cmd->add_option("--format", o->format, "tvm (autotvm log v0.2) | kiln");
  cmd->add_flag("--best-only", o->best_only, "only the best record per workload");
  cmd->add_option("-o,--output", o->output, "output file (default: standard output)");
  cmd->add_option("--job", o->job,
                  "a kiln serve job: its best record per task as a TVM log, from the daemon "
                  "(--server, --certs, --token-file)");
  add_tuner_client_options(cmd, &o->client);
  return [o] {
    if (o->job.empty() == o->db.empty()) {
      throw CommandError{"give either --db (a record store) or --job (a kiln serve job)"};
    }
    if (!o->job.empty()) return export_job(o->job, o->output, o->client);
    store::ExportOptions options;
    options.format = value_or_exit(store::parse_log_format(o->format));
    options.best_only = o->best_only;
    std::unique_ptr<store::Store> db = open_store(o->db, true);
    store::ExportReport report = o->output.empty()
                                     ? value_or_exit(store::export_records(*db, std::cout, options))
                                     : value_or_exit(store::export_file(*db, o->output, options));
    std::cout.flush();
    for (const std::string& s : report.skipped) std::fprintf(stderr, "skipped %s\n", s.c_str());
    std::fprintf(stderr, "exported %lld records\n", static_cast<long long>(report.written));
    return 0;
  };
}

Command add_import_command(CLI::App& app) {
  struct Options {
    std::string file;
    std::string db;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("import", "read a TVM autotvm log or a kiln export into a store");
  cmd->add_option("file", o->file, "log file")->required();
  cmd->add_option("--db", o->db, "SQLite record store (created if absent)")->required();
  return [o] {
    std::unique_ptr<store::Store> db = open_store(o->db, false);
    store::ImportReport report =
        value_or_exit(store::import_file(*db, o->file, "import:" + o->file));
    for (const std::string& s : report.warnings) std::fprintf(stderr, "%s\n", s.c_str());
    for (const std::string& s : report.skipped) std::fprintf(stderr, "%s\n", s.c_str());
    if (report.record_lines() == 0) {
      std::printf("no records in %s (%lld lines, all blank or comments)\n", o->file.c_str(),
                  static_cast<long long>(report.lines));
      return 0;
    }
    std::printf("imported %lld records from %s (%lld lines, %lld duplicates, %zu skipped)\n",
                static_cast<long long>(report.imported), o->file.c_str(),
                static_cast<long long>(report.lines), static_cast<long long>(report.duplicates),
                report.skipped.size());
    for (const auto& [target, count] : report.targets) {
      std::printf("  %lld records for target '%s'\n", static_cast<long long>(count),
                  target.c_str());
    }
    // Re-importing a file is harmless (all duplicates, exit 0); a file of nothing but bad
    // records is an error, so that a script does not take it for imported.
    if (report.all_rejected()) {
      throw CommandError{"nothing imported from " + o->file + ": all " +
                             std::to_string(report.skipped.size()) +
                             " record lines were rejected (reasons above)",
                         kUsageError};
    }
    return 0;
  };
}

Command add_store_command(CLI::App& app) {
  struct Options {
    std::string src;
    std::string dst;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("store", "manage whole record stores");
  cmd->require_subcommand(1);
  CLI::App* copy = cmd->add_subcommand(
      "copy",
      "copy every record, run time and job of SRC into DST (a SQLite file or a "
      "postgresql:// URI, either way); what DST holds already is not added again");
  copy->add_option("src", o->src, "the store to copy from (read only)")->required();
  copy->add_option("dst", o->dst, "the store to copy into (created if absent)")->required();
  return [o] {
    std::unique_ptr<store::Store> src = open_store(o->src, true);
    std::unique_ptr<store::JobStore> src_jobs =
        value_or_exit(store::open_job_store(o->src, /*read_only=*/true));
    std::unique_ptr<store::Store> dst = open_store(o->dst, false);
    std::unique_ptr<store::JobStore> dst_jobs = value_or_exit(store::open_job_store(o->dst));
    store::CopyReport r = value_or_exit(store::copy_store(*src, *src_jobs, *dst, *dst_jobs));
    std::printf(
        "copied %lld records (%lld already there), %lld jobs (%lld already there), %lld run "
        "times rows (%lld already there) from %s to %s\n",
        static_cast<long long>(r.records), static_cast<long long>(r.records_present),
        static_cast<long long>(r.jobs), static_cast<long long>(r.jobs_present),
        static_cast<long long>(r.run_times), static_cast<long long>(r.run_times_present),
        src->path().c_str(), dst->path().c_str());
    return 0;
  };
}

}  // namespace kiln::cli
