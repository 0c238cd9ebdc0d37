/*
** docbin-synth — writes synthetic degraded document pages and their exact
** ground truth, for tests and benchmarks without any download.
** Argument parsing and file names only; the generator is bench/synth.c.
*/
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bench/synth.h"
#include "runtime/docbin.h"

/* Exit codes, documented in --help. */
enum exit_code {
    EXIT_OK = 0,
    EXIT_FILE = 1,  /* an output could not be written, or the page does not fit in memory */
    EXIT_USAGE = 2  /* bad arguments */
};

static const char usage_text[] =
    "usage: docbin-synth [options] -o PAGE.png [--gt GT.png]\n"
    "       docbin-synth [options] --count N --out-dir DIR\n"
    "\n"
    "Writes a synthetic degraded document page (text-like glyphs in justified lines and\n"
    "paragraphs on aged paper) and its exact ground truth: 0 (black) exactly where the\n"
    "glyph renderer put ink, before any degradation, 255 elsewhere. Bleed-through,\n"
    "stains and noise are never ink.\n"
    "\n"
    "Output:\n"
    "  -o, --output FILE      the page: 8-bit RGB (or gray with --gray) PNG, or PNM by extension\n"
    "      --gt FILE          the ground truth: 1-bit PNG (or PBM)\n"
    "      --count N          write N pages with seeds SEED, SEED+1, ... into --out-dir as\n"
    "      --out-dir DIR      page-0001.png and page-0001_gt.png, page-0002.png, ... (DIR is\n"
    "                         created if missing)\n"
    "Page:\n"
    "      --seed N           the page's identity, 0..4294967295 (default 1)\n"
    "      --size WxH         page size in pixels (default 2516x3272, A4 at 300 dpi)\n"
    "      --a4               A4 at 300 dpi, 2516x3272\n"
    "      --dpi D            text resolution (default 300); without --size, also an A4 page\n"
    "                         at D dpi (2516x3272 scaled by D/300)\n"
    "      --gray             8-bit gray page on white-gray paper (default: RGB, yellowish paper)\n"
    "      --photo            instead of a page, a photograph-like gray picture for halftoning\n"
    "                         (sky, hills, soft discs, a strip from black to white; --size, --seed)\n"
    "Text (pixels; 0 = derived from --dpi):\n"
    "      --line-height PX   baseline to baseline (default 0: dpi/5, 60 at 300 dpi)\n"
    "      --stroke PX        broad width of the oval pen, 1..255 (default 0: line height/15)\n"
    "      --margin PX        blank border around the text (default 0: dpi*5/6, 250 at 300 dpi)\n"
    "      --paragraph N      mean lines per paragraph; 0: no paragraph breaks (default 9)\n"
    "      --ink LEVEL        gray level of ink before degradations (default 40)\n"
    "      --paper LEVEL      gray level of clean paper, above --ink (default 226)\n"
    "Degradations (each 0 switches it off; levels are gray levels unless said):\n"
    "      --illumination L   darkening of the dimmest part of a smooth light field (default 50)\n"
    "      --texture L        amplitude of spatially correlated paper grain (default 12)\n"
    "      --stains L         darkness at the heart of a stain (default 40)\n"
    "      --stain-count N    number of stains (default 3)\n"
    "      --bleed L          darkening by the mirrored, blurred text of the other side where\n"
    "                         it is fully inked (default 40)\n"
    "      --fading PCT       percent of ink contrast lost where ink is most faded, 0..100\n"
    "                         (default 60)\n"
    "      --blur N           binomial blur of 2N+1 taps, sigma = sqrt(N/2) pixels, 0..10\n"
    "                         (default 1)\n"
    "      --noise L          standard deviation of per-pixel additive noise (default 5)\n"
    "      --clean            switch every degradation off (options after it may switch some on)\n"
    "\n"
    "  -h, --help             this text\n"
    "      --version          the version\n"
    "\n"
    "Determinism: the generator uses only integer arithmetic and its own random generator,\n"
    "on one thread, so the same options (seed included) give byte-identical images on every\n"
    "machine, compiler and CPU.\n"
    "\n"
    "Exit status: 0 success; 1 an output could not be written or the page does not fit in\n"
    "memory; 2 bad arguments. Outputs are written atomically.\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("docbin-synth: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (see docbin-synth --help)\n", stderr);
    va_end(ap);
    return EXIT_USAGE;
}

/* A size no image can have is a bad argument; one this machine cannot hold is not. */
static int fail(db_status st)
{
    fprintf(stderr, "docbin-synth: %s\n", db_error_message());
    /* Impossible sizes come from the arguments here, not from a file. */
    return st == DB_ERR_FORMAT ? EXIT_USAGE : db_exit_status(st);
}

/* A whole decimal number in lo..hi, or -1 with *ok cleared. */
static long long parse_number(const char *text, long long lo, long long hi, int *ok)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi) {
        *ok = 0;
        return -1;
    }
    return v;
}

enum option_id {
    OPT_GT = 256, OPT_COUNT, OPT_OUT_DIR, OPT_SEED, OPT_SIZE, OPT_A4, OPT_DPI, OPT_GRAY,
    OPT_LINE_HEIGHT, OPT_STROKE, OPT_MARGIN, OPT_PARAGRAPH, OPT_INK, OPT_PAPER,
    OPT_ILLUMINATION, OPT_TEXTURE, OPT_STAINS, OPT_STAIN_COUNT, OPT_BLEED, OPT_FADING, OPT_BLUR,
    OPT_NOISE, OPT_CLEAN, OPT_VERSION, OPT_PHOTO
};

/* The integer options that set one field each: where, and their range (the
** generator checks the ranges that depend on other fields). */
static int *int_field(db_synth_params *p, int id)
{
    switch (id) {
    case OPT_LINE_HEIGHT: return &p->line_height;
    case OPT_STROKE: return &p->stroke_width;
    case OPT_MARGIN: return &p->margin;
    case OPT_PARAGRAPH: return &p->paragraph_lines;
    case OPT_INK: return &p->ink;
    case OPT_PAPER: return &p->paper;
    case OPT_ILLUMINATION: return &p->illumination;
    case OPT_TEXTURE: return &p->texture;
    case OPT_STAINS: return &p->stains;
    case OPT_STAIN_COUNT: return &p->stain_count;
    case OPT_BLEED: return &p->bleed;
    case OPT_FADING: return &p->fading;
    case OPT_BLUR: return &p->blur;
    case OPT_NOISE: return &p->noise;
    default: return NULL;
    }
}

/* Writes one page and its ground truth; if the ground truth fails, the page
** goes too, so that a pair is never left half written. */
static int write_pair(const db_synth_params *p, const char *page_path, const char *gt_path)
{
    db_image *page = NULL, *gt = NULL;
    db_status st = db_synth_render(p, &page, gt_path ? &gt : NULL);
    if (st == DB_OK)
        st = db_image_write(page, page_path, DB_FILE_AUTO, 8);
    if (st == DB_OK && gt_path && (st = db_image_write(gt, gt_path, DB_FILE_AUTO, 1)) != DB_OK)
        unlink(page_path);
    db_image_free(page);
    db_image_free(gt);
    return st == DB_OK ? EXIT_OK : fail(st);
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { "gt", required_argument, NULL, OPT_GT },
        { "count", required_argument, NULL, OPT_COUNT },
        { "out-dir", required_argument, NULL, OPT_OUT_DIR },
        { "seed", required_argument, NULL, OPT_SEED },
        { "size", required_argument, NULL, OPT_SIZE },
        { "a4", no_argument, NULL, OPT_A4 },
        { "dpi", required_argument, NULL, OPT_DPI },
        { "gray", no_argument, NULL, OPT_GRAY },
        { "line-height", required_argument, NULL, OPT_LINE_HEIGHT },
        { "stroke", required_argument, NULL, OPT_STROKE },
        { "margin", required_argument, NULL, OPT_MARGIN },
        { "paragraph", required_argument, NULL, OPT_PARAGRAPH },
        { "ink", required_argument, NULL, OPT_INK },
        { "paper", required_argument, NULL, OPT_PAPER },
        { "illumination", required_argument, NULL, OPT_ILLUMINATION },
        { "texture", required_argument, NULL, OPT_TEXTURE },
        { "stains", required_argument, NULL, OPT_STAINS },
        { "stain-count", required_argument, NULL, OPT_STAIN_COUNT },
        { "bleed", required_argument, NULL, OPT_BLEED },
        { "fading", required_argument, NULL, OPT_FADING },
        { "blur", required_argument, NULL, OPT_BLUR },
        { "noise", required_argument, NULL, OPT_NOISE },
        { "clean", no_argument, NULL, OPT_CLEAN },
        { "photo", no_argument, NULL, OPT_PHOTO },
        { "version", no_argument, NULL, OPT_VERSION },
        { NULL, 0, NULL, 0 },
    };
    db_synth_params p;
    db_synth_defaults(&p);
    const char *output = NULL, *gt_output = NULL, *out_dir = NULL;
    long long count = 0;
    int have_size = 0, have_a4 = 0, dpi = 0, ok = 1, photo = 0;

    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:h", options, NULL)) != -1) {
        int *field = int_field(&p, c);
        if (field) {
            *field = (int)parse_number(optarg, 0, INT_MAX, &ok);
            if (!ok)
                return usage_error("%s takes a whole number of at least 0", argv[optind - 1]);
            continue;
        }
        switch (c) {
        case 'o': output = optarg; break;
        case 'h': fputs(usage_text, stdout); return EXIT_OK;
        case OPT_VERSION: printf("docbin-synth %s\n", db_version()); return EXIT_OK;
        case OPT_GT: gt_output = optarg; break;
        case OPT_OUT_DIR: out_dir = optarg; break;
        case OPT_COUNT:
            count = parse_number(optarg, 1, 1000000, &ok);
            if (!ok)
                return usage_error("--count takes a number of pages from 1 to 1000000, not %s", optarg);
            break;
        case OPT_SEED:
            p.seed = (uint32_t)parse_number(optarg, 0, UINT32_MAX, &ok);
            if (!ok)
                return usage_error("--seed takes a number from 0 to 4294967295, not %s", optarg);
            break;
        case OPT_SIZE: {
            int w, h, n = 0;
            if (sscanf(optarg, "%dx%d%n", &w, &h, &n) != 2 || optarg[n] || w < 1 || h < 1)
                return usage_error("--size takes WIDTHxHEIGHT in pixels, e.g. 2516x3272, not %s", optarg);
            p.width = w;
            p.height = h;
            have_size = 1;
            break;
        }
        case OPT_A4: have_a4 = 1; break;
        case OPT_DPI:
            dpi = (int)parse_number(optarg, 1, 100000, &ok);
            if (!ok)
                return usage_error("--dpi takes a resolution from 1 to 100000, not %s", optarg);
            break;
        case OPT_GRAY: p.color = 0; break;
        case OPT_PHOTO: photo = 1; break;
        case OPT_CLEAN:
            p.illumination = p.texture = p.stains = p.stain_count = p.bleed = p.fading = p.blur = p.noise = 0;
            break;
        case ':': return usage_error("option %s needs a value", argv[optind - 1]);
        default: return usage_error("unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument %s; the page goes to -o FILE", argv[optind]);
    if (have_size && have_a4)
        return usage_error("give --size or --a4, not both");
    if (have_a4 && dpi && dpi != DB_SYNTH_A4_DPI)
        return usage_error("--a4 is 300 dpi; for another resolution use --dpi alone");
    if (dpi) {
        if (have_size)
            p.dpi = dpi;
        else
            db_synth_set_a4(&p, dpi);
    }
    if (out_dir || count) {
        if (output || gt_output)
            return usage_error("--count and --out-dir write page-NNNN.png files; drop -o and --gt");
        if (!out_dir)
            return usage_error("--count needs --out-dir DIR");
    } else if (!output) {
        return usage_error("no output given; use -o PAGE.png (and --gt GT.png)");
    }
    /* Every setting is checked before any file or directory is touched. */
    db_status st = db_synth_check(&p);
    if (st != DB_OK)
        return fail(st);
    if (photo) {
        if (out_dir || gt_output)
            return usage_error("--photo writes one picture without ground truth; use -o FILE alone");
        db_image *pic = NULL;
        if ((st = db_synth_photo(p.width, p.height, p.seed, &pic)) == DB_OK)
            st = db_image_write(pic, output, DB_FILE_AUTO, 8);
        db_image_free(pic);
        return st == DB_OK ? EXIT_OK : fail(st);
    }
    if (!out_dir)
        return write_pair(&p, output, gt_output);

    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "docbin-synth: cannot create %s: %s\n", out_dir, strerror(errno));
        return EXIT_FILE;
    }
    if (!count)
        count = 1;
    uint32_t first = p.seed;
    for (long long i = 0; i < count; i++) {
        char page_path[4096], gt_path[4096];
        int n1 = snprintf(page_path, sizeof page_path, "%s/page-%04lld.png", out_dir, i + 1);
        int n2 = snprintf(gt_path, sizeof gt_path, "%s/page-%04lld_gt.png", out_dir, i + 1);
        if (n1 < 0 || n2 < 0 || (size_t)n1 >= sizeof page_path || (size_t)n2 >= sizeof gt_path)
            return usage_error("--out-dir %s is too long", out_dir);
        p.seed = first + (uint32_t)i;
        int code = write_pair(&p, page_path, gt_path);
        if (code != EXIT_OK)
            return code;
    }
    return EXIT_OK;
}
