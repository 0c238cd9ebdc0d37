# Sourced by the GPU-machine scripts: registers NVIDIA's OpenCL driver with the
# ICD loader when it is installed but not registered; brings the codec
# libraries (libtiff, libjpeg-turbo, OpenJPEG, libdeflate) from the Debian
# packages in .dev/debs when pkg-config cannot find them (the machine has
# none: apt-get download libtiff-dev libtiff6 libjpeg62-turbo-dev
# libjpeg62-turbo libopenjp2-7-dev libopenjp2-7 libdeflate-dev libdeflate0
# libjbig0 liblerc4 libwebp7); then configures (once) and builds build-device
# with the tests' gpu role on the NVIDIA GPU. Sets $build, $run (docbin-run)
# and DOCBIN_CACHE_DIR.
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ] && ldconfig -p | grep -q libnvidia-opencl.so.1; then
    mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
if ! pkg-config --exists libtiff-4 libjpeg libopenjp2 libdeflate && ls .dev/debs/*.deb >/dev/null 2>&1; then
    deb=/tmp/debs
    for f in .dev/debs/*.deb; do dpkg -x "$f" $deb; done
    lib=$deb/usr/lib/x86_64-linux-gnu
    # The libraries' own .pc files, moved under $deb, without the private
    # requirements (the machine has no .pc files for them, and a shared link needs none).
    sed -i -e "s|^prefix=/usr|prefix=$deb/usr|" -e "s|/usr/include|$deb/usr/include|g" \
        -e "s|/usr/lib/x86_64-linux-gnu|$lib|g" -e '/^Requires.private/d' $lib/pkgconfig/*.pc
    export PKG_CONFIG_PATH=$lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
    export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LIBRARY_PATH=$lib${LIBRARY_PATH:+:$LIBRARY_PATH}
fi
build=build-device
[ -d "$build" ] || meson setup "$build" -Dtest_gpu_device=nvidia >/dev/null || exit 1
meson compile -C "$build" >/dev/null || exit 1
run="$build/docbin-run"
export DOCBIN_CACHE_DIR=$PWD/$build/kernel-cache
