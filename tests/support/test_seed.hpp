// Seeds of the randomized tests. A test declares its generator with KESTREL_TEST_RNG(rng, base): it draws from
// base + KESTREL_TEST_SEED (an environment variable, a non-negative integer, default 0), so that the same test can
// run on other draws (tests/CMakeLists.txt sweeps the geometry properties over several offsets), and every failure
// in the test prints the seed and how to run it again.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>

namespace kestrel::test {

/// KESTREL_TEST_SEED (0 when unset). Throws on a value that is not a non-negative integer.
inline std::uint64_t seed_offset() {
    const char* v = std::getenv("KESTREL_TEST_SEED");
    if (v == nullptr || *v == '\0') return 0;
    char* end = nullptr;
    const unsigned long long s = std::strtoull(v, &end, 10);
    if (*end != '\0' || *v == '-') throw std::invalid_argument(std::string("KESTREL_TEST_SEED='") + v + "' is not a non-negative integer");
    return s;
}

struct TestSeed {
    std::uint64_t base, value;
    explicit TestSeed(std::uint64_t b) : base(b), value(b + seed_offset()) {}
    std::string note() const {
        return "random seed " + std::to_string(value) + " (the test's " + std::to_string(base) +
               " + KESTREL_TEST_SEED " + std::to_string(value - base) + "; run again with KESTREL_TEST_SEED=" +
               std::to_string(value - base) + ")";
    }
};

}  // namespace kestrel::test

/// Declares `std::mt19937_64 name` seeded with base + KESTREL_TEST_SEED; failures in the enclosing scope print
/// the seed.
#define KESTREL_TEST_RNG(name, base)                      \
    const ::kestrel::test::TestSeed name##_seed(base);     \
    SCOPED_TRACE(name##_seed.note());                     \
    std::mt19937_64 name(name##_seed.value)
