// The farm as real processes on 127.0.0.1, for the end-to-end tests: a `kiln tracker` with TLS
// from `kiln certs init`, `kiln runner`s under key k1, `kiln farm status --json`, and the records
// a `kiln tune --tracker` left in its store. Every wait polls the real processes with a deadline;
// the deadlines are generous because these tests also run under AddressSanitizer on a loaded
// machine.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/farm/child_process.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln::farm::testing {

// A `kiln ARGS` child process (tests/farm/child_process.h).
class KilnProcess : public ChildProcess {
 public:
  KilnProcess(const std::vector<std::string>& args, const std::string& ready)
      : ChildProcess(KILN_BINARY, args, ready) {}
};

struct Record {
  int64_t config_index;
  int error_no;
  std::string message;
  bool runner_lost;
  std::string measure_options;
};

// Every record of a kiln store.
inline std::vector<Record> records(const std::string& db) {
  std::vector<Record> out;
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << db;
    sqlite3_close(h);
    return out;
  }
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(
      h, "SELECT config_index, error_no, error_msg, runner_lost, measure_options FROM records", -1,
      &st, nullptr);
  while (st && sqlite3_step(st) == SQLITE_ROW) {
    const char* msg = reinterpret_cast<const char*>(sqlite3_column_text(st, 2));
    const char* options = reinterpret_cast<const char*>(sqlite3_column_text(st, 4));
    out.push_back({sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1), msg ? msg : "",
                   sqlite3_column_int(st, 3) != 0, options ? options : ""});
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

// Polls `done` every 100 ms until it holds or `seconds` pass; whether it held.
inline bool wait_until(double seconds, const std::function<bool()>& done) {
  const auto give_up = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  while (!done()) {
    if (std::chrono::steady_clock::now() >= give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

// A tracker (started by SetUp with tracker_args()) and helpers to start runners and read the
// farm's status.
class FarmFixture : public ::testing::Test {
 protected:
  // Extra `kiln tracker` options of a test suite.
  virtual std::vector<std::string> tracker_args() const { return {}; }

  void SetUp() override {
    kiln::testing::CommandResult init = kiln::testing::run_kiln("certs init " + certs_);
    ASSERT_EQ(init.exit_code, 0) << init.output;
    std::vector<std::string> args = {"tracker", "--listen", "127.0.0.1:0", "--certs", certs_};
    for (const std::string& a : tracker_args()) args.push_back(a);
    tracker_ = std::make_unique<KilnProcess>(args, "kiln tracker listening on ");
    ASSERT_FALSE(tracker_->address().empty()) << tracker_->output();
  }

  // A `kiln runner` of key k1 named `name`, once it is registered and free at the tracker
  // (nullptr, with a test failure, if it did not get there).
  std::unique_ptr<KilnProcess> start_runner(const std::string& name,
                                            std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"runner", "--tracker", tracker_->address(), "--key", "k1",
                                     "--name", name,        "--certs",           certs_};
    args.insert(args.end(), extra.begin(), extra.end());
    auto p = std::make_unique<KilnProcess>(args, "kiln runner " + name + " listening on ");
    if (p->address().empty()) {
      ADD_FAILURE() << "runner " << name << " did not start: " << p->output();
      return nullptr;
    }
    if (!wait_until(60, [&] { return state_of(name) == "free"; })) {
      ADD_FAILURE() << "runner " << name << " is not free at the tracker: " << status();
      return nullptr;
    }
    return p;
  }

  // The options of a small `kiln tune` on the farm's k1 runners, writing to `db`: batches of
  // `n_parallel` configs, at most 2 per call to a runner (so that a runner reports often). A batch
  // waits up to 300 s for a runner (a loaded machine), far longer than any of these tunes takes.
  std::vector<std::string> tune_args(const std::string& db, const std::string& workload, int trials,
                                     double cooldown_s, int n_parallel = 8, int seed = 5) const {
    return {"tune",
            "--template",
            "dense_pack.x86",
            "--workload",
            workload,
            "--number",
            "1",
            "--repeat",
            "1",
            "--seed",
            std::to_string(seed),
            "--tuner",
            "random",
            "--n-parallel",
            std::to_string(n_parallel),
            "--trials",
            std::to_string(trials),
            "--cooldown-interval",
            std::to_string(cooldown_s),
            "--db",
            db,
            "--tracker",
            tracker_->address(),
            "--key",
            "k1",
            "--certs",
            certs_,
            "--runner-wait",
            "300",
            "--runner-chunk",
            "2"};
  }
  // The same as one command line for run_kiln.
  static std::string joined(const std::vector<std::string>& args) {
    std::string out;
    for (const std::string& a : args) out += a + " ";
    return out;
  }

  nlohmann::json status() const {
    kiln::testing::CommandResult r = kiln::testing::run_kiln(
        "farm status --json --tracker " + tracker_->address() + " --certs " + certs_);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output, nullptr, false);
  }
  // The runner's entry in the status, or null when the tracker does not know it.
  nlohmann::json runner(const std::string& id) const {
    const nlohmann::json s = status();
    if (s.is_discarded()) return nullptr;
    for (const auto& k : s["keys"]) {
      for (const auto& r : k["runners"]) {
        if (r["id"] == id) return r;
      }
    }
    return nullptr;
  }
  std::string state_of(const std::string& id) const {
    nlohmann::json r = runner(id);
    return r.is_null() ? "" : r["state"].get<std::string>();
  }
  int64_t trials_of(const std::string& id) const {
    nlohmann::json r = runner(id);
    return r.is_null() ? -1 : r["trials"].get<int64_t>();
  }

  kiln::testing::TempDir dir_{"kiln-farm"};
  std::string certs_ = dir_.file("certs");
  std::unique_ptr<KilnProcess> tracker_;
};

}  // namespace kiln::farm::testing
