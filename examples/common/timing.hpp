// Wall-clock timing of the examples' stages: per-stage samples, printed as mean / median / p95 / max.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace kestrel_examples {

class Stopwatch {
public:
    Stopwatch() : t0_(std::chrono::steady_clock::now()) {}
    /// Milliseconds since construction or the last lap(), and restarts.
    double lap() {
        const auto t = std::chrono::steady_clock::now();
        const double ms = std::chrono::duration<double, std::milli>(t - t0_).count();
        t0_ = t;
        return ms;
    }

private:
    std::chrono::steady_clock::time_point t0_;
};

class StageTimes {
public:
    void add(const std::string& stage, double ms) {
        for (auto& s : stages_)
            if (s.first == stage) {
                s.second.push_back(ms);
                return;
            }
        stages_.push_back({stage, {ms}});
    }
    bool empty() const { return stages_.empty(); }

    /// One row per stage, in the order the stages were first added.
    void print(std::FILE* out, const char* title) const {
        std::fprintf(out, "%s\n  %-34s %7s %9s %9s %9s %9s\n", title, "stage", "frames", "mean ms", "median",
                     "p95", "max");
        for (const auto& s : stages_) {
            std::vector<double> v = s.second;
            std::sort(v.begin(), v.end());
            double sum = 0;
            for (double x : v) sum += x;
            const auto pct = [&v](double q) { return v[static_cast<std::size_t>(q * (v.size() - 1) + 0.5)]; };
            std::fprintf(out, "  %-34s %7zu %9.3f %9.3f %9.3f %9.3f\n", s.first.c_str(), v.size(), sum / v.size(),
                         pct(0.5), pct(0.95), v.back());
        }
    }

private:
    std::vector<std::pair<std::string, std::vector<double>>> stages_;
};

}  // namespace kestrel_examples
