/*
** howe_train.c — training howe-predict's model: for every page with a ground
** truth, its features (a run of howe-predict) and the best (thi, c) of the
** grid search (every thi of Alg2 with every c, scored by the F-measure), then
** a least-squares fit of thi and of the index of c on the standardised
** features (docs/howe.md).
*/
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "algorithms/howe_features.h"
#include "planner/map.h"
#include "runtime/sched.h"
#include "runtime/util.h"

/* The ridge on the weights of the standardised features: with a few dozen
** pages and four correlated features, plain least squares follows the noise
** of the grid's best parameters; this keeps the weights of features that
** explain little near 0. */
#define RIDGE 1.0

static db_map default_map(db_context *ctx, const db_algo *algo)
{
    db_map map;
    db_map_default(algo, ctx->role[DB_ROLE_GPU] != NULL, &map);
    return map;
}

db_status db_howe_sample_page(db_context *ctx, const db_image *page, const uint8_t *truth, db_howe_sample *s)
{
    /* Features: howe-predict at given parameters needs no model. */
    const db_algo *predict = &db_algo_howe_predict;
    db_job job;
    db_job_defaults(predict, &job);
    job.params[DB_HOWE_C] = 160;
    job.params[DB_HOWE_THI] = 0.4;
    db_map map = default_map(ctx, predict);
    db_howe_probe probe = {0};
    db_howe_probe *outer = db_howe_probe_current();
    db_image *out = NULL;
    db_howe_probe_attach(&probe);
    db_status st = db_run(ctx, predict, &map, &job, page, &out, NULL, NULL);
    db_howe_probe_attach(outer);
    db_image_free(out);
    if (st != DB_OK)
        return st;
    if (!probe.has_features)
        return db_fail(DB_ERR_USAGE, "howe-predict gave no features");
    memcpy(s->features, probe.features, sizeof s->features);
    map = default_map(ctx, &db_algo_howe_grid);
    return db_howe_grid(ctx, &map, page, truth, &s->thi_index, &s->c_index, &s->f, s->table);
}

/* Solves the n x n system a x = b in place (Gaussian elimination, partial pivoting). */
static db_status solve(int n, double *a, double *b)
{
    for (int col = 0; col < n; col++) {
        int pivot = col;
        for (int r = col + 1; r < n; r++)
            if (fabs(a[r * n + col]) > fabs(a[pivot * n + col]))
                pivot = r;
        if (!(fabs(a[pivot * n + col]) > 1e-12))
            return db_fail(DB_ERR_USAGE, "the Howe model's fit is singular; give more, and more varied, pages");
        for (int c = 0; c < n; c++) {
            double t = a[col * n + c];
            a[col * n + c] = a[pivot * n + c];
            a[pivot * n + c] = t;
        }
        double t = b[col];
        b[col] = b[pivot];
        b[pivot] = t;
        for (int r = col + 1; r < n; r++) {
            double f = a[r * n + col] / a[col * n + col];
            for (int c = col; c < n; c++)
                a[r * n + c] -= f * a[col * n + c];
            b[r] -= f * b[col];
        }
    }
    for (int r = n - 1; r >= 0; r--) {
        for (int c = r + 1; c < n; c++)
            b[r] -= a[r * n + c] * b[c];
        b[r] /= a[r * n + r];
    }
    return DB_OK;
}

db_status db_howe_fit(const db_howe_sample *s, int n, db_howe_model *m)
{
    enum { P = DB_HOWE_FEATURES + 1 };
    if (n < 2)
        return db_fail(DB_ERR_USAGE, "training the Howe model needs at least 2 pages with a ground truth, not %d", n);
    for (int k = 0; k < DB_HOWE_FEATURES; k++) {
        double sum = 0.0, sq = 0.0;
        for (int i = 0; i < n; i++)
            sum += s[i].features[k];
        m->mean[k] = sum / n;
        for (int i = 0; i < n; i++)
            sq += (s[i].features[k] - m->mean[k]) * (s[i].features[k] - m->mean[k]);
        m->scale[k] = sq > 0 ? sqrt(sq / n) : 1.0;
    }
    /* Normal equations (X'X + ridge) w = X'y with X = [1, z]; the intercept is not shrunk. */
    double xtx[P * P] = {0}, thi[P] = {0}, c[P] = {0};
    for (int i = 0; i < n; i++) {
        double x[P] = {1.0};
        for (int k = 0; k < DB_HOWE_FEATURES; k++)
            x[1 + k] = (s[i].features[k] - m->mean[k]) / m->scale[k];
        for (int a = 0; a < P; a++) {
            for (int b = 0; b < P; b++)
                xtx[a * P + b] += x[a] * x[b];
            thi[a] += x[a] * db_howe_grid_thi[s[i].thi_index];
            c[a] += x[a] * s[i].c_index;
        }
    }
    for (int a = 1; a < P; a++)
        xtx[a * P + a] += RIDGE;
    double copy[P * P];
    memcpy(copy, xtx, sizeof copy);
    db_status st = solve(P, copy, thi);
    if (st == DB_OK)
        st = solve(P, xtx, c);
    if (st != DB_OK)
        return st;
    memcpy(m->thi, thi, sizeof thi);
    memcpy(m->c_index, c, sizeof c);
    return DB_OK;
}

/* The ground truth of page `name` (an image file name) in `gt_dir`: ID_gt.EXT
** with any image extension, the page's own first. Returns a malloc'd path or NULL. */
static char *truth_path(const char *gt_dir, const char *name)
{
    const char *ext = db_image_file_ext(name, db_image_exts, DB_IMAGE_N_EXTS);
    size_t id = ext ? (size_t)(ext - name) : strlen(name);
    for (int e = -1; e < DB_IMAGE_N_EXTS; e++) {
        const char *x = e < 0 ? ext : db_image_exts[e];
        if (!x)
            continue;
        size_t len = strlen(gt_dir) + id + strlen(x) + 8;
        char *path = malloc(len);
        if (!path)
            return NULL;
        snprintf(path, len, "%s/%.*s_gt%s", gt_dir, (int)id, name, x);
        struct stat sb;
        if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
            return path;
        free(path);
    }
    return NULL;
}

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* The truth as bytes, nonzero = ink (dark in the ground truth image). */
static db_status truth_of(const db_image *gt, const db_image *page, const char *path, uint8_t **truth)
{
    if (gt->width != page->width || gt->height != page->height)
        return db_fail(DB_ERR_FORMAT, "%s is %dx%d but its page is %dx%d; give the page's own ground truth", path,
                       gt->width, gt->height, page->width, page->height);
    *truth = malloc((size_t)gt->width * (size_t)gt->height);
    if (!*truth)
        return db_fail(DB_ERR_NOMEM, "out of memory reading %s", path);
    for (int r = 0; r < gt->height; r++)
        for (int k = 0; k < gt->width; k++)
            (*truth)[(size_t)r * gt->width + k] = gt->data[(size_t)r * gt->stride + (size_t)k * gt->channels] < 128;
    return DB_OK;
}

db_status db_howe_train(db_context *ctx, const char *dir, const char *model_path, const char *grid_path, FILE *log)
{
    char pages_dir[4096], gt_dir[4096];
    if (strlen(dir) + 16 > sizeof pages_dir)
        return db_fail(DB_ERR_USAGE, "the training directory's path is too long: %s", dir);
    snprintf(pages_dir, sizeof pages_dir, "%s/Originals", dir);
    snprintf(gt_dir, sizeof gt_dir, "%s/GT", dir);
    if (!is_dir(pages_dir) || !is_dir(gt_dir)) {
        snprintf(pages_dir, sizeof pages_dir, "%s", dir);
        snprintf(gt_dir, sizeof gt_dir, "%s", dir);
    }
    char **names = NULL;
    size_t count = 0;
    db_status st = db_image_list_dir(pages_dir, db_image_exts, DB_IMAGE_N_EXTS, &names, &count);
    if (st != DB_OK)
        return st;
    db_howe_sample *samples = calloc(count ? count : 1, sizeof *samples);
    char *grid_text = NULL;
    size_t grid_len = 0;
    FILE *grid = grid_path ? open_memstream(&grid_text, &grid_len) : NULL;
    if (!samples || (grid_path && !grid))
        st = db_fail(DB_ERR_NOMEM, "out of memory");
    if (grid)
        fputs("page,thi,c_index,c,f\n", grid);
    int n = 0;
    for (size_t i = 0; i < count && st == DB_OK; i++) {
        const char *ext = db_image_file_ext(names[i], db_image_exts, DB_IMAGE_N_EXTS);
        size_t id = ext ? (size_t)(ext - names[i]) : strlen(names[i]);
        if (id >= 3 && !strncmp(names[i] + id - 3, "_gt", 3))
            continue; /* a ground truth beside its page */
        char page_path[8192];
        snprintf(page_path, sizeof page_path, "%s/%s", pages_dir, names[i]);
        char *gt_path = truth_path(gt_dir, names[i]);
        if (!gt_path) {
            st = db_fail(DB_ERR_IO, "%s has no ground truth %s/%.*s_gt.EXT; add it, or move the page out of %s",
                         page_path, gt_dir, (int)id, names[i], dir);
            break;
        }
        db_image *page = db_image_read(page_path), *gt = page ? db_image_read(gt_path) : NULL;
        uint8_t *truth = NULL;
        if (!page || !gt)
            st = db_error_status();
        if (st == DB_OK)
            st = truth_of(gt, page, gt_path, &truth);
        if (st == DB_OK)
            st = db_howe_sample_page(ctx, page, truth, &samples[n]);
        if (st == DB_OK && log) {
            const db_howe_sample *s = &samples[n];
            fprintf(log, "%s thi %.2f c %.2f F %.4f features", names[i], db_howe_grid_thi[s->thi_index],
                    db_howe_c(s->c_index), 100.0 * s->f);
            for (int k = 0; k < DB_HOWE_FEATURES; k++)
                fprintf(log, " %.6g", s->features[k]);
            fputc('\n', log);
            fflush(log);
        }
        for (int t = 0; st == DB_OK && grid && t < DB_HOWE_MAX_CHAINS; t++)
            for (int c = 0; c < DB_HOWE_LINKS; c++)
                fprintf(grid, "%.*s,%.2f,%d,%.4f,%.4f\n", (int)id, names[i], db_howe_grid_thi[t], c + 1, db_howe_c(c),
                        100.0 * samples[n].table[t][c]);
        n += st == DB_OK;
        free(truth);
        free(gt_path);
        db_image_free(page);
        db_image_free(gt);
    }
    db_howe_model m;
    if (st == DB_OK)
        st = db_howe_fit(samples, n, &m);
    if (grid && fclose(grid) != 0 && st == DB_OK)
        st = db_fail(DB_ERR_NOMEM, "out of memory");
    if (st == DB_OK && grid_path)
        st = db_write_file_atomic(grid_path, grid_text, grid_len, NULL, 0);
    if (st == DB_OK) {
        char comment[1024];
        snprintf(comment, sizeof comment,
                 "howe-predict's model (docs/howe.md). With z[k] = (feature k - mean[k]) / scale[k]:\n"
                 "thi = thi[0] + sum of thi[1 + k] z[k], kept within [0.15, 0.65];\n"
                 "c = 20 * 2^(i / 4) with i = c_index[0] + sum of c_index[1 + k] z[k], rounded, kept within 0..32.\n"
                 "Trained by docbin-bench --train-howe on %d pages: per page the best thi and c of the grid search\n"
                 "(11 thi x 33 c, F-measure), least squares with ridge %g on the standardised features.",
                 n, RIDGE);
        st = db_howe_model_write(&m, model_path, comment);
        if (st != DB_OK && grid_path) /* no output unless both are written */
            unlink(grid_path);
    }
    free(grid_text);
    free(samples);
    db_image_list_free(names, count);
    return st;
}
