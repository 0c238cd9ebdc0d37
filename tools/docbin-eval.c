/*
** docbin-eval — quality of binarizations against their ground truth (DIBCO
** metrics), and of halftones against their originals.
** Argument parsing, file pairing and printing; the metrics live in libdocbin.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "runtime/docbin.h"
#include "tools/cli.h"

/* A file could not be read or is unusable, or a pair of --gt-dir failed (--help). */
enum { EXIT_FILE = 1 };

static const char usage_text[] =
    "usage: docbin-eval GT BIN [--pweights P.dat --rweights R.dat | --no-pseudo] [--json]\n"
    "       docbin-eval --gt-dir DIR --bin-dir DIR [--no-pseudo] [--json]\n"
    "       docbin-eval --halftone ORIG HT [--json]\n"
    "       docbin-eval --help | --version\n"
    "\n"
    "Scores a binarized page BIN against its ground truth GT with the DIBCO metrics:\n"
    "F-measure, precision, recall, pseudo-F, pseudo-precision, pseudo-recall (percent),\n"
    "PSNR (dB), DRD, NRM, MCC, accuracy, the counts TP/TN/FP/FN, NUBN (non-uniform 8x8\n"
    "blocks of the GT) and the DRD sum. Ink is black (0) in both images, background white\n"
    "(255); GT and BIN must be binary (1-bit PNG, PBM, or gray holding only 0 and 255) and\n"
    "of the same size. Images: PNG or PNM.\n"
    "\n"
    "Pseudo-metrics weigh every pixel with DIBCO's weights: given as the two weight files of\n"
    "DIBCO's BinEvalWeights tool (--pweights GT_PWeights.dat --rweights GT_RWeights.dat,\n"
    "one decimal per pixel in raster order, dot decimals), or else generated from the GT as\n"
    "that tool does (Ntirogiannis et al. 2013). --no-pseudo skips them.\n"
    "\n"
    "  --pweights FILE   DIBCO pseudo-precision weights (stored PW - 1); needs --rweights\n"
    "  --rweights FILE   DIBCO pseudo-recall weights; needs --pweights\n"
    "  --no-pseudo       do not compute pseudo-metrics (reported as null / '-')\n"
    "  --json            one JSON object per line instead of the table; values that are\n"
    "                    undefined (inf, nan) are null\n"
    "  --gt-dir DIR      many pairs: every .png .pbm .pgm .pnm in DIR is a ground truth ...\n"
    "  --bin-dir DIR     ... scored against the file of DIR with the same base name, or, for a\n"
    "                    GT named ID_gt.EXT (DIBCO), the file ID.EXT (any of the four\n"
    "                    extensions). Prints a row per image, then the mean of each metric\n"
    "                    over the images where it is defined; with --json one line per image\n"
    "                    and a last line {\"mean\": {...}, \"defined\": {...}, \"images\": N,\n"
    "                    \"failed\": K}. A pair that fails (no result, unreadable file, size\n"
    "                    mismatch) is reported on stderr (and as an \"error\" line with --json)\n"
    "                    and the others still finish.\n"
    "  --halftone        score a halftone HT (binary) against its original ORIG (gray; RGB\n"
    "                    becomes gray with BT.601): HVS error = mean (a - v*b)^2 and\n"
    "                    HPSNR = 10 log10(1 / mean (v*a - v*b)^2) in dB, with a, b in [0, 1]\n"
    "                    and v a Gaussian filter, sigma 1.2, 9x9, zero outside the image\n"
    "                    (JSON keys hvs_error, hpsnr)\n"
    "  -h, --help        this text\n"
    "      --version     the library version\n"
    "\n"
    "Undefined values: PSNR of a perfect result is inf; NRM is inf when the GT is all white\n"
    "or all black; DRD is nan when the GT has no non-uniform 8x8 block; MCC is 0 when its\n"
    "denominator is 0; F, precision and recall are 0 when TP is 0. JSON prints inf and nan\n"
    "as null.\n"
    "\n"
    "Exit status: 0 success; 1 a file could not be read or is unusable (not binary, sizes\n"
    "differ, weight file with the wrong number of values), or any pair of --gt-dir failed;\n"
    "2 bad arguments.\n";

/* Where the pseudo-metric weights of a pair come from. */
typedef enum weight_source { WEIGHTS_NONE, WEIGHTS_FILES, WEIGHTS_GENERATED } weight_source;

static const char *weight_source_name[] = {"none", "files", "generated"};

/* Reads a GT and a BIN, checks them, gets the weights and computes every metric. */
static db_status evaluate_pair(const char *gt_path, const char *bin_path, const char *pw_path,
                               const char *rw_path, weight_source weights, db_metrics *m)
{
    db_image *gt = db_image_read(gt_path), *bin = gt ? db_image_read(bin_path) : NULL;
    uint8_t *gt_mask = NULL, *bin_mask = NULL;
    double *pw = NULL, *rw = NULL;
    int w = 0, h = 0;
    db_status st = DB_OK;
    if (!gt || !bin) {
        st = db_error_status();
        goto done;
    }
    if (gt->width != bin->width || gt->height != bin->height) {
        st = db_fail(DB_ERR_FORMAT, "%s is %dx%d but %s is %dx%d; a result must have its ground "
                                    "truth's size",
                     gt_path, gt->width, gt->height, bin_path, bin->width, bin->height);
        goto done;
    }
    if ((st = db_ink_mask(gt, gt_path, &gt_mask)) != DB_OK
        || (st = db_ink_mask(bin, bin_path, &bin_mask)) != DB_OK)
        goto done;
    w = gt->width;
    h = gt->height;
    if (weights == WEIGHTS_FILES) {
        if ((st = db_weights_read(pw_path, w, h, &pw)) != DB_OK
            || (st = db_weights_read(rw_path, w, h, &rw)) != DB_OK)
            goto done;
    } else if (weights == WEIGHTS_GENERATED) {
        size_t n = (size_t)w * (size_t)h;
        pw = malloc(n * sizeof *pw);
        rw = malloc(n * sizeof *rw);
        if (!pw || !rw) {
            st = db_fail(DB_ERR_NOMEM, "%s: out of memory for the pseudo weights of a %dx%d image",
                         gt_path, w, h);
            goto done;
        }
        if ((st = db_pseudo_weights(gt_mask, w, h, pw, rw)) != DB_OK)
            goto done;
    }
    st = db_metrics_compute(gt_mask, bin_mask, w, h, pw, rw, m);
done:
    free(pw);
    free(rw);
    free(gt_mask);
    free(bin_mask);
    db_image_free(gt);
    db_image_free(bin);
    return st;
}

static void json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

/* JSON has no inf or nan: an undefined value is null. */
static void json_number(double v)
{
    if (isfinite(v))
        printf("%.17g", v);
    else
        fputs("null", stdout);
}

/* The metrics that are averaged over many pairs, in print order. */
enum metric {
    M_FMEASURE, M_PRECISION, M_RECALL, M_PSEUDO_F, M_PSEUDO_P, M_PSEUDO_R,
    M_PSNR, M_DRD, M_NRM, M_MCC, M_ACCURACY, N_METRICS
};

static const struct {
    const char *key;     /* JSON key */
    const char *label;   /* row label of the one-pair table */
    const char *column;  /* column heading of the many-pair table */
    const char *unit;
    int decimals;
} metric_info[N_METRICS] = {
    [M_FMEASURE] = {"fmeasure", "F-measure", "F", "%", 4},
    [M_PRECISION] = {"precision", "precision", "P", "%", 4},
    [M_RECALL] = {"recall", "recall", "R", "%", 4},
    [M_PSEUDO_F] = {"pseudo_fmeasure", "pseudo-F", "pseudo-F", "%", 4},
    [M_PSEUDO_P] = {"pseudo_precision", "pseudo-precision", "pseudo-P", "%", 4},
    [M_PSEUDO_R] = {"pseudo_recall", "pseudo-recall", "pseudo-R", "%", 4},
    [M_PSNR] = {"psnr", "PSNR", "PSNR", "dB", 4},
    [M_DRD] = {"drd", "DRD", "DRD", "", 6},
    [M_NRM] = {"nrm", "NRM", "NRM", "", 6},
    [M_MCC] = {"mcc", "MCC", "MCC", "", 6},
    [M_ACCURACY] = {"accuracy", "accuracy", "accuracy", "%", 4},
};

static int is_pseudo(int k)
{
    return k == M_PSEUDO_F || k == M_PSEUDO_P || k == M_PSEUDO_R;
}

/* One cell of the many-pair table; pseudo-metrics left out by --no-pseudo show '-'. */
static void print_cell(int k, double v, weight_source weights)
{
    if (is_pseudo(k) && weights == WEIGHTS_NONE)
        printf(" %10s", "-");
    else
        printf(" %10.4f", v);
}

static void metric_values(const db_metrics *m, double v[N_METRICS])
{
    v[M_FMEASURE] = m->fmeasure;
    v[M_PRECISION] = m->precision;
    v[M_RECALL] = m->recall;
    v[M_PSEUDO_F] = m->has_pseudo ? m->pseudo_fmeasure : NAN;
    v[M_PSEUDO_P] = m->has_pseudo ? m->pseudo_precision : NAN;
    v[M_PSEUDO_R] = m->has_pseudo ? m->pseudo_recall : NAN;
    v[M_PSNR] = m->psnr;
    v[M_DRD] = m->drd;
    v[M_NRM] = m->nrm;
    v[M_MCC] = m->mcc;
    v[M_ACCURACY] = m->accuracy;
}

static void print_json(const char *gt, const char *bin, weight_source weights, const db_metrics *m)
{
    double v[N_METRICS];
    metric_values(m, v);
    fputs("{\"gt\": ", stdout);
    json_string(gt);
    fputs(", \"bin\": ", stdout);
    json_string(bin);
    printf(", \"weights\": \"%s\"", weight_source_name[weights]);
    for (int i = 0; i < N_METRICS; i++) {
        printf(", \"%s\": ", metric_info[i].key);
        json_number(v[i]);
    }
    printf(", \"tp\": %lld, \"tn\": %lld, \"fp\": %lld, \"fn\": %lld, \"nubn\": %lld, "
           "\"drd_sum\": %llu}\n",
           (long long)m->counts.tp, (long long)m->counts.tn, (long long)m->counts.fp,
           (long long)m->counts.fn, (long long)m->nubn, (unsigned long long)m->drd_sum);
}

static void print_table(const char *gt, const char *bin, weight_source weights, const db_metrics *m)
{
    static const char *weight_note[] = {
        [WEIGHTS_NONE] = "(--no-pseudo)",
        [WEIGHTS_FILES] = "(weights from the .dat files)",
        [WEIGHTS_GENERATED] = "(weights generated from the GT)",
    };
    double v[N_METRICS];
    metric_values(m, v);
    printf("%-18s %s\n%-18s %s\n", "ground truth", gt, "result", bin);
    for (int i = 0; i < N_METRICS; i++) {
        printf("%-18s ", metric_info[i].label);
        if (is_pseudo(i) && !m->has_pseudo)
            printf("%s", "-");
        else
            printf("%.*f%s%s", metric_info[i].decimals, v[i], metric_info[i].unit[0] ? " " : "",
                   metric_info[i].unit);
        if (i == M_PSEUDO_F)
            printf("  %s", weight_note[weights]);
        putchar('\n');
    }
    printf("%-18s %lld / %lld / %lld / %lld\n", "TP / TN / FP / FN", (long long)m->counts.tp,
           (long long)m->counts.tn, (long long)m->counts.fp, (long long)m->counts.fn);
    printf("%-18s %lld\n", "NUBN", (long long)m->nubn);
    printf("%-18s %llu (x 1e-6)\n", "sum of DRD_k", (unsigned long long)m->drd_sum);
}

static int run_halftone(const char *orig_path, const char *ht_path, int json)
{
    db_image *orig = db_image_read(orig_path), *ht = orig ? db_image_read(ht_path) : NULL;
    uint8_t *mask = NULL;
    double error = 0, hpsnr = 0;
    db_status st = DB_OK;
    if (!orig || !ht)
        st = db_error_status();
    else if (orig->width != ht->width || orig->height != ht->height)
        st = db_fail(DB_ERR_FORMAT, "%s is %dx%d but %s is %dx%d; a halftone must have its "
                                    "original's size",
                     orig_path, orig->width, orig->height, ht_path, ht->width, ht->height);
    else if ((st = db_ink_mask(ht, ht_path, &mask)) == DB_OK) /* names the file if not binary */
        st = db_halftone_quality(orig, ht, &error, &hpsnr);
    free(mask);
    db_image_free(orig);
    db_image_free(ht);
    if (st != DB_OK)
        return cli_fail(st);
    if (json) {
        fputs("{\"orig\": ", stdout);
        json_string(orig_path);
        fputs(", \"ht\": ", stdout);
        json_string(ht_path);
        fputs(", \"hvs_error\": ", stdout);
        json_number(error);
        fputs(", \"hpsnr\": ", stdout);
        json_number(hpsnr);
        fputs("}\n", stdout);
    } else {
        printf("%-10s %s\n%-10s %s\n", "original", orig_path, "halftone", ht_path);
        printf("%-10s %.8f  (mean (a - v*b)^2, v Gaussian sigma 1.2, 9x9)\n", "HVS error", error);
        printf("%-10s %.4f dB\n", "HPSNR", hpsnr);
    }
    return CLI_OK;
}

/* ---- many pairs ---- */

/* The formats a ground truth or a result can be in: binary or gray images (a
** .ppm holds RGB, never one of them). */
static const char *const gray_exts[] = {".png", ".pbm", ".pgm", ".pnm"};
enum { N_GRAY_EXTS = sizeof gray_exts / sizeof gray_exts[0] };

static int is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Finds the result for ground truth `gt_name` in `bin_dir`: the same file name,
** else the same base name with any of gray_exts, else for ID_gt.EXT (DIBCO)
** ID with any of gray_exts. Writes the path to `path`; on failure an error
** names what was looked for. */
static db_status find_result(const char *gt_dir, const char *gt_name, const char *bin_dir,
                             char *path, size_t size)
{
    snprintf(path, size, "%s/%s", bin_dir, gt_name);
    if (is_file(path))
        return DB_OK;
    const char *ext = db_image_file_ext(gt_name, gray_exts, N_GRAY_EXTS);
    int base_len = (int)(ext - gt_name);
    int id_len = base_len > 3 && !strncasecmp(gt_name + base_len - 3, "_gt", 3) ? base_len - 3 : 0;
    char found[2][4096];
    int n_found = 0;
    for (int b = 0; b < 2; b++) {
        int len = b == 0 ? base_len : id_len;
        if (!len)
            continue;
        for (int i = 0; i < N_GRAY_EXTS; i++) {
            char candidate[4096];
            snprintf(candidate, sizeof candidate, "%s/%.*s%s", bin_dir, len, gt_name, gray_exts[i]);
            if (is_file(candidate)) {
                if (n_found < 2)
                    snprintf(found[n_found], sizeof found[0], "%s", candidate);
                n_found++;
            }
        }
    }
    if (n_found == 1) {
        snprintf(path, size, "%s", found[0]);
        return DB_OK;
    }
    if (n_found > 1)
        return db_fail(DB_ERR_FORMAT, "%s/%s: several results match (%s, %s%s); keep one per "
                                      "ground truth",
                       gt_dir, gt_name, found[0], found[1], n_found > 2 ? ", ..." : "");
    if (id_len)
        return db_fail(DB_ERR_IO, "%s/%s: no result in %s (looked for %.*s.* and %.*s.* with "
                                  "extension .png .pbm .pgm .pnm)",
                       gt_dir, gt_name, bin_dir, base_len, gt_name, id_len, gt_name);
    return db_fail(DB_ERR_IO, "%s/%s: no result in %s (looked for %.*s.* with extension .png "
                              ".pbm .pgm .pnm)",
                   gt_dir, gt_name, bin_dir, base_len, gt_name);
}

/* One stderr line for a failed pair that names both files, without repeating
** what the library's message already names. */
static void report_pair_error(const char *gt_path, const char *bin_path)
{
    const char *msg = db_error_message();
    int name_gt = !strstr(msg, gt_path), name_bin = bin_path && !strstr(msg, bin_path);
    fprintf(stderr, "docbin-eval: %s%s%s%s%s\n", name_gt ? gt_path : "", name_gt && name_bin ? " vs " : "",
            name_bin ? bin_path : "", name_gt || name_bin ? ": " : "", msg);
}

static int run_dirs(const char *gt_dir, const char *bin_dir, weight_source weights, int json)
{
    struct stat sb;
    if (stat(bin_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return cli_fail(db_fail(DB_ERR_IO, "cannot read directory %s: %s", bin_dir,
                            stat(bin_dir, &sb) != 0 ? strerror(errno) : "not a directory"));
    char **names;
    size_t count;
    db_status st = db_image_list_dir(gt_dir, gray_exts, N_GRAY_EXTS, &names, &count);
    if (st != DB_OK)
        return cli_fail(st);
    if (!count) {
        db_image_list_free(names, count);
        return cli_fail(db_fail(DB_ERR_IO, "%s holds no ground truth (no .png .pbm .pgm .pnm file)",
                            gt_dir));
    }
    int name_width = 5;
    for (size_t i = 0; i < count; i++)
        if ((int)strlen(names[i]) > name_width)
            name_width = (int)strlen(names[i]);
    if (!json) {
        printf("%-*s", name_width, "image");
        for (int k = 0; k < N_METRICS; k++)
            printf(" %10s", metric_info[k].column);
        putchar('\n');
    }
    double sum[N_METRICS] = {0};
    size_t defined[N_METRICS] = {0}, done = 0, failed = 0;
    for (size_t i = 0; i < count; i++) {
        char gt_path[8192], bin_path[8192];
        snprintf(gt_path, sizeof gt_path, "%s/%s", gt_dir, names[i]);
        db_metrics m;
        st = find_result(gt_dir, names[i], bin_dir, bin_path, sizeof bin_path);
        int found = st == DB_OK;
        if (st == DB_OK)
            st = evaluate_pair(gt_path, bin_path, NULL, NULL, weights, &m);
        if (st != DB_OK) {
            failed++;
            report_pair_error(gt_path, found ? bin_path : NULL);
            if (json) {
                fputs("{\"gt\": ", stdout);
                json_string(gt_path);
                fputs(", \"bin\": ", stdout);
                if (found)
                    json_string(bin_path);
                else
                    fputs("null", stdout);
                fputs(", \"error\": ", stdout);
                json_string(db_error_message());
                fputs("}\n", stdout);
            }
            fflush(stdout);
            continue;
        }
        done++;
        double v[N_METRICS];
        metric_values(&m, v);
        for (int k = 0; k < N_METRICS; k++)
            if (isfinite(v[k])) {
                sum[k] += v[k];
                defined[k]++;
            }
        if (json) {
            print_json(gt_path, bin_path, weights, &m);
        } else {
            printf("%-*s", name_width, names[i]);
            for (int k = 0; k < N_METRICS; k++)
                print_cell(k, v[k], weights);
            putchar('\n');
        }
        fflush(stdout);
    }
    double mean[N_METRICS];
    for (int k = 0; k < N_METRICS; k++)
        mean[k] = defined[k] ? sum[k] / (double)defined[k] : NAN;
    if (json) {
        fputs("{\"mean\": {", stdout);
        for (int k = 0; k < N_METRICS; k++) {
            printf("%s\"%s\": ", k ? ", " : "", metric_info[k].key);
            json_number(mean[k]);
        }
        fputs("}, \"defined\": {", stdout);
        for (int k = 0; k < N_METRICS; k++)
            printf("%s\"%s\": %zu", k ? ", " : "", metric_info[k].key, defined[k]);
        printf("}, \"images\": %zu, \"failed\": %zu}\n", done, failed);
    } else {
        printf("%-*s", name_width, "mean");
        for (int k = 0; k < N_METRICS; k++)
            print_cell(k, mean[k], weights);
        printf("\nmeans over %zu image%s", done, done == 1 ? "" : "s");
        for (int k = 0; k < N_METRICS; k++)
            if (defined[k] != done && !(is_pseudo(k) && weights == WEIGHTS_NONE))
                printf("; %s over %zu (undefined for the others)", metric_info[k].label, defined[k]);
        if (failed)
            printf("; %zu pair%s failed", failed, failed == 1 ? "" : "s");
        putchar('\n');
    }
    db_image_list_free(names, count);
    if (failed) {
        fprintf(stderr, "docbin-eval: %zu of %zu pairs failed\n", failed, count);
        return EXIT_FILE;
    }
    return CLI_OK;
}

/* Everything the command line asks for. */
typedef struct request {
    const char *pw_path, *rw_path, *gt_dir, *bin_dir;
    bool no_pseudo, json, halftone;
} request;

#define OPT(...) CLI_OPT(request, __VA_ARGS__)
static const cli_option options[] = {
    OPT("pweights", 0, CLI_STRING, pw_path),
    OPT("rweights", 0, CLI_STRING, rw_path),
    OPT("no-pseudo", 0, CLI_FLAG, no_pseudo),
    OPT("json", 0, CLI_FLAG, json),
    OPT("halftone", 0, CLI_FLAG, halftone),
    OPT("gt-dir", 0, CLI_STRING, gt_dir),
    OPT("bin-dir", 0, CLI_STRING, bin_dir),
};

/* The pseudo-metrics' weights as the options ask; -1 after a usage line. */
static int weights_of(const request *rq, weight_source *weights)
{
    bool given = rq->pw_path || rq->rw_path;
    if (!rq->pw_path != !rq->rw_path)
        return cli_usage("--pweights and --rweights must be given together");
    if (given && rq->no_pseudo)
        return cli_usage("--no-pseudo contradicts --pweights/--rweights");
    if (given && (rq->gt_dir || rq->bin_dir))
        return cli_usage("--pweights/--rweights are per image; with --gt-dir the weights are generated (or use "
                         "--no-pseudo)");
    *weights = rq->no_pseudo ? WEIGHTS_NONE : given ? WEIGHTS_FILES : WEIGHTS_GENERATED;
    return -1;
}

int main(int argc, char **argv)
{
    cli_prog = "docbin-eval";
    request rq = {0};
    int first, code = cli_parse(argc, argv, usage_text, options, DB_LEN(options), &rq, &first);
    if (code >= 0)
        return code;
    int n_args = argc - first;
    char **args = argv + first;
    if (rq.halftone) {
        if (rq.pw_path || rq.rw_path || rq.no_pseudo || rq.gt_dir || rq.bin_dir)
            return cli_usage("--halftone takes only ORIG HT and --json");
        if (n_args != 2)
            return cli_usage("--halftone needs ORIG and HT");
        return run_halftone(args[0], args[1], rq.json);
    }
    weight_source weights = WEIGHTS_GENERATED;
    if ((code = weights_of(&rq, &weights)) >= 0)
        return code;
    if (rq.gt_dir || rq.bin_dir) {
        if (!rq.gt_dir || !rq.bin_dir)
            return cli_usage("--gt-dir and --bin-dir must be given together");
        if (n_args)
            return cli_usage("--gt-dir/--bin-dir take no GT BIN arguments");
        return run_dirs(rq.gt_dir, rq.bin_dir, weights, rq.json);
    }
    if (n_args != 2)
        return cli_usage(n_args < 2 ? "needs a ground truth GT and a result BIN"
                                    : "too many arguments; give one GT and one BIN");
    db_metrics m;
    db_status st = evaluate_pair(args[0], args[1], rq.pw_path, rq.rw_path, weights, &m);
    if (st != DB_OK)
        return cli_fail(st);
    if (rq.json)
        print_json(args[0], args[1], weights, &m);
    else
        print_table(args[0], args[1], weights, &m);
    return CLI_OK;
}
