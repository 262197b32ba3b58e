// Reading and writing the files a user names on the command line, safely.
//
// Writes: the file at `path` ends up either untouched or holding the whole new content (written
// to a temporary file in the same directory, synced, then renamed over it). Only a regular file
// is ever replaced: a symlink, FIFO, device node, socket or directory at `path` is refused with
// kIo and says what it is (a rename would silently replace it: `-o /dev/full` once replaced the
// device). The temporary file is created with O_EXCL | O_NOFOLLOW, so a file or symlink planted
// at its name is never followed or reused. A replaced file keeps its permission bits.
//
// Reads: only a regular file (a symlink to one is fine) of at most `max_bytes` is read whole; a
// FIFO, device or directory is kIo, like a file that cannot be opened, and a larger file is
// kInvalidArgument naming the file and the limit (`kiln submit /dev/zero` once read until memory
// ran out).
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include "common/status.h"

namespace kiln {

// Calls `write` with a stream into the temporary file, then replaces `path` with it. A failed
// Status from `write`, or a failed stream, leaves `path` untouched (and no temporary behind);
// `write`'s own Status is returned as it is.
Status write_file_atomically(const std::string& path,
                             const std::function<Status(std::ostream&)>& write);
Status write_file_atomically(const std::string& path, std::string_view content);

// kOk when `path` may be written by write_file_atomically: absent, or a regular file (not a
// symlink); else the kIo error it would return. Lets a command refuse before long work.
Status check_writable_path(const std::string& path);

// What is at `path` when it is there and not a regular file ("a directory", "a symbolic link",
// "a FIFO", "a character device", ...); empty when it is absent or a regular file.
std::string non_regular_file_kind(const std::string& path);

// The whole content of the regular file at `path`. `what` names the file's role in messages
// ("job file", "bench file"): "job file '/dev/zero': not a regular file (a character device)".
Result<std::string> read_regular_file(const std::string& path, int64_t max_bytes,
                                      std::string_view what);

// kOk when `path` is a regular file that can be opened for reading (for readers that stream a
// file rather than read it whole); else the error read_regular_file would return.
Status check_readable_regular_file(const std::string& path, std::string_view what);

}  // namespace kiln
