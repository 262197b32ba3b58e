// kiln best / export / import / store copy: read and move the records of a store.
#include <cstdio>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/common.h"
#include "cli/tuner_client.h"
#include "common/safe_file.h"
#include "store/formats/log_file.h"
#include "store/open_store.h"
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

}  // namespace

Command add_best_command(CLI::App& app) {
  struct Options {
    TaskOptions task;
    std::string db = "kiln.db";
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("best", "print the best config of each tuned workload");
  add_task_options(cmd, &o->task, /*workload_required=*/false);
  cmd->get_option("--target")
      ->description("only records tuned for this target (default: every target in the store)");
  cmd->add_option("--db", o->db, "SQLite record store")->required();
  cmd->add_flag("--json", o->json, "one JSON object per line");
  return [o, cmd] {
    // A config tuned for one CPU is no answer for another: with --target, only its records.
    std::optional<std::string> target;
    if (cmd->count("--target") > 0) target = resolve_target(o->task.target).to_string();
    std::vector<std::pair<std::string, std::string>> wanted;  // (task, workload)
    if (!o->task.workload.empty()) {
      for (const Task& t : resolve_tasks(o->task).tasks) {
        wanted.emplace_back(std::string(t.tmpl->name()), t.workload.to_string());
      }
    }
    std::unique_ptr<store::Store> db = open_store(o->db, true);
    std::vector<store::Record> best = value_or_exit(db->best_per_workload(target));
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
        std::printf("%s\n", j.dump().c_str());
      } else {
        std::printf(
            "%s %s\n  target %s\n  config %lld %s\n  %.4f ms mean over %zu runs, %.2f GFLOPS\n"
            "  measured %s by %s (record %lld)\n",
            r.task_name.c_str(), r.workload.c_str(), r.target.c_str(),
            static_cast<long long>(r.config_index), r.entities.dump().c_str(), r.mean_cost() * 1e3,
            r.costs.size(), gflops, iso_time(r.timestamp).c_str(), r.source.c_str(),
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
                   "note: %lld records of an older measurement version are ignored (they timed "
                   "another program than kiln measures now; tune again to replace them)\n",
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
                  "(--server, --certs, --token)");
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
