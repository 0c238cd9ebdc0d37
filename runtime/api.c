/*
** api.c — the public interface (include/docbin.h) over the internal one:
** descriptions of devices and algorithms, methods, runs into the caller's
** memory, batches of files and evaluation. Every entry point checks what a
** caller outside docbin may get wrong (NULL pointers, sizes, strides) and
** names the call and the fix, since such a caller has no CLI in front of it.
*/
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/docbin.h"
#include "runtime/util.h"

struct db_method {
    const db_algo *algo;
    db_job job;
};

/* ---- images ------------------------------------------------------------------ */

/* Checks an image a caller describes: `what` names it in the message. */
static db_status check_image(const char *call, const db_image *img, const char *what)
{
    if (!img)
        return db_fail(DB_ERR_USAGE, "%s: %s is NULL; pass a db_image", call, what);
    if (img->channels != 1 && img->channels != 3)
        return db_fail(DB_ERR_FORMAT, "%s: %s has %d channels; give 1 (gray) or 3 (RGB)", call, what,
                       img->channels);
    if (img->width < 1 || img->height < 1)
        return db_fail(DB_ERR_FORMAT, "%s: %s is %dx%d; give an image of at least one pixel", call, what,
                       img->width, img->height);
    if (!img->data)
        return db_fail(DB_ERR_USAGE, "%s: %s has no pixels (data is NULL)", call, what);
    db_status st = db_image_check_size(img->width, img->height, img->channels, what);
    if (st != DB_OK)
        return st;
    if (img->stride < (size_t)img->width * (size_t)img->channels)
        return db_fail(DB_ERR_FORMAT, "%s: %s's stride is %zu bytes, less than a row of %zu; give the bytes from "
                       "one row's start to the next", call, what, img->stride,
                       (size_t)img->width * (size_t)img->channels);
    return DB_OK;
}

/* Checks that `out` can take the 1-channel result of a run on `in`. */
static db_status check_output(const char *call, const db_image *in, const db_image *out)
{
    if (!out)
        return db_fail(DB_ERR_USAGE, "%s: the output is NULL; pass a db_image with the caller's pixels", call);
    if (out->width != in->width || out->height != in->height || out->channels != 1)
        return db_fail(DB_ERR_USAGE, "%s: the output is %dx%d with %d channel%s; give one of the input's size, "
                       "%dx%d, with 1 channel", call, out->width, out->height, out->channels,
                       out->channels == 1 ? "" : "s", in->width, in->height);
    return check_image(call, out, "the output");
}

db_status db_image_load(const char *path, db_image **image)
{
    if (!image || !path)
        return db_fail(DB_ERR_USAGE, "db_image_load: %s is NULL", image ? "the path" : "the result pointer");
    *image = db_image_read(path);
    return *image ? DB_OK : db_error_status();
}

db_status db_image_save(const db_image *image, const char *path, int bits)
{
    if (!path)
        return db_fail(DB_ERR_USAGE, "db_image_save: the path is NULL");
    db_status st = check_image("db_image_save", image, "the image");
    if (st != DB_OK)
        return st;
    if (bits != 1 && bits != 8)
        return db_fail(DB_ERR_USAGE, "db_image_save: bits is %d; give 1 (binary) or 8", bits);
    if (bits == 1 && image->channels != 1)
        return db_fail(DB_ERR_USAGE, "db_image_save: %s: an RGB image is written with 8 bits; give bits 8", path);
    return db_image_write(image, path, DB_FILE_AUTO, bits);
}

/* ---- devices ------------------------------------------------------------------ */

int db_device_count(const db_context *ctx)
{
    return ctx ? ctx->n_devices : 0;
}

db_status db_device_describe(const db_context *ctx, int i, db_device_desc *desc)
{
    if (!ctx || !desc)
        return db_fail(DB_ERR_USAGE, "db_device_describe: the %s is NULL", ctx ? "description" : "context");
    if (i < 0 || i >= ctx->n_devices)
        return db_fail(DB_ERR_USAGE, "db_device_describe: there is no device %d; the context has %d (0 to %d)", i,
                       ctx->n_devices, ctx->n_devices - 1);
    const db_device_info *d = &ctx->devices[i];
    *desc = (db_device_desc){
        .platform_index = d->platform_index, .device_index = d->device_index, .platform = d->platform_name,
        .name = d->name, .type = db_device_type_name(d->type), .driver = d->driver_version,
        .compute_units = (int)d->compute_units, .memory = d->global_mem,
    };
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        if (ctx->chosen[r] == d)
            desc->roles |= 1u << r;
    }
    return DB_OK;
}

/* ---- algorithms ---------------------------------------------------------------- */

/* The public description of one algorithm, with the storage its pointers use. */
typedef struct algo_entry {
    db_algo_desc desc;
    const char *stages[DB_MAX_STAGES];
    const char *roles[DB_MAX_STAGES];
    db_param_desc params[DB_MAX_PARAMS];
    char defaults[DB_MAX_PARAMS][32];
    char choices[DB_MAX_PARAMS][256];
} algo_entry;

static algo_entry *algo_table;
static pthread_once_t algo_once = PTHREAD_ONCE_INIT;

/* `v` in the fewest digits that read back as the same double: "0.2", not "0.20000000000000001". */
static void format_number(char *buf, size_t size, double v)
{
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* Appends `word` to the space-separated list in buf. */
static void append_word(char *buf, size_t size, const char *word)
{
    size_t len = strlen(buf);
    snprintf(buf + len, size - len, "%s%s", len ? " " : "", word);
}

static void describe_param(const db_param *p, db_param_desc *d, char *def, size_t def_size, char *choices,
                           size_t choices_size)
{
    static const db_value_kind kinds[] = {
        [DB_PARAM_REAL] = DB_VALUE_REAL, [DB_PARAM_INT] = DB_VALUE_INT, [DB_PARAM_ODD_INT] = DB_VALUE_ODD_INT,
    };
    *d = (db_param_desc){.name = p->name, .doc = p->doc, .kind = kinds[p->kind], .def = def, .min = p->min,
                         .max = p->max};
    if (p->names) {
        d->kind = DB_VALUE_WORD;
        d->min = d->max = 0;
        snprintf(def, def_size, "%s", p->names[(int)p->def]);
        for (int c = 0; c < p->n_names; c++)
            append_word(choices, choices_size, p->names[c]);
        d->choices = choices;
        return;
    }
    format_number(def, def_size, p->def);
    if (p->choices) {
        for (int c = 0; c < p->n_choices; c++) {
            char v[32];
            format_number(v, sizeof v, p->choices[c]);
            append_word(choices, choices_size, v);
        }
        d->choices = choices;
    }
}

static void build_algo_table(void)
{
    int n = db_algo_count();
    algo_entry *t = calloc((size_t)n, sizeof *t);
    if (!t)
        return;
    for (int i = 0; i < n; i++) {
        const db_algo *a = db_algo_at(i);
        algo_entry *e = &t[i];
        for (int s = 0; s < a->n_stages; s++) {
            const db_stage *st = &a->stages[s];
            e->stages[s] = st->name;
            e->roles[s] = st->impl[DB_ROLE_CPU] && st->impl[DB_ROLE_GPU] ? "cpu,gpu"
                          : st->impl[DB_ROLE_CPU]                        ? "cpu"
                                                                         : "gpu";
        }
        for (int p = 0; p < a->n_params; p++)
            describe_param(&a->params[p], &e->params[p], e->defaults[p], sizeof e->defaults[p], e->choices[p],
                           sizeof e->choices[p]);
        e->desc = (db_algo_desc){
            .name = a->name, .doc = a->doc, .n_stages = a->n_stages, .stages = e->stages, .stage_roles = e->roles,
            .n_params = a->n_params, .params = e->params, .n_variants = a->n_variants, .variants = a->variants,
        };
    }
    algo_table = t;
}

const db_algo_desc *db_algo_describe(int i)
{
    pthread_once(&algo_once, build_algo_table);
    if (i < 0 || i >= db_algo_count()) {
        db_fail(DB_ERR_USAGE, "db_algo_describe: there is no algorithm %d; there are %d (0 to %d)", i,
                db_algo_count(), db_algo_count() - 1);
        return NULL;
    }
    if (!algo_table) {
        db_fail(DB_ERR_NOMEM, "db_algo_describe: out of memory for the descriptions");
        return NULL;
    }
    return &algo_table[i].desc;
}

/* ---- methods ------------------------------------------------------------------ */

static const char *const gray_rules[] = {[DB_GRAY_BT601] = "bt601", [DB_GRAY_QT] = "qt"};

db_status db_method_set(db_method *m, const char *name, const char *value)
{
    if (!m || !name || !value)
        return db_fail(DB_ERR_USAGE, "db_method_set: the %s is NULL", !m ? "method" : !name ? "name" : "value");
    const db_algo *a = m->algo;
    if (!strcmp(name, "variant"))
        return db_job_set_variant(a, &m->job, value);
    if (!strcmp(name, "gray")) {
        for (int g = 0; g < DB_LEN(gray_rules); g++)
            if (!strcmp(value, gray_rules[g])) {
                m->job.gray = (db_gray_rule)g;
                return DB_OK;
            }
        return db_fail(DB_ERR_USAGE, "gray takes bt601 (the default) or qt, not '%s'", value);
    }
    for (int p = 0; p < a->n_params; p++)
        if (!strcmp(a->params[p].name, name))
            return db_job_set(a, &m->job, name, value);
    char names[512] = "";
    for (int p = 0; p < a->n_params; p++)
        append_word(names, sizeof names, a->params[p].name);
    if (a->n_variants)
        append_word(names, sizeof names, "variant");
    append_word(names, sizeof names, "gray");
    return db_fail(DB_ERR_USAGE, "%s has no setting '%s'; its settings are: %s", a->name, name, names);
}

/* Applies "NAME=VALUE NAME=VALUE ..." in order. */
static db_status apply_settings(db_method *m, const char *settings)
{
    const char *p = settings;
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            return DB_OK;
        size_t len = 0;
        while (p[len] && !isspace((unsigned char)p[len]))
            len++;
        char word[256];
        if (len >= sizeof word)
            return db_fail(DB_ERR_USAGE, "a setting of %zu characters; give NAME=VALUE words such as \"window=75 "
                           "k=0.2\"", len);
        memcpy(word, p, len);
        word[len] = '\0';
        char *eq = strchr(word, '=');
        if (!eq || eq == word)
            return db_fail(DB_ERR_USAGE, "setting '%s' is not NAME=VALUE; give words such as \"window=75 k=0.2\"",
                           word);
        *eq = '\0';
        db_status st = db_method_set(m, word, eq + 1);
        if (st != DB_OK)
            return st;
        p += len;
    }
}

db_status db_method_new(const char *algo, const char *settings, db_method **method)
{
    if (!method)
        return db_fail(DB_ERR_USAGE, "db_method_new: the result pointer is NULL");
    *method = NULL;
    if (!algo)
        return db_fail(DB_ERR_USAGE, "db_method_new: no algorithm named; give one such as \"sauvola\" "
                       "(db_algo_describe lists them)");
    const db_algo *a = db_algo_find(algo);
    if (!a)
        return db_error_status();
    db_method *m = calloc(1, sizeof *m);
    if (!m)
        return db_fail(DB_ERR_NOMEM, "db_method_new: out of memory");
    m->algo = a;
    db_job_defaults(a, &m->job);
    db_status st = settings ? apply_settings(m, settings) : DB_OK;
    if (st != DB_OK) {
        free(m);
        return st;
    }
    *method = m;
    return DB_OK;
}

void db_method_free(db_method *m)
{
    free(m);
}

/* ---- runs ------------------------------------------------------------------------- */

static const char *const plan_sources[] = {
    [DB_PLAN_FROM_USER] = "given", [DB_PLAN_FROM_ESTIMATE] = "estimate", [DB_PLAN_FROM_WISDOM] = "wisdom",
    [DB_PLAN_FROM_MEASURE] = "measure",
};

/* Fills `times` from the profile of one run under `plan`. */
static db_status fill_times(db_profile *prof, const db_algo *algo, const db_plan *plan, db_times *times)
{
    _Static_assert(DB_MAX_STAGES <= DB_TIMES_MAX_STAGES, "db_times must hold every stage");
    db_status st = db_profile_resolve(prof);
    if (st != DB_OK)
        return st;
    memset(times, 0, sizeof *times);
    db_map_format(&plan->map, times->map, sizeof times->map);
    times->chosen_by = plan_sources[plan->source];
    times->wall_ms = db_profile_run_wall_ms(prof, 0);
    db_profile_row rows[64];
    int n = db_profile_run_rows(prof, 0, rows, DB_LEN(rows));
    if (n > DB_LEN(rows))
        n = DB_LEN(rows);
    times->n_stages = algo->n_stages;
    for (int s = 0; s < algo->n_stages; s++)
        times->stages[s] = (db_stage_time){.stage = algo->stages[s].name, .role = plan->map.role[s]};
    for (int i = 0; i < n; i++) {
        if (rows[i].kind != DB_REC_KERNEL) {
            times->copy_ms += rows[i].busy_ms;
            times->copy_bytes += rows[i].bytes;
            continue;
        }
        for (int s = 0; s < algo->n_stages; s++)
            if (!strcmp(rows[i].stage, algo->stages[s].name))
                times->stages[s].ms += rows[i].busy_ms;
    }
    return DB_OK;
}

/* The plan and the run, under the context's lock. With measure, *result may
** already hold the image when no times are asked for. */
static db_status plan_and_run(db_context *ctx, const db_method *m, db_plan_mode mode, const db_map *given,
                              const db_image *in, db_plan *plan, db_profile *prof, db_image **result)
{
    db_status st = DB_OK;
    if (mode == DB_PLAN_GIVEN) {
        memset(plan, 0, sizeof *plan);
        plan->map = *given;
        plan->source = DB_PLAN_FROM_USER;
    } else if (mode == DB_PLAN_MEASURE) {
        st = db_plan_measure(ctx, m->algo, &m->job, in, 3, "", plan, prof ? NULL : result);
    } else {
        st = db_plan_auto(ctx, m->algo, &m->job, in->width, in->height, in->channels, NULL, plan);
    }
    if (st == DB_OK && !*result)
        st = db_run(ctx, m->algo, &plan->map, &m->job, in, result, NULL, prof);
    return st;
}

db_status db_method_run(db_context *ctx, const db_method *m, const char *map, const db_image *in, db_image *out,
                        db_times *times)
{
    static const char call[] = "db_method_run";
    if (!ctx || !m)
        return db_fail(DB_ERR_USAGE, "%s: the %s is NULL", call, ctx ? "method" : "context");
    db_status st = check_image(call, in, "the input");
    if (st == DB_OK)
        st = check_output(call, in, out);
    db_plan_mode mode = db_plan_mode_of(map);
    db_map given = {0};
    if (st == DB_OK && mode == DB_PLAN_GIVEN)
        st = db_map_parse(m->algo, map, &given);
    if (st != DB_OK)
        return st;
    db_plan *plan = malloc(sizeof *plan);
    db_profile *prof = times ? db_profile_new() : NULL;
    if (!plan || (times && !prof)) {
        free(plan);
        db_profile_free(prof);
        return db_fail(DB_ERR_NOMEM, "%s: out of memory for the plan", call);
    }
    db_image *result = NULL;
    pthread_mutex_lock(&ctx->lock);
    st = plan_and_run(ctx, m, mode, &given, in, plan, prof, &result);
    pthread_mutex_unlock(&ctx->lock);
    if (st == DB_OK) {
        db_copy_rows(out->data, out->stride, result->data, result->stride, (size_t)in->width, (size_t)in->height);
        if (times)
            st = fill_times(prof, m->algo, plan, times);
    }
    db_image_free(result);
    db_profile_free(prof);
    free(plan);
    return st;
}

db_status db_binarize(db_context *ctx, const char *algo, const char *settings, const char *map, const db_image *in,
                      db_image *out)
{
    db_method *m = NULL;
    db_status st = db_method_new(algo, settings, &m);
    if (st == DB_OK)
        st = db_method_run(ctx, m, map, in, out, NULL);
    db_method_free(m);
    return st;
}

/* ---- batches ------------------------------------------------------------------------ */

/* The failed page of the lowest index, for the message of the whole batch. */
typedef struct first_failure {
    int index, failed;
    char input[1024];
    char message[2048];
} first_failure;

static void note_failure(const db_batch_result *r, void *user)
{
    first_failure *f = user;
    if (r->state != DB_BATCH_FAILED || (f->failed && r->index >= f->index))
        return;
    f->failed = 1;
    f->index = r->index;
    snprintf(f->input, sizeof f->input, "%.1023s", r->input);
    snprintf(f->message, sizeof f->message, "%.2047s", r->message);
}

db_status db_method_run_files(db_context *ctx, const db_method *m, const char *map, const char *const *inputs,
                              int n_inputs, const char *out_dir, const char *format, int *failed)
{
    static const char call[] = "db_method_run_files";
    static const char *const formats[] = {"png", "pnm", "pgm", "pbm"};
    if (failed)
        *failed = 0;
    if (!ctx || !m || !out_dir || (n_inputs > 0 && !inputs))
        return db_fail(DB_ERR_USAGE, "%s: the %s is NULL", call,
                       !ctx ? "context" : !m ? "method" : !out_dir ? "output directory" : "input list");
    if (n_inputs < 1)
        return db_fail(DB_ERR_USAGE, "%s: no inputs given; name images, @LIST files or directories", call);
    if (!format)
        format = "png";
    int f = 0;
    while (f < DB_LEN(formats) && strcmp(format, formats[f]))
        f++;
    if (f == DB_LEN(formats))
        return db_fail(DB_ERR_USAGE, "%s: format '%s'; give png, pnm, pgm (8-bit) or pbm", call, format);
    db_plan_mode mode = db_plan_mode_of(map);
    db_map given = {0};
    db_status st = mode == DB_PLAN_GIVEN ? db_map_parse(m->algo, map, &given) : DB_OK;
    if (st != DB_OK)
        return st;
    /* The lanes bind the context's own devices. */
    char specs[DB_ROLE_COUNT][32];
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        if (ctx->chosen[r])
            snprintf(specs[r], sizeof specs[r], "%d:%d", ctx->chosen[r]->platform_index,
                     ctx->chosen[r]->device_index);
    db_batch_list list = {0};
    for (int i = 0; i < n_inputs && st == DB_OK; i++)
        st = inputs[i] ? db_batch_list_add(&list, inputs[i])
                       : db_fail(DB_ERR_USAGE, "%s: input %d is NULL", call, i);
    if (st == DB_OK && list.n == 0)
        st = db_fail(DB_ERR_USAGE, "%s: no input images found (a directory gives its PNG, PNM, TIFF, JPEG "
                     "and JPEG 2000 files by extension; a list file one path per line)", call);
    if (st == DB_OK)
        st = db_batch_list_name_outputs(&list, out_dir, format);
    first_failure first = {0};
    db_batch_summary sum = {0};
    if (st == DB_OK) {
        db_batch_options opt = {
            .algo = m->algo, .mode = mode, .map = &given, .job = &m->job,
            .cpu_spec = ctx->chosen[DB_ROLE_CPU] ? specs[DB_ROLE_CPU] : NULL,
            .gpu_spec = ctx->chosen[DB_ROLE_GPU] ? specs[DB_ROLE_GPU] : NULL,
            .bits = !strcmp(format, "pgm") ? 8 : 1, .prog = "docbin", .on_image = note_failure, .user = &first,
        };
        st = db_batch_run(&opt, &list, &sum);
    }
    db_batch_list_free(&list);
    if (st != DB_OK)
        return st;
    if (failed)
        *failed = sum.failed;
    if (sum.failed)
        return db_fail(sum.worst, "%d of %d pages failed; the first, %.900s: %.900s", sum.failed, sum.total,
                       first.input, first.message);
    return DB_OK;
}

/* ---- evaluation ---------------------------------------------------------------------- */

db_status db_evaluate(const db_image *gt, const db_image *result, int pseudo, db_metrics *metrics)
{
    static const char call[] = "db_evaluate";
    if (!metrics)
        return db_fail(DB_ERR_USAGE, "%s: the metrics pointer is NULL", call);
    db_status st = check_image(call, gt, "the ground truth");
    if (st == DB_OK)
        st = check_image(call, result, "the result");
    if (st != DB_OK)
        return st;
    if (gt->width != result->width || gt->height != result->height)
        return db_fail(DB_ERR_FORMAT, "%s: the ground truth is %dx%d but the result %dx%d; a result must have its "
                       "ground truth's size", call, gt->width, gt->height, result->width, result->height);
    uint8_t *gt_mask = NULL, *bin_mask = NULL;
    double *pw = NULL, *rw = NULL;
    size_t n = (size_t)gt->width * (size_t)gt->height;
    if ((st = db_ink_mask(gt, "the ground truth", &gt_mask)) == DB_OK)
        st = db_ink_mask(result, "the result", &bin_mask);
    if (st == DB_OK && pseudo) {
        pw = malloc(n * sizeof *pw);
        rw = malloc(n * sizeof *rw);
        st = pw && rw ? db_pseudo_weights(gt_mask, gt->width, gt->height, pw, rw)
                      : db_fail(DB_ERR_NOMEM, "%s: out of memory for the pseudo weights of a %dx%d image", call,
                                gt->width, gt->height);
    }
    if (st == DB_OK)
        st = db_metrics_compute(gt_mask, bin_mask, gt->width, gt->height, pw, rw, metrics);
    free(pw);
    free(rw);
    free(gt_mask);
    free(bin_mask);
    return st;
}
