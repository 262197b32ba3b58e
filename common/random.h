// Portable random draws for everything seeded in kiln (config sampling, tuners, model shuffles).
// Only raw mt19937_64 output is used, so a seed gives the same sequence with every standard
// library (std::uniform_*_distribution are implementation-defined).
#pragma once

#include <cstdint>
#include <random>

namespace kiln {

// Uniform in [0, n). REQUIRES n >= 1.
inline uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  // Draws below 2^64 mod n would make small residues more likely: redraw them.
  const uint64_t threshold = (0 - n) % n;
  while (true) {
    const uint64_t x = rng();
    if (x >= threshold) return x % n;
  }
}

// Uniform in [0, 1), with 53 random bits.
inline double uniform_unit(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

}  // namespace kiln
