#include "runtime/elf_machine.h"

#include <elf.h>

#include <cstring>

namespace kiln {

namespace {

std::string machine_name(uint16_t machine) {
  switch (machine) {
    case EM_X86_64:
      return "x86_64";
    case EM_AARCH64:
      return "aarch64";
    case EM_386:
      return "i386";
    case EM_ARM:
      return "arm";
    case EM_RISCV:
      return "riscv";
    case EM_PPC64:
      return "ppc64";
    default:
      return "ELF machine " + std::to_string(machine);
  }
}

uint16_t host_machine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#else
#error "kiln runs kernels on x86-64 and aarch64 hosts only"
#endif
}

}  // namespace

Result<std::string> elf_machine_name(std::string_view bytes) {
  if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) {
    return InvalidArgument("not an ELF file (" + std::to_string(bytes.size()) + " bytes)");
  }
  // e_machine sits at the same offset in 32- and 64-bit headers; both byte orders are read so
  // that a big-endian object is named rather than mistaken for another machine.
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  uint16_t machine = header.e_machine;
  if (header.e_ident[EI_DATA] == ELFDATA2MSB)
    machine = static_cast<uint16_t>(machine >> 8 | machine << 8);
  return machine_name(machine);
}

std::string host_machine_name() { return machine_name(host_machine()); }

Status check_runs_here(std::string_view bytes, const std::string& label) {
  Result<std::string> machine = elf_machine_name(bytes);
  if (!machine.ok()) return RuntimeError("artifact '" + label + "': " + machine.status().message());
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  if (*machine != host_machine_name()) {
    return RuntimeError("artifact '" + label + "': code for " + *machine + "; this machine runs " +
                        host_machine_name());
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) {
    return RuntimeError("artifact '" + label + "': not a 64-bit little-endian ELF object");
  }
  if (header.e_type != ET_DYN) {
    return RuntimeError("artifact '" + label + "': not a shared object (ELF type " +
                        std::to_string(header.e_type) + ")");
  }
  return Status::Ok();
}

}  // namespace kiln
