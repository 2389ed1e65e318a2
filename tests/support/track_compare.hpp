// Field-by-field comparison of tracker outputs, for the tests that hold the CUDA backend to the CPU reference
// (tests/track/test_lk_cuda.cpp, test_feature_tracker_cuda.cpp, test_multi_camera_tracker.cpp) and the CPU
// tests that compare two runs. Every field of LkResult (x, y, gain, offset, residual, iterations, status) and
// of Track (id, x, y, prev_x, prev_y, age, gain, offset, residual, status, score, level) is compared; floats by
// their bit patterns, so that a one-ulp difference (or +0 against -0, or two different NaNs) is a mismatch.
//
// Where the backends are held to bit identity: on x86-64 hosts (docs/tracker.md, "CPU/GPU agreement"). On other
// hosts the floats are compared within the stated tolerance (positions and prev_x/prev_y 1e-3 px, gain and
// offset 1e-4, residual 1e-3 grey levels; the integer fields, the status and the detection score exactly).
// tests/track/test_track_compare.cpp shows that a one-ulp change of any field is caught.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kestrel/feature_tracker.hpp"
#include "kestrel/lk_types.hpp"

namespace kestrel::test {

#if defined(__x86_64__) || defined(_M_X64)
inline constexpr bool kBitExactHost = true;
#else
inline constexpr bool kBitExactHost = false;
#endif

inline bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

inline std::string float_text(float v) {
    std::uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.9g (0x%08x)", static_cast<double>(v), static_cast<unsigned>(u));
    return buf;
}

/// Appends "name: a vs b" to out when the floats differ (bit patterns; or beyond tol where bit_exact is false).
inline void diff_float(std::string& out, const char* name, float a, float b, bool bit_exact, float tol) {
    const bool same = bit_exact ? same_bits(a, b) : (a == b || std::fabs(a - b) <= tol || (std::isnan(a) && std::isnan(b)));
    if (!same) out += std::string(out.empty() ? "" : "; ") + name + " " + float_text(a) + " vs " + float_text(b);
}

template <typename T>
inline void diff_exact(std::string& out, const char* name, const T& a, const T& b) {
    if (!(a == b))
        out += std::string(out.empty() ? "" : "; ") + name + " " + std::to_string(static_cast<long long>(a)) + " vs " +
               std::to_string(static_cast<long long>(b));
}

/// Empty when the two results agree in every field; else the fields that differ, first value `a`'s.
inline std::string lk_result_diff(const LkResult& a, const LkResult& b, bool bit_exact = kBitExactHost) {
    std::string d;
    if (a.status != b.status)
        d += std::string("status ") + to_string(a.status) + " vs " + to_string(b.status);
    diff_float(d, "x", a.x, b.x, bit_exact, 1e-3f);
    diff_float(d, "y", a.y, b.y, bit_exact, 1e-3f);
    diff_float(d, "gain", a.gain, b.gain, bit_exact, 1e-4f);
    diff_float(d, "offset", a.offset, b.offset, bit_exact, 1e-4f);
    diff_float(d, "residual", a.residual, b.residual, bit_exact, 1e-3f);
    diff_exact(d, "iterations", a.iterations, b.iterations);
    return d;
}

/// Empty when the two tracks agree in every field; else the fields that differ, first value `a`'s.
inline std::string track_diff(const Track& a, const Track& b, bool bit_exact = kBitExactHost) {
    std::string d;
    diff_exact(d, "id", a.id, b.id);
    if (a.status != b.status)
        d += std::string(d.empty() ? "" : "; ") + "status " + to_string(a.status) + " vs " + to_string(b.status);
    diff_exact(d, "age", a.age, b.age);
    diff_exact(d, "level", a.level, b.level);
    diff_float(d, "x", a.x, b.x, bit_exact, 1e-3f);
    diff_float(d, "y", a.y, b.y, bit_exact, 1e-3f);
    diff_float(d, "prev_x", a.prev_x, b.prev_x, bit_exact, 1e-3f);
    diff_float(d, "prev_y", a.prev_y, b.prev_y, bit_exact, 1e-3f);
    diff_float(d, "gain", a.gain, b.gain, bit_exact, 1e-4f);
    diff_float(d, "offset", a.offset, b.offset, bit_exact, 1e-4f);
    diff_float(d, "residual", a.residual, b.residual, bit_exact, 1e-3f);
    diff_float(d, "score", a.score, b.score, true, 0.0f);  // the detector's score is exact on every host
    return d;
}

/// The number of entries of a and b (same size expected) that differ in some field; reports the first
/// `report` of them (index and fields) through `fail` (e.g. a lambda calling ADD_FAILURE()).
template <typename T, typename Diff, typename Fail>
int count_mismatches(const std::vector<T>& a, const std::vector<T>& b, Diff diff, Fail fail, int report = 5) {
    if (a.size() != b.size()) {
        fail("sizes differ: " + std::to_string(a.size()) + " vs " + std::to_string(b.size()));
        return static_cast<int>(a.size() > b.size() ? a.size() : b.size());
    }
    int bad = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const std::string d = diff(a[i], b[i]);
        if (!d.empty() && ++bad <= report) fail("entry " + std::to_string(i) + ": " + d);
    }
    return bad;
}

/// Every field of every track equal (bit_exact: by the bits, else the tolerance above); each difference (at most
/// five) is a test failure naming `what`.
inline void expect_same_tracks(const std::vector<Track>& a, const std::vector<Track>& b, bool bit_exact,
                               const std::string& what) {
    const int bad = count_mismatches(
        a, b, [&](const Track& x, const Track& y) { return track_diff(x, y, bit_exact); },
        [&](const std::string& m) { ADD_FAILURE() << what << ": " << m; });
    EXPECT_EQ(bad, 0) << what;
}

}  // namespace kestrel::test
