// Prepares the test data folder from Debian's opencv-doc examples/data: real photos converted to
// grey PNG (aloeL/aloeR: Middlebury's stereo pair, aloeGT: its ground-truth disparity, copied as is), and the first frames of vtest.avi as grey PNG, so the test binaries (and the GPU
// machine, which has no OpenCV) read them with stb_image.
// Usage: kestrel_make_testdata <opencv-doc data folder> <output folder> [frames=60]
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s <opencv-doc data folder> <output folder> [frames]\n", argv[0]);
        return 2;
    }
    const std::string in = argv[1], out = argv[2];
    const int frames = argc > 3 ? std::stoi(argv[3]) : 60;
    std::filesystem::create_directories(out);
    for (const char* name : {"graf1.png", "aloeL.jpg", "aloeR.jpg", "box.png", "chessboard.png", "graf3.png", "basketball1.png",
                             "basketball2.png", "rubberwhale1.png", "rubberwhale2.png"}) {
        const cv::Mat img = cv::imread(in + "/" + name, cv::IMREAD_GRAYSCALE);
        if (img.empty()) {
            std::fprintf(stderr, "missing %s/%s (install Debian's opencv-doc)\n", in.c_str(), name);
            return 1;
        }
        // Always PNG (lossless): aloeL.jpg becomes aloeL.png.
        cv::imwrite(out + "/" + std::filesystem::path(name).stem().string() + ".png", img);
    }
    // Middlebury's ground-truth disparity of the aloe pair: its 8-bit values as they are (a grey PNG already;
    // copied byte for byte, never re-encoded, so that no value changes).
    if (!std::filesystem::exists(in + "/aloeGT.png")) {
        std::fprintf(stderr, "missing %s/aloeGT.png (install Debian's opencv-doc)\n", in.c_str());
        return 1;
    }
    std::filesystem::copy_file(in + "/aloeGT.png", out + "/aloeGT.png", std::filesystem::copy_options::overwrite_existing);
    // The homography of graf1 -> graf3 (the ORB matching test).
    std::filesystem::copy_file(in + "/H1to3p.xml", out + "/H1to3p.xml", std::filesystem::copy_options::overwrite_existing);
    cv::VideoCapture cap(in + "/vtest.avi");
    if (!cap.isOpened()) {
        std::fprintf(stderr, "cannot open %s/vtest.avi\n", in.c_str());
        return 1;
    }
    cv::Mat frame, grey;
    for (int i = 0; i < frames && cap.read(frame); ++i) {
        cv::cvtColor(frame, grey, cv::COLOR_BGR2GRAY);
        char buf[64];
        std::snprintf(buf, sizeof buf, "/vtest_%03d.png", i);
        cv::imwrite(out + buf, grey);
    }
    return 0;
}
