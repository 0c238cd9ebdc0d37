/*
** profile.c — collecting profiling events, the --profile table and the --trace file.
*/
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "runtime/profile.h"
#include "runtime/util.h"

db_profile *db_profile_new(void)
{
    return calloc(1, sizeof(db_profile));
}

void db_profile_free(db_profile *p)
{
    if (!p)
        return;
    for (int i = p->resolved; i < p->n; i++)
        if (p->rec[i].event)
            clReleaseEvent(p->rec[i].event);
    free(p->rec);
    free(p);
}

void db_profile_add(db_profile *prof, cl_event ev, db_record_kind kind, const char *stage,
                    const char *what, const db_device *dev, size_t bytes)
{
    if (!prof || !ev)
        return;
    if (!db_reserve((void **)&prof->rec, prof->n, &prof->cap, sizeof *prof->rec))
        return; /* profiling is best effort: a lost record never fails a run */
    db_record *r = &prof->rec[prof->n++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    snprintf(r->stage, sizeof r->stage, "%s", stage);
    snprintf(r->what, sizeof r->what, "%s", what);
    r->role = dev->role;
    snprintf(r->device, sizeof r->device, "%.63s", dev->info.name);
    r->bytes = bytes;
    r->run = prof->runs;
    r->host_ns = db_now_ns();
    clRetainEvent(ev);
    r->event = ev;
}

db_status db_profile_resolve(db_profile *prof)
{
    if (!prof)
        return DB_OK;
    /* Per role, the offset from device clock to host clock: the smallest
    ** (host time after enqueue - device QUEUED time) seen in this batch. */
    int64_t offset[DB_ROLE_COUNT];
    int have[DB_ROLE_COUNT] = {0};
    for (int i = prof->resolved; i < prof->n; i++) {
        db_record *r = &prof->rec[i];
        cl_ulong q = 0, s = 0, e = 0;
        clGetEventProfilingInfo(r->event, CL_PROFILING_COMMAND_QUEUED, sizeof q, &q, NULL);
        clGetEventProfilingInfo(r->event, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
        clGetEventProfilingInfo(r->event, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL);
        r->start_ns = s;
        r->end_ns = e < s ? s : e;
        int64_t off = (int64_t)r->host_ns - (int64_t)q;
        if (!have[r->role] || off < offset[r->role]) {
            offset[r->role] = off;
            have[r->role] = 1;
        }
    }
    for (int i = prof->resolved; i < prof->n; i++) {
        db_record *r = &prof->rec[i];
        r->start_ns = (uint64_t)((int64_t)r->start_ns + offset[r->role]);
        r->end_ns = (uint64_t)((int64_t)r->end_ns + offset[r->role]);
        clReleaseEvent(r->event);
        r->event = NULL;
    }
    prof->resolved = prof->n;
    return DB_OK;
}

void db_profile_end_run(db_profile *prof, uint64_t wall_ns)
{
    if (!prof)
        return;
    if (prof->runs < DB_PROFILE_MAX_RUNS)
        prof->wall_ns[prof->runs] = wall_ns;
    prof->runs++;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Median, minimum and maximum of v[0..n) (sorts v). */
static void summarize(uint64_t *v, int n, double *med, double *lo, double *hi)
{
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    *med = n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
    *lo = (double)v[0];
    *hi = (double)v[n - 1];
}

static int same_row(const db_record *a, const db_record *b)
{
    return a->kind == b->kind && a->role == b->role && !strcmp(a->stage, b->stage);
}

void db_profile_print(const db_profile *prof, FILE *f)
{
    int runs = prof->runs < DB_PROFILE_MAX_RUNS ? prof->runs : DB_PROFILE_MAX_RUNS;
    int first = runs > 1 ? 1 : 0; /* the first of several runs is warm-up */
    int counted = runs - first;
    if (counted <= 0)
        return;
    uint64_t per_run[DB_PROFILE_MAX_RUNS];
    if (counted > 1)
        fprintf(f, "median of %d runs after a warm-up run (min - max)\n", counted);
    fprintf(f, "%-14s %-4s %-34s %8s %10s\n", "stage", "role", "device", "commands", "time ms");
    /* Kernels first, then transfers; rows in order of first appearance. */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < prof->resolved; i++) {
            const db_record *r = &prof->rec[i];
            int is_kernel = r->kind == DB_REC_KERNEL;
            if (is_kernel != (pass == 0) || r->run != first)
                continue;
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = prof->rec[j].run == first && same_row(&prof->rec[j], r);
            if (seen)
                continue;
            memset(per_run, 0, sizeof per_run[0] * (size_t)counted);
            size_t bytes = 0;
            int count = 0;
            for (int j = 0; j < prof->resolved; j++) {
                const db_record *o = &prof->rec[j];
                if (o->run < first || o->run >= runs || !same_row(o, r))
                    continue;
                per_run[o->run - first] += o->end_ns - o->start_ns;
                if (o->run == first) {
                    bytes += o->bytes;
                    count++;
                }
            }
            double med, lo, hi;
            summarize(per_run, counted, &med, &lo, &hi);
            char label[64], dev[40];
            if (is_kernel)
                snprintf(label, sizeof label, "%s", r->stage);
            else
                snprintf(label, sizeof label, "%s %s", r->kind == DB_REC_TO_DEVICE ? "->" : "<-", r->stage);
            snprintf(dev, sizeof dev, "%.39s", r->device);
            fprintf(f, "%-14s %-4s %-34s %8d %10.3f", label, db_role_name(r->role), dev, count, med / 1e6);
            if (counted > 1)
                fprintf(f, "  (%.3f - %.3f)", lo / 1e6, hi / 1e6);
            if (!is_kernel && !bytes)
                fprintf(f, "  shared memory, no copy");
            if (!is_kernel && bytes)
                fprintf(f, "  %.2f MB, %.1f GB/s", bytes / 1e6, med > 0 ? bytes / med : 0.0);
            fputc('\n', f);
        }
    }
    for (int i = 0; i < counted; i++)
        per_run[i] = prof->wall_ns[first + i];
    double med, lo, hi;
    summarize(per_run, counted, &med, &lo, &hi);
    fprintf(f, "%-14s %-4s %-34s %8s %10.3f", "wall", "", "(submission to result)", "", med / 1e6);
    if (counted > 1)
        fprintf(f, "  (%.3f - %.3f)", lo / 1e6, hi / 1e6);
    fputc('\n', f);
}

int db_profile_run_rows(const db_profile *prof, int run, db_profile_row *rows, int max)
{
    int n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < prof->resolved; i++) {
            const db_record *r = &prof->rec[i];
            if (r->run != run || (r->kind == DB_REC_KERNEL) != (pass == 0))
                continue;
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = prof->rec[j].run == run && same_row(&prof->rec[j], r);
            if (seen)
                continue;
            db_profile_row row = {.kind = r->kind, .role = r->role};
            snprintf(row.stage, sizeof row.stage, "%s", r->stage);
            uint64_t first = UINT64_MAX, last = 0, busy = 0;
            for (int j = i; j < prof->resolved; j++) {
                const db_record *o = &prof->rec[j];
                if (o->run != run || !same_row(o, r))
                    continue;
                row.commands++;
                row.bytes += o->bytes;
                busy += o->end_ns - o->start_ns;
                first = o->start_ns < first ? o->start_ns : first;
                last = o->end_ns > last ? o->end_ns : last;
            }
            row.busy_ms = (double)busy / 1e6;
            row.span_ms = (double)(last - first) / 1e6;
            if (n < max)
                rows[n] = row;
            n++;
        }
    return n;
}

double db_profile_run_wall_ms(const db_profile *prof, int run)
{
    if (run < 0 || run >= prof->runs || run >= DB_PROFILE_MAX_RUNS)
        return 0;
    return (double)prof->wall_ns[run] / 1e6;
}

db_status db_profile_write_trace(const db_profile *prof, const char *path)
{
    db_atomic_file af;
    db_status st = db_atomic_open(&af, path);
    if (st != DB_OK)
        return st;
    FILE *f = af.f;
    uint64_t t0 = UINT64_MAX;
    for (int i = 0; i < prof->resolved; i++)
        if (prof->rec[i].start_ns < t0)
            t0 = prof->rec[i].start_ns;
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", f);
    int first = 1;
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        for (int q = 0; q < 2; q++) {
            const char *dev = NULL;
            for (int i = 0; i < prof->resolved && !dev; i++)
                if (prof->rec[i].role == (db_role)r)
                    dev = prof->rec[i].device;
            if (!dev)
                continue;
            char name[128];
            snprintf(name, sizeof name, "%s %s (%s)", db_role_name((db_role)r), q ? "transfer" : "compute", dev);
            fprintf(f, "%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":",
                    first ? "" : ",\n", r * 2 + q);
            db_json_string(f, name);
            fputs("}}", f);
            first = 0;
        }
    for (int i = 0; i < prof->resolved; i++) {
        const db_record *r = &prof->rec[i];
        int tid = (int)r->role * 2 + (r->kind == DB_REC_KERNEL ? 0 : 1);
        char name[128];
        if (r->kind == DB_REC_KERNEL)
            snprintf(name, sizeof name, "%s: %s", r->stage, r->what);
        else
            snprintf(name, sizeof name, "%s %s (%s)", r->kind == DB_REC_TO_DEVICE ? "->" : "<-", r->stage, r->what);
        fprintf(f, "%s{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"name\":", first ? "" : ",\n",
                tid, (r->start_ns - t0) / 1e3, (r->end_ns - r->start_ns) / 1e3);
        db_json_string(f, name);
        fprintf(f, ",\"cat\":\"%s\",\"args\":{\"bytes\":%zu,\"run\":%d}}",
                r->kind == DB_REC_KERNEL ? "kernel" : "transfer", r->bytes, r->run);
        first = 0;
    }
    fputs("\n]}\n", f);
    if (ferror(f)) {
        db_atomic_abort(&af);
        return db_fail(DB_ERR_IO, "cannot write %s", path);
    }
    return db_atomic_commit(&af);
}
