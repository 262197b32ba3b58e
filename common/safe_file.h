// Safe atomic write of a regular file: the whole text or nothing at a path, never through a
// link another user planted.
//
// The text goes to a new temporary file in the target's directory, created with O_CREAT |
// O_EXCL | O_NOFOLLOW (so a symlink or any file already at that name is never followed or
// reused), flushed to disk, then renamed over the target. The target must be absent or a regular
// file: a directory, a symlink, a FIFO or a device is refused (kIo, naming it and what it is)
// and left as it is. On failure the temporary file is removed and the target is untouched.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace kiln {

Status write_regular_file_atomically(const std::string& path, std::string_view data);

// What is at `path` when it is there and not a regular file ("a directory", "a symbolic link",
// "a FIFO", "a device", "a socket"); empty when it is absent or a regular file.
std::string non_regular_file_kind(const std::string& path);

}  // namespace kiln
