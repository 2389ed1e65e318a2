// Order statistics and the JSON writer (see stats.hpp).
#include <algorithm>
#include <cstdio>

#include "stats.hpp"

namespace kestrel::bench {

double quantile_sorted(const std::vector<double>& s, double q) {
    if (s.empty()) return kNotMeasured;
    const double pos = q * static_cast<double>(s.size() - 1);
    const std::size_t i = static_cast<std::size_t>(pos);
    if (i + 1 >= s.size()) return s.back();
    const double f = pos - static_cast<double>(i);
    return s[i] + f * (s[i + 1] - s[i]);
}

Summary summarize(const std::vector<double>& values) {
    std::vector<double> s;
    s.reserve(values.size());
    for (double v : values)
        if (std::isfinite(v)) s.push_back(v);
    Summary r;
    r.n = static_cast<int>(s.size());
    if (s.empty()) return r;
    std::sort(s.begin(), s.end());
    double sum = 0;
    for (double v : s) sum += v;
    r.min = s.front();
    r.max = s.back();
    r.p10 = quantile_sorted(s, 0.10);
    r.median = quantile_sorted(s, 0.50);
    r.p90 = quantile_sorted(s, 0.90);
    r.p99 = quantile_sorted(s, 0.99);
    r.mean = sum / static_cast<double>(s.size());
    return r;
}

std::string json_escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        switch (c) {
            case '"': o += "\\\""; break;
            case '\\': o += "\\\\"; break;
            case '\n': o += "\\n"; break;
            case '\r': o += "\\r"; break;
            case '\t': o += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char b[8];
                    std::snprintf(b, sizeof b, "\\u%04x", c);
                    o += b;
                } else {
                    o += c;
                }
        }
    }
    return o;
}

void Json::prefix(const char* key) {
    if (!first_.back()) os_ << ",";
    first_.back() = false;
    os_ << "\n" << std::string(static_cast<std::size_t>(2 * depth_), ' ');
    if (key) os_ << "\"" << json_escape(key) << "\": ";
}

Json& Json::begin_object(const char* key) {
    if (depth_ > 0 || !first_.back()) prefix(key);
    os_ << "{";
    first_.push_back(true);
    ++depth_;
    return *this;
}

Json& Json::end_object() {
    first_.pop_back();
    --depth_;
    os_ << "\n" << std::string(static_cast<std::size_t>(2 * depth_), ' ') << "}";
    if (depth_ == 0) os_ << "\n";
    return *this;
}

Json& Json::begin_array(const char* key) {
    prefix(key);
    os_ << "[";
    first_.push_back(true);
    ++depth_;
    return *this;
}

Json& Json::end_array() {
    first_.pop_back();
    --depth_;
    os_ << "]";
    return *this;
}

Json& Json::value(const char* key, double v) {
    if (key) prefix(key);
    else {  // array items on one line
        if (!first_.back()) os_ << ", ";
        first_.back() = false;
    }
    if (std::isfinite(v)) {
        char b[32];
        std::snprintf(b, sizeof b, "%.6g", v);
        os_ << b;
    } else {
        os_ << "null";
    }
    return *this;
}

Json& Json::value(const char* key, long long v) {
    prefix(key);
    os_ << v;
    return *this;
}

Json& Json::value(const char* key, bool v) {
    prefix(key);
    os_ << (v ? "true" : "false");
    return *this;
}

Json& Json::value(const char* key, const std::string& v) {
    prefix(key);
    os_ << "\"" << json_escape(v) << "\"";
    return *this;
}

}  // namespace kestrel::bench
