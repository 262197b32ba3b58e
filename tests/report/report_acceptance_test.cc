// Issue 14's acceptance test for `kiln report`: a real small tuning run (the real `kiln tune` on
// a model's dense tasks and a conv whose first configs fail honestly, under a build limit no
// compile can meet, plus a second source of records imported from a TVM log), then `kiln report`,
// rendered in headless Chromium with the network unusable: the screenshot is not blank and every
// SVG chart of the rendered DOM has the series the store's records call for.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "store/open_store.h"
#include "tests/run_kiln.h"
#include "tests/support/chart_markup.h"
#include "tests/support/headless_chromium.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

using testing::run_kiln;
using testing::TempDir;

const std::string kMlp = std::string(KILN_SHARED_DIR) + "/models/mlp/mlp.onnx";
const std::string kConv = "conv2d:N=1,C=8,H=14,W=14,K=8,R=3,S=3,stride=1,pad=1";
// Fast, small measurements: this is about the report, not the timings.
const std::string kMeasure =
    " --tuner random --no-transfer --number 1 --repeat 1 --cooldown-interval 0.01 --threads 1";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Per task section of the DOM (its heading "template workload"): its charts.
std::map<std::string, std::vector<std::pair<std::string, int>>> task_charts(
    const std::string& dom) {
  std::map<std::string, std::vector<std::pair<std::string, int>>> out;
  static const std::regex section("<section class=\"task\" id=\"task-[0-9]+\"><h3>([^<]+)</h3>");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), section);
       it != std::sregex_iterator(); ++it) {
    size_t begin = static_cast<size_t>(it->position());
    size_t end = dom.find("</section>", begin);
    out[(*it)[1].str()] = testing::charts_of(dom.substr(begin, end - begin));
  }
  return out;
}

// What a task's charts must hold, from the store: the sources of its records, and the error
// kinds among the trials of its primary source (the one with most records; ties: the one
// recorded first).
struct Expected {
  int sources = 0;
  int kinds = 0;
};
std::map<std::string, Expected> expected_from(const std::string& db) {
  auto store = store::open_store(db, /*read_only=*/true);
  EXPECT_TRUE(store.ok()) << store.status().message();
  std::map<std::string, std::map<std::string, std::set<int>>> kinds;  // task -> source -> kinds
  std::map<std::string, std::map<std::string, int>> sizes;
  std::map<std::string, std::vector<std::string>> first_seen;  // task -> sources, in id order
  auto records = (*store)->records();
  EXPECT_TRUE(records.ok()) << records.status().message();
  for (const store::Record& r : records.value()) {
    std::string task = r.task_name + " " + r.workload;
    kinds[task][r.source].insert(r.error_no);
    if (sizes[task][r.source]++ == 0) first_seen[task].push_back(r.source);
  }
  std::map<std::string, Expected> out;
  for (const auto& [task, sources] : first_seen) {
    std::string primary;
    int most = -1;
    for (const std::string& source : sources) {
      if (sizes[task][source] > most) primary = source, most = sizes[task][source];
    }
    out[task] = {static_cast<int>(sources.size()), static_cast<int>(kinds[task][primary].size())};
  }
  return out;
}

TEST(ReportAcceptance, RealTuningRunRendersInHeadlessChromiumOffline) {
  KILN_REQUIRE_CHROMIUM(chromium);
  TempDir dir;
  const std::string db = dir.file("tune.db");
  // The model's three dense layers, both templates each: 6 tasks, 4 trials each.
  auto tuned =
      run_kiln("tune " + kMlp + " --db " + db + " --trials-per-task 4 --seed 1" + kMeasure);
  ASSERT_EQ(tuned.exit_code, 0) << tuned.output;
  // A conv whose first configs cannot build within 1 ms (BUILD_TIMEOUT records), then tuned on.
  auto failing = run_kiln("tune --workload " + kConv + " --template conv2d_NCHWc.x86 --db " + db +
                          " --trials 3 --seed 2 --build-timeout 0.001" + kMeasure);
  ASSERT_EQ(failing.exit_code, 0) << failing.output;
  auto conv = run_kiln("tune --workload " + kConv + " --template conv2d_NCHWc.x86 --db " + db +
                       " --trials 8 --seed 2" + kMeasure);
  ASSERT_EQ(conv.exit_code, 0) << conv.output;
  // A second source for one task: another store's records, as a TVM log, imported.
  const std::string other = dir.file("other.db");
  auto grid = run_kiln(
      "tune --workload dense:M=1,N=256,K=512,bias=1 --template dense_pack.x86 "
      "--db " +
      other + " --trials 4 --seed 3" + kMeasure);
  ASSERT_EQ(grid.exit_code, 0) << grid.output;
  const std::string log = dir.file("other.log");
  ASSERT_EQ(run_kiln("export --db " + other + " --format tvm -o " + log).exit_code, 0);
  auto imported = run_kiln("import " + log + " --db " + db);
  ASSERT_EQ(imported.exit_code, 0) << imported.output;

  const std::string all_html = dir.file("all.html");
  const std::string model_html = dir.file("model.html");
  auto all = run_kiln("report --db " + db + " -o " + all_html);
  ASSERT_EQ(all.exit_code, 0) << all.output;
  auto model = run_kiln("report --db " + db + " --model " + kMlp + " -o " + model_html);
  ASSERT_EQ(model.exit_code, 0) << model.output;

  for (const std::string& path : {all_html, model_html}) {
    std::string html = read_file(path);
    // Self-contained: nothing that names a place to fetch from.
    for (const char* external :
         {"http:", "https:", "//", "src=", "href=", "<link", "@import", "url(", "<script"}) {
      EXPECT_EQ(html.find(external), std::string::npos) << path << " holds " << external;
    }
    EXPECT_NE(html.find("Content-Security-Policy\" content=\"default-src &#39;none&#39;"),
              std::string::npos);
  }

  testing::ChromiumOptions offline;  // the network unusable (the default)
  const std::string png = dir.file("all.png");
  auto shot = testing::screenshot(chromium, "file://" + all_html, png, offline);
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  ASSERT_TRUE(std::filesystem::exists(png)) << shot.err;
  std::string error;
  auto stats = testing::png_stats(png, &error);
  ASSERT_TRUE(stats.has_value()) << error;
  EXPECT_EQ(stats->width, offline.width);
  EXPECT_EQ(stats->height, offline.height);
  EXPECT_GT(stats->distinct_colors, 16);  // text, lines, markers in several colours
  EXPECT_GT(stats->pixels_unlike_corner,
            static_cast<int64_t>(stats->width) * stats->height / 50);  // not a blank page

  // The whole store: each task's charts have one best line per source, and one dot series per
  // error kind of the primary source (successes count as a kind).
  auto dom = testing::dump_dom(chromium, "file://" + all_html, offline);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  std::map<std::string, Expected> expected = expected_from(db);
  auto sections = task_charts(dom.out);
  ASSERT_EQ(sections.size(), expected.size()) << dom.out.substr(0, 2000);
  int compared = 0, failures = 0;
  for (const auto& [task, want] : expected) {
    ASSERT_TRUE(sections.count(task)) << task;
    const auto& charts = sections[task];
    ASSERT_EQ(charts.size(), 2u) << task;
    EXPECT_EQ(charts[0], std::make_pair(std::string("best_vs_trials"), want.sources + want.kinds))
        << task;
    EXPECT_EQ(charts[1], std::make_pair(std::string("best_vs_time"), want.sources)) << task;
    compared += want.sources > 1;
    failures += want.kinds > 1;
  }
  EXPECT_GE(compared, 1);  // the imported log is a comparison line
  EXPECT_GE(failures, 1);  // the conv's failed configs are marked
  EXPECT_NE(dom.out.find("data-series=\"failed: BUILD_TIMEOUT\""), std::string::npos);
  EXPECT_NE(dom.out.find("data-series=\"best: import:"), std::string::npos);
  std::vector<std::pair<std::string, int>> all_charts = testing::charts_of(dom.out);
  EXPECT_EQ(all_charts.front(), std::make_pair(std::string("time_split"), 5));
  EXPECT_NE(dom.out.find("BUILD_TIMEOUT"), std::string::npos);

  // The model: its latency estimate, shares and trials, and its 6 tasks.
  auto model_dom = testing::dump_dom(chromium, "file://" + model_html, offline);
  ASSERT_EQ(model_dom.exit_code, 0) << model_dom.err;
  std::vector<std::pair<std::string, int>> model_charts = testing::charts_of(model_dom.out);
  ASSERT_GE(model_charts.size(), 4u);
  EXPECT_EQ(model_charts[0].first, "latency_vs_time");
  EXPECT_GE(model_charts[0].second, 1);
  EXPECT_EQ(model_charts[1], std::make_pair(std::string("task_share"), 1));
  EXPECT_EQ(model_charts[2], std::make_pair(std::string("trials_per_task"), 1));
  EXPECT_EQ(model_charts[3], std::make_pair(std::string("time_split"), 5));
  EXPECT_EQ(task_charts(model_dom.out).size(), 6u);
}

TEST(ReportAcceptance, BadInputIsOneLineAndANonZeroExit) {
  TempDir dir;
  auto missing = run_kiln("report --db " + dir.file("absent.db") + " -o " + dir.file("r.html"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("kiln: record store '" + dir.file("absent.db") + "': no such file"),
            std::string::npos)
      << missing.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.html")));
  const std::string db = dir.file("empty.db");
  ASSERT_TRUE(store::open_store(db).ok());
  auto job = run_kiln("report --db " + db + " --job 7 -o " + dir.file("r.html"));
  EXPECT_EQ(job.exit_code, 2);
  EXPECT_NE(job.output.find("no job 7"), std::string::npos) << job.output;
  auto both = run_kiln("report --db " + db + " --job 7 --model m.onnx -o " + dir.file("r.html"));
  EXPECT_EQ(both.exit_code, 2) << both.output;
  auto empty = run_kiln("report --db " + db + " -o " + dir.file("empty.html"));
  ASSERT_EQ(empty.exit_code, 0) << empty.output;
  EXPECT_NE(read_file(dir.file("empty.html")).find("The store holds no records"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln
