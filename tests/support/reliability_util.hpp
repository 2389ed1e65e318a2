// Test helpers of the reliability suites (tests/test_reliability*.cpp, tests/track/test_bad_input_tracker.cpp):
// frames of the real vtest.avi sequence, exact comparison of track lists, a CUDA stream owned by the
// test, and running bodies on host threads with their exceptions brought back.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "kestrel/feature_tracker.hpp"
#include "test_data.hpp"

namespace kestrel::test {

/// The first `n` frames of the vtest.avi sequence (768x576), loaded once; `n` at most 60.
inline const std::vector<HostImage>& sequence(std::size_t n) {
    static std::vector<HostImage> frames;
    if (frames.size() < n) {
        const auto names = sequence_frame_names();
        for (std::size_t i = frames.size(); i < n && i < names.size(); ++i) frames.push_back(real_image(names[i]));
    }
    return frames;
}

/// Bit-exact equality of two track lists (ids, ages, positions, illumination, status).
inline bool same_tracks(const std::vector<Track>& a, const std::vector<Track>& b, std::string* why = nullptr) {
    if (a.size() != b.size()) {
        if (why) *why = "sizes " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        const Track &p = a[i], &q = b[i];
        const float fp[7] = {p.x, p.y, p.prev_x, p.prev_y, p.gain, p.offset, p.residual};
        const float fq[7] = {q.x, q.y, q.prev_x, q.prev_y, q.gain, q.offset, q.residual};
        if (p.id != q.id || p.age != q.age || p.status != q.status || p.level != q.level ||
            std::memcmp(fp, fq, sizeof fp) != 0) {
            if (why)
                *why = "track " + std::to_string(i) + ": id " + std::to_string(p.id) + " (" + std::to_string(p.x) +
                       ", " + std::to_string(p.y) + ") vs id " + std::to_string(q.id) + " (" + std::to_string(q.x) +
                       ", " + std::to_string(q.y) + ")";
            return false;
        }
    }
    return true;
}

inline void expect_same_tracks(const std::vector<Track>& a, const std::vector<Track>& b, const std::string& what) {
    std::string why;
    EXPECT_TRUE(same_tracks(a, b, &why)) << what << ": " << why;
}

/// True inside compute-sanitizer (its injection libraries are mapped into the process once CUDA is
/// initialized). Tests that provoke CUDA API errors on purpose skip there (the tool would count them
/// as errors) and run in the plain pass; long GPU tests shorten themselves.

/// Runs every body on its own host thread, joins them all, then rethrows the first exception.
inline void run_on_threads(const std::vector<std::function<void()>>& bodies) {
    std::vector<std::exception_ptr> errors(bodies.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < bodies.size(); ++i)
        threads.emplace_back([&bodies, &errors, i] {
            try {
                bodies[i]();
            } catch (...) {
                errors[i] = std::current_exception();
            }
        });
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& e : errors)
        if (e) std::rethrow_exception(e);
}

}  // namespace kestrel::test
