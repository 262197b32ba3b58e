// The record store under concurrent clients: appends per second (batches of 64 records) and
// claim/release cycles per second with 1, 8 and 32 clients, each a thread with its own
// connection, on a SQLite file and on PostgreSQL over loopback (a real server started in a
// temporary directory, tests/postgres/pg_server.h). The goal: PostgreSQL sustains the record
// rate of a farm of 100 runners at 0.1 s per trial, 1,000 records/s, with 32 clients.
//
//   build/bench/store_bench [--seconds S] [--clients 1,8,32]
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "store/open_store.h"
#include "tests/postgres/pg_server.h"

namespace {

using kiln::store::Record;

Record bench_record(int client, int64_t index) {
  Record r;
  r.target = "llvm -mcpu=bench";
  r.task_name = "dense_pack.x86";
  r.workload = "dense:K=64,M=64,N=" + std::to_string(client + 1);
  r.config_index = index;
  r.entities = nlohmann::json::array({nlohmann::json::array({"tile_y", "sp", {-1, 8}})});
  r.costs = {1e-4, 1.1e-4};
  r.all_cost = 0.1;
  r.timestamp = 1.7e9;
  r.flop = 1e6;
  r.source = "store_bench";
  return r;
}

// Runs `clients` threads for `seconds`, each doing `op` (one unit per call) on its own store;
// returns units per second in all.
template <class Op>
double rate(const std::string& location, int clients, double seconds, int units_per_op, Op op) {
  std::vector<std::unique_ptr<kiln::store::Store>> stores;
  for (int c = 0; c < clients; ++c) {
    auto s = kiln::store::open_store(location);
    if (!s.ok()) {
      std::fprintf(stderr, "store_bench: %s\n", s.status().message().c_str());
      std::exit(1);
    }
    stores.push_back(std::move(s).value());
  }
  std::atomic<bool> stop{false};
  std::atomic<int64_t> done{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  auto start = std::chrono::steady_clock::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      for (int64_t i = 0; !stop; ++i) {
        if (!op(*stores[c], c, i)) {
          ++failures;
          return;
        }
        done += units_per_op;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (failures > 0) std::fprintf(stderr, "store_bench: %d clients failed\n", failures.load());
  return done / elapsed;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"store_bench: record store appends and claims under concurrent clients"};
  double seconds = 3;
  std::vector<int> client_counts = {1, 8, 32};
  app.add_option("--seconds", seconds, "seconds per measurement");
  app.add_option("--clients", client_counts, "client counts")->delimiter(',');
  CLI11_PARSE(app, argc, argv);

  std::string dir = (std::filesystem::temp_directory_path() / "kiln_store_bench_XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) {
    std::perror("store_bench: mkdtemp");
    return 1;
  }
  kiln::testing::PgServer* server = kiln::testing::PgServer::shared();
  if (!server)
    std::fprintf(stderr, "store_bench: %s\n", kiln::testing::PgServer::skip_reason().c_str());

  std::printf("%-10s %7s %14s %18s\n", "store", "clients", "records/s", "claim+release/s");
  for (int clients : client_counts) {
    std::vector<std::pair<std::string, std::string>> stores = {
        {"sqlite", dir + "/bench" + std::to_string(clients) + ".db"}};
    if (server) stores.emplace_back("postgresql", server->new_database());
    for (const auto& [name, location] : stores) {
      double appends =
          rate(location, clients, seconds, 64, [](kiln::store::Store& s, int c, int64_t i) {
            std::vector<Record> batch;
            for (int k = 0; k < 64; ++k) batch.push_back(bench_record(c, i * 64 + k));
            return s.append(batch).ok();
          });
      double claims =
          rate(location, clients, seconds, 1, [](kiln::store::Store& s, int c, int64_t i) {
            kiln::store::TaskKey task{"llvm -mcpu=bench", "dense_pack.x86", "claims"};
            const std::string owner = "client" + std::to_string(c);
            const int64_t config = 1000000 * c + i;
            auto got = s.claim(task, {config}, 0x7fffffffffffffff, owner, 1, 2);
            return got.ok() && s.release_leases(task, {config}, owner).ok();
          });
      std::printf("%-10s %7d %14.0f %18.0f\n", name.c_str(), clients, appends, claims);
      std::fflush(stdout);
    }
  }
  std::filesystem::remove_all(dir);
  return 0;
}
