// Argument checks shared by every public entry point: each names the parameter and the bound.
#pragma once
#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>

#include "kestrel/error.hpp"

namespace kestrel::detail {

template <typename T>
std::string to_text(const T& v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

[[noreturn]] inline void fail(const char* where, const char* param, const std::string& why) {
    throw InvalidArgument(param, std::string("kestrel: ") + where + ": parameter '" + param + "' " + why);
}

/// Throws InvalidArgument unless lo <= value <= hi.
template <typename T>
void check_range(const char* where, const char* param, T value, T lo, T hi) {
    if constexpr (std::is_floating_point_v<T>) {
        if (!std::isfinite(value)) fail(where, param, "= " + to_text(value) + " must be finite");
    }
    if (!(value >= lo && value <= hi))
        fail(where, param, "= " + to_text(value) + " is outside [" + to_text(lo) + ", " + to_text(hi) + "]");
}

inline void check(bool ok, const char* where, const char* param, const std::string& why) {
    if (!ok) fail(where, param, why);
}

/// Literal-message form: nothing is built unless the check fails (per-frame paths must not allocate).
inline void check(bool ok, const char* where, const char* param, const char* why) {
    if (!ok) fail(where, param, why);
}

/// Lazy form: `why` is a callable returning the message, called only when the check fails (per-frame paths whose
/// message names values must not allocate either).
template <typename Why, typename = std::enable_if_t<std::is_invocable_r_v<std::string, Why&>>>
void check(bool ok, const char* where, const char* param, Why&& why) {
    if (!ok) fail(where, param, why());
}

/// Throws InvalidArgument unless R (3x3 row-major) is a rotation: finite, every entry of R^T R - I within 1e-6,
/// det > 0 (a rotation prior: the tracker's, the relative-pose estimator's).
inline void check_rotation(const char* where, const char* param, const double* R) {
    for (int j = 0; j < 9; ++j) check(std::isfinite(R[j]), where, param, "must be finite");
    double worst = 0.0;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            double s = 0.0;
            for (int c = 0; c < 3; ++c) s += R[3 * c + a] * R[3 * c + b];
            const double e = std::fabs(s - (a == b ? 1.0 : 0.0));
            worst = e > worst ? e : worst;
        }
    const double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
                       R[2] * (R[3] * R[7] - R[4] * R[6]);
    check(worst <= 1e-6 && det > 0.0, where, param, [&] {
        return "is not a rotation: |R^T R - I| = " + to_text(worst) + " (bound 1e-06), det = " + to_text(det) +
               " (must be +1)";
    });
}

}  // namespace kestrel::detail
