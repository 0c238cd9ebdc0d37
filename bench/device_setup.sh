# Sourced by the GPU-machine scripts: registers NVIDIA's OpenCL driver with the
# ICD loader when it is installed but not registered, brings GSL from the
# Debian packages in .dev/gsl (apt-get download libgsl27 libgslcblas0
# libgsl-dev; the machine has no GSL) when pkg-config cannot find it, then
# configures (once) and builds build-device with the tests' gpu role on the
# NVIDIA GPU. Sets $build, $run (docbin-run) and DOCBIN_CACHE_DIR.
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ] && ldconfig -p | grep -q libnvidia-opencl.so.1; then
    mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
if ! pkg-config --exists gsl && ls .dev/gsl/libgsl*.deb >/dev/null 2>&1; then
    for f in .dev/gsl/libgsl*.deb; do dpkg -x "$f" /tmp/gsl; done
    sed -i 's|/usr|/tmp/gsl/usr|g' /tmp/gsl/usr/lib/x86_64-linux-gnu/pkgconfig/gsl.pc
    export PKG_CONFIG_PATH=/tmp/gsl/usr/lib/x86_64-linux-gnu/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
    export LD_LIBRARY_PATH=/tmp/gsl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
build=build-device
[ -d "$build" ] || meson setup "$build" -Dtest_gpu_device=nvidia >/dev/null || exit 1
meson compile -C "$build" >/dev/null || exit 1
run="$build/docbin-run"
export DOCBIN_CACHE_DIR=$PWD/$build/kernel-cache
