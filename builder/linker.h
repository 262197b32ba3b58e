// Object -> loadable shared object, with lld linked into the process (about a millisecond per
// link, where spawning the linker costs ~100 ms).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace kiln::builder {

// Links one ELF relocatable object into a shared object and returns its bytes. Uses a private
// temporary directory that is removed before returning. Thread-safe (lld keeps global state,
// so links are serialized).
Result<std::string> link_shared_object(std::string_view object);

}  // namespace kiln::builder
