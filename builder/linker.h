// Object -> loadable shared object, with lld linked into the process (about a millisecond per
// link, where spawning the linker costs ~100 ms).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kiln::builder {

// Links one ELF relocatable object into a shared object and returns its bytes. Uses a private
// temporary directory that is removed before returning. Thread-safe (lld keeps global state,
// so links are serialized).
Result<std::string> link_shared_object(std::string_view object);
// Links several objects (a compiled model's kernels) into one shared object; their exported
// symbols must be distinct.
Result<std::string> link_shared_object(const std::vector<std::string_view>& objects);

}  // namespace kiln::builder
