/*
** howe_features.c — `howe-predict`: laplacian, glcm, edge-mean, background →
** predict → graphcut (docs/howe.md).
**
** Each feature stage reduces the page to a few integers (counts and sums, the
** same on every device); `predict` reads them, computes the features and the
** model's thi and c on the host (one code path, so every map predicts the same
** parameters), makes the Canny edges at that thi, and `graphcut` cuts the graph
** at that c exactly as `howe` does. The model is a small text file built into
** the library (algorithms/howe_model.txt), or the file $DOCBIN_HOWE_MODEL.
*/
#define _POSIX_C_SOURCE 200809L /* strdup, strtok_r */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/howe_features.h"
#include "algorithms/pushrelabel.h"
#include "runtime/util.h"

enum { IMAGE, GRAY, LAP2, GLCM, EDGE_SUMS, BACKGROUND, EDGES, PARAMS, BINARY, REPORT, N_ITEMS };

/* The PARAMS item (int64): the kept-link capacity, then the report's values
** from DB_HOWE_PREDICT_THI on. */
enum { PARAM_LINK, PARAM_REPORTED, PARAM_VALUES = PARAM_REPORTED + DB_HOWE_PREDICT_VALUES - DB_HOWE_PREDICT_THI };

enum { GLCM_BINS = 8, EDGE_BINS = 2, BACKGROUND_VALUES = 3 };

const char *const db_howe_feature_names[DB_HOWE_FEATURES] = {
    [DB_HOWE_CONTRAST] = "contrast",
    [DB_HOWE_HOMOGENEITY] = "homogeneity",
    [DB_HOWE_EDGE_MEAN] = "edge_mean",
    [DB_HOWE_BACKGROUND_STD] = "background_std",
};

/* The model built into the library (generated from algorithms/howe_model.txt). */
extern const char db_howe_model_text[];

/* The range predicted thresholds are kept in: the grid the model is trained on. */
#define THI_MIN 0.15
#define THI_MAX 0.65

/* ---- features and model ---- */

void db_howe_features(const db_howe_stats *s, double f[DB_HOWE_FEATURES])
{
    uint64_t pairs = 0;
    double contrast = 0.0, homogeneity = 0.0;
    for (int d = 0; d < GLCM_BINS; d++) {
        pairs += s->glcm[d];
        contrast += (double)(d * d) * (double)s->glcm[d];
        homogeneity += (double)s->glcm[d] / (1.0 + d);
    }
    f[DB_HOWE_CONTRAST] = pairs ? contrast / (double)pairs : 0.0;
    f[DB_HOWE_HOMOGENEITY] = pairs ? homogeneity / (double)pairs : 0.0;
    f[DB_HOWE_EDGE_MEAN] = s->edges[0] ? (double)s->edges[1] / (double)s->edges[0] : 255.0;
    double n = (double)s->background[0], std = 0.0;
    if (n > 0) {
        double mean = (double)s->background[1] / n;
        double var = (double)s->background[2] / n - mean * mean;
        std = var > 0 ? sqrt(var) : 0.0;
    }
    f[DB_HOWE_BACKGROUND_STD] = std;
}

void db_howe_predict(const db_howe_model *m, const double f[DB_HOWE_FEATURES], double *thi, int *c_index)
{
    double t = m->thi[0], c = m->c_index[0];
    for (int k = 0; k < DB_HOWE_FEATURES; k++) {
        double z = (f[k] - m->mean[k]) / m->scale[k];
        t += m->thi[1 + k] * z;
        c += m->c_index[1 + k] * z;
    }
    *thi = t < THI_MIN ? THI_MIN : t > THI_MAX ? THI_MAX : t;
    double r = floor(c + 0.5);
    *c_index = r < 0 ? 0 : r > DB_HOWE_LINKS - 1 ? DB_HOWE_LINKS - 1 : (int)r;
}

/* The rows of a model file: a keyword and its numbers. */
typedef struct model_row {
    const char *key;
    size_t offset, count;
    bool positive; /* every number must be above 0 */
} model_row;

static const model_row model_rows[] = {
    {.key = "mean", .offset = offsetof(db_howe_model, mean), .count = DB_HOWE_FEATURES},
    {.key = "scale", .offset = offsetof(db_howe_model, scale), .count = DB_HOWE_FEATURES, .positive = true},
    {.key = "thi", .offset = offsetof(db_howe_model, thi), .count = DB_HOWE_FEATURES + 1},
    {.key = "c_index", .offset = offsetof(db_howe_model, c_index), .count = DB_HOWE_FEATURES + 1},
};

#define MODEL_HEADER "docbin-howe-model"
#define MODEL_FIX "retrain it with docbin-bench --train-howe, or unset DOCBIN_HOWE_MODEL for the built-in model"

/* The numbers of row `row` from the rest of a line. */
static db_status parse_numbers(const model_row *row, char **save, const char *name, int line_no, double *values)
{
    size_t got = 0;
    for (const char *w; (w = strtok_r(NULL, " \t\r", save)) != NULL; got++) {
        char *end;
        errno = 0;
        double v = strtod(w, &end);
        if (got >= row->count || *end || end == w || errno == ERANGE || !isfinite(v) || (row->positive && !(v > 0)))
            return db_fail(DB_ERR_FORMAT, "%s:%d: '%s' takes %zu finite numbers%s; '%s' is not one of them; %s", name,
                           line_no, row->key, row->count, row->positive ? " above 0" : "", w, MODEL_FIX);
        values[got] = v;
    }
    if (got != row->count)
        return db_fail(DB_ERR_FORMAT, "%s:%d: '%s' takes %zu numbers, not %zu; %s", name, line_no, row->key,
                       row->count, got, MODEL_FIX);
    return DB_OK;
}

/* One line (NUL-terminated, no newline) of a model file. */
static db_status parse_line(char *line, const char *name, int line_no, int *header, bool *features, bool *seen,
                            db_howe_model *m)
{
    char *save = NULL, *key = strtok_r(line, " \t\r", &save);
    if (!key || *key == '#')
        return DB_OK;
    if (!*header) {
        char *version = strtok_r(NULL, " \t\r", &save);
        long long v = 0;
        *header = 1;
        if (strcmp(key, MODEL_HEADER) || !version || !db_parse_int(version, 0, 1000000, &v) ||
            strtok_r(NULL, " \t\r", &save))
            return db_fail(DB_ERR_FORMAT, "%s:%d: not a docbin Howe model (its first line must be '%s %d'); %s", name,
                           line_no, MODEL_HEADER, DB_HOWE_MODEL_VERSION, MODEL_FIX);
        if (v != DB_HOWE_MODEL_VERSION)
            return db_fail(DB_ERR_FORMAT, "%s: a Howe model of version %lld; this docbin reads version %d: %s", name, v,
                           DB_HOWE_MODEL_VERSION, MODEL_FIX);
        return DB_OK;
    }
    if (!strcmp(key, "features")) {
        if (*features)
            return db_fail(DB_ERR_FORMAT, "%s:%d: a second 'features' line; %s", name, line_no, MODEL_FIX);
        *features = true;
        for (int k = 0; k <= DB_HOWE_FEATURES; k++) {
            const char *w = strtok_r(NULL, " \t\r", &save);
            if (k < DB_HOWE_FEATURES ? !w || strcmp(w, db_howe_feature_names[k]) : w != NULL)
                return db_fail(DB_ERR_FORMAT, "%s:%d: the features must be '%s %s %s %s'; %s", name, line_no,
                               db_howe_feature_names[0], db_howe_feature_names[1], db_howe_feature_names[2],
                               db_howe_feature_names[3], MODEL_FIX);
        }
        return DB_OK;
    }
    for (int r = 0; r < DB_LEN(model_rows); r++) {
        if (strcmp(key, model_rows[r].key))
            continue;
        if (seen[r])
            return db_fail(DB_ERR_FORMAT, "%s:%d: a second '%s' line; %s", name, line_no, key, MODEL_FIX);
        seen[r] = true;
        return parse_numbers(&model_rows[r], &save, name, line_no, (double *)((char *)m + model_rows[r].offset));
    }
    return db_fail(DB_ERR_FORMAT, "%s:%d: unknown line '%s' (the lines are features, mean, scale, thi, c_index); %s",
                   name, line_no, key, MODEL_FIX);
}

db_status db_howe_model_parse(const char *text, const char *name, db_howe_model *m)
{
    char *copy = strdup(text);
    if (!copy)
        return db_fail(DB_ERR_NOMEM, "out of memory reading the Howe model %s", name);
    bool seen[DB_LEN(model_rows)] = {false}, features = false;
    int header = 0, line_no = 0;
    db_status st = DB_OK;
    for (char *line = copy; line && st == DB_OK; line_no++) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        st = parse_line(line, name, line_no + 1, &header, &features, seen, m);
        line = next;
    }
    if (st == DB_OK && !header)
        st = db_fail(DB_ERR_FORMAT, "%s: empty, not a docbin Howe model; %s", name, MODEL_FIX);
    for (int r = 0; r < DB_LEN(model_rows) && st == DB_OK; r++)
        if (!seen[r])
            st = db_fail(DB_ERR_FORMAT, "%s: no '%s' line; %s", name, model_rows[r].key, MODEL_FIX);
    if (st == DB_OK && !features)
        st = db_fail(DB_ERR_FORMAT, "%s: no 'features' line; %s", name, MODEL_FIX);
    free(copy);
    return st;
}

db_status db_howe_model_load(db_howe_model *m)
{
    const char *path = getenv("DOCBIN_HOWE_MODEL");
    if (!path || !*path)
        return db_howe_model_parse(db_howe_model_text, "the built-in Howe model", m);
    char *text = NULL;
    size_t size = 0;
    db_status st = db_read_file(path, DB_READ_TEXT_MAX, &text, &size);
    if (st != DB_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", db_error_message());
        return db_fail(st, "DOCBIN_HOWE_MODEL: %s; point it at a model file (docbin-bench --train-howe writes one) "
                       "or unset it for the built-in model", why);
    }
    if (memchr(text, '\0', size))
        st = db_fail(DB_ERR_FORMAT, "%s: a binary file, not a docbin Howe model; %s", path, MODEL_FIX);
    else
        st = db_howe_model_parse(text, path, m);
    free(text);
    return st;
}

static void write_row(char *buf, size_t size, const char *key, const double *v, int n)
{
    size_t len = strlen(buf);
    len += (size_t)snprintf(buf + len, size - len, "%s", key);
    for (int i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, " %.17g", v[i]);
    if (len < size)
        snprintf(buf + len, size - len, "\n");
}

db_status db_howe_model_write(const db_howe_model *m, const char *path, const char *comment)
{
    char text[8192];
    snprintf(text, sizeof text, "%s %d\n", MODEL_HEADER, DB_HOWE_MODEL_VERSION);
    for (const char *c = comment; c && *c;) {
        size_t n = strcspn(c, "\n"), len = strlen(text);
        snprintf(text + len, sizeof text - len, "# %.*s\n", (int)n, c);
        c += n + (c[n] == '\n');
    }
    size_t len = strlen(text);
    snprintf(text + len, sizeof text - len, "features %s %s %s %s\n", db_howe_feature_names[0],
             db_howe_feature_names[1], db_howe_feature_names[2], db_howe_feature_names[3]);
    write_row(text, sizeof text, "mean", m->mean, DB_HOWE_FEATURES);
    write_row(text, sizeof text, "scale", m->scale, DB_HOWE_FEATURES);
    write_row(text, sizeof text, "thi", m->thi, DB_HOWE_FEATURES + 1);
    write_row(text, sizeof text, "c_index", m->c_index, DB_HOWE_FEATURES + 1);
    if (strlen(text) + 1 >= sizeof text)
        return db_fail(DB_ERR_USAGE, "the Howe model's comment is too long to write %s", path);
    return db_write_file_atomic(path, text, strlen(text), NULL, 0);
}

/* ---- stages ---- */

/* Launches a per-work-item partial kernel over the pixels and sums the
** partials into `out` (bins values): contiguous chunks on a CPU device, a
** strided share per work-item on a GPU. `k`'s argument `chunk_arg` is the
** chunk, its last argument the partials. */
static db_status reduce_pixels(db_stage_run *run, cl_kernel k, int chunk_arg, cl_ulong n, cl_int bins, cl_mem out)
{
    int gpu = !(db_stage_device(run)->info.type & CL_DEVICE_TYPE_CPU);
    size_t units = db_stage_device(run)->info.compute_units, local = 256;
    cl_int items = gpu ? 64 * (cl_int)local : 64 * (cl_int)(units ? units : 1);
    cl_ulong chunk = gpu ? 0 : (n + (cl_ulong)items - 1) / (cl_ulong)items;
    cl_mem partial = db_stage_scratch(run, (size_t)items * (size_t)bins * sizeof(cl_ulong));
    cl_kernel reduce = db_stage_kernel(run, "howe_features.cl", "hf_reduce");
    if (!partial || !reduce)
        return db_error_status();
    cl_uint last = (cl_uint)chunk_arg + 1;
    cl_int err = clSetKernelArg(k, (cl_uint)chunk_arg, sizeof chunk, &chunk);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(k, last, sizeof partial, &partial);
    if (err != CL_SUCCESS)
        return db_cl_check(err, "setting a feature kernel's arguments", db_stage_device(run));
    const size_t global = (size_t)items, bins_global = (size_t)bins;
    db_status st = db_stage_launch(run, k, 1, &global, gpu ? &local : db_any_group);
    if (st == DB_OK)
        st = db_stage_args(run, reduce, 4, sizeof partial, &partial, sizeof items, &items, sizeof bins, &bins,
                           sizeof out, &out);
    return st == DB_OK ? db_stage_launch(run, reduce, 1, &bins_global, NULL) : st;
}

/* glcm: the counts of |level difference| of horizontal neighbours. */
static db_status glcm(db_stage_run *run)
{
    cl_kernel k = db_stage_kernel(run, "howe_features.cl", "hf_glcm");
    if (!k)
        return db_error_status();
    cl_mem gray = db_stage_in(run, 0);
    cl_int w = db_stage_width(run), h = db_stage_height(run);
    db_status st = db_stage_args(run, k, 3, sizeof gray, &gray, sizeof w, &w, sizeof h, &h);
    return st == DB_OK ? reduce_pixels(run, k, 3, (cl_ulong)w * (cl_ulong)h, GLCM_BINS, db_stage_out(run, 0)) : st;
}

/* edge-mean: the Canny edges at DB_HOWE_EDGE_THI, their count and gray sum. */
static db_status sum_edges(db_stage_run *run, int i, cl_mem edges, void *arg)
{
    (void)i;
    (void)arg;
    cl_kernel k = db_stage_kernel(run, "howe_features.cl", "hf_edges");
    if (!k)
        return db_error_status();
    cl_mem gray = db_stage_in(run, 1);
    cl_ulong n = (cl_ulong)db_stage_width(run) * (cl_ulong)db_stage_height(run);
    db_status st = db_stage_args(run, k, 3, sizeof gray, &gray, sizeof edges, &edges, sizeof n, &n);
    return st == DB_OK ? reduce_pixels(run, k, 3, n, EDGE_BINS, db_stage_out(run, 0)) : st;
}

static db_status edge_mean(db_stage_run *run)
{
    static const double thi = DB_HOWE_EDGE_THI;
    return db_canny_thresholds(run, &thi, 1, sum_edges, NULL);
}

/* background: the gray histogram (histogram.cl), Otsu's threshold (otsu.cl),
** and the pixels above it, their sum and their sum of squares. */
static db_status background(db_stage_run *run)
{
    int gpu = !(db_stage_device(run)->info.type & CL_DEVICE_TYPE_CPU);
    enum { GPU_GROUPS = 1024, GPU_LOCAL = 256, CPU_CHUNKS = 64 };
    cl_ulong n = (cl_ulong)db_stage_width(run) * (cl_ulong)db_stage_height(run);
    cl_uint parts = gpu ? GPU_GROUPS : CPU_CHUNKS;
    cl_ulong chunk = (n + parts - 1) / parts;
    cl_mem partial = db_stage_scratch(run, (size_t)parts * 256 * sizeof(cl_uint));
    cl_mem hist = db_stage_scratch(run, 256 * sizeof(cl_ulong));
    cl_mem threshold = db_stage_scratch(run, sizeof(cl_int));
    cl_kernel count = db_stage_kernel(run, "histogram.cl", gpu ? "histogram_groups" : "histogram_chunks");
    cl_kernel reduce = db_stage_kernel(run, "histogram.cl", "histogram_reduce");
    cl_kernel otsu = db_stage_kernel(run, "otsu.cl", "otsu_threshold");
    cl_kernel sums = db_stage_kernel(run, "howe_features.cl", "hf_background");
    if (!partial || !hist || !threshold || !count || !reduce || !otsu || !sums)
        return db_error_status();
    cl_mem gray = db_stage_in(run, 0), out = db_stage_out(run, 0);
    db_status st = gpu ? db_stage_args(run, count, 3, sizeof gray, &gray, sizeof n, &n, sizeof partial, &partial)
                       : db_stage_args(run, count, 5, sizeof gray, &gray, sizeof n, &n, sizeof chunk, &chunk,
                                       sizeof parts, &parts, sizeof partial, &partial);
    const size_t global = gpu ? (size_t)GPU_GROUPS * GPU_LOCAL : CPU_CHUNKS, local = GPU_LOCAL, bins = 256, one = 1;
    if (st == DB_OK)
        st = db_stage_launch(run, count, 1, &global, gpu ? &local : db_any_group);
    if (st == DB_OK)
        st = db_stage_args(run, reduce, 3, sizeof partial, &partial, sizeof parts, &parts, sizeof hist, &hist);
    if (st == DB_OK)
        st = db_stage_launch(run, reduce, 1, &bins, db_any_group);
    if (st == DB_OK)
        st = db_stage_args(run, otsu, 2, sizeof hist, &hist, sizeof threshold, &threshold);
    if (st == DB_OK)
        st = db_stage_launch(run, otsu, 1, &one, NULL);
    if (st == DB_OK)
        st = db_stage_args(run, sums, 3, sizeof hist, &hist, sizeof threshold, &threshold, sizeof out, &out);
    return st == DB_OK ? db_stage_launch(run, sums, 1, &one, NULL) : st;
}

/* Enqueues a write of up to 8 int64 values at `out`. */
static db_status write_values(db_stage_run *run, cl_mem out, const cl_long *v, cl_int n)
{
    cl_kernel k = db_stage_kernel(run, "howe_features.cl", "hf_values");
    if (!k)
        return db_error_status();
    cl_long a[8] = {0};
    for (int i = 0; i < n && i < 8; i++)
        a[i] = v[i];
    const size_t one = 1;
    db_status st = db_stage_args(run, k, 10, sizeof out, &out, sizeof n, &n, sizeof a[0], &a[0], sizeof a[1], &a[1],
                                 sizeof a[2], &a[2], sizeof a[3], &a[3], sizeof a[4], &a[4], sizeof a[5], &a[5],
                                 sizeof a[6], &a[6], sizeof a[7], &a[7]);
    return st == DB_OK ? db_stage_launch(run, k, 1, &one, NULL) : st;
}

static db_status keep_edges(db_stage_run *run, int i, cl_mem edges, void *arg)
{
    (void)i;
    (void)arg;
    cl_ulong n = (cl_ulong)db_stage_width(run) * (cl_ulong)db_stage_height(run);
    return db_howe_copy(run, edges, 0, db_stage_out(run, 0), 0, n);
}

/* predict: the features, the model's thi and c (or the job's where given),
** and the Canny edges at that thi. */
static db_status predict(db_stage_run *run)
{
    const db_job *job = db_stage_job(run);
    db_howe_stats s;
    db_status st = db_stage_read(run, db_stage_in(run, 1), 0, sizeof s.glcm, s.glcm);
    if (st == DB_OK)
        st = db_stage_read(run, db_stage_in(run, 2), 0, sizeof s.edges, s.edges);
    if (st == DB_OK)
        st = db_stage_read(run, db_stage_in(run, 3), 0, sizeof s.background, s.background);
    if (st != DB_OK)
        return st;
    double f[DB_HOWE_FEATURES], thi = job->params[DB_HOWE_THI], c = job->params[DB_HOWE_C];
    int c_index = -1;
    db_howe_features(&s, f);
    /* The model is read only when it is needed: a page with thi and c given runs without it. */
    if (!(thi > 0) || !(c > 0)) {
        db_howe_model model;
        double predicted;
        if ((st = db_howe_model_load(&model)) != DB_OK)
            return st;
        db_howe_predict(&model, f, &predicted, &c_index);
        thi = thi > 0 ? thi : predicted;
    }
    cl_int link = c > 0 ? db_howe_link_of(c) : db_howe_link(c_index);
    c = c > 0 ? c : db_howe_c(c_index);
    db_howe_probe *probe = db_howe_probe_current();
    if (probe) {
        probe->has_features = true;
        probe->stats = s;
        memcpy(probe->features, f, sizeof f);
        probe->thi = thi;
        probe->c_index = c_index;
    }
    cl_long values[PARAM_VALUES] = {
        [PARAM_LINK] = link,
        [PARAM_REPORTED + DB_HOWE_PREDICT_THI - DB_HOWE_PREDICT_THI] = lround(1000.0 * thi),
        [PARAM_REPORTED + DB_HOWE_PREDICT_C - DB_HOWE_PREDICT_THI] = lround(100.0 * c),
    };
    for (int k = 0; k < DB_HOWE_FEATURES; k++)
        values[PARAM_REPORTED + DB_HOWE_PREDICT_FEATURE - DB_HOWE_PREDICT_THI + k] = lround(1000.0 * f[k]);
    if ((st = write_values(run, db_stage_out(run, 1), values, PARAM_VALUES)) != DB_OK)
        return st;
    return db_canny_thresholds(run, &thi, 1, keep_edges, NULL);
}

/* graphcut: howe's cut at the predicted c; the report gets the prediction. */
static db_status graphcut(db_stage_run *run)
{
    cl_long link = 0;
    cl_mem params = db_stage_in(run, 3), report = db_stage_out(run, 1);
    db_status st = db_stage_read(run, params, PARAM_LINK * sizeof link, sizeof link, &link);
    if (st != DB_OK || (st = db_howe_graphcut(run, (cl_int)link)) != DB_OK)
        return st;
    cl_kernel k = db_stage_kernel(run, "howe_features.cl", "hf_copy_values");
    if (!k)
        return db_error_status();
    cl_int from = PARAM_REPORTED, to = DB_HOWE_PREDICT_THI, n = DB_HOWE_PREDICT_VALUES - DB_HOWE_PREDICT_THI;
    const size_t global = (size_t)n;
    st = db_stage_args(run, k, 5, sizeof params, &params, sizeof from, &from, sizeof report, &report, sizeof to, &to,
                       sizeof n, &n);
    return st == DB_OK ? db_stage_launch(run, k, 1, &global, NULL) : st;
}

/* ---- the algorithm ---- */

static const db_item items[N_ITEMS] = {
    [IMAGE] = {"image", DB_ITEM_INPUT, 1, "the decoded input, gray or RGB", NULL},
    [GRAY] = {"gray", DB_ITEM_PIXELS, 1, "gray as MATLAB's rgb2gray", NULL},
    [LAP2] = {"lap2", DB_ITEM_COMPUTED, 0, "2 x Laplacian per node, -1000 on bright background", db_howe_lap2_size},
    [GLCM] = {"glcm", DB_ITEM_FIXED, GLCM_BINS * sizeof(cl_ulong), "counts of |level difference| 0..7 of pairs", NULL},
    [EDGE_SUMS] = {"edge-sums", DB_ITEM_FIXED, EDGE_BINS * sizeof(cl_ulong), "edge pixels, their gray sum", NULL},
    [BACKGROUND] = {"background", DB_ITEM_FIXED, BACKGROUND_VALUES * sizeof(cl_ulong),
                    "pixels above Otsu's threshold, their sum and sum of squares", NULL},
    [EDGES] = {"edges", DB_ITEM_PIXELS, 1, "Canny edges at the predicted thi, 1 = edge", NULL},
    [PARAMS] = {"params", DB_ITEM_FIXED, PARAM_VALUES * sizeof(cl_long), "the link capacity, thi, c, features", NULL},
    [BINARY] = {"binary", DB_ITEM_PIXELS, 1, "0 = ink, 255 = background", NULL},
    [REPORT] = {"report", DB_ITEM_FIXED, DB_HOWE_PREDICT_VALUES * sizeof(cl_long), "the cut, thi, c and features",
                NULL},
};

static const db_stage stages[] = {
    {.name = "laplacian", .doc = "2 x Laplacian of the forward differences, -1000 at bright-background outliers",
     .in = DB_PORTS(IMAGE), .out = DB_PORTS(GRAY, LAP2), .impl = {db_howe_laplacian, db_howe_laplacian},
     .sources = {"laplacian.cl"}},
    {.name = "glcm", .doc = "co-occurrence of horizontal neighbours (8 levels): contrast, homogeneity",
     .in = DB_PORTS(GRAY), .out = DB_PORTS(GLCM), .impl = {glcm, glcm}, .sources = {"howe_features.cl"}},
    {.name = "edge-mean", .doc = "the gray level of the Canny edges at thi 0.4", .in = DB_PORTS(IMAGE, GRAY),
     .out = DB_PORTS(EDGE_SUMS), .impl = {edge_mean, edge_mean}, .sources = {"canny.cl", "howe_features.cl"}},
    {.name = "background", .doc = "the spread of the gray levels above Otsu's threshold", .in = DB_PORTS(GRAY),
     .out = DB_PORTS(BACKGROUND), .impl = {background, background},
     .sources = {"histogram.cl", "otsu.cl", "howe_features.cl"}},
    {.name = "predict", .doc = "thi and c from the features (the model), Canny edges at that thi",
     .in = DB_PORTS(IMAGE, GLCM, EDGE_SUMS, BACKGROUND), .out = DB_PORTS(EDGES, PARAMS),
     .impl = {predict, predict}, .sources = {"canny.cl", "howe_tune.cl", "howe_features.cl"}},
    {.name = "graphcut",
     .doc = "minimum cut at the predicted c (cpu: Boykov-Kolmogorov, gpu: push-relabel); ink = the sink side",
     .in = DB_PORTS(GRAY, LAP2, EDGES, PARAMS), .out = DB_PORTS(BINARY, REPORT), .impl = {graphcut, graphcut},
     .sources = {"howe_graph.cl", "pushrelabel.cl", "howe_features.cl"}},
};

static const db_param params[DB_HOWE_N_PARAMS] = {
    [DB_HOWE_C] = {.name = "c", .kind = DB_PARAM_REAL, .def = 0, .min = 0, .max = 65536,
                   .doc = "0: predicted; else this weight of the smoothness term"},
    [DB_HOWE_THI] = {.name = "thi", .kind = DB_PARAM_REAL, .def = 0, .min = 0.0, .max = 1.0,
                     .doc = "0: predicted; else this Canny high threshold"},
    [DB_HOWE_TLO] = {.name = "tlo", .kind = DB_PARAM_REAL, .def = 0.1, .min = 0.0, .max = 1.0,
                     .doc = "Canny low threshold (the model is trained at 0.1)"},
    [DB_HOWE_SIGMA] = {.name = "sigma", .kind = DB_PARAM_REAL, .def = 0.6, .min = 0.1, .max = 10,
                       .doc = "Canny's Gaussian sigma (the model is trained at 0.6)"},
    [DB_HOWE_RELABEL] = {.name = "relabel", .kind = DB_PARAM_INT, .def = DB_RELABEL_EXPONENTIAL, .min = 0,
                         .max = DB_RELABEL_COUNT - 1,
                         .doc = "global relabel strategy of the gpu cut (speed only; the image is the same)",
                         .names = db_relabel_names, .n_names = DB_RELABEL_COUNT},
};

static const db_report_field report[] = {
    {.name = "cut_ok", .index = DB_HOWE_CUT_OK, .if_zero = "out of memory in the graph cut", .fatal = 1},
    {.name = "flow", .index = DB_HOWE_CUT_FLOW},
    {.name = "thi_x1000", .index = DB_HOWE_PREDICT_THI},
    {.name = "c_x100", .index = DB_HOWE_PREDICT_C},
    {.name = "contrast_x1000", .index = DB_HOWE_PREDICT_FEATURE + DB_HOWE_CONTRAST},
    {.name = "homogeneity_x1000", .index = DB_HOWE_PREDICT_FEATURE + DB_HOWE_HOMOGENEITY},
    {.name = "edge_mean_x1000", .index = DB_HOWE_PREDICT_FEATURE + DB_HOWE_EDGE_MEAN},
    {.name = "background_std_x1000", .index = DB_HOWE_PREDICT_FEATURE + DB_HOWE_BACKGROUND_STD},
};

const db_algo db_algo_howe_predict = {
    .name = "howe-predict",
    .doc = "Howe's binarization with thi and c predicted from four image features (one cut)",
    .items = items,
    .n_items = DB_LEN(items),
    .input = IMAGE,
    .output = BINARY,
    .stages = stages,
    .n_stages = DB_LEN(stages),
    .params = params,
    .n_params = DB_LEN(params),
    .report_fields = report,
    .n_report_fields = DB_LEN(report),
    .report_item = REPORT,
    .report_wide = 1,
};
