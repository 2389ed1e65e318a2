// CUDA backend of FeatureDetector (see detector_cuda.hpp). Per frame, after the first call at a size:
//   [upload into pyramid level 0] -> pyramid.build -> scores.compute -> grid NMS (one launch), which
//   writes the count and the list both to device memory and, through the mapped pinned result block,
//   straight to the host (zero copy). Where the device cannot map host memory, one cudaMemcpyAsync of
//   the result block (count + all slots) into pinned memory follows instead.
// No allocation, no synchronization; with DetectorConfig::cuda_graph the part after the upload is one
// cudaGraphLaunch (captured on the first call at the size, on a stream that can be captured).
#include "detector_cuda.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/detect/cell_detect.cuh"
#include "kernels/detect/cell_index.hpp"
#include "kernels/detect/fast_score.cuh"
#include "kernels/detect/grid_nms.cuh"
#include "kernels/common/cuda_check.hpp"
#include "detector_buffers_cuda.hpp"
#include "detector_geometry.hpp"
#include "frame_graph_cuda.hpp"
#include "grid_select_cuda.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/error.hpp"
#include "orbslam_select_cuda.hpp"
#include "pyca_cuda.hpp"
#include "score_levels_cuda.hpp"

namespace kestrel::detail {

struct CudaDetector::Frame {
    GridGeometry g;
    DevicePyramid pyramid;
    kernels::GridLevel geometry[kMaxLevels]{};  // level sizes and scales without score maps (fused path)
    DeviceScoreMaps scores;  // two-kernel path only: the fused kernel keeps its scores in shared memory
    DeviceBytes lut;         // fused path: the lookup table (the two-kernel path uses scores.lut())
    DeviceGridSelect select;  // scratch + device result block [count | slots]
    PinnedBytes host_result;  // its pinned twin, written by the NMS kernel (mapped) or one copy per frame
    void* host_result_device = nullptr;  // host_result as the device sees it; null: copy instead
    FrameGraph graph;
    bool graph_tried = false;
    // Fused detection (kernels/detect/cell_detect.cu: scores, NMS and selection in one launch), planned once per
    // size, where its plan fits in shared memory and its blocks (one per cell) in one wave on this device
    // (larger frames are faster on the two-kernel path): `plan` holds its shared-memory layout. in_place: it reads the caller's level 0 directly (one
    // level, or two of factor 2 with level 1 derived while staging); otherwise the pyramid is built first.
    bool fused = false;
    bool in_place = false;
    kernels::GridNmsParams plan{};
    // Corner-list path (grid policy, where the fused kernel does not apply): the
    // score kernel writes the maps and appends every corner's key to `corners`; the selection kernel
    // (kernels/detect/corner_select.cu) then works per corner. `list_desc`: the score launch's descriptor
    // (maps, lookup table, list), whose images are set per frame.
    bool listed = false;
    DeviceBytes corners, corner_count;
    kernels::ScoreDesc list_desc{};
    // SelectionPolicy::PyCA: the two-kernel path's score maps, then culling + aggregation (src/detect/pyca_cuda.hpp)
    // into `select`'s slots and result block, in place of the grid-NMS launch. Its graph has no patched node:
    // frames whose mask pointers differ from the captured ones are launched directly.
    bool pyca = false;
    PycaStage pyca_stage;
    // SelectionPolicy::OrbSlam / LevelHarris: the two-kernel path's score maps (score_config), then the cells and the
    // distribution (src/detect/orbslam_select_cuda.hpp) into `select`'s result block. Graph as PyCA's.
    bool orbslam = false;
    OrbSlamStage orbslam_stage;
    // DetectorConfig::orb_descriptors: angles and descriptors of the selected keypoints on this pyramid.
    std::unique_ptr<DeviceOrb> orb;
};

struct CudaDetector::Sync {
    cudaStream_t stream = nullptr;
    DeviceBytes cell_skip;
    int cell_skip_size = 0;
    DeviceImage pixel_mask;
    ~Sync() {
        if (stream) (void)cudaStreamDestroy(stream);
    }
};

CudaDetector::CudaDetector(const DetectorConfig& cfg) : cfg_(cfg) {}

CudaDetector::~CudaDetector() {
    // Buffers may still be in use by enqueued work; freeing them waits for it anyway, the graph must too.
    if (frame_) (void)cudaDeviceSynchronize();
}

CudaDetector::Frame& CudaDetector::frame_for(const char* where, int width, int height) {
    if (frame_ && frame_->g.width == width && frame_->g.height == height) return *frame_;

    // First call at this size: validate the geometry, allocate everything once.
    const GridGeometry g = grid_geometry(where, width, height, cfg_);
    if (frame_) {
        KESTREL_CUDA(cudaDeviceSynchronize(), "detector resize");  // the old buffers may be in flight
        frame_.reset();
    }
    auto f = std::make_unique<Frame>();
    f->g = g;
    f->pyramid = DevicePyramid(width, height, cfg_.pyramid);
    f->select = DeviceGridSelect(width, height, cfg_);
    for (int k = 0; k < g.levels; ++k) f->geometry[k] = {nullptr, 0, g.level_size[k].width, g.level_size[k].height, 0.0f};
    f->host_result = pinned_bytes(f->select.result_bytes(), "detector allocation");
    std::memset(f->host_result.get(), 0, kResultHeaderBytes);  // host_count() = 0 until a frame lands
    // Pinned memory is mapped into the device's address space wherever the device can map host memory
    // (unified addressing: every 64-bit desktop/datacenter GPU and Jetson); otherwise copy.
    if (cudaHostGetDevicePointer(&f->host_result_device, f->host_result.get(), 0) != cudaSuccess) {
        (void)cudaGetLastError();
        f->host_result_device = nullptr;
    }
    f->plan = GridSelectAccess::params(f->select, f->geometry, DeviceDetectionMasks{});
    f->pyca = cfg_.selection == SelectionPolicy::PyCA;
    if (f->pyca) f->pyca_stage = PycaStage(g, cfg_);
    f->orbslam = per_level_policy(cfg_);
    if (f->orbslam) f->orbslam_stage = OrbSlamStage(g, cfg_);
    // The environment variable KESTREL_DETECTOR_PATH = fused | maps | list | list-generic forces a path where it
    // applies (benchmarks and tests compare the paths; docs/detector.md); list-generic: the list path with the
    // SIMD-lane score kernel for every arc_min. Unset or empty: the path is chosen from the configuration and the
    // SMs present.
    const char* forced_path = std::getenv("KESTREL_DETECTOR_PATH");
    const std::string path = forced_path ? forced_path : "";
    if (!path.empty() && path != "fused" && path != "maps" && path != "list" && path != "list-generic")
        throw InvalidArgument("KESTREL_DETECTOR_PATH", "kestrel: environment variable KESTREL_DETECTOR_PATH = '" + path +
                                                           "' must be fused, maps, list or list-generic (or unset)");
    const bool grid_policy = !f->pyca && !f->orbslam;
    const bool list_forced = path == "list" || path == "list-generic";
    f->fused = grid_policy && path != "maps" && !list_forced && kernels::plan_cell_detect(f->plan, cfg_.fast.score) &&
               (path == "fused" || kernels::cell_detect_fits_one_wave(f->plan));
    f->listed = grid_policy && !f->fused && path != "maps";
    f->in_place = f->fused && (g.levels == 1 || (g.levels == 2 && cfg_.pyramid.scale == 2.0f));
    if (cfg_.orb_descriptors) {  // ORB reads every level: the pyramid is always built, level 0 its own
        f->in_place = false;
        f->orb = std::make_unique<DeviceOrb>(width, height, cfg_.pyramid, g.capacity);
    }
    if (f->fused) {  // only the 8 KiB lookup table: no score maps
        f->lut = device_corner_lut(cfg_.fast.arc_min, cfg_.fast.arc_max, "detector lookup table");
    } else {
        f->scores = DeviceScoreMaps(std::vector<Size2>(g.level_size, g.level_size + g.levels), score_config(cfg_));
    }
    if (f->listed) plan_listed(*f, path == "list-generic");
    frame_ = std::move(f);
    return *frame_;
}

void CudaDetector::plan_listed(Frame& f, bool generic_compass) const {
    const char* stage = "detector allocation";
    std::size_t pixels = 0;  // every pixel of every level may be a corner
    for (int k = 0; k < f.g.levels; ++k)
        pixels += static_cast<std::size_t>(f.g.level_size[k].width) * static_cast<std::size_t>(f.g.level_size[k].height);
    f.corners = device_bytes(pixels * sizeof(unsigned long long), stage);
    f.corner_count = device_bytes(sizeof(unsigned), stage);
    KESTREL_CUDA(cudaMemset(f.corner_count.get(), 0, sizeof(unsigned)), stage);
    // The selection's slots start empty; its last block empties them again after every frame.
    KESTREL_CUDA(cudaMemset(f.plan.cell_keys, 0, sizeof(unsigned long long) * static_cast<std::size_t>(f.g.cells()) * cfg_.per_cell),
                 stage);
    KESTREL_CUDA(cudaStreamSynchronize(nullptr), stage);
    kernels::ScoreDesc& d = f.list_desc;
    d = kernels::ScoreDesc{};
    d.levels = f.g.levels;
    d.threshold = cfg_.fast.threshold;
    d.arc_min = cfg_.fast.arc_min;
    d.arc_max = cfg_.fast.arc_max;
    d.lut = f.scores.lut();
    for (int k = 0; k < f.g.levels; ++k) {
        kernels::ScoreLevel& L = d.level[k];
        L.width = f.g.level_size[k].width;
        L.height = f.g.level_size[k].height;
        L.scores = const_cast<float*>(f.scores.level_data(k));
        L.score_pitch = f.scores.level_pitch(k);
    }
    // The score kernel: bit-sliced or SIMD lanes (detail::use_bit_sliced_scores); list-generic: SIMD lanes.
    d.bit_sliced = !generic_compass && detail::use_bit_sliced_scores(d, cfg_.fast.score);
    kernels::plan_score_blocks(d, cfg_.fast.score);
    d.corners = static_cast<unsigned long long*>(f.corners.get());
    d.corner_count = static_cast<unsigned*>(f.corner_count.get());
    d.generic_compass = generic_compass;
    f.plan.listed = true;
    f.plan.corners = d.corners;
    f.plan.corner_count = d.corner_count;
    f.plan.cell_div_x = kernels::div_magic(cfg_.cell_width);
    f.plan.cell_div_y = kernels::div_magic(cfg_.cell_height);
    f.plan.list_blocks = kernels::corner_select_blocks(f.plan);
}

void CudaDetector::enqueue_listed_scores(Frame& f, DeviceView input, cudaStream_t s) const {
    // As DeviceScoreMaps::compute_fused: level 1 of a 2-level factor-2 pyramid derived while scoring,
    // otherwise the pyramid is built first.
    kernels::ScoreDesc d = f.list_desc;
    detail::set_score_levels(d, input, f.pyramid, f.scores.fuses(f.pyramid), s);
    kernels::launch_fast_score(d, cfg_.fast.score, s);
}

void CudaDetector::set_listed(kernels::GridNmsParams& p, const Frame& f) const {
    p.listed = true;
    p.corners = f.plan.corners;
    p.corner_count = f.plan.corner_count;
    p.list_blocks = f.plan.list_blocks;
    p.cell_div_x = f.plan.cell_div_x;
    p.cell_div_y = f.plan.cell_div_y;
}

void CudaDetector::check_masks(const char* where, const Frame& f, const DeviceDetectionMasks& masks) const {
    check_cell_mask(where, f.g, masks.cell_skip, masks.cell_grid);
    check_pixel_mask(where, f.g, masks.pixel_mask);
}

void CudaDetector::set_fused(kernels::GridNmsParams& p, const Frame& f, DeviceView input) const {
    p.fused = true;
    p.list_off = f.plan.list_off;
    p.task_off = f.plan.task_off;
    p.smem_bytes = f.plan.smem_bytes;
    p.threshold = cfg_.fast.threshold;
    p.arc_min = cfg_.fast.arc_min;
    p.arc_max = cfg_.fast.arc_max;
    p.score_type = static_cast<int>(cfg_.fast.score);
    p.lut = static_cast<const std::uint32_t*>(f.lut.get());
    for (int k = 0; k < f.g.levels; ++k) {
        kernels::DetectSource& src = p.src[k];
        src = f.plan.src[k];  // shared-memory offsets
        const bool derived = f.in_place && k == 1;
        const DeviceView v = k == 0 || derived ? input : f.pyramid.level(k);
        src.image = v.data;
        src.pitch = v.pitch;
        src.derived = derived;
        src.aligned = reinterpret_cast<std::uintptr_t>(v.data) % 4 == 0 && v.pitch % 4 == 0;
    }
}

void CudaDetector::run(Frame& f, DeviceView input, StreamHandle stream, const DeviceDetectionMasks& masks) {
    kernels::GridNmsParams p = f.fused ? GridSelectAccess::params(f.select, f.geometry, masks)
                                       : GridSelectAccess::params(f.select, f.scores, masks);
    if (f.fused) set_fused(p, f, input);
    if (f.listed) set_listed(p, f);
    if (f.host_result_device) {
        p.host_count = result_count(f.host_result_device);
        p.host_keypoints = result_keypoints(f.host_result_device);
    }
    // Fused: one launch (after the pyramid build unless in place). Otherwise pyramid + scores (one
    // launch when the configuration fuses: 2 levels of factor 2, not Harris), then the grid NMS.
    const auto enqueue = [this, &f, &p, input](cudaStream_t s) {
        if (f.listed) enqueue_listed_scores(f, input, s);
        else if (!f.fused) f.scores.compute_fused(input, f.pyramid, s);
        else if (!f.in_place) f.pyramid.build(s);
        if (f.orbslam)
            f.orbslam_stage.run(p, f.scores, f.pyramid, input, s);
        else if (f.pyca)
            f.pyca_stage.run(p, s);
        else
            kernels::launch_grid_nms(p, s);
        if (!f.host_result_device)
            KESTREL_CUDA(cudaMemcpyAsync(f.host_result.get(), f.select.device_result(), f.select.result_bytes(),
                                         cudaMemcpyDeviceToHost, s),
                         "detector download");
        if (f.orb) f.orb->compute_async(f.pyramid, f.select.device_keypoints(), f.select.device_count(), s);
    };
    const bool own_level0 = input.data == f.pyramid.level(0).data;
    if (cfg_.cuda_graph && own_level0 && FrameGraph::capturable(stream)) {
        if (!f.graph_tried) {
            f.graph_tried = true;  // one attempt per size; on failure ordinary launches from then on
            // PyCA, OrbSlam, LevelHarris: replay the captured masks only
            (void)f.graph.capture(stream, p, enqueue, !f.pyca && !f.orbslam);
        }
        if (f.graph.ready() && f.graph.accepts(p)) {
            f.graph.launch(stream, p);
            last_graph_ = true;
            return;
        }
    }
    enqueue(stream);
    last_graph_ = false;
}

void CudaDetector::enqueue(DeviceView image, StreamHandle stream, const DeviceDetectionMasks& masks) {
    const char* where = "FeatureDetector::detect_async";
    validate_view(where, "image", image);
    Frame& f = frame_for(where, image.width, image.height);
    check_masks(where, f, masks);
    if (!cfg_.orb_descriptors && (f.fused ? f.in_place : f.scores.fuses(f.pyramid))) {  // read in place: no copy
        run(f, image, stream, masks);
        return;
    }
    copy_async(image, f.pyramid.level0(), stream);
    run(f, f.pyramid.level(0), stream, masks);
}

void CudaDetector::enqueue(HostView pinned_image, StreamHandle stream, const DeviceDetectionMasks& masks) {
    const char* where = "FeatureDetector::detect_async";
    validate_view(where, "pinned_image", pinned_image);
    cudaPointerAttributes attr{};
    const bool known = cudaPointerGetAttributes(&attr, pinned_image.data) == cudaSuccess;
    if (!known) (void)cudaGetLastError();
    if (!known || (attr.type != cudaMemoryTypeHost && attr.type != cudaMemoryTypeManaged))
        fail(where, "pinned_image.data",
             "must point to page-locked host memory (PinnedImage, cudaMallocHost or cudaHostRegister): a pageable "
             "upload would synchronize; use detect() for ordinary memory");
    Frame& f = frame_for(where, pinned_image.width, pinned_image.height);
    check_masks(where, f, masks);
    copy_async(pinned_image, f.pyramid.level0(), stream);
    run(f, f.pyramid.level(0), stream, masks);
}

std::vector<Keypoint> CudaDetector::detect(HostView image, const DetectionMasks& masks) {
    const char* where = "FeatureDetector::detect";
    validate_view(where, "image", image);
    Frame& f = frame_for(where, image.width, image.height);
    check_cell_mask(where, f.g, masks.cell_skip, masks.cell_grid);
    check_pixel_mask(where, f.g, masks.pixel_mask);
    if (!sync_) {
        auto s = std::make_unique<Sync>();
        KESTREL_CUDA(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), "detector stream");
        sync_ = std::move(s);
    }
    Sync& s = *sync_;
    DeviceDetectionMasks dm;
    if (masks.cell_skip) {
        if (s.cell_skip_size != f.g.cells()) {
            s.cell_skip = device_bytes(static_cast<std::size_t>(f.g.cells()), "detector mask allocation");
            s.cell_skip_size = f.g.cells();
        }
        KESTREL_CUDA(cudaMemcpyAsync(s.cell_skip.get(), masks.cell_skip, static_cast<std::size_t>(f.g.cells()),
                                     cudaMemcpyHostToDevice, s.stream),
                     "detector mask upload");
        dm.cell_skip = static_cast<const std::uint8_t*>(s.cell_skip.get());
        dm.cell_grid = masks.cell_grid;
    }
    if (masks.pixel_mask.data) {
        if (s.pixel_mask.width() != image.width || s.pixel_mask.height() != image.height)
            s.pixel_mask = DeviceImage(image.width, image.height);
        copy_async(masks.pixel_mask, s.pixel_mask.mut_view(), s.stream);
        dm.pixel_mask = s.pixel_mask.view();
    }
    copy_async(image, f.pyramid.level0(), s.stream);
    run(f, f.pyramid.level(0), s.stream, dm);
    synchronize(s.stream, where);
    const Keypoint* kp = host_keypoints();
    return std::vector<Keypoint>(kp, kp + host_count());
}

const Keypoint* CudaDetector::device_keypoints() const { return frame_ ? frame_->select.device_keypoints() : nullptr; }
const int* CudaDetector::device_count() const { return frame_ ? frame_->select.device_count() : nullptr; }
const Keypoint* CudaDetector::host_keypoints() const {
    return frame_ ? result_keypoints(frame_->host_result.get()) : nullptr;
}
int CudaDetector::host_count() const { return frame_ ? *result_count(frame_->host_result.get()) : 0; }
int CudaDetector::capacity() const { return frame_ ? frame_->g.capacity : 0; }
const DeviceOrb* CudaDetector::orb() const { return frame_ ? frame_->orb.get() : nullptr; }

}  // namespace kestrel::detail
