#!/usr/bin/env python3
"""The peers docbin is compared with, timed on the same page in the same run.

usage: bench/peers.py PAGE.pgm|png [RUNS]

Prints one line per measurement, "peer NAME ms=MEDIAN min=MIN max=MAX runs=N", for:
  doxa-sauvola-1thread   DoxaPy's Sauvola (window 75, k 0.2), initialise and binarize, one thread
  skimage-sauvola        scikit-image's threshold_sauvola and the comparison, on the CPU
  cucim-sauvola-device   cuCIM's threshold_sauvola and the comparison on a page already on the GPU
  cucim-sauvola-host     cuCIM from a host array to a host array (upload, threshold, download)
  opencv-adaptive        OpenCV's adaptiveThreshold (mean, block 75): not Sauvola, the cheapest local
                         threshold most pipelines use
A peer that is not installed prints "peer NAME missing: REASON". Medians of RUNS (default 20)
warm runs; the first run of each is left out.
"""
import statistics
import sys
import time

import numpy as np


def load(path):
    """The page as a writable, C-contiguous uint8 array (DoxaPy refuses a read-only one)."""
    try:
        from PIL import Image
        page = np.array(Image.open(path).convert('L'))
    except ImportError:
        import cv2
        page = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    return np.require(page, np.uint8, ['C', 'W'])


def timed(name, fn, runs):
    fn()  # warm-up
    ms = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - t) * 1e3)
    print(f'peer {name} ms={statistics.median(ms):.3f} min={min(ms):.3f} max={max(ms):.3f} runs={runs}', flush=True)


def main():
    page = load(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    try:
        import doxapy
        out = np.empty_like(page)
        b = doxapy.Binarization(doxapy.Binarization.Algorithms.SAUVOLA)

        def doxa():
            b.initialize(page)
            b.to_binary(out, {'window': 75, 'k': 0.2})
        timed('doxa-sauvola-1thread', doxa, runs)
    except Exception as e:  # noqa: BLE001 - any failure to load a peer is reported, not fatal
        print(f'peer doxa-sauvola-1thread missing: {e}')
    try:
        from skimage.filters import threshold_sauvola
        timed('skimage-sauvola', lambda: page > threshold_sauvola(page, window_size=75, k=0.2), max(3, runs // 4))
    except Exception as e:  # noqa: BLE001
        print(f'peer skimage-sauvola missing: {e}')
    try:
        import cupy as cp
        from cucim.skimage.filters import threshold_sauvola as cu_sauvola
        g = cp.asarray(page)

        def device():
            r = g > cu_sauvola(g, window_size=75, k=0.2)
            cp.cuda.Device().synchronize()
            return r
        timed('cucim-sauvola-device', device, runs)
        timed('cucim-sauvola-host', lambda: cp.asnumpy(cp.asarray(page) > cu_sauvola(cp.asarray(page), window_size=75,
                                                                                         k=0.2)), runs)
    except Exception as e:  # noqa: BLE001
        print(f'peer cucim-sauvola missing: {e}')
    try:
        import cv2
        cv2.setNumThreads(1)
        timed('opencv-adaptive-1thread', lambda: cv2.adaptiveThreshold(page, 255, cv2.ADAPTIVE_THRESH_MEAN_C,
                                                                      cv2.THRESH_BINARY, 75, 10), runs)
    except Exception as e:  # noqa: BLE001
        print(f'peer opencv-adaptive missing: {e}')


if __name__ == '__main__':
    main()
