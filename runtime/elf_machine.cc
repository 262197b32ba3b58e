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

// The dynamic loader maps segments straight from the file: one that reaches past the end of a
// truncated object would fault (SIGBUS) on first touch instead of failing to load.
Status check_extents(std::string_view bytes, const Elf64_Ehdr& header, const std::string& label) {
  const uint64_t size = bytes.size();
  auto fits = [&](uint64_t offset, uint64_t length) {
    return offset <= size && length <= size - offset;
  };
  auto truncated = [&](const std::string& what) {
    return InvalidArgument("artifact '" + label + "': truncated or corrupt shared object: " + what +
                           " lies beyond its " + std::to_string(size) + " bytes");
  };
  if (header.e_phentsize != sizeof(Elf64_Phdr) ||
      !fits(header.e_phoff, uint64_t{header.e_phnum} * sizeof(Elf64_Phdr))) {
    return truncated("the program header table");
  }
  if (header.e_shoff != 0 &&
      !fits(header.e_shoff, uint64_t{header.e_shnum} * uint64_t{header.e_shentsize})) {
    return truncated("the section header table");
  }
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, bytes.data() + header.e_phoff + i * sizeof(Elf64_Phdr), sizeof ph);
    if (ph.p_type != PT_NULL && !fits(ph.p_offset, ph.p_filesz)) {
      return truncated("segment " + std::to_string(i) + " (bytes " + std::to_string(ph.p_offset) +
                       " + " + std::to_string(ph.p_filesz) + ")");
    }
  }
  return Status::Ok();
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
  return check_extents(bytes, header, label);
}

}  // namespace kiln
