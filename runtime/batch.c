/*
** batch.c — the batch engine: codec threads and device lanes joined by
** bounded queues.
**
** An image moves decode -> ready queue -> a lane's db_run -> done queue ->
** encode. At most `limit` images are held in memory at once (decoded and not
** yet written): in_flight on the devices plus four per codec thread waiting on
** either side, so memory stays bounded however fast one side is. Four, not
** two: while the lanes open (a good part of a second) decoding is all the
** codec threads can do, and the GPU then runs through that backlog faster
** than they decode; with a bound near the backlog they would wait, idle, for
** the lanes to drain it (bench/results/batch-h200.md, round 13). The images
** held also stay within `max_bytes` (default: a quarter of the memory the
** process may use), each counted from its file's header before it is decoded
** (a header that cannot tell counts as the largest page so far), so that
** large scans on a small machine or in a Slurm job wait instead of swapping
** or being killed. Codec threads prefer encoding to decoding, which frees
** memory and finishes outputs first.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runtime/batch.h"
#include "runtime/sched.h"
#include "runtime/staging.h"
#include "runtime/util.h"
#include "planner/map.h"

struct doc_out;

/* One page on its way through the batch. */
typedef struct slot {
    struct slot *next;
    db_image *in, *out;
    db_bitmap *bits;          /* the result, instead of `out`, when the output is 1-bit */
    size_t bytes;             /* what it holds while in the batch: its pixels and its result's */
    uint64_t t0;
    struct doc_out *d;        /* the file its page goes into with others' (a multi-page input), or NULL */
    char path[4200];          /* its output with --split-pages (NAME-0001.EXT) */
    db_batch_result r;
} slot;

/* The output of an input of several pages written as one file: pages run in
** any order and are added in page order (a page that finishes early waits in
** `pending`, holding its memory); the file is committed when the last is
** added. A page that fails fails the file: nothing is left under its name,
** and every page is reported when the file's fate is known. */
typedef struct doc_out {
    pthread_mutex_t lock;
    db_doc_writer *w;         /* open from the first page added */
    int pages, next, ended;   /* pages; the next to add; those whose fate is settled */
    slot *pending;            /* run, waiting for an earlier page, by page */
    int failed_page;          /* the first page that failed (0-based), or -1 */
    db_batch_result *results; /* each page's, reported when the file's fate is known */
} doc_out;

/* Device lanes at most, with --gpu-device all. */
#define MAX_LANES 64

typedef struct batch {
    const db_batch_options *opt;
    const db_batch_list *list;
    int bits;

    pthread_mutex_t lock;     /* the queues and counters below */
    pthread_cond_t codec_cv;  /* codec threads: something to encode, room to decode, or the end */
    pthread_cond_t lane_cv;   /* lanes: something to run, or no more to come */
    int next;                 /* the next input to claim */
    int live, limit;          /* images in memory, and the bound */
    size_t held_bytes, budget; /* their bytes (those still decoding as reserved), and the bound */
    size_t page_bytes;        /* the most bytes one image has held so far */
    int decoding;             /* inputs claimed and not yet decoded (they may still join the ready queue) */
    slot *ready, *ready_tail; /* decoded, waiting for a lane */
    slot *done, *done_tail;   /* run, waiting to be encoded */
    bool setting_up;          /* the lanes are still opening: what is not for a lane waits in `held` */
    bool aborted;             /* the lanes could not open: decoded images are dropped, unreported */
    slot *held, *held_tail;   /* skipped or failed while setting up, reported once the lanes run */

    pthread_mutex_t report_lock; /* the summary and the report streams */
    FILE *log;                   /* the JSON log, or NULL */
    int log_errno;               /* the first failed write of the log (0: none) */
    db_batch_summary *sum;
    uint64_t start_ns, progress_ns;
    bool progress_shown;
    bool warm[MAX_LANES];        /* per device (lane index): its first lane has run an image */

    /* Plans (b->lock): DB_PLAN_MEASURE times the maps on the first page a lane
    ** takes while the other lanes wait; then every lane plans as auto, and
    ** finds the measured map in the wisdom file. */
    enum { MEASURE_PENDING, MEASURE_RUNNING, MEASURE_DONE } measure;
    char explained[32][DB_PLAN_KEY]; /* the keys whose plan was explained or noted */
    int n_explained;

    /* The CPU lane's measured times (b->lock): the GPU lanes' time between
    ** finished pages, and the CPU lane's time per page, smoothed; 0 unknown. */
    double gpu_period_ms, cpu_ms;
    uint64_t gpu_done_ns;
    int ready_n;                 /* pages in the ready queue */
} batch;

typedef struct lane_arg {
    batch *b;
    db_context *ctx; /* NULL until open: a lane beyond the first on its device opens on its own thread */
    const char *gpu_spec;
    int lane;
    int runs;        /* images run so far */
    bool cpu;        /* the CPU lane: every stage on cpu, pages taken by db_batch_cpu_takes */
    db_plan plan;    /* the last plan made (auto: reused while the key is the same) */
} lane_arg;

static double ms_since(uint64_t t0)
{
    return (double)(db_now_ns() - t0) / 1e6;
}

static void push(slot **head, slot **tail, slot *s)
{
    s->next = NULL;
    if (*tail)
        (*tail)->next = s;
    else
        *head = s;
    *tail = s;
}

static slot *pop(slot **head, slot **tail)
{
    slot *s = *head;
    if (s) {
        *head = s->next;
        if (!*head)
            *tail = NULL;
    }
    return s;
}

/* `n` pages holding `bytes` bytes leave the batch's memory (b->lock held). */
static void leave_pages(batch *b, int n, size_t bytes)
{
    b->live -= n;
    b->held_bytes -= bytes;
    pthread_cond_broadcast(&b->codec_cv);
}

/* A page of `bytes` bytes leaves the batch's memory (b->lock held). */
static void leave(batch *b, size_t bytes)
{
    leave_pages(b, 1, bytes);
}

/* Whether an input of `bytes` bytes may be decoded now (b->lock held): one image is always allowed. */
static bool room(const batch *b, size_t bytes)
{
    return b->live < b->limit && (b->live == 0 || b->held_bytes + bytes <= b->budget);
}

/* ---- Reporting ------------------------------------------------------------- */

static const char *state_name(db_batch_state st)
{
    return st == DB_BATCH_OK ? "ok" : st == DB_BATCH_SKIPPED ? "skipped" : "failed";
}

void db_batch_result_json(const db_batch_result *r, const char *algo, FILE *f)
{
    fprintf(f, "{\"index\":%d,\"input\":", r->index);
    db_json_string(f, r->input);
    fputs(",\"output\":", f);
    db_json_string(f, r->output);
    fputs(",\"algo\":", f);
    db_json_string(f, algo ? algo : "");
    fputs(",\"map\":", f);
    if (r->map[0])
        db_json_string(f, r->map);
    else
        fputs("null", f);
    if (r->page)
        fprintf(f, ",\"page\":%d,\"pages\":%d", r->page, r->pages);
    if (r->dpi > 0)
        fprintf(f, ",\"dpi\":%g", r->dpi);
    fprintf(f, ",\"status\":\"%s\",\"error\":", state_name(r->state));
    if (r->state == DB_BATCH_FAILED)
        db_json_string(f, r->message);
    else
        fputs("null", f);
    fprintf(f, ",\"lane\":%d,\"stages\":{", r->lane);
    int n = r->n_rows < DB_BATCH_MAX_ROWS ? r->n_rows : DB_BATCH_MAX_ROWS, first = 1;
    for (int i = 0; i < n; i++) {
        const db_profile_row *row = &r->rows[i];
        if (row->kind != DB_REC_KERNEL)
            continue;
        fprintf(f, "%s", first ? "" : ",");
        db_json_string(f, row->stage);
        fprintf(f, ":{\"role\":\"%s\",\"ms\":%.3f,\"busy_ms\":%.3f}", db_role_name(row->role), row->span_ms,
                row->busy_ms);
        first = 0;
    }
    fputs("},\"transfers\":[", f);
    first = 1;
    for (int i = 0; i < n; i++) {
        const db_profile_row *row = &r->rows[i];
        if (row->kind == DB_REC_KERNEL)
            continue;
        fprintf(f, "%s{\"item\":", first ? "" : ",");
        db_json_string(f, row->stage);
        fprintf(f, ",\"to\":\"%s\",\"role\":\"%s\",\"ms\":%.3f,\"bytes\":%zu}",
                row->kind == DB_REC_TO_DEVICE ? "device" : "host", db_role_name(row->role), row->span_ms,
                row->bytes);
        first = 0;
    }
    fprintf(f, "],\"decode_ms\":%.3f,\"run_ms\":%.3f,\"encode_ms\":%.3f,\"wall_ms\":%.3f,\"start_ms\":%.3f",
            r->decode_ms, r->run_ms, r->encode_ms, r->wall_ms, r->start_ms);
    if (r->lane >= 0)
        fprintf(f, ",\"run_start_ms\":%.3f,\"warm\":%s", r->run_start_ms, r->warm ? "true" : "false");
    fputs("}\n", f);
}

static void show_progress(batch *b, bool final)
{
    const db_batch_summary *s = b->sum;
    uint64_t now = db_now_ns();
    /* A terminal redrawn every image would cost more than small pages do. */
    if (!final && now - b->progress_ns < 100000000u)
        return;
    b->progress_ns = now;
    double secs = (double)(now - b->start_ns) / 1e9;
    int done = s->ok + s->failed + s->skipped;
    fprintf(b->opt->progress, "\r[%d/%d] %.1f pages/s, %d failed", done, s->total,
            secs > 0 ? (s->ok + s->failed) / secs : 0.0, s->failed);
    if (s->skipped)
        fprintf(b->opt->progress, ", %d skipped", s->skipped);
    fflush(b->opt->progress);
    b->progress_shown = true;
}

/* Counts a finished image and reports it on every stream asked for. */
static void report(batch *b, db_batch_result *r)
{
    const db_batch_options *opt = b->opt;
    pthread_mutex_lock(&b->report_lock);
    db_batch_summary *sum = b->sum;
    if (r->state == DB_BATCH_OK)
        sum->ok++;
    else if (r->state == DB_BATCH_SKIPPED)
        sum->skipped++;
    else {
        sum->failed++;
        if (sum->worst == DB_OK || db_exit_status(r->status) > db_exit_status(sum->worst))
            sum->worst = r->status;
    }
    if (opt->errors && r->state == DB_BATCH_FAILED && !r->follows) {
        /* Messages of the readers already name the file; others get it in front. */
        const char *prog = opt->prog ? opt->prog : "docbin";
        if (b->progress_shown)
            fputs("\r\033[K", opt->progress);
        fprintf(opt->errors, "%s: ", prog);
        if (!strstr(r->message, r->input)) {
            db_fputs_escaped(r->input, opt->errors);
            fputs(": ", opt->errors);
        }
        db_fputs_escaped(r->message, opt->errors);
        fputc('\n', opt->errors);
        fflush(opt->errors);
        b->progress_ns = 0;
    }
    if (b->log) {
        db_batch_result_json(r, opt->codec_only ? "codec-only" : opt->algo->name, b->log);
        if ((fflush(b->log) != 0 || ferror(b->log)) && !b->log_errno)
            b->log_errno = errno ? errno : EIO; /* reported when the batch ends: the pages go on */
    }
    if (opt->on_image)
        opt->on_image(r, opt->user);
    if (opt->progress)
        show_progress(b, false);
    pthread_mutex_unlock(&b->report_lock);
}

/* Frees a page's images and its slot. */
static void free_slot(slot *s)
{
    db_image_free(s->in);
    db_image_free(s->out);
    db_bitmap_free(s->bits);
    free(s);
}

/* Frees an image that will not be reported (the batch stopped before its lanes ran). */
static void drop(slot *s)
{
    free_slot(s);
}

static void fail_slot(slot *s, db_status st)
{
    s->r.state = DB_BATCH_FAILED;
    s->r.status = st != DB_OK ? st : DB_ERR_IO; /* a failure must never read as success */
    snprintf(s->r.message, sizeof s->r.message, "%s", db_error_message());
    db_image_free(s->in);
    db_image_free(s->out);
    db_bitmap_free(s->bits);
    s->in = s->out = NULL;
    s->bits = NULL;
}

/* ---- Files of several pages ------------------------------------------------- */

/* Adds a page's result to a file being written. */
static db_status add_page(batch *b, db_doc_writer *w, const slot *s)
{
    return s->bits ? db_doc_writer_add_bitmap(w, s->bits) : db_doc_writer_add(w, s->out, b->bits);
}

static doc_out *doc_out_new(int pages)
{
    doc_out *d = calloc(1, sizeof *d);
    if (d && !(d->results = calloc((size_t)pages, sizeof *d->results))) {
        free(d);
        d = NULL;
    }
    if (!d) {
        db_fail(DB_ERR_NOMEM, "out of memory for a file of %d pages", pages);
        return NULL;
    }
    pthread_mutex_init(&d->lock, NULL);
    d->pages = pages;
    d->failed_page = -1;
    return d;
}

/* Records that page `page` failed first (d->lock held): the file is abandoned. */
static void doc_fail(doc_out *d, int page)
{
    d->failed_page = page;
    db_doc_writer_abort(d->w);
    d->w = NULL;
}

/* Settles page `page` (d->lock held): its result is kept for the report. The
** last one settled decides the file: committed when no page failed. Returns
** true when the file's fate is known and its pages are to be reported. */
static bool doc_end_page(doc_out *d, const db_batch_result *r)
{
    int page = r->page - 1;
    d->results[page] = *r;
    if (r->state != DB_BATCH_OK && d->failed_page < 0)
        doc_fail(d, page);
    if (++d->ended < d->pages)
        return false;
    db_status st = d->failed_page < 0 && d->w ? db_doc_writer_commit(d->w) : DB_OK;
    d->w = NULL;
    if (st != DB_OK) {
        d->failed_page = d->pages - 1;
        d->results[d->failed_page].state = DB_BATCH_FAILED;
        d->results[d->failed_page].status = st;
        snprintf(d->results[d->failed_page].message, sizeof d->results[0].message, "%s", db_error_message());
    }
    /* The file was not written: every page says so, and why. */
    for (int p = 0; d->failed_page >= 0 && p < d->pages; p++)
        if (p != d->failed_page) {
            db_batch_result *q = &d->results[p];
            q->state = DB_BATCH_FAILED;
            q->follows = true;
            q->status = d->results[d->failed_page].status;
            snprintf(q->message, sizeof q->message, "page %d of %d: the file %s was not written: page %d failed",
                     p + 1, d->pages, q->output, d->failed_page + 1);
        }
    return true;
}

/* Reports a file's pages once its fate is known, and frees it. */
static void doc_report(batch *b, doc_out *d)
{
    for (int p = 0; p < d->pages; p++)
        report(b, &d->results[p]);
    pthread_mutex_destroy(&d->lock);
    free(d->results);
    free(d);
}

/* Pages of a file after the one that failed are not read: settled at once. */
static void doc_skip_pages(batch *b, doc_out *d, const db_batch_result *like, int from)
{
    pthread_mutex_lock(&d->lock);
    bool known = false;
    for (int p = from; p < d->pages; p++) {
        db_batch_result r = *like;
        r.page = p + 1;
        r.state = DB_BATCH_FAILED;
        known = doc_end_page(d, &r);
    }
    pthread_mutex_unlock(&d->lock);
    if (known)
        doc_report(b, d);
}

/* Reports a finished page and frees its slot; a page of a file of several
** pages is reported with the file's others. */
static void finish(batch *b, slot *s)
{
    s->r.wall_ms = ms_since(s->t0);
    doc_out *d = s->d;
    if (!d) {
        report(b, &s->r);
        free_slot(s);
        return;
    }
    pthread_mutex_lock(&d->lock);
    bool known = doc_end_page(d, &s->r);
    pthread_mutex_unlock(&d->lock);
    free_slot(s);
    if (known)
        doc_report(b, d);
}

/* ---- Codec threads ---------------------------------------------------------- */

/* The codec-only stand-in for a run: gray (BT.601 or Qt from colour)
** thresholded at 128, so that 8-bit outputs are binary as 1-bit ones are. */
static db_image *host_binary(const db_image *in, db_gray_rule rule)
{
    db_image *g = db_image_alloc(in->width, in->height, 1);
    if (!g)
        return NULL;
    g->dpi_x = in->dpi_x;
    g->dpi_y = in->dpi_y;
    for (int y = 0; y < in->height; y++) {
        const uint8_t *p = in->data + (size_t)y * in->stride;
        uint8_t *q = g->data + (size_t)y * g->stride;
        if (in->channels == 1) { /* apart, so that the loop vectorises */
            for (int x = 0; x < in->width; x++)
                q[x] = p[x] >= 128 ? 255 : 0;
            continue;
        }
        for (int x = 0; x < in->width; x++, p += in->channels) {
            unsigned v = rule == DB_GRAY_QT ? (11u * p[0] + 16u * p[1] + 5u * p[2]) / 32u
                                            : (299u * p[0] + 587u * p[1] + 114u * p[2] + 500u) / 1000u;
            q[x] = v >= 128 ? 255 : 0;
        }
    }
    return g;
}

/* Fails slot `p` of a file that another page failed (its result says so at the report). */
static void not_written(slot *p)
{
    db_fail(DB_ERR_IO, "not written, as another page of the file failed");
    fail_slot(p, DB_ERR_IO);
}

/* Adds a page to a file of several pages, in page order (d->lock held): a page
** that comes early waits. Returns the slots now settled, in page order (none
** when `s` waits): after a failure, every page, waiting or to come, is
** settled at once as not written. */
static slot *doc_add(batch *b, doc_out *d, slot *s)
{
    slot *settled = NULL, **tail = &settled;
    s->next = NULL;
    if (s->r.state != DB_BATCH_OK && d->failed_page < 0)
        doc_fail(d, s->r.page - 1);
    if (d->failed_page < 0 && s->r.page - 1 != d->next) {
        slot **at = &d->pending; /* early: wait, by page */
        while (*at && (*at)->r.page < s->r.page)
            at = &(*at)->next;
        s->next = *at;
        *at = s;
        return NULL;
    }
    if (d->failed_page < 0) {
        s->next = d->pending;
        d->pending = s;
        /* Add every page now in order: s, then those that waited for it. */
        while (d->pending && d->pending->r.page - 1 == d->next && d->failed_page < 0) {
            slot *p = d->pending;
            d->pending = p->next;
            p->next = NULL;
            uint64_t t = db_now_ns();
            db_status st = d->w ? DB_OK : db_doc_writer_open(p->r.output, b->opt->format, b->opt->compression,
                                                              &d->w);
            if (st == DB_OK)
                st = add_page(b, d->w, p);
            p->r.encode_ms = ms_since(t);
            if (st != DB_OK) {
                fail_slot(p, st);
                doc_fail(d, p->r.page - 1);
            }
            d->next++;
            *tail = p;
            tail = &p->next;
        }
        if (d->failed_page < 0)
            return settled;
        s = NULL; /* settled above */
    }
    if (s) {
        if (s->r.state == DB_BATCH_OK)
            not_written(s);
        *tail = s;
        tail = &s->next;
    }
    for (slot *p = d->pending, *next; p; p = next) {
        next = p->next;
        p->next = NULL;
        not_written(p);
        *tail = p;
        tail = &p->next;
    }
    d->pending = NULL;
    return settled;
}

static void encode(batch *b, slot *s)
{
    const db_batch_options *opt = b->opt;
    const char *path = s->path[0] ? s->path : s->r.output;
    uint64_t t = db_now_ns();
    db_doc_writer *w;
    db_status st = db_doc_writer_open(path, opt->format, opt->compression, &w);
    if (st == DB_OK && (st = add_page(b, w, s)) != DB_OK)
        db_doc_writer_abort(w);
    else if (st == DB_OK)
        st = db_doc_writer_commit(w);
    s->r.encode_ms = ms_since(t);
    if (st != DB_OK)
        fail_slot(s, st);
}

/* Whether --skip-existing skips the output `output`: it is there (written
** atomically, so complete). */
static bool skipped(const batch *b, const char *output)
{
    struct stat sb;
    return b->opt->skip_existing && stat(output, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int original_index(const db_batch_list *list, int i)
{
    return list->shard_n ? list->shard_k - 1 + i * list->shard_n : i;
}

/* An input being read by a codec thread, a page at a time. */
typedef struct claim {
    int input;                /* -1: none */
    db_doc *doc;
    doc_out *d;               /* its pages go into one file */
    int page, pages;
    size_t want;              /* the next page's bytes, from its header (SIZE_MAX: unknown) */
    db_status st;             /* opening failed */
    char message[2048];
} claim;

/* --split-pages' name of page `page` (0-based) of output `output`: NAME-0001.EXT. */
static void split_name(const char *output, int page, char *path, size_t size)
{
    const char *slash = strrchr(output, '/'), *dot = strrchr(output, '.');
    int stem = dot && (!slash || dot > slash) ? (int)(dot - output) : (int)strlen(output);
    snprintf(path, size, "%.*s-%04d%s", stem, output, page + 1, output + stem);
}

/* What the claimed input's next page will hold once decoded, from its header:
** its pixels and its result's (one byte a pixel); SIZE_MAX when the header
** cannot tell (the decode will say why). */
static size_t page_bytes(claim *c)
{
    int width, height, channels;
    if (!c->doc || db_doc_peek_page(c->doc, c->page, &width, &height, &channels) != DB_OK) {
        db_error_clear();
        return SIZE_MAX;
    }
    return (size_t)width * (size_t)height * ((size_t)channels + 1);
}

/* Claims input i (b->lock not held): opens it and counts its pages. An input
** whose output exists is skipped whole under --skip-existing (one file a page:
** page by page, as each is decoded). */
static void open_claim(batch *b, claim *c, int i)
{
    const db_batch_options *opt = b->opt;
    *c = (claim){.input = i, .pages = 1};
    if (!opt->split_pages && skipped(b, b->list->outputs[i]))
        return;
    if ((c->st = db_doc_open(b->list->inputs[i], &c->doc)) != DB_OK) {
        snprintf(c->message, sizeof c->message, "%s", db_error_message());
        return;
    }
    c->pages = db_doc_pages(c->doc);
    if (c->pages > 1 && !opt->split_pages && opt->format != DB_FILE_TIFF) {
        c->st = db_fail(DB_ERR_USAGE, "%s has %d pages and the output %s holds one; write TIFF (--format tif), or "
                        "one file a page (--split-pages)", b->list->inputs[i], c->pages, b->list->outputs[i]);
    } else if (c->pages > 1 && !opt->split_pages && !(c->d = doc_out_new(c->pages))) {
        c->st = db_error_status();
    }
    if (c->st != DB_OK) {
        snprintf(c->message, sizeof c->message, "%s", db_error_message());
        db_doc_close(c->doc);
        c->doc = NULL;
    }
    c->want = page_bytes(c);
}

/* Decodes the claimed input's next page into a slot; returns true when it goes on to a lane. */
static bool decode(batch *b, claim *c, slot *s)
{
    const db_batch_options *opt = b->opt;
    int i = c->input;
    s->t0 = db_now_ns();
    s->r = (db_batch_result){.start_ms = (double)(s->t0 - b->start_ns) / 1e6, .index = original_index(b->list, i),
                             .input = b->list->inputs[i], .output = b->list->outputs[i], .lane = -1,
                             .page = c->pages > 1 || opt->split_pages ? c->page + 1 : 0, .pages = c->pages};
    s->d = c->d;
    if (opt->split_pages) {
        split_name(b->list->outputs[i], c->page, s->path, sizeof s->path);
        s->r.output = s->path;
    }
    if (!c->doc && c->st == DB_OK) { /* skipped whole */
        s->r.state = DB_BATCH_SKIPPED;
        return false;
    }
    if (c->st != DB_OK) {
        db_fail(c->st, "%s", c->message);
        fail_slot(s, c->st);
        return false;
    }
    if (opt->split_pages && skipped(b, s->path)) {
        s->r.state = DB_BATCH_SKIPPED;
        return false;
    }
    uint64_t t = db_now_ns();
    s->in = db_doc_read_page(c->doc, c->page);
    s->r.decode_ms = ms_since(t);
    if (!s->in) {
        fail_slot(s, db_error_status());
        return false;
    }
    if (opt->dpi > 0)
        s->in->dpi_x = s->in->dpi_y = opt->dpi;
    s->r.dpi = s->in->dpi_x;
    if (!opt->codec_only)
        return true;
    if (!(s->out = host_binary(s->in, opt->job ? opt->job->gray : DB_GRAY_BT601))) {
        fail_slot(s, db_error_status());
        return false;
    }
    return false;
}

/* Settles a page that needs no lane (skipped, failed, or made by --codec-only)
** or has run, encoding it: one file a page at once, a page of a file of
** several in page order. Returns how many pages it settled and, in *freed,
** the bytes of memory they gave back (b->lock not held); a page that waits for
** an earlier one settles nothing yet. */
static int settle(batch *b, slot *s, size_t *freed)
{
    slot *settled = s;
    s->next = NULL;
    if (s->d) {
        pthread_mutex_lock(&s->d->lock);
        settled = doc_add(b, s->d, s);
        pthread_mutex_unlock(&s->d->lock);
    } else if (s->r.state == DB_BATCH_OK && (s->out || s->bits)) {
        encode(b, s);
    }
    int n = 0;
    *freed = 0;
    while (settled) {
        slot *next = settled->next;
        *freed += settled->bytes;
        finish(b, settled);
        settled = next;
        n++;
    }
    return n;
}

/* Ends the claim when its last page is decoded or its file has failed (b->lock held). */
static void next_page(batch *b, claim *c)
{
    c->page++;
    bool failed = c->d && c->d->failed_page >= 0;
    if (c->page < c->pages && !failed && c->st == DB_OK && (c->doc || b->opt->split_pages)) {
        c->want = page_bytes(c);
        return;
    }
    if (failed && c->page < c->pages) {
        db_batch_result like = {.index = original_index(b->list, c->input), .input = b->list->inputs[c->input],
                                .output = b->list->outputs[c->input], .lane = -1, .pages = c->pages};
        pthread_mutex_unlock(&b->lock);
        doc_skip_pages(b, c->d, &like, c->page);
        pthread_mutex_lock(&b->lock);
    }
    db_doc_close(c->doc);
    *c = (claim){.input = -1};
    b->decoding--;
}

/* A codec thread encodes what the lanes have run and decodes what they will
** run. It claims the next input, opens it and reads the header of each page
** before decoding it, so that the memory it reserves is the page's own; until
** there is room for the next page, it goes on encoding. */
static void *codec_thread(void *arg)
{
    batch *b = arg;
    const db_batch_list *list = b->list;
    claim c = {.input = -1};
    pthread_mutex_lock(&b->lock);
    for (;;) {
        slot *s = pop(&b->done, &b->done_tail);
        if (s) {
            pthread_mutex_unlock(&b->lock);
            size_t bytes;
            int n = settle(b, s, &bytes);
            pthread_mutex_lock(&b->lock);
            leave_pages(b, n, bytes);
            continue;
        }
        if (c.input < 0 && b->next < list->n && !b->aborted) {
            /* Claimed inputs count as decoding: the lanes wait for them. */
            int i = b->next++;
            b->decoding++;
            pthread_mutex_unlock(&b->lock);
            open_claim(b, &c, i);
            pthread_mutex_lock(&b->lock);
            continue;
        }
        if (c.input >= 0 && b->aborted) {
            db_doc_close(c.doc);
            c = (claim){.input = -1};
            b->decoding--;
            pthread_cond_broadcast(&b->lane_cv);
            continue;
        }
        /* Unknown: as the largest page so far, as large as it is now. */
        size_t reserved = c.want == SIZE_MAX ? b->page_bytes : c.want;
        if (c.input >= 0 && room(b, reserved)) {
            b->live++;
            b->held_bytes += reserved;
            pthread_mutex_unlock(&b->lock);
            s = calloc(1, sizeof *s);
            bool to_lane = false;
            if (s) {
                to_lane = decode(b, &c, s);
            } else {
                /* No memory for even the bookkeeping: the page fails, the batch goes on. */
                static _Thread_local db_batch_result r;
                r = (db_batch_result){.index = original_index(list, c.input), .input = list->inputs[c.input],
                                      .output = list->outputs[c.input], .lane = -1, .state = DB_BATCH_FAILED,
                                      .status = DB_ERR_NOMEM};
                snprintf(r.message, sizeof r.message, "out of memory");
                report(b, &r);
            }
            pthread_mutex_lock(&b->lock);
            next_page(b, &c);
            size_t bytes = s && s->in ? s->in->stride * (size_t)s->in->height +
                                        (size_t)s->in->width * (size_t)s->in->height : 0;
            b->held_bytes = b->held_bytes - reserved + bytes;
            if (bytes > b->page_bytes)
                b->page_bytes = bytes;
            if (s)
                s->bytes = bytes;
            if (bytes < reserved)
                pthread_cond_broadcast(&b->codec_cv); /* less held than reserved: room for another */
            if (s && b->aborted) {
                drop(s);
                leave(b, bytes);
            } else if (to_lane) {
                push(&b->ready, &b->ready_tail, s);
                b->ready_n++;
            } else if (s && b->setting_up) {
                push(&b->held, &b->held_tail, s);
            } else if (s) {
                pthread_mutex_unlock(&b->lock);
                int n = settle(b, s, &bytes);
                pthread_mutex_lock(&b->lock);
                leave_pages(b, n, bytes);
            } else {
                leave(b, 0);
            }
            pthread_cond_broadcast(&b->lane_cv);
            continue;
        }
        if (c.input < 0 && b->next >= list->n && b->live == 0)
            break;
        pthread_cond_wait(&b->codec_cv, &b->lock);
    }
    pthread_cond_broadcast(&b->codec_cv);
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

/* ---- Device lanes ------------------------------------------------------------- */

/* Whether no image is left for a lane: none waiting, none to claim, none claimed and not yet decoded
** (b->lock held). */
static bool drained(const batch *b)
{
    return !b->ready && b->next >= b->list->n && b->decoding == 0;
}

/* One "prog: warning: what: text" line on the error stream, clear of the progress line. */
static void warn(batch *b, const char *what, const char *text)
{
    const db_batch_options *opt = b->opt;
    if (!opt->errors)
        return;
    pthread_mutex_lock(&b->report_lock);
    if (b->progress_shown)
        fputs("\r\033[K", opt->progress);
    fprintf(opt->errors, "%s: warning: ", opt->prog ? opt->prog : "docbin");
    db_fputs_escaped(what, opt->errors);
    fputs(": ", opt->errors);
    db_fputs_escaped(text, opt->errors);
    fputc('\n', opt->errors);
    b->progress_ns = 0;
    pthread_mutex_unlock(&b->report_lock);
}

/* Opens a lane's context and checks that every stage's role is bound. */
static db_status open_lane(const db_batch_options *opt, const char *gpu_spec, db_context **ctx)
{
    db_status st = db_context_open(opt->cpu_spec, gpu_spec, ctx);
    if (st != DB_OK)
        return st;
    db_map est;
    const db_map *map = opt->map;
    if (opt->mode != DB_PLAN_GIVEN) {
        db_map_default(opt->algo, (*ctx)->chosen[DB_ROLE_GPU] != NULL, &est);
        map = &est;
    }
    for (int s = 0; s < map->n; s++)
        if (!db_context_device(*ctx, map->role[s])) {
            st = db_fail(DB_ERR_DEVICE, "stage %s is mapped to %s, but %s", opt->algo->stages[s].name,
                         db_role_name(map->role[s]), db_error_message());
            db_context_close(*ctx);
            *ctx = NULL;
            return st;
        }
    return DB_OK;
}

/* Prints a plan's explanation, or its note alone, once per key in the batch. */
static void tell_plan(batch *b, const db_plan *plan)
{
    const db_batch_options *opt = b->opt;
    pthread_mutex_lock(&b->lock);
    bool told = false;
    for (int i = 0; i < b->n_explained && !told; i++)
        told = !strcmp(b->explained[i], plan->key);
    if (!told && b->n_explained < (int)(sizeof b->explained / sizeof b->explained[0]))
        snprintf(b->explained[b->n_explained++], DB_PLAN_KEY, "%s", plan->key);
    pthread_mutex_unlock(&b->lock);
    if (told || (!opt->explain && !plan->note[0]) || !opt->errors)
        return;
    pthread_mutex_lock(&b->report_lock);
    if (b->progress_shown)
        fputs("\r\033[K", opt->progress);
    if (opt->explain)
        db_plan_explain(plan, opt->algo, opt->explain);
    else
        fprintf(opt->errors, "%s: note: %s\n", opt->prog ? opt->prog : "docbin", plan->note);
    b->progress_ns = 0;
    pthread_mutex_unlock(&b->report_lock);
}

/* The map of the lane's next page: the given one; with measure, the first
** page any lane takes is measured (its output kept: every map gives the same
** image) while the others wait; otherwise auto, planned again only when the
** key changes (another page-size bucket or channel count). *measured is set
** when this run already made the page's output. */
static db_status lane_map(batch *b, lane_arg *lane, slot *s, const db_job *job, db_map *map, bool *measured)
{
    const db_batch_options *opt = b->opt;
    *measured = false;
    if (lane->cpu) {
        db_map_nth(opt->algo, 0, map); /* every stage on cpu */
        return DB_OK;
    }
    if (opt->mode == DB_PLAN_GIVEN) {
        *map = *opt->map;
        if (!opt->explain || lane->runs > 0)
            return DB_OK;
        lane->plan = (db_plan){.map = *map, .source = DB_PLAN_FROM_USER};
        db_status st = db_plan_key(lane->ctx, opt->algo, job, s->in->width, s->in->height, s->in->channels,
                                   lane->plan.key, sizeof lane->plan.key);
        if (st == DB_OK)
            tell_plan(b, &lane->plan);
        return st;
    }
    bool measure = false;
    pthread_mutex_lock(&b->lock);
    if (opt->mode == DB_PLAN_MEASURE && b->measure == MEASURE_PENDING) {
        b->measure = MEASURE_RUNNING;
        measure = true;
    }
    while (!measure && b->measure == MEASURE_RUNNING)
        pthread_cond_wait(&b->lane_cv, &b->lock);
    pthread_mutex_unlock(&b->lock);
    db_status st;
    if (measure) {
        st = db_plan_measure(lane->ctx, opt->algo, job, s->in, opt->measure_runs ? opt->measure_runs : 3,
                             opt->wisdom ? opt->wisdom : "", &lane->plan, &s->out);
        pthread_mutex_lock(&b->lock);
        b->measure = MEASURE_DONE;
        pthread_cond_broadcast(&b->lane_cv);
        pthread_mutex_unlock(&b->lock);
        *measured = st == DB_OK;
    } else {
        char key[DB_PLAN_KEY];
        st = db_plan_key(lane->ctx, opt->algo, job, s->in->width, s->in->height, s->in->channels, key, sizeof key);
        if (st == DB_OK && (lane->runs == 0 || strcmp(key, lane->plan.key)))
            st = db_plan_auto(lane->ctx, opt->algo, job, s->in->width, s->in->height, s->in->channels, opt->wisdom,
                              &lane->plan);
    }
    if (st == DB_OK) {
        *map = lane->plan.map;
        tell_plan(b, &lane->plan);
    }
    return st;
}

static void run_slot(batch *b, lane_arg *lane, slot *s)
{
    const db_batch_options *opt = b->opt;
    db_profile *prof = opt->stage_times ? db_profile_new() : NULL;
    db_report report = {0};
    uint64_t t = db_now_ns();
    s->r.run_start_ms = (double)(t - b->start_ns) / 1e6;
    s->r.lane = lane->lane;
    s->r.width = s->in->width;
    s->r.channels = s->in->channels;
    s->r.height = s->in->height;
    db_map map;
    db_job job;
    bool measured = false;
    /* Lengths in physical units become this page's pixels. */
    db_status st = db_job_resolve(opt->algo, opt->job, s->in->dpi_x, &job);
    if (st == DB_OK)
        st = lane_map(b, lane, s, &job, &map, &measured);
    s->r.warm = lane->runs++ > 0;
    /* A 1-bit output's result comes back packed, an eighth of the bytes. */
    if (st == DB_OK && !measured)
        st = b->bits == 1 ? db_run_bitmap(lane->ctx, opt->algo, &map, &job, s->in,
                                          db_doc_takes_g4(s->r.output, opt->format, opt->compression), &s->bits,
                                          &report, prof)
                          : db_run(lane->ctx, opt->algo, &map, &job, s->in, &s->out, &report, prof);
    if (st == DB_OK)
        db_map_format(&map, s->r.map, sizeof s->r.map);
    s->r.run_ms = ms_since(t);
    if (st != DB_OK) {
        fail_slot(s, st);
    } else {
        db_image_free(s->in);
        s->in = NULL;
        if (prof) {
            int n = db_profile_run_rows(prof, 0, s->r.rows, DB_BATCH_MAX_ROWS);
            s->r.n_rows = n < DB_BATCH_MAX_ROWS ? n : DB_BATCH_MAX_ROWS;
        }
        s->r.report = report;
        for (int i = 0; i < report.n; i++)
            if (report.fields[i].if_zero && report.values[i] == 0)
                warn(b, s->r.input, report.fields[i].if_zero);
    }
    db_profile_free(prof);
}

bool db_batch_cpu_takes(int ready, int left, double gpu_period_ms, double cpu_ms)
{
    if (ready < 1)
        return false;
    if (!(gpu_period_ms > 0))
        return false; /* the GPU lanes have not finished a page yet: nothing to compare with */
    if (!(cpu_ms > 0))
        return left * gpu_period_ms >= 2000;
    /* The GPU lanes reach the last of the ready pages after ready periods. */
    return ready * gpu_period_ms > cpu_ms;
}

/* Whether the CPU lane takes the next ready page (b->lock held). Under auto
** only while the codec threads wait for room (as many pages held as the batch
** allows): otherwise the codec is what bounds the batch, and a CPU lane would
** take its cores. */
static bool cpu_lane_takes(const batch *b)
{
    if (b->opt->cpu_lane == DB_CPU_LANE_ON)
        return b->ready != NULL;
    if (b->live < b->limit)
        return false;
    int left = b->ready_n + b->decoding + (b->list->n - b->next);
    return db_batch_cpu_takes(b->ready_n, left, b->gpu_period_ms, b->cpu_ms);
}

/* Folds a finished run into the CPU lane's times (b->lock held): an
** exponential average, as the load of a machine drifts. */
static void learn(batch *b, const lane_arg *lane, uint64_t t0, uint64_t t1)
{
    const double w = 0.25;
    if (lane->cpu) {
        double ms = (double)(t1 - t0) / 1e6;
        b->cpu_ms = b->cpu_ms > 0 ? (1 - w) * b->cpu_ms + w * ms : ms;
        b->sum->cpu_pages++;
        return;
    }
    /* The first GPU page measures from the batch's start, which includes opening the lanes: skip it. */
    if (b->gpu_done_ns) {
        double ms = (double)(t1 - b->gpu_done_ns) / 1e6;
        b->gpu_period_ms = b->gpu_period_ms > 0 ? (1 - w) * b->gpu_period_ms + w * ms : ms;
    }
    b->gpu_done_ns = t1;
}

static void *lane_thread(void *arg)
{
    lane_arg *lane = arg;
    batch *b = lane->b;
    /* A further lane on a device opens once the first has run an image: the
    ** batch starts after one context per device, and a driver opens contexts
    ** and builds programs one at a time, so opening sooner delays the first. */
    if (!lane->ctx) {
        pthread_mutex_lock(&b->lock);
        while (!b->warm[lane->cpu ? 0 : lane->lane] && !drained(b))
            pthread_cond_wait(&b->lane_cv, &b->lock);
        bool done = drained(b);
        pthread_mutex_unlock(&b->lock);
        if (done)
            return NULL;
    }
    if (!lane->ctx && open_lane(b->opt, lane->gpu_spec, &lane->ctx) != DB_OK) {
        char text[1200];
        snprintf(text, sizeof text, "a further lane could not open, the batch goes on without it: %s",
                 db_error_message());
        warn(b, "--in-flight", text);
        return NULL;
    }
    pthread_mutex_lock(&b->lock);
    for (;;) {
        slot *s = lane->cpu && !cpu_lane_takes(b) ? NULL : pop(&b->ready, &b->ready_tail);
        if (s) {
            b->ready_n--;
            if (drained(b))
                pthread_cond_broadcast(&b->lane_cv); /* a CPU lane that declined the last pages waits */
            pthread_mutex_unlock(&b->lock);
            uint64_t t0 = db_now_ns();
            run_slot(b, lane, s);
            uint64_t t1 = db_now_ns();
            /* A failed page is settled here: s is gone after settle(). */
            bool failed = s->r.state == DB_BATCH_FAILED;
            size_t bytes = 0;
            int n = failed ? settle(b, s, &bytes) : 0;
            pthread_mutex_lock(&b->lock);
            learn(b, lane, t0, t1);
            if (failed)
                leave_pages(b, n, bytes);
            else
                push(&b->done, &b->done_tail, s);
            pthread_cond_broadcast(&b->codec_cv);
            if (!b->warm[lane->lane]) {
                b->warm[lane->lane] = true;
                pthread_cond_broadcast(&b->lane_cv);
            }
            continue;
        }
        if (drained(b))
            break;
        pthread_cond_wait(&b->lane_cv, &b->lock);
    }
    pthread_mutex_unlock(&b->lock);
    /* Closing a GPU context takes about 0.1 s: done while the last images encode. */
    db_context_close(lane->ctx);
    lane->ctx = NULL;
    return NULL;
}

/* ---- Setting up ------------------------------------------------------------------- */

db_status db_batch_lanes(const char *gpu_spec, char (*specs)[16], int max, int *n)
{
    *n = 0;
    if (!gpu_spec || strcmp(gpu_spec, "all")) {
        if (max > 0) {
            if (gpu_spec && strlen(gpu_spec) >= 16)
                return db_fail(DB_ERR_USAGE, "--gpu-device %s: a lane's device spec is at most 15 characters; "
                               "name the device by its P:D index (docbin-run --list-devices)", gpu_spec);
            snprintf(specs[0], 16, "%s", gpu_spec ? gpu_spec : "");
            *n = 1;
        }
        return DB_OK;
    }
    db_device_info *devs = NULL;
    int n_devs = 0;
    db_status st = db_device_list(&devs, &n_devs);
    if (st != DB_OK)
        return st;
    for (int i = 0; i < n_devs && *n < max; i++)
        if (devs[i].type & CL_DEVICE_TYPE_GPU)
            snprintf(specs[(*n)++], 16, "%d:%d", devs[i].platform_index, devs[i].device_index);
    free(devs);
    if (*n == 0)
        return db_fail(DB_ERR_DEVICE, "--gpu-device %s: this machine has no OpenCL GPU device (%d OpenCL "
                       "device%s, none of type GPU; see docbin-run --list-devices); bind the gpu role to "
                       "one device with --gpu-device, or run the map cpu", gpu_spec, n_devs,
                       n_devs == 1 ? "" : "s");
    return DB_OK;
}

/* One lane's context being opened on a thread of its own, and what came of it. */
typedef struct opener {
    lane_arg *lane;
    db_status st;
    char message[1024];
} opener;

static void *open_lane_thread(void *arg)
{
    opener *o = arg;
    o->st = open_lane(o->lane->b->opt, o->lane->gpu_spec, &o->lane->ctx);
    if (o->st != DB_OK)
        snprintf(o->message, sizeof o->message, "%s", db_error_message());
    return NULL;
}

/* Opens the first `n` lanes' contexts at once, while the codec threads decode
** the first pages: a driver takes a good part of a second for a context and
** its first programs. The first failure, in lane order, is the one reported. */
static db_status open_lanes(lane_arg *lanes, int n)
{
    opener *o = calloc((size_t)n, sizeof *o);
    pthread_t *tids = calloc((size_t)n, sizeof *tids);
    bool *started = calloc((size_t)n, sizeof *started);
    if (!o || !tids || !started) {
        free(o);
        free(tids);
        free(started);
        return db_fail(DB_ERR_NOMEM, "out of memory opening %d device lanes", n);
    }
    /* The first lane opens here: the ICD loader and the drivers set themselves
    ** up on their first calls, which must not race (PoCL then lists no devices). */
    for (int r = 0; r < n; r++) {
        o[r] = (opener){.lane = &lanes[r]};
        started[r] = r > 0 && pthread_create(&tids[r], NULL, open_lane_thread, &o[r]) == 0;
        if (!started[r])
            open_lane_thread(&o[r]);
    }
    db_status st = DB_OK;
    for (int r = 0; r < n; r++) {
        if (started[r])
            pthread_join(tids[r], NULL);
        if (o[r].st != DB_OK && st == DB_OK)
            st = db_fail(o[r].st, "%s", o[r].message);
    }
    free(o);
    free(tids);
    free(started);
    return st;
}

/* Closes the contexts that lanes left open (those that never ran). */
static void close_lanes(lane_arg *lanes, int n)
{
    for (int r = 0; lanes && r < n; r++) {
        db_context_close(lanes[r].ctx);
        lanes[r].ctx = NULL;
    }
}

/* The lanes: their device specs with "all" (one per GPU; else the one asked
** for is used) and how many images run at once, `in_flight` or 2 per device (1
** serially), no more than there are images. */
static db_status plan_lanes(const db_batch_options *opt, int n_images, char (*specs)[16], int *n_lanes,
                            int *n_runners)
{
    bool all = opt->gpu_spec && !strcmp(opt->gpu_spec, "all");
    db_status st = all ? db_batch_lanes(opt->gpu_spec, specs, MAX_LANES, n_lanes) : DB_OK;
    if (st != DB_OK)
        return st;
    if (!all)
        *n_lanes = 1;
    int n = opt->serial ? 1 : opt->in_flight ? opt->in_flight : 2 * *n_lanes;
    if (n > *n_lanes * 64)
        return db_fail(DB_ERR_USAGE, "--in-flight %d: at most 64 images per device lane", n);
    /* A lane per image at most; one even for an empty shard, so that device
    ** problems show up the same in every shard. */
    *n_runners = n > n_images ? (n_images > 0 ? n_images : 1) : n;
    return DB_OK;
}

/* Whether the batch adds a CPU lane (db_cpu_lane), seeing the first lane's context. */
static bool wants_cpu_lane(const db_batch_options *opt, const db_context *ctx)
{
    if (opt->cpu_lane == DB_CPU_LANE_OFF || opt->serial || !ctx->chosen[DB_ROLE_CPU])
        return false;
    for (int s = 0; s < opt->algo->n_stages; s++)
        if (!opt->algo->stages[s].impl[DB_ROLE_CPU])
            return false;
    if (opt->cpu_lane == DB_CPU_LANE_ON)
        return true;
    /* auto: beside a real GPU, and only when the map is docbin's to choose. */
    const db_device_info *gpu = ctx->chosen[DB_ROLE_GPU];
    return opt->mode != DB_PLAN_GIVEN && gpu && !gpu->host_unified;
}

/* Whether `name` is an image file name: the stale temporary files of a
** batch's outputs are removed, any other hidden file stays. */
static bool is_image_name(const char *name, const void *user)
{
    (void)user;
    return db_image_file_ext(name, db_image_exts, DB_IMAGE_N_EXTS) != NULL;
}

/* The log must not be an input or an output of the batch, and its directory
** must be there (or be the output directory, made before the log opens):
** checked before any work, so that no scan is overwritten and no batch runs
** for a log it cannot write. */
static db_status check_log(const db_batch_options *opt, const db_batch_list *list)
{
    const char *log = opt->log_json;
    if (!log || !strcmp(log, "-"))
        return DB_OK;
    db_status st = db_check_writable(log, "the log", list->out_dir);
    if (st != DB_OK)
        return st;
    /* An existing input is the log only if the log exists: one stat each. */
    struct stat ls, is;
    for (int i = 0; i < list->n && stat(log, &ls) == 0; i++)
        if (stat(list->inputs[i], &is) == 0 && is.st_dev == ls.st_dev && is.st_ino == ls.st_ino)
            return db_fail(DB_ERR_USAGE, "--log-json %s is the input %s of the batch; give the log a name of its own",
                           log, list->inputs[i]);
    /* Every output is OUT_DIR/NAME: the directory is resolved once. */
    char lc[PATH_MAX + 256], dc[PATH_MAX + 256];
    if (!list->outputs || list->n == 0)
        return DB_OK;
    db_canonical_path(log, lc, sizeof lc);
    db_canonical_path(list->outputs[0], dc, sizeof dc);
    const char *last = strrchr(dc, '/');
    size_t len = last ? (size_t)(last - dc) + 1 : 0; /* the directory, with its slash */
    for (int i = 0; i < list->n; i++) {
        const char *slash = strrchr(list->outputs[i], '/');
        if (!strncmp(lc, dc, len) && !strcmp(lc + len, slash ? slash + 1 : list->outputs[i]))
            return db_fail(DB_ERR_USAGE, "--log-json %s is the output of %s; give the log a name of its own", log,
                           list->inputs[i]);
    }
    return DB_OK;
}

/* Creates the output directory and opens the JSON log. */
static db_status open_outputs(batch *b)
{
    const db_batch_options *opt = b->opt;
    if (b->list->out_dir && db_mkdir_p(b->list->out_dir) != 0)
        return db_fail(DB_ERR_IO, "cannot create the output directory %s: %s", b->list->out_dir, strerror(errno));
    if (b->list->out_dir)
        db_remove_stale_temps(b->list->out_dir, is_image_name, NULL);
    if (opt->log_json && !(b->log = strcmp(opt->log_json, "-") ? fopen(opt->log_json, "w") : stdout))
        return db_fail(DB_ERR_IO, "cannot write the log %s: %s", opt->log_json, strerror(errno));
    return DB_OK;
}

/* Stops a batch whose lanes never ran: no more decoding, and the images
** decoded so far (or still decoding) are dropped without a report. */
static void abort_batch(batch *b)
{
    pthread_mutex_lock(&b->lock);
    b->aborted = true;
    b->next = b->list->n;
    for (slot *s; (s = pop(&b->ready, &b->ready_tail)) || (s = pop(&b->held, &b->held_tail));) {
        size_t bytes = s->bytes;
        drop(s);
        leave(b, bytes);
    }
    b->ready_n = 0;
    pthread_cond_broadcast(&b->codec_cv);
    pthread_cond_broadcast(&b->lane_cv);
    pthread_mutex_unlock(&b->lock);
}

/* The lanes of a batch: their arguments and threads, those started. */
typedef struct lane_set {
    lane_arg *arg;
    pthread_t *tid;
    int n, started;
} lane_set;

/* Until the first lane of every device is open nothing is written or
** reported, so a device or map problem stops the batch with no output, no
** log and no directory. One lane per device opens before the batch goes on
** (with `specs`, lane r on device r modulo n_lanes; else the batch's device),
** the others on their own threads; a CPU lane follows when it pays. */
static db_status start_lanes(batch *b, char (*specs)[16], int n_lanes, lane_set *ls)
{
    const db_batch_options *opt = b->opt;
    b->sum->in_flight = ls->n;
    /* Room for the CPU lane, after the others. */
    ls->tid = calloc((size_t)ls->n + 1, sizeof *ls->tid);
    ls->arg = calloc((size_t)ls->n + 1, sizeof *ls->arg);
    if (!ls->tid || !ls->arg)
        return db_fail(DB_ERR_NOMEM, "out of memory starting the batch threads");
    for (int r = 0; r < ls->n; r++)
        ls->arg[r] = (lane_arg){.b = b, .gpu_spec = specs ? specs[r % n_lanes] : opt->gpu_spec, .lane = r % n_lanes};
    db_status st = open_lanes(ls->arg, ls->n < n_lanes ? ls->n : n_lanes);
    if (st == DB_OK)
        st = open_outputs(b);
    if (st != DB_OK)
        return st;
    b->sum->lanes = n_lanes;
    if (wants_cpu_lane(opt, ls->arg[0].ctx))
        ls->arg[ls->n++] = (lane_arg){.b = b, .gpu_spec = ls->arg[0].gpu_spec, .lane = n_lanes, .cpu = true};
    int err = 0;
    for (int r = 0; r < ls->n && !err; r++)
        if (!(err = pthread_create(&ls->tid[ls->started], NULL, lane_thread, &ls->arg[r])))
            ls->started++;
    if (ls->started == 0)
        return db_fail(DB_ERR_NOMEM, "cannot start the batch's threads: %s; lower --in-flight", strerror(err));
    return DB_OK;
}

/* The caller's options and list, checked before any thread or file. */
static db_status check_request(const db_batch_options *opt, const db_batch_list *list)
{
    if (!list->outputs && list->n)
        return db_fail(DB_ERR_USAGE, "db_batch_run: the outputs are not named (db_batch_list_name_outputs)");
    if (!opt->codec_only && (!opt->algo || (opt->mode == DB_PLAN_GIVEN && !opt->map) || !opt->job))
        return db_fail(DB_ERR_USAGE, "db_batch_run: an algorithm, a map (or a planner mode) and a job are required");
    if (opt->in_flight < 0 || opt->threads < 0)
        return db_fail(DB_ERR_USAGE, "db_batch_run: in_flight and threads must be >= 0");
    if (opt->bits != 0 && opt->bits != 1 && opt->bits != 8)
        return db_fail(DB_ERR_USAGE, "db_batch_run: %d bits per pixel; give 1 or 8", opt->bits);
    return check_log(opt, list);
}

/* Reports what was skipped or failed while the lanes opened, once they run. */
static void report_held(batch *b)
{
    pthread_mutex_lock(&b->lock);
    b->setting_up = false;
    slot *held = b->held;
    b->held = b->held_tail = NULL;
    pthread_mutex_unlock(&b->lock);
    while (held) {
        slot *s = held;
        held = held->next;
        size_t bytes;
        int n = settle(b, s, &bytes);
        pthread_mutex_lock(&b->lock);
        leave_pages(b, n, bytes);
        pthread_mutex_unlock(&b->lock);
    }
}

/* Closes the JSON log; a write that failed on the way fails a batch that had not failed. */
static db_status close_log(batch *b, db_status st)
{
    if (!b->log)
        return st;
    if ((fflush(b->log) != 0 || ferror(b->log)) && !b->log_errno)
        b->log_errno = errno ? errno : EIO;
    if (b->log != stdout && fclose(b->log) != 0 && !b->log_errno)
        b->log_errno = errno ? errno : EIO;
    if (b->log_errno && st == DB_OK)
        st = db_fail(DB_ERR_IO, "cannot write the log %s: %s; the pages were done, but their log is incomplete",
                     b->opt->log_json, strerror(b->log_errno));
    return st;
}

db_status db_batch_run(const db_batch_options *opt, const db_batch_list *list, db_batch_summary *sum)
{
    memset(sum, 0, sizeof *sum);
    sum->total = list->n;
    db_status checked = check_request(opt, list);
    if (checked != DB_OK)
        return checked;

    batch b = {.opt = opt, .list = list, .bits = opt->bits ? opt->bits : 1, .sum = sum};
    bool all = !opt->codec_only && opt->gpu_spec && !strcmp(opt->gpu_spec, "all");
    char specs[MAX_LANES][16];
    int n_lanes = 0, n_runners = 0;
    db_status st = DB_OK;
    /* Without "all" the lanes are known now, and a bad --in-flight stops the batch before any thread. */
    if (!opt->codec_only && !all && (st = plan_lanes(opt, list->n, specs, &n_lanes, &n_runners)) != DB_OK)
        return st;
    if (opt->codec_only && (st = open_outputs(&b)) != DB_OK)
        return st;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int n_codec = opt->serial ? 1 : opt->threads ? opt->threads : (int)(cpus > 0 ? cpus : 1);
    sum->threads = n_codec;
    if (n_codec > list->n)
        n_codec = list->n > 0 ? list->n : 1;
    /* Serial: the next image is decoded only once the last one is written.
    ** With "all", the lanes are counted once the GPUs are listed; meanwhile
    ** the codec threads decode as far as for 2 images in flight. */
    b.limit = opt->serial ? 1 : (n_runners ? n_runners : opt->in_flight ? opt->in_flight : 2) + 4 * n_codec;
    b.budget = opt->max_bytes ? opt->max_bytes : db_memory_size() / 4;

    /* Pages freed are pages the batch will hold again: their staging memory is
    ** kept (up to the budget) rather than released and pinned anew. */
    db_host_pool_batch(b.budget);
    pthread_mutex_init(&b.lock, NULL);
    pthread_mutex_init(&b.report_lock, NULL);
    pthread_cond_init(&b.codec_cv, NULL);
    pthread_cond_init(&b.lane_cv, NULL);
    b.setting_up = !opt->codec_only;
    b.start_ns = db_now_ns();
    pthread_t *tids = calloc((size_t)n_codec, sizeof *tids);
    int started = 0, err = 0;
    if (!tids)
        st = db_fail(DB_ERR_NOMEM, "out of memory starting the batch threads");
    for (int t = 0; t < n_codec && st == DB_OK && !err; t++)
        if (!(err = pthread_create(&tids[started], NULL, codec_thread, &b)))
            started++;
    if (st == DB_OK && started == 0)
        st = db_fail(DB_ERR_NOMEM, "cannot start the batch's threads: %s; lower --threads", strerror(err));
    /* The devices are listed and the lanes opened while the first pages decode. */
    if (st == DB_OK && all && (st = plan_lanes(opt, list->n, specs, &n_lanes, &n_runners)) == DB_OK) {
        pthread_mutex_lock(&b.lock);
        b.limit = opt->serial ? 1 : n_runners + 4 * n_codec;
        pthread_cond_broadcast(&b.codec_cv);
        pthread_mutex_unlock(&b.lock);
    }
    lane_set ls = {.n = n_runners};
    if (st == DB_OK && !opt->codec_only)
        st = start_lanes(&b, all ? specs : NULL, n_lanes, &ls);
    if (st != DB_OK)
        abort_batch(&b);
    else if (!opt->codec_only)
        report_held(&b);
    for (int t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    for (int t = 0; t < ls.started; t++)
        pthread_join(ls.tid[t], NULL);
    if (opt->progress && b.progress_shown) {
        show_progress(&b, true);
        fputc('\n', opt->progress);
    }
    sum->wall_s = (double)(db_now_ns() - b.start_ns) / 1e9;
    st = close_log(&b, st);
    close_lanes(ls.arg, ls.n);
    db_host_pool_batch(0);
    free(tids);
    free(ls.tid);
    free(ls.arg);
    pthread_cond_destroy(&b.lane_cv);
    pthread_cond_destroy(&b.codec_cv);
    pthread_mutex_destroy(&b.report_lock);
    pthread_mutex_destroy(&b.lock);
    return st;
}
