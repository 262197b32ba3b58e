// End-to-end tests of `kiln run` and `kiln bench` on a hand-made compiled model
// (tests/hand_model.h) written to a temporary file.
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model_artifact.h"
#include "tests/hand_model.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"

namespace kiln {
namespace {

using testing::hand_model;
using testing::hand_model_expected_out;
using testing::hand_model_expected_t5;
using testing::hand_model_input;
using testing::kN;
using testing::run_kiln;
using testing::TempDir;

std::string FloatBytes(const std::vector<float>& v) {
  std::string bytes(v.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

std::vector<float> ReadFloats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

// A temp dir holding model.kiln (the hand model) and x.bin (its input).
struct Fixture {
  TempDir dir{"kiln_run_cli"};
  std::string model, input;
  explicit Fixture(bool second_output = false) {
    model = dir.file("model.kiln");
    EXPECT_TRUE(write_model_file(hand_model(second_output), model).ok());
    input = dir.write("x.bin", FloatBytes(hand_model_input()));
  }
};

TEST(RunCliTest, RunPrintsChecksumsAndWritesTheOutput) {
  Fixture f;
  const std::string out = f.dir.file("out.bin");
  auto r =
      run_kiln("run " + f.model + " --input x=" + f.input + " --output " + out + " --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<float> want = hand_model_expected_out(hand_model_input());
  double sum = 0;
  for (float v : want) sum += v;
  EXPECT_NE(r.output.find("output 0 'out' shape 1024: sum "), std::string::npos) << r.output;
  char sum_text[64];
  std::snprintf(sum_text, sizeof sum_text, "sum %.6g ", sum);
  EXPECT_NE(r.output.find(sum_text), std::string::npos) << sum_text << "\n" << r.output;
  EXPECT_EQ(ReadFloats(out), want);

  // FILE alone names the only input.
  const std::string out2 = f.dir.file("out2.bin");
  r = run_kiln("run " + f.model + " --input " + f.input + " -o " + out2);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadFloats(out2), want);
}

TEST(RunCliTest, SeveralOutputsGoToNamedFiles) {
  Fixture f(/*second_output=*/true);
  auto r =
      run_kiln("run " + f.model + " --input x=" + f.input + " --output " + f.dir.file("res.bin"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("output 1 't5v' shape 16x64"), std::string::npos) << r.output;
  EXPECT_EQ(ReadFloats(f.dir.file("res.out.bin")), hand_model_expected_out(hand_model_input()));
  EXPECT_EQ(ReadFloats(f.dir.file("res.t5v.bin")), hand_model_expected_t5(hand_model_input()));
}

TEST(RunCliTest, BadInputsAreExit2) {
  Fixture f;
  const std::string short_file = f.dir.write("short.bin", std::string(100, '\0'));
  auto r = run_kiln("run " + f.model + " --input x=" + short_file);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("'" + short_file + "' has 100 bytes, expected 4096"), std::string::npos)
      << r.output;

  r = run_kiln("run " + f.model + " --input y=" + f.input);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no input 'y'; its inputs are x (1024)"), std::string::npos) << r.output;

  r = run_kiln("run " + f.model);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("input 'x' is not given"), std::string::npos) << r.output;

  r = run_kiln("run " + f.model + " --input x=" + f.dir.file("absent.bin"));
  EXPECT_EQ(r.exit_code, 74) << r.output;
  EXPECT_NE(r.output.find("absent.bin"), std::string::npos) << r.output;

  r = run_kiln("run " + f.model + " --input x=" + f.dir.path());  // a directory
  EXPECT_EQ(r.exit_code, 74) << r.output;

  r = run_kiln("run " + f.model + " --input x=" + f.input + " --threads 0");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST(RunCliTest, BadArtifactsAreRejected) {
  Fixture f;
  std::ifstream in(f.model, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  struct Case {
    const char* file;
    std::string contents;
    const char* problem;
  };
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 1;
  ModelArtifact foreign = hand_model();
  foreign.target = "llvm -mtriple=aarch64-linux-gnu";
  ModelArtifact avx9000 = hand_model();
  avx9000.cpu_features = {"avx9000"};
  const Case cases[] = {
      {"truncated.kiln", bytes.substr(0, bytes.size() - 100), "truncated"},
      {"flipped.kiln", flipped, "checksum mismatch"},
      {"text.kiln", "hello", "not a kiln model"},
      {"foreign.kiln", serialize_model(foreign), "foreign target"},
      {"avx9000.kiln", serialize_model(avx9000), "'avx9000', which is unknown to this kiln"},
  };
  for (const Case& c : cases) {
    const std::string path = f.dir.write(c.file, c.contents);
    for (const char* command : {"run", "bench"}) {
      auto r = run_kiln(std::string(command) + " " + path + " --input x=" + f.input);
      EXPECT_EQ(r.exit_code, 2) << c.file << " " << command << ": " << r.output;
      EXPECT_NE(r.output.find(path + ": "), std::string::npos) << r.output;
      EXPECT_NE(r.output.find(c.problem), std::string::npos) << r.output;
    }
  }
  auto r = run_kiln("run " + f.dir.file("absent.kiln"));
  EXPECT_EQ(r.exit_code, 74) << r.output;
  r = run_kiln("run " + f.dir.path());  // a directory
  EXPECT_EQ(r.exit_code, 74) << r.output;
}

TEST(RunCliTest, BenchReportsTimesAndArena) {
  Fixture f;
  auto r = run_kiln("bench " + f.model + " --threads 2 --repeat 7 --warmup 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("6 steps, 2 threads, 7 runs after 1 warm-up"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("mean "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" median "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" min "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("arena 12288 bytes (without reuse 24576 bytes)"), std::string::npos)
      << r.output;
  r = run_kiln("bench " + f.model + " --input x=" + f.input + " --repeat 2 --warmup 0");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_kiln("bench " + f.model + " --repeat 0");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

}  // namespace
}  // namespace kiln
