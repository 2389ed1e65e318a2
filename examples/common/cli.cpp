#include "cli.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace kestrel_examples {

bool is_decimal(const std::string& f) {
    std::size_t i = 0, digits = 0;
    if (i < f.size() && (f[i] == '+' || f[i] == '-')) ++i;
    for (; i < f.size() && f[i] >= '0' && f[i] <= '9'; ++i) ++digits;
    if (i < f.size() && f[i] == '.')
        for (++i; i < f.size() && f[i] >= '0' && f[i] <= '9'; ++i) ++digits;
    if (digits == 0) return false;
    if (i < f.size() && (f[i] == 'e' || f[i] == 'E')) {
        ++i;
        if (i < f.size() && (f[i] == '+' || f[i] == '-')) ++i;
        std::size_t e = 0;
        for (; i < f.size() && f[i] >= '0' && f[i] <= '9'; ++i) ++e;
        if (e == 0) return false;
    }
    return i == f.size();
}

Args::Args(int argc, char** argv, std::set<std::string> flags) : flags_(std::move(flags)) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a.size() < 3 || a.compare(0, 2, "--") != 0) {
            positional_.push_back(a);
            continue;
        }
        Opt o;
        const auto eq = a.find('=');
        o.name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
        o.is_flag = flags_.count(o.name) != 0;
        if (o.is_flag) {
            if (eq != std::string::npos) throw UsageError("option --" + o.name + " takes no value");
        } else if (eq != std::string::npos) {
            o.value = a.substr(eq + 1);
        } else if (i + 1 < argc) {
            o.value = argv[++i];
        } else {
            throw UsageError("option --" + o.name + " needs a value");
        }
        opts_.push_back(o);
    }
}

const Args::Opt* Args::find(const std::string& name) {
    asked_.insert(name);
    const Opt* found = nullptr;
    for (const Opt& o : opts_)
        if (o.name == name) found = &o;  // the last occurrence wins
    return found;
}

bool Args::flag(const std::string& name) { return find(name) != nullptr; }
bool Args::has(const std::string& name) { return find(name) != nullptr; }

std::string Args::get(const std::string& name, const std::string& fallback) {
    const Opt* o = find(name);
    return o ? o->value : fallback;
}

int Args::get_int(const std::string& name, int fallback) {
    const Opt* o = find(name);
    if (!o) return fallback;
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(o->value.c_str(), &end, 10);
    if (o->value.empty() || *end != '\0')
        throw UsageError("option --" + name + ": '" + o->value + "' is not an integer");
    if (errno == ERANGE || v < -2147483647LL || v > 2147483647LL)
        throw UsageError("option --" + name + ": " + o->value + " is out of range [-2147483647, 2147483647]");
    return static_cast<int>(v);
}

float Args::get_float(const std::string& name, float fallback) {
    const Opt* o = find(name);
    if (!o) return fallback;
    char* end = nullptr;
    errno = 0;
    const float v = std::strtof(o->value.c_str(), &end);
    if (o->value.empty() || *end != '\0' || !is_decimal(o->value) || errno != 0)
        throw UsageError("option --" + name + ": '" + o->value + "' is not a number");
    return v;
}

double Args::get_double(const std::string& name, double fallback) {
    const Opt* o = find(name);
    if (!o) return fallback;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(o->value.c_str(), &end);
    if (o->value.empty() || *end != '\0' || !is_decimal(o->value))
        throw UsageError("option --" + name + ": '" + o->value + "' is not a number");
    if (errno == ERANGE || !std::isfinite(v))
        throw UsageError("option --" + name + ": " + o->value + " is not a finite number of double range");
    return v;
}

unsigned long long Args::get_uint64(const std::string& name, unsigned long long fallback) {
    const Opt* o = find(name);
    if (!o) return fallback;
    if (o->value.empty() || o->value.find_first_not_of("0123456789") != std::string::npos)
        throw UsageError("option --" + name + ": '" + o->value + "' is not a non-negative integer");
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(o->value.c_str(), &end, 10);
    if (errno == ERANGE)
        throw UsageError("option --" + name + ": " + o->value + " is out of range [0, 18446744073709551615]");
    return v;
}

void Args::reject_unknown() const {
    for (const Opt& o : opts_)
        if (!asked_.count(o.name)) throw UsageError("unknown option --" + o.name + " (see --help)");
}

}  // namespace kestrel_examples
