// Shared by the libFuzzer targets: turns the fuzzer's bytes into sizes, parameters and pixels, and
// the checks every target applies (an invariant that fails aborts, which libFuzzer reports as a crash).
//
// Parameters are drawn so that both sides of every documented bound get exercised: param(lo, hi)
// is usually a value in [lo - 2, hi + 2], sometimes an arbitrary 32-bit integer; fparam adds NaN,
// infinities, -0, denormals and arbitrary bit patterns. Bytes past the end read as 0, so every input
// (including the empty one) is valid.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "kestrel/error.hpp"
#include "kestrel/image.hpp"

#define FUZZ_CHECK(cond)                                                                     \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            std::fprintf(stderr, "FUZZ_CHECK failed: %s at %s:%d\n", #cond, __FILE__, __LINE__); \
            std::abort();                                                                    \
        }                                                                                    \
    } while (0)

namespace kestrel::fuzz {

class Input {
public:
    Input(const std::uint8_t* data, std::size_t size) : p_(data), n_(size) {}

    std::uint8_t byte() { return pos_ < n_ ? p_[pos_++] : 0; }
    std::uint16_t u16() { return static_cast<std::uint16_t>(byte() | (byte() << 8)); }
    std::uint32_t u32() { return static_cast<std::uint32_t>(u16()) | (static_cast<std::uint32_t>(u16()) << 16); }
    bool flag() { return byte() & 1u; }

    /// Uniform-ish integer in [lo, hi] (always in range).
    int range(int lo, int hi) {
        const std::uint32_t span = static_cast<std::uint32_t>(hi - lo) + 1u;
        return lo + static_cast<int>(u16() % span);
    }

    /// A parameter documented as [lo, hi]: mostly in [lo - 2, hi + 2], 1/16 of the time any int32.
    int param(int lo, int hi) {
        const std::uint8_t sel = byte();
        if ((sel & 0x0F) == 0x0F) {
            std::int32_t v;
            const std::uint32_t u = u32();
            std::memcpy(&v, &u, sizeof v);
            return v;
        }
        const long long a = static_cast<long long>(lo) - 2, b = static_cast<long long>(hi) + 2;
        return static_cast<int>(a + static_cast<long long>(u16() % static_cast<std::uint32_t>(b - a + 1)));
    }

    /// A float parameter documented in [lo, hi]: mostly in [lo - 10%, hi + 10%], else special values.
    float fparam(float lo, float hi) {
        const std::uint8_t sel = byte() & 0x0F;
        switch (sel) {
            case 0: return std::numeric_limits<float>::quiet_NaN();
            case 1: return std::numeric_limits<float>::infinity();
            case 2: return -std::numeric_limits<float>::infinity();
            case 3: return -0.0f;
            case 4: return std::numeric_limits<float>::denorm_min();
            case 5: return lo;
            case 6: return hi;
            case 7: {
                float f;
                const std::uint32_t u = u32();
                std::memcpy(&f, &u, sizeof f);
                return f;
            }
            default: {
                const float margin = 0.1f * (hi - lo);
                const float t = static_cast<float>(u16()) / 65535.0f;
                return (lo - margin) + t * ((hi - lo) + 2.0f * margin);
            }
        }
    }

    /// Fills w x h pixels (pitch >= w). A mode byte picks the content: 0 the remaining bytes repeated
    /// cyclically (all 0 when none are left); 1 random blocks of side 1..8 plus noise (corner-rich,
    /// from a 32-bit seed); 2 those blocks XOR the remaining bytes. Pitch padding gets 0xCD (must
    /// never be read as image).
    void fill(std::uint8_t* dst, int w, int h, std::size_t pitch) {
        const int mode = byte() % 3;
        const int block = 1 + byte() % 8, noise = byte() % 32;
        std::uint32_t seed = u32() | 1u;
        const std::size_t left = pos_ < n_ ? n_ - pos_ : 0;
        std::size_t i = 0;
        for (int y = 0; y < h; ++y) {
            std::uint8_t* row = dst + static_cast<std::size_t>(y) * pitch;
            for (int x = 0; x < w; ++x) {
                const std::uint8_t raw = left ? p_[pos_ + (i++ % left)] : 0;
                if (mode == 0) {
                    row[x] = raw;
                    continue;
                }
                std::uint32_t b = static_cast<std::uint32_t>(x / block) * 73856093u ^
                                  static_cast<std::uint32_t>(y / block) * 19349663u ^ seed;
                b = (b ^ (b >> 13)) * 0x5bd1e995u;
                seed ^= seed << 13;  // xorshift32 noise
                seed ^= seed >> 17;
                seed ^= seed << 5;
                const int jitter = noise ? static_cast<int>(seed % (2u * noise + 1u)) - noise : 0;
                const int v = static_cast<int>((b >> 8) & 0xFF) + jitter;
                const std::uint8_t px = static_cast<std::uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
                row[x] = mode == 1 ? px : static_cast<std::uint8_t>(px ^ raw);
            }
            for (std::size_t x = static_cast<std::size_t>(w); x < pitch; ++x) row[x] = 0xCD;
        }
    }

private:
    const std::uint8_t* p_;
    std::size_t n_;
    std::size_t pos_ = 0;
};

/// Every InvalidArgument must name its parameter in the message, and say where it came from.
inline void check_message(const InvalidArgument& e) {
    FUZZ_CHECK(!e.parameter().empty());
    FUZZ_CHECK(std::strstr(e.what(), e.parameter().c_str()) != nullptr);
    FUZZ_CHECK(std::strncmp(e.what(), "kestrel: ", 9) == 0);
}

}  // namespace kestrel::fuzz
