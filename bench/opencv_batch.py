#!/usr/bin/env python3
"""The peer of a docbin batch: OpenCV in N processes, each page read, thresholded with
adaptiveThreshold (mean, block 75) and written as PNG.

usage: bench/opencv_batch.py OUTDIR PROCESSES PAGE...
prints "pages=N wall_s=S pages_per_s=R steady_pages_per_s=R2", R2 counting the pages written after
the 20th over the time they took, as bench/batch_timeline.py does for docbin (perf_counter is the
system's monotonic clock, the same in every process).
"""
import multiprocessing
import os
import sys
import time

import cv2


def one(args):
    src, out_dir = args
    img = cv2.imread(src, cv2.IMREAD_GRAYSCALE)
    res = cv2.adaptiveThreshold(img, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, 75, 10)
    cv2.imwrite(os.path.join(out_dir, os.path.basename(src)), res)
    return time.perf_counter()


def main():
    out_dir, n = sys.argv[1], int(sys.argv[2])
    pages = sys.argv[3:]
    os.makedirs(out_dir, exist_ok=True)
    cv2.setNumThreads(1)
    t = time.perf_counter()
    with multiprocessing.Pool(n) as pool:
        ends = sorted(pool.map(one, [(p, out_dir) for p in pages], chunksize=4))
    wall = time.perf_counter() - t
    skip = 20
    steady = f'{(len(ends) - skip) / (ends[-1] - ends[skip - 1]):.2f}' if len(ends) > skip + 1 else 'none'
    print(f'pages={len(pages)} wall_s={wall:.3f} pages_per_s={len(pages) / wall:.2f} steady_pages_per_s={steady}')


if __name__ == '__main__':
    main()
