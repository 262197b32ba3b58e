#include "builder/linker.h"

#include <lld/Common/Driver.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>

LLD_HAS_DRIVER(elf)

namespace kiln::builder {

namespace {

// A directory that exists for the lifetime of this object.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln-link-XXXXXX").string();
    if (mkdtemp(pattern.data())) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

Result<std::string> link_shared_object(std::string_view object) {
  return link_shared_object(std::vector<std::string_view>{object});
}

Result<std::string> link_shared_object(const std::vector<std::string_view>& objects) {
  TempDir dir;
  if (dir.path().empty()) return IoError("cannot create a temporary directory for linking");
  std::vector<std::string> inputs;
  for (size_t i = 0; i < objects.size(); ++i) {
    std::string in = dir.path() + "/kernel" + std::to_string(i) + ".o";
    std::ofstream f(in, std::ios::binary);
    f.write(objects[i].data(), static_cast<std::streamsize>(objects[i].size()));
    if (!f) return IoError("cannot write " + in);
    inputs.push_back(std::move(in));
  }
  std::string out = dir.path() + "/kernel.so";
  std::string log;
  llvm::raw_string_ostream log_stream(log);
  int code = 0;
  {
    static std::mutex lld_mutex;  // lld's global state allows one link at a time
    std::lock_guard<std::mutex> lock(lld_mutex);
    // --threads=1: lld's worker threads would not survive fork() into builder processes (a child
    // of a process that had linked before would wait forever on threads it does not have).
    std::vector<const char*> args = {"ld.lld", "-shared", "--threads=1", "--hash-style=gnu", "-O1"};
    for (const std::string& in : inputs) args.push_back(in.c_str());
    args.push_back("-o");
    args.push_back(out.c_str());
    lld::Result r = lld::lldMain(args, log_stream, log_stream, {{lld::Gnu, &lld::elf::link}});
    code = r.retCode;
  }
  if (code != 0) return CompileError("lld failed (exit " + std::to_string(code) + "): " + log);
  std::ifstream f(out, std::ios::binary);
  if (!f) return IoError("lld produced no output " + out);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace kiln::builder
