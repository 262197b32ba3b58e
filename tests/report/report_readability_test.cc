// kiln report read at a glance (issue 24): rendered in headless Chromium, no text of any chart
// leaves its chart's box (long conv task labels wrap instead of being clipped on the left), and
// a model's report shows its untuned latency as the chart's baseline, each task's speedup over
// its default config and what to tune next. The page is checked by a script the test adds to a
// copy of it (the report itself runs none: its CSP forbids scripts, and the copy drops that
// line), which measures every <text> of every chart after layout.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/run_kiln.h"
#include "tests/support/headless_chromium.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

using testing::run_kiln;
using testing::TempDir;

const std::string kModels = std::string(KILN_SHARED_DIR) + "/models";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr const char* kOverflowCheck = R"(<script>
var texts = document.querySelectorAll('svg.chart text'), bad = [];
texts.forEach(function (t) {
  var r = t.getBoundingClientRect(), s = t.ownerSVGElement.getBoundingClientRect();
  if (r.width > 0 && (r.left < s.left - 0.5 || r.right > s.right + 0.5 ||
                      r.top < s.top - 0.5 || r.bottom > s.bottom + 0.5)) {
    bad.push(t.textContent);
  }
});
var p = document.createElement('pre');
p.id = 'overflow-check';
p.textContent = bad.length + ' of ' + texts.length + ' texts overflow' +
                (bad.length ? ': ' + bad.join(' | ') : '');
document.body.appendChild(p);
</script>)";

// The rendered DOM of `html` with the overflow check run on it.
std::string checked_dom(const std::string& chromium, const std::string& html,
                        const std::string& copy) {
  std::string page = read_file(html);
  page = std::regex_replace(page, std::regex("<meta http-equiv=\"Content-Security-Policy\"[^>]*>"),
                            "");
  page.insert(page.rfind("</body>"), kOverflowCheck);
  std::ofstream(copy) << page;
  testing::ChromiumRun dom = testing::dump_dom(chromium, "file://" + copy);
  EXPECT_EQ(dom.exit_code, 0) << dom.err;
  return dom.out;
}

// "0 of N texts overflow" with N > 0, else the texts that do.
void expect_nothing_overflows(const std::string& dom, const std::string& what) {
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("<pre id=\"overflow-check\">([^<]*)</pre>")))
      << what << ": the check did not run";
  const std::string result = m[1];
  EXPECT_TRUE(std::regex_match(result, std::regex("0 of [1-9][0-9]* texts overflow")))
      << what << ": " << result;
}

TEST(ReportReadability, LabelsFitAndTheModelSaysWhatTuningGained) {
  KILN_REQUIRE_CHROMIUM(chromium);
  if (!std::filesystem::exists(kModels + "/mlp/mlp.onnx")) GTEST_SKIP() << "no " << kModels;
  TempDir dir;
  const std::string db = dir.file("tune.db");
  auto tuned = run_kiln("tune " + kModels + "/mlp/mlp.onnx --db " + db +
                        " --trials-per-task 3 --seed 1 --tuner random --no-transfer --number 1 "
                        "--repeat 1 --cooldown-interval 0 --threads 1");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.output;
  const std::string mlp_html = dir.file("mlp.html"), resnet_html = dir.file("resnet.html");
  ASSERT_EQ(run_kiln("report --db " + db + " --model " + kModels + "/mlp/mlp.onnx -o " + mlp_html)
                .exit_code,
            0);
  // ResNet-18's conv tasks have the longest labels; none is measured in this store.
  auto resnet = run_kiln("report --db " + db + " --model " + kModels +
                         "/resnet18/resnet18.onnx -o " + resnet_html);
  ASSERT_EQ(resnet.exit_code, 0) << resnet.output;

  const std::string mlp = checked_dom(chromium, mlp_html, dir.file("mlp-check.html"));
  expect_nothing_overflows(mlp, "the MLP's report");
  // Every task's default config was measured first: the untuned latency is the chart's
  // baseline, the table has each task's speedup, and the page says what to tune next.
  EXPECT_NE(mlp.find("data-series=\"untuned (default configs)\""), std::string::npos);
  EXPECT_NE(mlp.find("<span id=\"untuned-latency\">"), std::string::npos);
  EXPECT_TRUE(std::regex_search(mlp, std::regex("<td class=\"speedup\">[0-9.]+×</td>"))) << mlp;
  EXPECT_NE(mlp.find("<b>Next:</b> most of the estimated latency is in"), std::string::npos);
  EXPECT_EQ(mlp.find("partial estimate"), std::string::npos);

  const std::string conv = checked_dom(chromium, resnet_html, dir.file("resnet-check.html"));
  expect_nothing_overflows(conv, "ResNet-18's report");
  // Whole template names are drawn (wrapped), in both bar charts.
  std::regex first_line("<tspan x=\"[0-9.]+\">conv2d_NCHWc\\.x86 ");
  EXPECT_GE(std::distance(std::sregex_iterator(conv.begin(), conv.end(), first_line),
                          std::sregex_iterator()),
            2)
      << conv.substr(0, 4000);
  EXPECT_NE(conv.find("tasks have no measurement yet"), std::string::npos);
}

}  // namespace
}  // namespace kiln
