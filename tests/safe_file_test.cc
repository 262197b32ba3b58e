// common/safe_file: outputs replace only regular files, and whole; inputs are regular files of a
// bounded size. Then the same through the commands that write or read a named file.
#include "common/safe_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gtest/gtest.h"
#include "runtime/model_artifact.h"
#include "tests/hand_model.h"
#include "tests/onnx_models.h"
#include "tests/run_kiln.h"
#include "tests/temp_dir.h"
#include "tests/tvm_log_lines.h"

namespace kiln {
namespace {

using testing::run_kiln;
using testing::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool is_fifo(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

bool is_symlink(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

// Only the files the test made: no temporary left behind.
size_t entries(const std::string& dir) {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(dir),
                                           std::filesystem::directory_iterator()));
}

TEST(SafeFileWrite, ReplacesARegularFileWholeAndKeepsItsMode) {
  TempDir dir;
  const std::string path = dir.write("out.txt", "old");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  ASSERT_TRUE(write_file_atomically(path, "new content").ok());
  EXPECT_EQ(slurp(path), "new content");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(SafeFileWrite, AFailedWriterLeavesTheFileAndNoTemporary) {
  TempDir dir;
  const std::string path = dir.write("out.txt", "old");
  Status s = write_file_atomically(path, [](std::ostream& out) {
    out << "partial";
    return InvalidArgument("stopped halfway");
  });
  EXPECT_EQ(s.message(), "stopped halfway");
  EXPECT_EQ(slurp(path), "old");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(SafeFileWrite, RefusesSymlinkFifoDirectoryAndDevice) {
  TempDir dir;
  const std::string target = dir.write("target.txt", "keep");
  const std::string link = dir.file("link");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string sub = dir.file("sub");
  std::filesystem::create_directory(sub);
  struct Case {
    std::string path, kind;
  };
  std::vector<Case> cases = {{link, "a symbolic link"}, {fifo, "a FIFO"}, {sub, "a directory"}};
  // A device node of our own (as root; elsewhere mknod is refused and the case is left out).
  const std::string dev = dir.file("null");
  if (::mknod(dev.c_str(), S_IFCHR | 0600, makedev(1, 3)) == 0) {
    cases.push_back({dev, "a character device"});
  }
  for (const Case& c : cases) {
    Status s = write_file_atomically(c.path, "x");
    EXPECT_EQ(s.code(), StatusCode::kIo) << c.path;
    EXPECT_NE(s.message().find(c.path + ": refusing to write: it is " + c.kind), std::string::npos)
        << s.message();
  }
  EXPECT_TRUE(is_symlink(link));
  EXPECT_EQ(slurp(target), "keep");
  EXPECT_TRUE(is_fifo(fifo));
  EXPECT_TRUE(std::filesystem::is_directory(sub));
}

TEST(SafeFileWrite, ASymlinkPlantedAtTheTemporaryNameIsNotFollowed) {
  TempDir dir;
  const std::string victim = dir.write("victim.txt", "keep");
  const std::string path = dir.file("out.txt");
  // The first temporary name this process would use.
  const std::string planted = dir.file(".out.txt.tmp." + std::to_string(::getpid()) + ".0");
  ASSERT_EQ(::symlink(victim.c_str(), planted.c_str()), 0);
  ASSERT_TRUE(write_file_atomically(path, "new").ok());
  EXPECT_EQ(slurp(path), "new");
  EXPECT_EQ(slurp(victim), "keep");
  EXPECT_TRUE(is_symlink(planted));
}

TEST(SafeFileRead, ReadsARegularFileAndRefusesTheRest) {
  TempDir dir;
  const std::string path = dir.write("job.yaml", "name: x\n");
  Result<std::string> ok = read_regular_file(path, 100, "job file");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(*ok, "name: x\n");

  Result<std::string> big = read_regular_file(path, 4, "job file");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(big.status().message(), "job file '" + path +
                                        "': 8 bytes, more than the 4 bytes kiln reads from such "
                                        "a file");

  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Refused at once, not after waiting for a writer.
  for (const std::string& p : {fifo, std::string("/dev/zero"), dir.path()}) {
    Result<std::string> r = read_regular_file(p, 1 << 20, "job file");
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_EQ(r.status().code(), StatusCode::kIo);
    EXPECT_NE(r.status().message().find("job file '" + p + "': not a regular file"),
              std::string::npos)
        << r.status().message();
  }
  Result<std::string> missing = read_regular_file(dir.file("nope"), 10, "job file");
  EXPECT_EQ(missing.status().code(), StatusCode::kIo);
}

// ---------------------------------------------------------------------------------------------
// The commands.

// A store with one record.
std::string one_record_store(const TempDir& dir) {
  const std::string log = dir.write("d.log", store::kDenseLine + "\n");
  const std::string db = dir.file("r.db");
  testing::CommandResult r = run_kiln("import " + log + " --db " + db);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return db;
}

TEST(OutputSafetyCli, ExportAndReportWriteOnlyRegularFiles) {
  TempDir dir;
  const std::string db = one_record_store(dir);
  const std::string target = dir.write("target.txt", "keep");
  const std::string link = dir.file("link.log");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  const std::string fifo = dir.file("fifo.log");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);

  for (const std::string& out : {link, fifo}) {
    testing::CommandResult r = run_kiln("export --db " + db + " -o " + out);
    EXPECT_EQ(r.exit_code, 74) << r.output;
    EXPECT_NE(r.output.find(out + ": refusing to write: it is a"), std::string::npos) << r.output;
  }
  // (A report to the FIFO would have blocked in open() before; the symlink shows the same hole.)
  testing::CommandResult r = run_kiln("report --db " + db + " -o " + link);
  EXPECT_EQ(r.exit_code, 74) << r.output;
  EXPECT_NE(r.output.find(link + ": refusing to write: it is a symbolic link"), std::string::npos)
      << r.output;
  EXPECT_TRUE(is_symlink(link));
  EXPECT_TRUE(is_fifo(fifo));
  EXPECT_EQ(slurp(target), "keep");

  // A regular file is replaced.
  const std::string log = dir.write("out.log", "old");
  r = run_kiln("export --db " + db + " --format tvm -o " + log);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(slurp(log), store::kDenseLine + "\n");
}

TEST(OutputSafetyCli, RunOutputAndCompiledModelRefuseASymlink) {
  TempDir dir;
  const std::string model = dir.file("model.kiln");
  ASSERT_TRUE(write_model_file(testing::hand_model(false), model).ok());
  const std::string target = dir.write("target.bin", "keep");
  const std::string link = dir.file("out.bin");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  const std::string input = dir.write(
      "x.bin", std::string(reinterpret_cast<const char*>(testing::hand_model_input().data()),
                           testing::hand_model_input().size() * sizeof(float)));
  testing::CommandResult r = run_kiln("run " + model + " --input x=" + input + " -o " + link);
  EXPECT_EQ(r.exit_code, 74) << r.output;
  EXPECT_NE(r.output.find("refusing to write: it is a symbolic link"), std::string::npos)
      << r.output;
  EXPECT_EQ(slurp(target), "keep");
  // kiln compile -o, refused before it compiles.
  testing::OnnxModel m;
  m.input("x", {1, 8});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  r = run_kiln("compile " + m.write("relu") + " -o " + link);
  EXPECT_EQ(r.exit_code, 74) << r.output;
  EXPECT_NE(r.output.find(link + ": refusing to write: it is a symbolic link"), std::string::npos)
      << r.output;
  EXPECT_EQ(slurp(target), "keep");
  EXPECT_TRUE(is_symlink(link));
}

TEST(InputBoundsCli, JobAndBenchFilesMustBeSmallRegularFiles) {
  TempDir dir;
  const std::string db = one_record_store(dir);
  // /dev/null reads as empty: it was taken for a file that is "not JSON".
  testing::CommandResult r =
      run_kiln("report --db " + db + " --bench /dev/null -o " + dir.file("r.html"));
  EXPECT_EQ(r.exit_code, 74) << r.output;
  EXPECT_NE(r.output.find("bench file '/dev/null': not a regular file (it is a character device)"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.html")));

  // A job file is read whole before the daemon is asked: a huge one is refused here.
  const std::string job = dir.write("job.yaml", std::string((1 << 20) + 1, '#'));
  r = run_kiln("submit " + job + " --server 127.0.0.1:1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("job file '" + job + "': 1048577 bytes, more than the 1048576 bytes"),
            std::string::npos)
      << r.output;
  r = run_kiln("submit /dev/null --server 127.0.0.1:1");
  EXPECT_EQ(r.exit_code, 74) << r.output;
  EXPECT_NE(r.output.find("job file '/dev/null': not a regular file"), std::string::npos)
      << r.output;

  // The TVM log of `kiln import` is streamed, but from /dev/zero it would never end.
  r = run_kiln("import /dev/null --db " + db);
  EXPECT_EQ(r.exit_code, 74) << r.output;
  EXPECT_NE(r.output.find("log file '/dev/null': not a regular file"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace kiln
