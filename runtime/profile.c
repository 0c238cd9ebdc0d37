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
    if (prof->n == prof->cap) {
        int cap = prof->cap ? prof->cap * 2 : 64;
        db_record *rec = realloc(prof->rec, (size_t)cap * sizeof *rec);
        if (!rec)
            return; /* profiling is best effort: a lost record never fails a run */
        prof->rec = rec;
        prof->cap = cap;
    }
    db_record *r = &prof->rec[prof->n++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    snprintf(r->stage, sizeof r->stage, "%s", stage);
    snprintf(r->what, sizeof r->what, "%s", what);
    r->role = dev->role;
    snprintf(r->device, sizeof r->device, "%.63s", dev->info.name);
    r->bytes = bytes;
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

void db_profile_print(const db_profile *prof, FILE *f)
{
    fprintf(f, "%-14s %-4s %-34s %8s %10s\n", "stage", "role", "device", "commands", "time ms");
    /* Stages and items in order of first appearance. */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < prof->resolved; i++) {
            const db_record *r = &prof->rec[i];
            int is_kernel = r->kind == DB_REC_KERNEL;
            if (is_kernel != (pass == 0))
                continue;
            int first = 1;
            for (int j = 0; j < i; j++)
                if (prof->rec[j].kind == r->kind && prof->rec[j].role == r->role &&
                    !strcmp(prof->rec[j].stage, r->stage))
                    first = 0;
            if (!first)
                continue;
            uint64_t busy = 0;
            size_t bytes = 0;
            int count = 0;
            for (int j = i; j < prof->resolved; j++) {
                const db_record *o = &prof->rec[j];
                if (o->kind == r->kind && o->role == r->role && !strcmp(o->stage, r->stage)) {
                    busy += o->end_ns - o->start_ns;
                    bytes += o->bytes;
                    count++;
                }
            }
            char label[64];
            if (is_kernel)
                snprintf(label, sizeof label, "%s", r->stage);
            else
                snprintf(label, sizeof label, "%s %s", r->kind == DB_REC_TO_DEVICE ? "->" : "<-", r->stage);
            char dev[40];
            snprintf(dev, sizeof dev, "%.39s", r->device);
            fprintf(f, "%-14s %-4s %-34s %8d %10.3f", label, db_role_name(r->role), dev, count, busy / 1e6);
            if (!is_kernel)
                fprintf(f, "  %s", bytes ? "" : "(shared memory, no copy)");
            if (!is_kernel && bytes)
                fprintf(f, "%.2f MB, %.1f GB/s", bytes / 1e6, busy ? bytes / (double)busy : 0.0);
            fputc('\n', f);
        }
    }
    fprintf(f, "%-14s %-4s %-34s %8s %10.3f\n", "wall", "", "(submission to result)", "", prof->wall_ns / 1e6);
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
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
            json_string(f, name);
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
        json_string(f, name);
        fprintf(f, ",\"cat\":\"%s\",\"args\":{\"bytes\":%zu}}", r->kind == DB_REC_KERNEL ? "kernel" : "transfer",
                r->bytes);
        first = 0;
    }
    fputs("\n]}\n", f);
    if (ferror(f)) {
        db_atomic_abort(&af);
        return db_fail(DB_ERR_IO, "cannot write %s", path);
    }
    return db_atomic_commit(&af);
}
