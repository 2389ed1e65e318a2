// Host side of the GPU LK tracker: owns the stored-template buffers, validates every call and fills
// the launch descriptor (kernels/track/lk_track.cu). Nothing here allocates or synchronizes per call.
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "kernels/track/lk_track.cuh"
#include "kernels/common/cuda_check.hpp"
#include "kestrel/device_image.hpp"
#include "lk_internal.hpp"
#include "src/core/backend.hpp"

namespace kestrel {

void detail::device_lk_levels(const DevicePyramid& p, int levels, LkImage* out) {
    for (int k = 0; k < levels; ++k) {
        const DeviceView v = p.level(k);
        // The kernels read rows in aligned 4-byte words (DevicePyramid allocates pitched levels; this holds
        // by construction, checked so that it cannot silently break).
        if (v.pitch % 4 != 0 || reinterpret_cast<std::uintptr_t>(v.data) % 4 != 0)
            throw StateError("kestrel: LK tracking: pyramid level " + detail::to_text(k) +
                             " is not 4-byte aligned (pitch " + detail::to_text(static_cast<long long>(v.pitch)) + ")");
        out[k] = {v.data, v.width, v.height, v.pitch};
    }
}

struct DeviceLkTracker::Impl {
    LkConfig cfg;
    detail::LkSetup setup{};
    int capacity = 0;
    float* store = nullptr;
    std::int32_t* store_valid = nullptr;

    ~Impl() {
        if (store) (void)cudaFree(store);
        if (store_valid) (void)cudaFree(store_valid);
    }

    void check_pyramid(const char* where, const char* param, const DevicePyramid& p) const {
        const PyramidConfig& pc = p.config();
        detail::check(pc.levels == cfg.pyramid.levels && pc.scale == cfg.pyramid.scale, where, param,
                      "has " + detail::to_text(pc.levels) + " levels at scale " + detail::to_text(pc.scale) +
                          ", LkConfig.pyramid has " + detail::to_text(cfg.pyramid.levels) + " at " +
                          detail::to_text(cfg.pyramid.scale));
    }

    void fill(detail::LkImage* out, const DevicePyramid& p) const { detail::device_lk_levels(p, cfg.pyramid.levels, out); }

    void check_count(const char* where, int count) const {
        detail::check_range(where, "count", count, 0, capacity);
    }

    void require_store(const char* where) const {
        if (!store)
            throw StateError(std::string("kestrel: DeviceLkTracker::") + where +
                             ": stored templates need LkConfig.template_source = FirstFrame");
    }
};

DeviceLkTracker::DeviceLkTracker() = default;
DeviceLkTracker::DeviceLkTracker(DeviceLkTracker&&) noexcept = default;
DeviceLkTracker& DeviceLkTracker::operator=(DeviceLkTracker&&) noexcept = default;
DeviceLkTracker::~DeviceLkTracker() = default;

DeviceLkTracker::DeviceLkTracker(const LkConfig& cfg, int capacity) {
    const char* where = "DeviceLkTracker";
    auto m = std::make_unique<Impl>();
    m->setup = detail::make_lk_setup(cfg);
    detail::check_range(where, "capacity", capacity, 1, 65536);
    detail::require_cuda("DeviceLkTracker");
    m->cfg = cfg;
    m->capacity = capacity;
    if (cfg.template_source == TemplateSource::FirstFrame) {
        const std::size_t floats = static_cast<std::size_t>(capacity) * detail::store_floats_per_slot(m->setup);
        KESTREL_CUDA(cudaMalloc(reinterpret_cast<void**>(&m->store), floats * sizeof(float)), "lk template store");
        const std::size_t flags = static_cast<std::size_t>(capacity) * m->setup.levels;
        KESTREL_CUDA(cudaMalloc(reinterpret_cast<void**>(&m->store_valid), flags * sizeof(std::int32_t)),
                     "lk template store");
        KESTREL_CUDA(cudaMemset(m->store_valid, 0, flags * sizeof(std::int32_t)), "lk template store");
    }
    impl_ = std::move(m);
}

DeviceLkTracker::Impl& DeviceLkTracker::impl(const char* where) const {
    if (!impl_) detail::empty_object("DeviceLkTracker", where);
    return *impl_;
}

const LkConfig& DeviceLkTracker::config() const { return impl("config").cfg; }
int DeviceLkTracker::capacity() const { return impl("capacity").capacity; }

void DeviceLkTracker::track_async(const DevicePyramid& ref, const DevicePyramid& cur, const Point2f* ref_points,
                                  const LkGuess* guesses, LkResult* results, int count, StreamHandle stream) {
    const char* where = "DeviceLkTracker::track_async";
    const Impl& m = impl("track_async");
    m.check_count(where, count);
    m.check_pyramid(where, "ref", ref);
    m.check_pyramid(where, "cur", cur);
    const DeviceView r0 = ref.level(0), c0 = cur.level(0);
    detail::check(r0.width == c0.width && r0.height == c0.height, where, "cur", [&] {
        return "level 0 is " + detail::to_text(c0.width) + "x" + detail::to_text(c0.height) + ", must equal ref's " +
               detail::to_text(r0.width) + "x" + detail::to_text(r0.height);
    });
    if (count == 0) return;
    detail::check(ref_points != nullptr, where, "ref_points", "must not be null when count > 0");
    detail::check(results != nullptr, where, "results", "must not be null when count > 0");
    kernels::LkLaunch p{};
    p.setup = m.setup;
    m.fill(p.ref, ref);
    m.fill(p.cur, cur);
    p.points = ref_points;
    p.guesses = guesses;
    p.results = results;
    p.capacity = m.capacity;
    p.count = count;
    kernels::launch_lk_track_live(p, stream);
}

void DeviceLkTracker::store_templates_async(const DevicePyramid& ref, const Point2f* points,
                                            const std::int32_t* slots, int count, StreamHandle stream) {
    const char* where = "DeviceLkTracker::store_templates_async";
    const Impl& m = impl("store_templates_async");
    m.require_store("store_templates_async");
    m.check_count(where, count);
    m.check_pyramid(where, "ref", ref);
    if (count == 0) return;
    detail::check(points != nullptr, where, "points", "must not be null when count > 0");
    detail::check(slots != nullptr, where, "slots", "must not be null when count > 0");
    kernels::LkLaunch p{};
    p.setup = m.setup;
    m.fill(p.ref, ref);
    p.points = points;
    p.slots = slots;
    p.store = m.store;
    p.store_valid = m.store_valid;
    p.capacity = m.capacity;
    p.count = count;
    kernels::launch_lk_store(p, stream);
}

void DeviceLkTracker::track_stored_async(const DevicePyramid& cur, const std::int32_t* slots, const LkGuess* guesses,
                                         LkResult* results, int count, StreamHandle stream) {
    const char* where = "DeviceLkTracker::track_stored_async";
    const Impl& m = impl("track_stored_async");
    m.require_store("track_stored_async");
    m.check_count(where, count);
    m.check_pyramid(where, "cur", cur);
    if (count == 0) return;
    detail::check(slots != nullptr, where, "slots", "must not be null when count > 0");
    detail::check(guesses != nullptr, where, "guesses", "must not be null when count > 0 (stored templates)");
    detail::check(results != nullptr, where, "results", "must not be null when count > 0");
    kernels::LkLaunch p{};
    p.setup = m.setup;
    m.fill(p.cur, cur);
    p.slots = slots;
    p.guesses = guesses;
    p.results = results;
    p.store = m.store;
    p.store_valid = m.store_valid;
    p.capacity = m.capacity;
    p.count = count;
    kernels::launch_lk_track_stored(p, stream);
}

}  // namespace kestrel
