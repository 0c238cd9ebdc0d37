/*
** canny.c — the `canny` stage of Howe's binarization: MATLAB's canny_old on the
** rgb2gray image (docs/howe.md §1, §4, "Exact arithmetic"); kernels in cl/canny.cl.
**
** The Gaussian and derivative weights need exp(), which OpenCL does not round
** the same way on every device, so they are computed here once per run (this
** file is built with -ffp-contract=off like the rest of the host code) and
** uploaded as a read-only buffer. Hysteresis is a data-dependent loop of passes
** that stays on the device; the host reads a convergence flag after growing
** rounds of passes, as hbk's k-means loop does.
*/
#include <math.h>
#include "algorithms/algorithms.h"

/* Layout of the flags scratch (int32), shared with cl/canny.cl. */
enum { F_HAS_STRONG, F_CHANGED, F_CONVERGED, F_FINAL, F_INTS };

/* Work-group shapes; cl/canny.cl's REDUCE, HT and HR match these. */
#define REDUCE 256
#define HT 32
#define HR 8

/* Work-groups of the maximum's first pass. */
static cl_int max_parts(db_stage_run *run, int gpu)
{
    return gpu ? 256 : (cl_int)db_stage_device(run)->info.compute_units * 4;
}

/* MATLAB's "GaussianDieOff" and the widest half-width canny_old considers. */
#define DIE_OFF 1e-4
#define MAX_HALF 30

/* The filter half-width for sigma: the largest w in 1..30 whose Gaussian is
** still above the die-off, 1 if none is. */
static int half_width(double sigma)
{
    double ssq = sigma * sigma;
    int w = 1;
    for (int p = 1; p <= MAX_HALF; p++)
        if (exp(-(double)(p * p) / (2 * ssq)) > DIE_OFF)
            w = p;
    return w;
}

/* weights = g(t), t = -w..w, then D(y, x) row-major for y, x = -w..w, the
** expressions of canny_old in its order of evaluation. */
static void make_weights(double sigma, int w, double *weights)
{
    const double pi = 3.14159265358979323846;
    double ssq = sigma * sigma;
    int n = 2 * w + 1;
    for (int t = -w; t <= w; t++)
        weights[t + w] = exp(-(double)(t * t) / (2 * ssq)) / (2 * pi * ssq);
    double *d = weights + n;
    for (int y = -w; y <= w; y++)
        for (int x = -w; x <= w; x++)
            d[(y + w) * n + (x + w)] = -(double)x * exp(-(double)(x * x + y * y) / (2 * ssq)) / (pi * ssq);
}

static db_status launch_2d(db_stage_run *run, cl_kernel k, int gpu)
{
    const size_t global[2] = {(size_t)db_stage_width(run), (size_t)db_stage_height(run)};
    const size_t local[2] = {64, 4};
    return db_stage_launch(run, k, 2, global, gpu ? local : db_any_group);
}

/* Buffers of one run. Hysteresis passes alternate between `state` and the
** output port; `thin` holds the first thinning sub-iteration. */
typedef struct canny_bufs {
    cl_mem img, out, work, smooth, grad, state, thin, stats, flags, weights;
} canny_bufs;

/* Steps 1–4: gray, smoothing, gradients and their largest magnitude. */
static db_status gradients(db_stage_run *run, const canny_bufs *b, int w, int gpu)
{
    cl_int width = db_stage_width(run), height = db_stage_height(run), channels = db_stage_channels(run);
    cl_ulong n = (cl_ulong)width * (cl_ulong)height;
    cl_int half = w;
    cl_int parts = max_parts(run, gpu);
    cl_kernel gray = db_stage_kernel(run, "canny.cl", "canny_gray");
    cl_kernel rows = db_stage_kernel(run, "canny.cl", "canny_smooth_rows");
    cl_kernel cols = db_stage_kernel(run, "canny.cl", "canny_smooth_cols");
    cl_kernel gradient = db_stage_kernel(run, "canny.cl", "canny_gradient");
    cl_kernel partial = db_stage_kernel(run, "canny.cl", "canny_max_partial");
    cl_kernel final = db_stage_kernel(run, "canny.cl", "canny_max_final");
    if (!gray || !rows || !cols || !gradient || !partial || !final)
        return db_error_status();
    db_status st = db_stage_args(run, gray, 4, sizeof b->img, &b->img, sizeof n, &n, sizeof channels, &channels,
                                 sizeof b->smooth, &b->smooth);
    if (st == DB_OK)
        st = db_stage_args(run, rows, 6, sizeof b->smooth, &b->smooth, sizeof width, &width, sizeof height, &height,
                           sizeof half, &half, sizeof b->weights, &b->weights, sizeof b->work, &b->work);
    if (st == DB_OK)
        st = db_stage_args(run, cols, 6, sizeof b->work, &b->work, sizeof width, &width, sizeof height, &height,
                           sizeof half, &half, sizeof b->weights, &b->weights, sizeof b->smooth, &b->smooth);
    /* The row pass's buffer is free again after the column pass: it takes the magnitude. */
    if (st == DB_OK)
        st = db_stage_args(run, gradient, 7, sizeof b->smooth, &b->smooth, sizeof width, &width, sizeof height,
                           &height, sizeof half, &half, sizeof b->weights, &b->weights, sizeof b->grad, &b->grad,
                           sizeof b->work, &b->work);
    if (st == DB_OK)
        st = db_stage_args(run, partial, 3, sizeof b->work, &b->work, sizeof n, &n, sizeof b->stats, &b->stats);
    if (st == DB_OK)
        st = db_stage_args(run, final, 2, sizeof b->stats, &b->stats, sizeof parts, &parts);
    if (st != DB_OK)
        return st;
    const size_t one = 1, px = (size_t)n, group = gpu ? REDUCE : 64, reduce = (size_t)parts * group;
    const size_t local_1d = 256;
    if ((st = db_stage_launch(run, gray, 1, &px, gpu ? &local_1d : db_any_group)) != DB_OK ||
        (st = launch_2d(run, rows, gpu)) != DB_OK || (st = launch_2d(run, cols, gpu)) != DB_OK ||
        (st = launch_2d(run, gradient, gpu)) != DB_OK ||
        (st = db_stage_launch(run, partial, 1, &reduce, &group)) != DB_OK)
        return st;
    return db_stage_launch(run, final, 1, &one, NULL);
}

/* Steps 5–7 for one pair of thresholds: non-maximum suppression and the
** thresholds into `state`, with the flags cleared first. */
static db_status suppress(db_stage_run *run, const canny_bufs *b, int gpu, cl_double tlo, cl_double thi)
{
    cl_int width = db_stage_width(run), height = db_stage_height(run);
    cl_kernel init = db_stage_kernel(run, "canny.cl", "canny_init");
    cl_kernel nms = db_stage_kernel(run, "canny.cl", "canny_nms");
    if (!init || !nms)
        return db_error_status();
    const size_t one = 1;
    db_status st = db_stage_args(run, init, 1, sizeof b->flags, &b->flags);
    if (st == DB_OK)
        st = db_stage_args(run, nms, 9, sizeof b->grad, &b->grad, sizeof b->work, &b->work, sizeof b->stats,
                           &b->stats, sizeof width, &width, sizeof height, &height, sizeof tlo, &tlo, sizeof thi,
                           &thi, sizeof b->state, &b->state, sizeof b->flags, &b->flags);
    if (st == DB_OK)
        st = db_stage_launch(run, init, 1, &one, NULL);
    return st == DB_OK ? launch_2d(run, nms, gpu) : st;
}

/* Step 8: hysteresis passes in growing rounds until one promotes nothing.
** Returns, in *result, the buffer holding the settled map. */
static db_status hysteresis(db_stage_run *run, const canny_bufs *b, int gpu, cl_mem *result)
{
    cl_int width = db_stage_width(run), height = db_stage_height(run);
    cl_kernel pass = db_stage_kernel(run, "canny.cl", gpu ? "canny_hyst_tiles" : "canny_hyst_bands");
    cl_kernel check = db_stage_kernel(run, "canny.cl", "canny_hyst_check");
    if (!pass || !check)
        return db_error_status();
    /* CPU: a few bands per core, each settled serially; fewer, taller bands
    ** mean fewer passes but less parallelism. */
    cl_int units = (cl_int)db_stage_device(run)->info.compute_units;
    cl_int band = (height + 4 * units - 1) / (4 * units);
    band = band < 16 ? 16 : band;
    size_t bands = (size_t)((height + band - 1) / band);
    const size_t tiles[2] = {(size_t)(width + HT - 1) / HT * HT, (size_t)(height + HT - 1) / HT * HR};
    const size_t tile_local[2] = {HT, HR};
    const cl_mem bufs[2] = {b->state, b->out};
    db_status st;
    cl_int passes = 0;
    for (int round = 2;; round *= 2) {
        for (int r = 0; r < round; r++) {
            cl_mem in = bufs[passes & 1], out = bufs[(passes + 1) & 1];
            passes++;
            st = gpu ? db_stage_args(run, pass, 5, sizeof in, &in, sizeof out, &out, sizeof width, &width,
                                     sizeof height, &height, sizeof b->flags, &b->flags)
                     : db_stage_args(run, pass, 6, sizeof in, &in, sizeof out, &out, sizeof width, &width,
                                     sizeof height, &height, sizeof band, &band, sizeof b->flags, &b->flags);
            if (st == DB_OK)
                st = gpu ? db_stage_launch(run, pass, 2, tiles, tile_local)
                         : db_stage_launch(run, pass, 1, &bands, db_any_group);
            if (st == DB_OK)
                st = db_stage_args(run, check, 2, sizeof b->flags, &b->flags, sizeof passes, &passes);
            if (st == DB_OK) {
                const size_t one = 1;
                st = db_stage_launch(run, check, 1, &one, NULL);
            }
            if (st != DB_OK)
                return st;
        }
        cl_int flags[F_INTS];
        if ((st = db_stage_read(run, b->flags, 0, sizeof flags, flags)) != DB_OK)
            return st;
        if (flags[F_CONVERGED]) {
            *result = bufs[flags[F_FINAL] & 1];
            return DB_OK;
        }
    }
}

/* Step 9: the two thinning sub-iterations, from `settled` to the output. */
static db_status thin(db_stage_run *run, const canny_bufs *b, cl_mem settled, int gpu)
{
    cl_kernel k = db_stage_kernel(run, "canny.cl", "canny_thin");
    if (!k)
        return db_error_status();
    cl_int width = db_stage_width(run), height = db_stage_height(run);
    cl_int level = 2, second = 0;
    db_status st = db_stage_args(run, k, 7, sizeof settled, &settled, sizeof b->thin, &b->thin, sizeof width, &width,
                                 sizeof height, &height, sizeof level, &level, sizeof second, &second,
                                 sizeof b->flags, &b->flags);
    if (st == DB_OK)
        st = launch_2d(run, k, gpu);
    if (st != DB_OK)
        return st;
    level = 1;
    second = 1;
    st = db_stage_args(run, k, 7, sizeof b->thin, &b->thin, sizeof b->out, &b->out, sizeof width, &width,
                       sizeof height, &height, sizeof level, &level, sizeof second, &second, sizeof b->flags,
                       &b->flags);
    return st == DB_OK ? launch_2d(run, k, gpu) : st;
}

/* Edge maps for n high thresholds (the job's low threshold and sigma): the
** gradients once, then per threshold steps 5–9 into `out`, after which
** each(run, i, out, arg) takes the map when given. */
static db_status canny_impl(db_stage_run *run, int gpu, const double *thi, int n, cl_mem out, db_canny_each each,
                            void *arg)
{
    const db_job *job = db_stage_job(run);
    double sigma = job->params[DB_HOWE_SIGMA];
    if (!(sigma > 0))
        return db_fail(DB_ERR_USAGE, "canny: sigma must be positive, not %g", sigma);
    if (gpu && db_stage_device(run)->max_group < HT * HR)
        gpu = 0; /* the tile kernels need HT*HR work-items; the CPU shapes give the same result */
    int w = half_width(sigma), taps = 2 * w + 1;
    double weights[(2 * MAX_HALF + 1) * (2 * MAX_HALF + 2)];
    make_weights(sigma, w, weights);
    size_t px = (size_t)db_stage_width(run) * (size_t)db_stage_height(run);
    size_t parts = (size_t)max_parts(run, gpu);
    canny_bufs b = {
        .img = db_stage_in(run, 0),
        .out = out,
        .work = db_stage_scratch(run, px * sizeof(cl_double)),
        .smooth = db_stage_scratch(run, px * sizeof(cl_double)),
        .grad = db_stage_scratch(run, px * sizeof(cl_double2)),
        .state = db_stage_scratch(run, px),
        .thin = db_stage_scratch(run, px),
        .stats = db_stage_scratch(run, (1 + parts) * sizeof(cl_double)),
        .flags = db_stage_scratch(run, F_INTS * sizeof(cl_int)),
    };
    if (!b.out || !b.work || !b.smooth || !b.grad || !b.state || !b.thin || !b.stats || !b.flags)
        return db_error_status();
    if (!(b.weights = db_stage_constant(run, weights, (size_t)(taps + taps * taps) * sizeof(double))))
        return db_error_status();
    db_status st = gradients(run, &b, w, gpu);
    for (int i = 0; i < n && st == DB_OK; i++) {
        cl_mem settled = NULL;
        if ((st = suppress(run, &b, gpu, job->params[DB_HOWE_TLO], thi[i])) == DB_OK &&
            (st = hysteresis(run, &b, gpu, &settled)) == DB_OK && (st = thin(run, &b, settled, gpu)) == DB_OK &&
            each)
            st = each(run, i, b.out, arg);
    }
    return st;
}

db_status db_canny_cpu(db_stage_run *run)
{
    return canny_impl(run, 0, &db_stage_job(run)->params[DB_HOWE_THI], 1, db_stage_out(run, 0), NULL, NULL);
}

db_status db_canny_gpu(db_stage_run *run)
{
    return canny_impl(run, 1, &db_stage_job(run)->params[DB_HOWE_THI], 1, db_stage_out(run, 0), NULL, NULL);
}

db_status db_canny_thresholds(db_stage_run *run, const double *thi, int n, db_canny_each each, void *arg)
{
    cl_mem out = db_stage_scratch(run, (size_t)db_stage_width(run) * (size_t)db_stage_height(run));
    if (!out)
        return db_error_status();
    return canny_impl(run, db_stage_device(run)->role == DB_ROLE_GPU, thi, n, out, each, arg);
}
