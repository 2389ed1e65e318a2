#pragma once
// Restores an environment variable as it was when constructed, so that a test that sets a measurement knob
// (KESTREL_LK_LANES, KESTREL_REDETECT_PLAN, ...) leaves the next tests the run's own choice.
#include <cstdlib>
#include <string>

namespace kestrel::test {

class ScopedEnv {
public:
    explicit ScopedEnv(const char* name) : name_(name) {
        const char* v = std::getenv(name);
        had_ = v != nullptr;
        if (had_) old_ = v;
    }
    ~ScopedEnv() {
        if (had_) setenv(name_.c_str(), old_.c_str(), 1);
        else unsetenv(name_.c_str());
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    std::string name_;
    std::string old_;
    bool had_ = false;
};

}  // namespace kestrel::test
