#include "ember/analysis/plot_output.h"

#include <fstream>

#include "ember/util/error.h"

#ifdef EMBER_HAVE_PLPLOT
#include <plplot.h>
#endif

namespace ember {

bool plotting_available() {
#ifdef EMBER_HAVE_PLPLOT
  return true;
#else
  return false;
#endif
}

namespace {

const char* device_for(const std::filesystem::path& figure) {
  const auto ext = figure.extension().string();
  return ext == ".png" ? "pngcairo" : ext == ".svg" ? "svgcairo" : nullptr;
}

}  // namespace

void check_plot_path(const std::filesystem::path& png) {
  if (!plotting_available())
    throw UsageError(
        "--plot: this ember was built without PLplot (install libplplot-dev and "
        "plplot-driver-cairo, e.g. with scripts/setup.sh, and re-run cmake)");
  const auto parent = std::filesystem::absolute(png).parent_path();
  if (!std::filesystem::is_directory(parent))
    throw UsageError("--plot: directory '" + parent.string() + "' does not exist");
  // PLplot aborts the whole program when it cannot open its file: try it before any work.
  const bool existed = std::filesystem::exists(png);
  if (!std::ofstream(png, std::ios::app)) throw UsageError("--plot: cannot write '" + png.string() + "'");
  if (!existed) std::filesystem::remove(png);
  if (!device_for(png)) throw UsageError("--plot: '" + png.string() + "': expected a .png or .svg file name");
}

void start_figure(const std::filesystem::path& png) {
#ifdef EMBER_HAVE_PLPLOT
  plsdev(device_for(png));
  plsfnam(png.string().c_str());
  plspage(0, 0, 1200, 750, 0, 0);
  plscolbg(255, 255, 255);
  plinit();
  plscol0(15, 0, 0, 0);  // axes and text in black
  plcol0(15);
#else
  check_plot_path(png);
#endif
}

void finish_figure(const std::filesystem::path& png) {
#ifdef EMBER_HAVE_PLPLOT
  plend();
#endif
  if (!std::filesystem::exists(png)) throw Error("--plot: PLplot did not write '" + png.string() + "'");
}

}  // namespace ember
