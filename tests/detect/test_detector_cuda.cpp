// CUDA backend == CPU reference: identical keypoint lists (same order) on real images over a sampled
// parameter grid (levels 1..4, factor 2 and 1.2, cells 32x32 and 64x48, n = 1..4, K = 1..4, all four
// scores, caps, borders) at odd sizes; repeated runs; the asynchronous API from pinned host and device
// images with device masks, with and without CUDA graphs, inside a user's stream capture; several
// detectors on several streams; size changes; error paths; every kernel path (forced with
// KESTREL_DETECTOR_PATH: the fused kernel, score maps + the corner-list selection with a score kernel
// per compass case or for any arc_min, score maps + grid NMS), with masks and K up to 8; small cases of
// the corner-list path for compute-sanitizer.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "detector_test_util.hpp"
#include "kestrel/grid_select.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/feature_detector.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

struct Stream {
    cudaStream_t s = nullptr;
    Stream() { EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess); }
    ~Stream() { (void)cudaStreamDestroy(s); }
};

std::vector<Keypoint> host_result(const FeatureDetector& d) {
    return std::vector<Keypoint>(d.host_keypoints(), d.host_keypoints() + d.host_count());
}

std::vector<Keypoint> device_result(const FeatureDetector& d) {
    int n = -1;
    EXPECT_EQ(cudaMemcpy(&n, d.device_count(), sizeof n, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_GE(n, 0);
    EXPECT_LE(n, d.capacity());
    std::vector<Keypoint> out(static_cast<std::size_t>(std::max(n, 0)));
    if (n > 0)
        EXPECT_EQ(cudaMemcpy(out.data(), d.device_keypoints(), sizeof(Keypoint) * out.size(), cudaMemcpyDeviceToHost),
                  cudaSuccess);
    return out;
}

PinnedImage pinned_copy(const HostImage& img) {
    PinnedImage p(img.width(), img.height());
    for (int y = 0; y < img.height(); ++y)
        std::copy(img.data() + static_cast<std::size_t>(y) * img.pitch(),
                  img.data() + static_cast<std::size_t>(y) * img.pitch() + img.width(), p.data() + static_cast<std::size_t>(y) * p.pitch());
    return p;
}

// Forces the detector's kernel path (KESTREL_DETECTOR_PATH: fused, maps or list, where it applies) for the
// detectors constructed while it lives; the path is chosen at a detector's first frame of a size.
struct ScopedPath {
    explicit ScopedPath(const char* path) {
        if (path) setenv("KESTREL_DETECTOR_PATH", path, 1);
    }
    ~ScopedPath() { unsetenv("KESTREL_DETECTOR_PATH"); }
};

// Forces the FAST score kernel (KESTREL_SCORE_KERNEL: bit-sliced or simd) for the detectors and score maps
// constructed while it lives; unset, the kernel is chosen from the SMs present (the H200 of the GPU runs takes the
// SIMD-lane kernel for most sizes, a small GPU the bit-sliced one), so the tests name it.
struct ScopedScoreKernel {
    explicit ScopedScoreKernel(const char* kernel) {
        if (kernel) setenv("KESTREL_SCORE_KERNEL", kernel, 1);
    }
    ~ScopedScoreKernel() { unsetenv("KESTREL_SCORE_KERNEL"); }
};

// The parameter grid on real images; with_masks adds a cell mask and a pixel mask to every third combination.
void parameter_grid(const char* path, bool with_masks, const char* kernel = nullptr) {
    const ScopedPath scoped(path);
    const ScopedScoreKernel scoped_kernel(kernel);
    const auto names = test::real_image_names();
    const Size2 sizes[] = {{752, 480}, {641, 479}, {333, 217}, {799, 67}, {97, 603}, {259, 131}, {768, 576}, {517, 389}};
    const ScoreType scores[] = {ScoreType::SadCircle, ScoreType::SadArc, ScoreType::MaxThreshold, ScoreType::Harris};
    for (int i = 0; i < 64; ++i) {
        DetectorConfig cfg;
        cfg.pyramid = {1 + i % 4, (i / 4) % 2 ? 1.2f : 2.0f};
        cfg.cell_width = (i / 8) % 2 ? 64 : 32;
        cfg.cell_height = (i / 8) % 2 ? 48 : 32;
        cfg.nms_radius = 1 + (i / 16) % 4;
        cfg.per_cell = 1 + (i * 3 + i / 5) % 4;
        cfg.fast.score = scores[(i * 5 + i / 7) % 4];
        cfg.fast.threshold = 8 + (i * 7) % 20;
        if (i % 5 == 2) cfg.fast.arc_min = 12;
        if (i % 6 == 3) cfg.fast.arc_max = 13;
        cfg.max_features = i % 3 == 1 ? 50 + 17 * i : 0;
        cfg.border = i % 4 == 3 ? (i % 20) : 0;
        cfg.cuda_graph = i % 2 == 0;
        const Size2 sz = sizes[(i * 7) % 8];
        if (sz.width / (1 << (cfg.pyramid.levels - 1)) < 8 || sz.height / (1 << (cfg.pyramid.levels - 1)) < 8)
            cfg.pyramid.levels = 2;  // keep the smallest level valid for the thin sizes
        const HostImage img = test::crop(test::real_image(names[static_cast<std::size_t>(i) % names.size()]),
                                         (i * 13) % 40, (i * 29) % 40, sz.width, sz.height);
        const std::string what = "combo " + std::to_string(i) + " " + test::describe(cfg) + " size " +
                                 std::to_string(sz.width) + "x" + std::to_string(sz.height);
        DetectionMasks masks;
        std::vector<std::uint8_t> skip;
        HostImage pixel_mask;
        if (with_masks && i % 3 == 0) {
            const Size2 grid = grid_size(sz.width, sz.height, cfg);
            skip.resize(static_cast<std::size_t>(grid.width) * grid.height);
            for (std::size_t c = 0; c < skip.size(); ++c) skip[c] = (c * 7 + static_cast<std::size_t>(i)) % 5 == 0;
            pixel_mask = HostImage(sz.width, sz.height, 1);
            for (int y = 0; y < sz.height; ++y)
                for (int x = 0; x < sz.width; ++x)
                    if ((x / 9 + y / 7 + i) % 4 == 0) pixel_mask.at(x, y) = 0;
            masks.cell_skip = skip.data();
            masks.cell_grid = grid;
            masks.pixel_mask = pixel_mask.view();
        }
        const auto ref = detect_cpu(img.view(), cfg, masks);
        FeatureDetector det(cfg, Backend::Cuda);
        test::expect_same_keypoints(det.detect(img.view(), masks), ref, what);
        test::expect_same_keypoints(det.detect(img.view(), masks), ref, what + " (second run)");
        if (with_masks) test::expect_same_keypoints(det.detect(img.view()), detect_cpu(img.view(), cfg), what + " (no masks)");
    }
}

TEST(DetectorGpu, MatchesCpuOnRealImagesOverTheParameterGrid) {
    KESTREL_REQUIRE_GPU();
    parameter_grid(nullptr, false);
}

// The corner-list path (score kernel appends its corners, kernels/detect/corner_select.cu selects per corner
// with atomics) over the whole grid, with masks, and K up to 8: the same list as the reference; second runs
// check that its slots and list count are left empty for the next frame.
TEST(DetectorGpu, CornerListPathMatchesCpuOverTheParameterGrid) {
    KESTREL_REQUIRE_GPU();
    parameter_grid("list", true, "bit-sliced");
    parameter_grid("list", true, "simd");
}

TEST(DetectorGpu, CornerListPathEveryBudgetAndRadius) {
    KESTREL_REQUIRE_GPU();
    const ScopedPath scoped("list");
    const HostImage img = test::crop(test::real_image("vtest_000.png"), 5, 3, 640, 400);
    for (int K = 1; K <= 8; ++K)
        for (int n = 1; n <= 3; ++n) {
            DetectorConfig cfg;
            cfg.per_cell = K;
            cfg.nms_radius = n;
            cfg.fast.threshold = 6 + K;  // dense corners: many per cell compete for the K slots
            cfg.max_features = K % 3 == 0 ? 300 : 0;
            cfg.pyramid = {K % 2 ? 2 : 3, K % 4 == 1 ? 1.2f : 2.0f};
            const std::string what = test::describe(cfg);
            const auto ref = detect_cpu(img.view(), cfg);
            ASSERT_FALSE(ref.empty()) << what;
            FeatureDetector det(cfg, Backend::Cuda);
            for (int rep = 0; rep < 3; ++rep) test::expect_same_keypoints(det.detect(img.view()), ref, what + " run " + std::to_string(rep));
        }
}

// A small case of every kernel of the corner-list path (the bit-sliced score kernel with SAD-B, SAD-A, MT and
// arc_max < 16, with and without the list; the SIMD-lane ones per compass case and for any arc_min; Harris,
// with the list; the selection for K = 1 and K > 1, n = 1 and n > 1, with masks): quick enough to run under
// compute-sanitizer (memcheck, racecheck).
TEST(DetectorGpu, CornerListPathSmallCases) {
    KESTREL_REQUIRE_GPU();
    const HostImage img = test::crop(test::real_image("graf1.png"), 11, 7, 333, 217);
    struct Case {
        ScoreType score;
        int K, n, arc_min, arc_max;
        const char* path;
        const char* kernel;
    };
    const Case cases[] = {{ScoreType::SadCircle, 1, 1, 9, 16, "list", "bit-sliced"},
                          {ScoreType::SadArc, 3, 1, 12, 16, "list", "bit-sliced"},
                          {ScoreType::MaxThreshold, 2, 2, 9, 16, "list", "bit-sliced"},
                          {ScoreType::MaxThreshold, 1, 1, 9, 11, "list", "bit-sliced"},
                          {ScoreType::SadCircle, 1, 1, 9, 16, "list", "simd"},
                          {ScoreType::MaxThreshold, 2, 2, 9, 16, "list-generic", nullptr},
                          {ScoreType::SadArc, 2, 1, 10, 16, "maps", "bit-sliced"},
                          {ScoreType::Harris, 4, 1, 9, 16, "list", nullptr}};
    for (const Case& c : cases) {
        const ScopedPath scoped(c.path);
        const ScopedScoreKernel scoped_kernel(c.kernel);
        DetectorConfig cfg;
        cfg.fast.score = c.score;
        cfg.fast.arc_min = c.arc_min;
        cfg.fast.arc_max = c.arc_max;
        cfg.per_cell = c.K;
        cfg.nms_radius = c.n;
        cfg.max_features = c.K == 3 ? 40 : 0;
        const Size2 grid = grid_size(img.width(), img.height(), cfg);
        std::vector<std::uint8_t> skip(static_cast<std::size_t>(grid.width) * grid.height);
        for (std::size_t i = 0; i < skip.size(); ++i) skip[i] = i % 4 == 1;
        HostImage pixel_mask(img.width(), img.height(), 1);
        for (int y = 0; y < img.height(); ++y)
            for (int x = 0; x < img.width() / 4; ++x) pixel_mask.at(x, y) = 0;
        DetectionMasks masks;
        masks.cell_skip = skip.data();
        masks.cell_grid = grid;
        masks.pixel_mask = pixel_mask.view();
        const std::string what = std::string(c.path) + " " + (c.kernel ? c.kernel : "") + " " + test::describe(cfg);
        const auto ref = detect_cpu(img.view(), cfg), ref_masked = detect_cpu(img.view(), cfg, masks);
        ASSERT_FALSE(ref_masked.empty()) << what;
        FeatureDetector det(cfg, Backend::Cuda);
        test::expect_same_keypoints(det.detect(img.view()), ref, what);
        test::expect_same_keypoints(det.detect(img.view(), masks), ref_masked, what + " masks");
        test::expect_same_keypoints(det.detect(img.view()), ref, what + " again");
    }
}

TEST(DetectorGpu, MapsPathMatchesCpuOverTheParameterGrid) {
    KESTREL_REQUIRE_GPU();
    parameter_grid("maps", true);
}

// The CUDA detector runs one fused kernel (kernels/detect/cell_detect.cu) where its shared-memory plan fits, and
// score maps + the corner-list selection otherwise (Harris, or large cells and radii): both must equal the
// reference, on both sides of that limit.
TEST(DetectorGpu, LargeCellsAndRadiiOnBothKernelPathsMatchCpu) {
    KESTREL_REQUIRE_GPU();
    const HostImage full = test::real_image(test::real_image_names().front());
    struct Case {
        int cw, ch, n, levels;
        float scale;
        ScoreType score;
    };
    const Case cases[] = {
        {64, 64, 1, 2, 2.0f, ScoreType::SadCircle},      // fused, in place (level 1 derived)
        {96, 72, 2, 3, 2.0f, ScoreType::MaxThreshold},   // fused on a built pyramid
        {128, 128, 2, 2, 2.0f, ScoreType::SadArc},       // plan too large: score maps + corner list
        {512, 256, 4, 3, 1.2f, ScoreType::SadCircle},    // far too large
        {1024, 64, 3, 1, 2.0f, ScoreType::MaxThreshold}, // one level, wide cells
    };
    for (const Case& c : cases) {
        DetectorConfig cfg;
        cfg.cell_width = c.cw;
        cfg.cell_height = c.ch;
        cfg.nms_radius = c.n;
        cfg.pyramid = {c.levels, c.scale};
        cfg.fast.score = c.score;
        cfg.per_cell = 3;
        const HostImage img = test::crop(full, 3, 5, std::min(full.width() - 3, 701), std::min(full.height() - 5, 459));
        const std::string what = test::describe(cfg);
        const auto ref = detect_cpu(img.view(), cfg);
        ASSERT_FALSE(ref.empty()) << what;
        FeatureDetector det(cfg, Backend::Cuda);
        test::expect_same_keypoints(det.detect(img.view()), ref, what);
    }
}

// The kernels skip the full segment test where the compass pre-test fails (detail::compass_run_holds),
// which needs floor(arc_min / 4) neighbouring compass points: every arc_min (0 to 4 points), both arc_max
// kinds, on the fused kernel in place (level 1 derived in SIMD lanes; NMS radius 1 and 2 give parent
// reads that are and are not 4-byte aligned) and from device images that start 1 and 2 bytes past an
// aligned address (byte loads), all equal to the reference.
// On every kernel path: the fused kernel, the score maps + grid NMS and the corner list, each with the bit-sliced
// and the SIMD-lane score kernel (one per compass case, arc_min >> 2), and the list with the SIMD-lane one for any
// arc_min.
void every_arc_min_and_misaligned_device_images(const char* path, const char* kernel) {
    const ScopedPath scoped(path);
    const ScopedScoreKernel scoped_kernel(kernel);
    const HostImage full = test::real_image("vtest_000.png");
    const HostImage img = test::crop(full, 7, 9, 301, 203);
    // The same pixels behind device pointers 1 and 2 bytes past an aligned address.
    std::vector<DeviceImage> shifted;
    for (const int off : {1, 2}) shifted.push_back(upload(test::crop(full, 7 - off, 9, 301 + off, 203).view()));
    Stream stream;
    for (int lo = 1; lo <= 16; ++lo)
        for (const int hi : {16, std::min(16, lo + 2)}) {
            DetectorConfig cfg;
            cfg.pyramid = {2, 2.0f};
            cfg.fast = {lo <= 4 ? 40 : (lo <= 8 ? 20 : 8), lo, hi, lo % 2 ? ScoreType::SadCircle : ScoreType::MaxThreshold};
            cfg.nms_radius = 1 + lo % 2;
            cfg.per_cell = 2;
            const std::string what = std::string(path) + " " + (kernel ? kernel : "") + " " + test::describe(cfg);
            const auto ref = detect_cpu(img.view(), cfg);
            ASSERT_FALSE(ref.empty()) << what;
            FeatureDetector det(cfg, Backend::Cuda);
            test::expect_same_keypoints(det.detect(img.view()), ref, what);
            if (hi != 16) continue;
            for (int i = 0; i < 2; ++i) {
                const DeviceView base = shifted[static_cast<std::size_t>(i)].view();
                const DeviceView v{base.data + 1 + i, img.width(), img.height(), base.pitch};
                det.detect_async(v, stream.s);
                synchronize(stream.s);
                test::expect_same_keypoints(host_result(det), ref, what + " device image at byte offset " + std::to_string(1 + i));
            }
        }
}

TEST(DetectorGpu, EveryArcMinAndMisalignedDeviceImagesMatchCpu) {
    KESTREL_REQUIRE_GPU();
    every_arc_min_and_misaligned_device_images("fused", nullptr);
    every_arc_min_and_misaligned_device_images("list-generic", nullptr);
    for (const char* kernel : {"bit-sliced", "simd"}) {
        every_arc_min_and_misaligned_device_images("maps", kernel);
        every_arc_min_and_misaligned_device_images("list", kernel);
    }
}

TEST(DetectorGpu, RepeatedRunsOverASequenceAreIdentical) {
    KESTREL_REQUIRE_GPU();
    DetectorConfig cfg;
    cfg.pyramid = {3, 2.0f};
    cfg.per_cell = 3;
    cfg.max_features = 400;
    for (const char* path : {"fused", "maps", "list"})
    for (const bool graph : {true, false}) {
        const ScopedPath scoped(path);
        cfg.cuda_graph = graph;
        FeatureDetector det(cfg, Backend::Cuda);
        Stream stream;
        const auto frames = test::sequence_frame_names();
        ASSERT_GE(frames.size(), 10u);
        PinnedImage pinned;
        for (int i = 0; i < 10; ++i) {
            const HostImage img = test::real_image(frames[static_cast<std::size_t>(i)]);
            pinned = pinned_copy(img);
            const auto ref = detect_cpu(img.view(), cfg);
            for (int rep = 0; rep < 3; ++rep) {
                det.detect_async(pinned.view(), stream.s);
                synchronize(stream.s);
                test::expect_same_keypoints(host_result(det), ref,
                                            std::string(path) + " frame " + std::to_string(i) + " graph " + std::to_string(graph));
            }
        }
    }
}

namespace {
// Factor 1.2: device images are copied into the pyramid and the frame is one graph launch. Factor 2 (2
// levels, SAD-B): pyramid and scores are fused and device images are read in place by direct launches
// (the graph's arguments are fixed), pinned uploads still replay the graph.
void async_from_pinned_and_device_images(float scale) {
    const bool fused = scale == 2.0f;
    const HostImage img = test::crop(test::real_image("graf1.png"), 3, 5, 701, 451);
    DetectorConfig cfg;
    cfg.pyramid = {2, scale};
    cfg.per_cell = 2;
    cfg.cell_width = 64;
    cfg.cell_height = 48;
    const Size2 grid = grid_size(img.width(), img.height(), cfg);
    const int cells = grid.width * grid.height;
    std::vector<std::uint8_t> skip_a(static_cast<std::size_t>(cells)), skip_b(static_cast<std::size_t>(cells));
    for (int i = 0; i < cells; ++i) {
        skip_a[static_cast<std::size_t>(i)] = i % 3 == 0;
        skip_b[static_cast<std::size_t>(i)] = i % 4 == 1;
    }
    HostImage mask(img.width(), img.height(), 1);
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width() / 3; ++x) mask.at(x, y) = 0;
    void *d_skip_a = nullptr, *d_skip_b = nullptr;
    CUDA_OK(cudaMalloc(&d_skip_a, static_cast<std::size_t>(cells)));
    CUDA_OK(cudaMalloc(&d_skip_b, static_cast<std::size_t>(cells)));
    CUDA_OK(cudaMemcpy(d_skip_a, skip_a.data(), static_cast<std::size_t>(cells), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d_skip_b, skip_b.data(), static_cast<std::size_t>(cells), cudaMemcpyHostToDevice));
    const DeviceImage d_mask = upload(mask.view());
    const DeviceImage d_img = upload(img.view());
    const PinnedImage pinned = pinned_copy(img);

    // Host-mask references for every combination used below.
    DetectionMasks ha, hb, hm;
    ha.cell_skip = skip_a.data();
    ha.cell_grid = grid;
    hb.cell_skip = skip_b.data();
    hb.cell_grid = grid;
    hm = hb;
    hm.pixel_mask = mask.view();
    const auto ref_none = detect_cpu(img.view(), cfg), ref_a = detect_cpu(img.view(), cfg, ha),
               ref_b = detect_cpu(img.view(), cfg, hb), ref_m = detect_cpu(img.view(), cfg, hm);
    DeviceDetectionMasks da, db, dm;
    da.cell_skip = static_cast<const std::uint8_t*>(d_skip_a);
    da.cell_grid = grid;
    db.cell_skip = static_cast<const std::uint8_t*>(d_skip_b);
    db.cell_grid = grid;
    dm = db;
    dm.pixel_mask = d_mask.view();

    for (const bool graph : {true, false})
        for (const bool null_stream : {false, true}) {
            cfg.cuda_graph = graph;
            FeatureDetector det(cfg, Backend::Cuda);
            Stream own;
            const cudaStream_t s = null_stream ? nullptr : own.s;
            const std::string what = std::string("graph ") + (graph ? "on" : "off") + (null_stream ? " null stream" : "");
            // Alternate sources and masks so the graph's mask arguments change between frames.
            for (int round = 0; round < 2; ++round) {
                det.detect_async(pinned.view(), s);
                synchronize(s);
                test::expect_same_keypoints(host_result(det), ref_none, what + " pinned");
                EXPECT_EQ(det.uses_cuda_graph(), graph && !null_stream) << what;
                test::expect_same_keypoints(device_result(det), ref_none, what + " pinned (device list)");
                det.detect_async(d_img.view(), s, da);
                synchronize(s);
                test::expect_same_keypoints(host_result(det), ref_a, what + " device, mask a");
                det.detect_async(pinned.view(), s, db);
                synchronize(s);
                test::expect_same_keypoints(host_result(det), ref_b, what + " pinned, mask b");
                det.detect_async(d_img.view(), s, dm);
                synchronize(s);
                test::expect_same_keypoints(host_result(det), ref_m, what + " device, mask b + pixel mask");
                EXPECT_EQ(det.uses_cuda_graph(), graph && !null_stream && !fused) << what << " (device image)";
                test::expect_same_keypoints(det.detect(img.view(), hm), ref_m, what + " sync with host masks");
                test::expect_same_keypoints(det.detect(img.view()), ref_none, what + " sync without masks");
                EXPECT_EQ(det.uses_cuda_graph(), graph) << what << " (sync call, internal stream)";
            }
        }
    (void)cudaFree(d_skip_a);
    (void)cudaFree(d_skip_b);
}
}  // namespace

TEST(DetectorGpu, AsyncFromPinnedAndDeviceImagesWithDeviceMasks) {
    KESTREL_REQUIRE_GPU();
    async_from_pinned_and_device_images(1.2f);
}

TEST(DetectorGpu, AsyncWithDeviceMasksOnTheCornerListPath) {
    KESTREL_REQUIRE_GPU();
    const ScopedPath scoped("list");
    async_from_pinned_and_device_images(1.2f);
    async_from_pinned_and_device_images(2.0f);
}

TEST(DetectorGpu, AsyncFromPinnedAndDeviceImagesWithDeviceMasksFusedPyramid) {
    KESTREL_REQUIRE_GPU();
    async_from_pinned_and_device_images(2.0f);
}

TEST(DetectorGpu, WorksInsideAUsersStreamCapture) {
    KESTREL_REQUIRE_GPU();
    const HostImage img = test::real_image("vtest_000.png");
    DetectorConfig cfg;
    cfg.pyramid = {2, 2.0f};
    FeatureDetector det(cfg, Backend::Cuda);
    Stream stream;
    const PinnedImage pinned = pinned_copy(img);
    det.detect_async(pinned.view(), stream.s);  // first call (allocates) outside the capture
    synchronize(stream.s);
    EXPECT_TRUE(det.uses_cuda_graph());
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    CUDA_OK(cudaStreamBeginCapture(stream.s, cudaStreamCaptureModeThreadLocal));
    det.detect_async(pinned.view(), stream.s);
    CUDA_OK(cudaStreamEndCapture(stream.s, &graph));
    EXPECT_FALSE(det.uses_cuda_graph());  // enqueued directly into the user's capture
    CUDA_OK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
    const auto ref = detect_cpu(img.view(), cfg);
    for (int i = 0; i < 3; ++i) {
        CUDA_OK(cudaGraphLaunch(exec, stream.s));
        synchronize(stream.s);
        test::expect_same_keypoints(host_result(det), ref, "user graph launch " + std::to_string(i));
    }
    (void)cudaGraphExecDestroy(exec);
    (void)cudaGraphDestroy(graph);
}

TEST(DetectorGpu, SeveralDetectorsOnSeveralStreamsAtOnce) {
    KESTREL_REQUIRE_GPU();
    const HostImage a = test::real_image("vtest_050.png"), b = test::crop(test::real_image("aloeL.png"), 0, 0, 555, 333);
    DetectorConfig ca, cb;
    ca.pyramid = {2, 2.0f};
    cb.pyramid = {3, 1.2f};
    cb.per_cell = 4;
    cb.fast.score = ScoreType::Harris;
    cb.max_features = 200;
    FeatureDetector da(ca, Backend::Cuda), db(cb, Backend::Cuda), dc(ca, Backend::Cuda);
    Stream sa, sb, sc;
    const PinnedImage pa = pinned_copy(a), pb = pinned_copy(b);
    const auto ra = detect_cpu(a.view(), ca), rb = detect_cpu(b.view(), cb), rc = detect_cpu(b.view(), ca);
    for (int i = 0; i < 4; ++i) {
        da.detect_async(pa.view(), sa.s);
        db.detect_async(pb.view(), sb.s);
        dc.detect_async(pb.view(), sc.s);
        synchronize(sa.s);
        synchronize(sb.s);
        synchronize(sc.s);
        test::expect_same_keypoints(host_result(da), ra, "detector a");
        test::expect_same_keypoints(host_result(db), rb, "detector b");
        test::expect_same_keypoints(host_result(dc), rc, "detector c");
    }
}

TEST(DetectorGpu, ImageSizeChangesReallocate) {
    KESTREL_REQUIRE_GPU();
    DetectorConfig cfg;
    cfg.pyramid = {2, 2.0f};
    cfg.per_cell = 2;
    FeatureDetector det(cfg, Backend::Cuda);
    EXPECT_EQ(det.capacity(), 0);
    const HostImage big = test::real_image("graf1.png");
    const HostImage small = test::crop(big, 11, 7, 333, 217);
    for (int i = 0; i < 2; ++i) {
        test::expect_same_keypoints(det.detect(big.view()), detect_cpu(big.view(), cfg), "big");
        const Size2 g = grid_size(big.width(), big.height(), cfg);
        EXPECT_EQ(det.capacity(), g.width * g.height * 2);
        test::expect_same_keypoints(det.detect(small.view()), detect_cpu(small.view(), cfg), "small");
    }
}

TEST(DetectorGpu, StageByStagePipelineEqualsTheDetector) {
    KESTREL_REQUIRE_GPU();
    // The per-stage path a benchmark times: upload, pyramid, scores, selection, download.
    const HostImage img = test::real_image("vtest_000.png");
    DetectorConfig cfg;
    cfg.pyramid = {2, 2.0f};
    cfg.per_cell = 2;
    cfg.max_features = 300;
    Stream stream;
    DevicePyramid pyramid(img.width(), img.height(), cfg.pyramid);
    DeviceScoreMaps scores(pyramid_sizes(img.width(), img.height(), cfg.pyramid), cfg.fast);
    detail::DeviceGridSelect select(img.width(), img.height(), cfg);
    const PinnedImage pinned = pinned_copy(img);
    std::vector<Keypoint> out(static_cast<std::size_t>(select.capacity()));
    int count = -1;
    for (int i = 0; i < 2; ++i) {
        copy_async(pinned.view(), pyramid.level0(), stream.s);
        pyramid.build(stream.s);
        scores.compute(pyramid, stream.s);
        select.run(scores, stream.s);
        CUDA_OK(cudaMemcpyAsync(&count, select.device_count(), sizeof count, cudaMemcpyDeviceToHost, stream.s));
        CUDA_OK(cudaMemcpyAsync(out.data(), select.device_keypoints(), sizeof(Keypoint) * out.size(),
                                cudaMemcpyDeviceToHost, stream.s));
        synchronize(stream.s);
        ASSERT_GE(count, 0);
        test::expect_same_keypoints(std::vector<Keypoint>(out.begin(), out.begin() + count), detect_cpu(img.view(), cfg),
                                    "stage by stage, run " + std::to_string(i));
    }
    DeviceScoreMaps wrong(pyramid_sizes(img.width(), img.height(), {3, 2.0f}), cfg.fast);
    EXPECT_THROW(select.run(wrong, stream.s), InvalidArgument);
    detail::DeviceGridSelect moved(std::move(select));
    EXPECT_THROW(select.run(scores, stream.s), StateError);
    EXPECT_EQ(moved.capacity(), std::min(grid_size(img.width(), img.height(), cfg).width *
                                             grid_size(img.width(), img.height(), cfg).height * 2, 300));
}

TEST(DetectorGpu, ErrorPaths) {
    KESTREL_REQUIRE_GPU();
    DetectorConfig cfg;
    FeatureDetector det(cfg, Backend::Cuda);
    const HostImage img(200, 100, 7);
    try {
        det.detect_async(img.view(), nullptr);  // pageable memory
        ADD_FAILURE() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "pinned_image.data") << e.what();
    }
    const PinnedImage pinned = pinned_copy(img);
    std::uint8_t* d_skip = nullptr;
    CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&d_skip), 64));
    DeviceDetectionMasks m;
    m.cell_skip = d_skip;
    m.cell_grid = {4, 4};  // the grid is 7 x 4
    try {
        det.detect_async(pinned.view(), nullptr, m);
        ADD_FAILURE() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "masks.cell_grid") << e.what();
    }
    m.cell_grid = {7, 4};
    const DeviceImage small_mask(199, 100);
    m.pixel_mask = small_mask.view();
    try {
        det.detect_async(pinned.view(), nullptr, m);
        ADD_FAILURE() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "masks.pixel_mask") << e.what();
    }
    EXPECT_THROW(det.detect_async(DeviceView{}, nullptr), InvalidArgument);
    cfg.pyramid.levels = 5;
    FeatureDetector deep(cfg, Backend::Cuda);
    try {
        (void)deep.detect(img.view());  // 100 / 16 < 7
        ADD_FAILURE() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "levels") << e.what();
    }
    FeatureDetector moved(std::move(det));
    EXPECT_THROW(det.detect_async(pinned.view(), nullptr), StateError);
    EXPECT_THROW(det.detect(img.view()), StateError);
    EXPECT_NO_THROW(moved.detect(img.view()));
    (void)cudaFree(d_skip);
}

}  // namespace
}  // namespace kestrel
