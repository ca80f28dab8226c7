# A toolkit without NVRTC: --version says so and where it looked; exit 1.
mkdir -p fake/bin fake/include
CUDA_HOME=$PWD/fake $FATBUILD --version
