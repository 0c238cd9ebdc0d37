# Sourced by the GPU-machine scripts: registers NVIDIA's OpenCL driver with the
# ICD loader when it is installed but not registered, then configures (once)
# and builds build-device with the tests' gpu role on the NVIDIA GPU. Sets
# $build, $run (docbin-run) and DOCBIN_CACHE_DIR.
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ] && ldconfig -p | grep -q libnvidia-opencl.so.1; then
    mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
build=build-device
[ -d "$build" ] || meson setup "$build" -Dtest_gpu_device=nvidia >/dev/null || exit 1
meson compile -C "$build" >/dev/null || exit 1
run="$build/docbin-run"
export DOCBIN_CACHE_DIR=$PWD/$build/kernel-cache
