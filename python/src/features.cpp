// Bindings of the features area: MatcherConfig, match_cpu (the CPU reference) and HammingMatcher. ORB
// descriptors come from FeatureDetector (DetectorConfig.orb_descriptors; detect.cpp).
#include <cstring>
#include <vector>

#include "common.hpp"
#include "kestrel/matcher.hpp"

namespace kestrel::py {

using namespace nb::literals;

namespace {

PyObject* g_match_dtype = nullptr;

// (N, 32) uint8 descriptors, copied into 16-byte aligned OrbDescriptor storage.
void descriptors_arg(nb::handle obj, const char* where, const char* param, std::vector<OrbDescriptor>& out) {
    nb::ndarray<const std::uint8_t, nb::ndim<2>, nb::device::cpu> a;
    if (!nb::try_cast(obj, a, false))
        type_error(where, param, "must be an (N, 32) uint8 array of ORB descriptors in host memory; got " +
                                     std::string(nb::inst_name(obj).c_str()));
    if (a.shape(1) != static_cast<std::size_t>(kOrbDescriptorBytes))
        detail::fail(where, param, "must have 32 columns (256-bit descriptors); got " + std::to_string(a.shape(1)));
    out.resize(a.shape(0));
    for (std::size_t i = 0; i < a.shape(0); ++i)
        for (int j = 0; j < kOrbDescriptorBytes; ++j) out[i].bytes[j] = a(i, j);
}

// Optional (N, 2) positions.
const Point2f* positions_arg(nb::handle obj, const char* where, const char* param, long n,
                             std::vector<Point2f>& out) {
    if (obj.is_none()) return nullptr;
    const auto p = points_arg(obj, where, param, n);
    out.resize(p.shape(0));
    if (p.shape(0)) std::memcpy(out.data(), p.data(), p.shape(0) * sizeof(Point2f));
    return out.data();
}

nb::object matches_array(const Match* matches, std::size_t n) {
    void* data = nullptr;
    nb::object arr = new_structured(g_match_dtype, n, &data);
    if (n) std::memcpy(data, matches, n * sizeof(Match));
    return arr;
}

struct PyHammingMatcher {
    HammingMatcher matcher;
    std::vector<OrbDescriptor> query, train;
    std::vector<Point2f> query_pos, train_pos;
    std::atomic<bool> busy{false};
};

}  // namespace

void init_features(nb::module_& m) {
    g_match_dtype = make_dtype({"train", "distance", "second"}, {"<i4", "<i4", "<i4"},
                               {offsetof(Match, train), offsetof(Match, distance), offsetof(Match, second)},
                               sizeof(Match))
                        .release()
                        .ptr();
    m.attr("MATCH_DTYPE") = nb::handle(g_match_dtype);
    m.attr("ORB_DESCRIPTOR_BYTES") = kOrbDescriptorBytes;

    const MatcherConfig md;
    nb::class_<MatcherConfig>(m, "MatcherConfig", "Brute-force Hamming matching settings (docs/features.md).")
        .def(
            "__init__",
            [](MatcherConfig* self, float ratio, bool cross_check, float radius, float epipolar_band,
               int max_distance) {
                MatcherConfig c{ratio, cross_check, radius, epipolar_band, max_distance};
                validate(c);
                new (self) MatcherConfig(c);
            },
            nb::kw_only(), "ratio"_a = md.ratio, "cross_check"_a = md.cross_check, "radius"_a = md.radius,
            "epipolar_band"_a = md.epipolar_band, "max_distance"_a = md.max_distance)
        .def_rw("ratio", &MatcherConfig::ratio, "ratio test d1 < ratio * d2, in (0, 1]; 1 disables it")
        .def_rw("cross_check", &MatcherConfig::cross_check, "keep mutual best matches only")
        .def_rw("radius", &MatcherConfig::radius, "> 0: train points within this distance of the query position")
        .def_rw("epipolar_band", &MatcherConfig::epipolar_band, ">= 0: train points within this many rows")
        .def_rw("max_distance", &MatcherConfig::max_distance, "largest kept distance, [0, 256]")
        .def("validate", [](const MatcherConfig& c) { validate(c); }, "Raises InvalidArgument unless valid.");

    m.def(
        "match_cpu",
        [](nb::handle query, nb::handle train, const MatcherConfig* config, nb::handle query_pos,
           nb::handle train_pos) {
            const char* where = "match_cpu";
            std::vector<OrbDescriptor> q, t;
            std::vector<Point2f> qp, tp;
            descriptors_arg(query, where, "query", q);
            descriptors_arg(train, where, "train", t);
            const Point2f* qpp = positions_arg(query_pos, where, "query_pos", static_cast<long>(q.size()), qp);
            const Point2f* tpp = positions_arg(train_pos, where, "train_pos", static_cast<long>(t.size()), tp);
            const MatcherConfig cfg = config ? *config : MatcherConfig{};
            std::vector<Match> r;
            {
                nb::gil_scoped_release unlocked;
                r = match_cpu(q.data(), static_cast<int>(q.size()), t.data(), static_cast<int>(t.size()), cfg, qpp,
                              tpp);
            }
            return matches_array(r.data(), r.size());
        },
        "query"_a, "train"_a, "config"_a.none() = nb::none(), "query_pos"_a.none() = nb::none(),
        "train_pos"_a.none() = nb::none(),
        "CPU reference of the matcher: one match (train, distance, second) per query; train = -1 when rejected. "
        "Positions (N, 2) are needed when config.radius > 0 or config.epipolar_band >= 0.");

    nb::class_<PyHammingMatcher>(m, "HammingMatcher", "Brute-force Hamming matcher (both backends, same matches).")
        .def(
            "__init__",
            [](PyHammingMatcher* self, const MatcherConfig* config, int capacity, nb::handle backend) {
                const MatcherConfig cfg = config ? *config : MatcherConfig{};
                const Backend b = backend_arg(backend);
                nb::gil_scoped_release unlocked;
                new (self) PyHammingMatcher{HammingMatcher(cfg, capacity, b), {}, {}, {}, {}, {false}};
            },
            "config"_a.none() = nb::none(), "capacity"_a = 4096, "backend"_a.none() = nb::none(),
            "capacity: most query and most train descriptors per call.")
        .def_prop_ro("config", [](const PyHammingMatcher& h) { return h.matcher.config(); })
        .def_prop_ro("backend", [](const PyHammingMatcher& h) { return h.matcher.backend(); })
        .def_prop_ro("capacity", [](const PyHammingMatcher& h) { return h.matcher.capacity(); })
        .def(
            "match",
            [](PyHammingMatcher& h, nb::handle query, nb::handle train, nb::handle query_pos, nb::handle train_pos) {
                const char* where = "HammingMatcher.match";
                const InUse in_use(h.busy, where);
                descriptors_arg(query, where, "query", h.query);
                descriptors_arg(train, where, "train", h.train);
                const Point2f* qpp =
                    positions_arg(query_pos, where, "query_pos", static_cast<long>(h.query.size()), h.query_pos);
                const Point2f* tpp =
                    positions_arg(train_pos, where, "train_pos", static_cast<long>(h.train.size()), h.train_pos);
                std::vector<Match> r;
                {
                    nb::gil_scoped_release unlocked;
                    r = h.matcher.match(h.query.data(), static_cast<int>(h.query.size()), h.train.data(),
                                        static_cast<int>(h.train.size()), qpp, tpp);
                }
                return matches_array(r.data(), r.size());
            },
            "query"_a, "train"_a, "query_pos"_a.none() = nb::none(), "train_pos"_a.none() = nb::none(),
            "One match (train, distance, second) per query, as match_cpu().");
}

}  // namespace kestrel::py
