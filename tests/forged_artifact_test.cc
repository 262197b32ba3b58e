// End to end: `kiln run` on compiled models whose header (or shared object) was rewritten and
// whose SHA-256 trailer was recomputed, as a forger would: every one is refused with exit 2 and
// the reason, never a crash (the checksum proves nothing, so the header is checked against the
// code and the machine).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/model_artifact.h"
#include "tests/hand_model.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

using testing::hand_model;
using testing::run_kiln;
using testing::TempDir;

void expect_refused(const TempDir& dir, const std::string& file, const ModelArtifact& forged,
                    const std::string& problem) {
  SCOPED_TRACE(file);
  // serialize_model recomputes the trailer exactly as the format defines it.
  const std::string path = dir.write(file, serialize_model(forged));
  for (const char* command : {"run", "bench"}) {
    auto r = run_kiln(std::string(command) + " " + path);
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.output;
    EXPECT_NE(r.output.find(path + ": "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(problem), std::string::npos) << r.output;
  }
}

TEST(ForgedArtifact, HugeInputShapeIsRefusedBeforeAllocating) {
  TempDir dir("kiln_forged");
  ModelArtifact m = hand_model();
  m.values[0].shape = {int64_t{1} << 40};
  expect_refused(dir, "huge.kiln", m, "more than this machine's");
}

TEST(ForgedArtifact, StepBuffersThatDoNotMatchTheCodeAreRefused) {
  TempDir dir("kiln_forged");
  ModelArtifact shortened = hand_model();
  shortened.steps[0].buffers = {0, 1};  // "add" writes its third buffer
  expect_refused(dir, "shortened.kiln", shortened, "passes no value as buffer 2");

  ModelArtifact none = hand_model();
  for (ModelStep& step : none.steps) step.buffers.assign(step.buffers.size(), -1);
  expect_refused(dir, "none.kiln", none, "passes no value as buffer 0");

  ModelArtifact tiny = hand_model();
  tiny.values[2].shape = {1};  // t1, which step 0 writes 1024 floats of
  expect_refused(dir, "tiny.kiln", tiny, "('t1') of 1 floats as buffer 2");
}

TEST(ForgedArtifact, TruncatedSharedObjectIsRefused) {
  TempDir dir("kiln_forged");
  ModelArtifact m = hand_model();
  m.shared_object.resize(m.shared_object.size() / 2);
  expect_refused(dir, "half.kiln", m, "truncated or corrupt shared object");
}

}  // namespace
}  // namespace kiln
