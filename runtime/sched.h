/*
** sched.h — the scheduler: runs one algorithm's graph on one image under a map.
**
** Every stage is enqueued on its role's compute queue with events for its
** inputs; inputs are fetched lazily (buffer.h); stages on different devices
** whose inputs are ready run at the same time. The calling thread enqueues the
** whole graph without blocking and then waits only for the result.
*/
#ifndef DB_SCHED_H
#define DB_SCHED_H

#include "runtime/device.h"
#include "runtime/image.h"
#include "runtime/profile.h"
#include "runtime/stage.h"

/* Runs `algo` on `in` with `map` and `job`; on success `*out` is a new 1-channel
** image of the output item. `report` (may be NULL) receives the algorithm's
** report figures; `prof` (may be NULL) receives every command's times. */
db_status db_run(db_context *ctx, const db_algo *algo, const db_map *map, const db_job *job,
                 const db_image *in, db_image **out, db_report *report, db_profile *prof);

/* As db_run, the result a new bitmap (white where the output item is 128 or
** more): packed on the GPU that made it, so that an eighth of the bytes come
** back, else on the host. What a 1-bit file is written from. With `g4` (the
** file stores Group 4: db_doc_takes_g4), a GPU that packs it also codes it
** (bm->g4), so that the host has no coding to do. */
db_status db_run_bitmap(db_context *ctx, const db_algo *algo, const db_map *map, const db_job *job,
                        const db_image *in, bool g4, db_bitmap **bits, db_report *report, db_profile *prof);

/* Binds the devices `map` puts stages on and builds (or loads from the cache)
** the kernels they run: what a first run would do before its first command,
** done ahead so that a caller can overlap it with decoding the page. */
db_status db_prepare(db_context *ctx, const db_algo *algo, const db_map *map, const db_job *job);

/* The stage that runs at stage index `s` under `map` and `job`: the fused
** stage where the algorithm's fusion applies there (then *last is the last
** stage it stands for), else stage s (*last = s). db_run and everything that
** predicts a run use it. */
const db_stage *db_run_step(const db_algo *algo, const db_map *map, const db_job *job, int s, int *last);

/* The bytes of `item` for an image of width x height x channels under `job`:
** what a run allocates, and what the planner counts for a transfer. */
size_t db_item_bytes(const db_item *item, const db_job *job, int width, int height, int channels);

/* Fills `job` with the algorithm's default parameters, variant 0 and BT.601 gray. */
void db_job_defaults(const db_algo *algo, db_job *job);

/* Sets parameter `name` of `job` from text, checking kind and range. */
db_status db_job_set(const db_algo *algo, db_job *job, const char *name, const char *value);

/* Sets a parameter from the text "NAME=VALUE" of a --param option. */
db_status db_job_set_text(const db_algo *algo, db_job *job, const char *setting);

/* The job for a page of `dpi` pixels per inch: each length given in a
** physical unit (window=1in, 6mm, 2.5cm) in pixels, the nearest the
** parameter allows (an odd window, one of HBK's blocks) within its range.
** A page without a resolution (dpi 0) and a length in a unit is an error
** naming the parameter and --dpi. A job with no such length comes back as is. */
db_status db_job_resolve(const db_algo *algo, const db_job *job, double dpi, db_job *out);

/* Selects a variant by name. */
db_status db_job_set_variant(const db_algo *algo, db_job *job, const char *name);

/* Checks every parameter of `job` against the algorithm's constraints. */
db_status db_job_check(const db_algo *algo, const db_job *job);

#endif
