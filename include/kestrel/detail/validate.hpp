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

}  // namespace kestrel::detail
