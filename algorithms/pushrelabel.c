/*
** pushrelabel.c — the host side of the grid push-relabel cut (kernels in
** cl/pushrelabel.cl). Each launch runs several lock-free rounds on the device,
** and the host reads a counter after each batch of launches, so a solve costs
** few launches and synchronisations; the cut does not depend on the order
** work-items ran in.
*/
#include "algorithms/pushrelabel.h"

const char *const db_relabel_names[DB_RELABEL_COUNT] = {"none", "initial", "fixed", "exponential"};

/* Push-relabel cycles, and relaxation sweeps of a global relabel, per launch.
** A CPU device runs a work-group's work-items one after another, so a node's
** later cycles would see no change from its neighbours there: one cycle per
** launch. */
#define ROUND 8
#define SWEEPS 16

/* Launches between two reads of a flag grow 1, 2, 4 .. MAX_BATCH: each read
** drains the queue (tens of microseconds on a discrete GPU), while a launch
** past convergence finds nothing to do and costs a few. */
#define MAX_BATCH 8

static cl_int cycles_per_launch(const db_pr_cut *pr)
{
    return db_stage_device(pr->run)->info.type & CL_DEVICE_TYPE_CPU ? 1 : ROUND;
}
/* Work-group size of the flow reduction, and its number of groups. */
#define GROUP 256
#define PARTS 256
/* A bound far above what a grid needs (heights grow by one per iteration at
** worst, and global relabels cut that short); reaching it is reported. */
#define MAX_ITERATIONS 100000000L

static db_status launch(db_pr_cut *pr, cl_kernel k, size_t global)
{
    const size_t local = GROUP;
    return db_stage_launch(pr->run, k, 1, &global, &local);
}

static db_status fill(db_pr_cut *pr, cl_mem buf, cl_int count, cl_int value)
{
    db_status st = db_stage_args(pr->run, pr->fill, 3, sizeof buf, &buf, sizeof count, &count, sizeof value, &value);
    return st == DB_OK ? launch(pr, pr->fill, (size_t)count) : st;
}

/* Exact distances to the sink (a breadth-first search over reverse residual
** arcs, done as relaxation): launches of SWEEPS rounds in growing batches,
** a read of the "changed" flag after each batch, until a launch changes nothing. */
static db_status global_relabel(db_pr_cut *pr)
{
    db_stage_run *run = pr->run;
    cl_int sweeps = cycles_per_launch(pr) == 1 ? 1 : SWEEPS;
    db_status st = db_stage_args(run, pr->bfs_init, 4, sizeof pr->rt, &pr->rt, sizeof pr->n, &pr->n,
                                 sizeof pr->hmax, &pr->hmax, sizeof pr->height, &pr->height);
    if (st == DB_OK)
        st = launch(pr, pr->bfs_init, (size_t)pr->n);
    if (st == DB_OK)
        st = db_stage_args(run, pr->bfs_sweeps, 6, sizeof pr->res, &pr->res, sizeof pr->rows, &pr->rows,
                           sizeof pr->cols, &pr->cols, sizeof sweeps, &sweeps, sizeof pr->height, &pr->height,
                           sizeof pr->counter, &pr->counter);
    /* The counter is cleared before the last launch of a batch only, so it
    ** says whether that launch changed anything. */
    for (cl_int changed = 1, batch = 1; st == DB_OK && changed; batch = batch < MAX_BATCH ? 2 * batch : batch) {
        for (cl_int b = 0; b < batch && st == DB_OK; b++) {
            if (b == batch - 1)
                st = fill(pr, pr->counter, 1, 0);
            if (st == DB_OK)
                st = launch(pr, pr->bfs_sweeps, (size_t)pr->n);
        }
        if (st != DB_OK || (st = db_stage_read(run, pr->counter, 0, sizeof changed, &changed)) != DB_OK)
            return st;
    }
    if (st == DB_OK) {
        pr->exact = 1;
        pr->relabels++;
    }
    return st;
}

db_status db_pr_cut_begin(db_pr_cut *pr, db_stage_run *run, int rows, int cols, cl_mem source, cl_mem sink,
                          cl_mem right, cl_mem down, db_relabel strategy)
{
    *pr = (db_pr_cut){.run = run, .rows = rows, .cols = cols, .strategy = strategy, .right = right, .down = down};
    pr->n = rows * cols;
    /* A path to the sink visits each node at most once: distances are <= n. */
    pr->hmax = pr->n + 1;
    size_t n = (size_t)pr->n;
    pr->res = db_stage_scratch(run, 4 * n * sizeof(cl_int));
    pr->rt = db_stage_scratch(run, n * sizeof(cl_int));
    pr->excess = db_stage_scratch(run, n * sizeof(cl_int));
    pr->height = db_stage_scratch(run, n * sizeof(cl_int));
    pr->counter = db_stage_scratch(run, sizeof(cl_int));
    pr->base = db_stage_scratch(run, n * sizeof(cl_long));
    pr->partial = db_stage_scratch(run, PARTS * sizeof(cl_long));
    pr->fill = db_stage_kernel(run, "pushrelabel.cl", "pr_fill");
    pr->bfs_init = db_stage_kernel(run, "pushrelabel.cl", "pr_bfs_init");
    pr->bfs_sweeps = db_stage_kernel(run, "pushrelabel.cl", "pr_bfs_sweeps");
    pr->cycles = db_stage_kernel(run, "pushrelabel.cl", "pr_cycles");
    pr->count = db_stage_kernel(run, "pushrelabel.cl", "pr_count_active");
    pr->raise = db_stage_kernel(run, "pushrelabel.cl", "pr_raise");
    cl_kernel init = db_stage_kernel(run, "pushrelabel.cl", "pr_init");
    if (!pr->res || !pr->rt || !pr->excess || !pr->height || !pr->counter || !pr->base || !pr->partial || !pr->fill ||
        !pr->bfs_init || !pr->bfs_sweeps || !pr->cycles || !pr->count || !pr->raise || !init)
        return db_error_status();
    db_status st = db_stage_args(run, init, 10, sizeof source, &source, sizeof sink, &sink, sizeof right, &right,
                                 sizeof down, &down, sizeof pr->rows, &pr->rows, sizeof pr->cols, &pr->cols,
                                 sizeof pr->excess, &pr->excess, sizeof pr->rt, &pr->rt, sizeof pr->res, &pr->res,
                                 sizeof pr->base, &pr->base);
    if (st == DB_OK)
        st = launch(pr, init, n);
    if (st == DB_OK)
        st = strategy == DB_RELABEL_NONE ? fill(pr, pr->height, pr->n, 0) : global_relabel(pr);
    return st;
}

db_status db_pr_cut_solve(db_pr_cut *pr)
{
    db_stage_run *run = pr->run;
    cl_int cycles = cycles_per_launch(pr);
    long start = pr->iterations, interval = ROUND, next_relabel = pr->iterations + interval;
    /* `fixed` relabels after every ROUND iterations, so it reads after every launch. */
    int batch = 1, max_batch = pr->strategy == DB_RELABEL_FIXED ? 1 : MAX_BATCH;
    for (;;) {
        db_status st = db_stage_args(run, pr->cycles, 8, sizeof pr->excess, &pr->excess, sizeof pr->height,
                                     &pr->height, sizeof pr->res, &pr->res, sizeof pr->rt, &pr->rt, sizeof pr->rows,
                                     &pr->rows, sizeof pr->cols, &pr->cols, sizeof pr->hmax, &pr->hmax,
                                     sizeof cycles, &cycles);
        for (int b = 0; b < batch && st == DB_OK; b++) {
            st = launch(pr, pr->cycles, (size_t)pr->n);
            pr->iterations += cycles;
        }
        if (st == DB_OK)
            st = fill(pr, pr->counter, 1, 0);
        if (st == DB_OK)
            st = db_stage_args(run, pr->count, 5, sizeof pr->excess, &pr->excess, sizeof pr->height, &pr->height,
                               sizeof pr->n, &pr->n, sizeof pr->hmax, &pr->hmax, sizeof pr->counter, &pr->counter);
        if (st == DB_OK)
            st = launch(pr, pr->count, (size_t)pr->n);
        if (st != DB_OK)
            return st;
        pr->exact = 0;
        cl_int active = 0;
        if ((st = db_stage_read(run, pr->counter, 0, sizeof active, &active)) != DB_OK)
            return st;
        if (active == 0)
            return DB_OK;
        if (pr->iterations - start >= MAX_ITERATIONS)
            return db_fail(DB_ERR_CL, "graph cut: push-relabel did not finish within %ld iterations on %s device '%s'",
                           MAX_ITERATIONS, db_role_name(db_stage_device(run)->role), db_stage_device(run)->info.name);
        batch = batch < max_batch ? 2 * batch : batch;
        if ((pr->strategy == DB_RELABEL_FIXED && pr->iterations % ROUND == 0) ||
            (pr->strategy == DB_RELABEL_EXPONENTIAL && pr->iterations >= next_relabel)) {
            if ((st = global_relabel(pr)) != DB_OK)
                return st;
            interval *= 2;
            next_relabel = pr->iterations + interval;
            batch = 1;
        }
    }
}

db_status db_pr_cut_raise_links(db_pr_cut *pr, cl_int delta)
{
    db_status st = db_stage_args(pr->run, pr->raise, 6, sizeof pr->right, &pr->right, sizeof pr->down, &pr->down,
                                 sizeof pr->rows, &pr->rows, sizeof pr->cols, &pr->cols, sizeof delta, &delta,
                                 sizeof pr->res, &pr->res);
    if (st == DB_OK)
        st = launch(pr, pr->raise, (size_t)pr->n);
    /* Opened arcs may leave heights invalid, and nodes at hmax may reach the
    ** sink again: start from exact distances (spec §9). */
    if (st == DB_OK && delta > 0)
        st = global_relabel(pr);
    return st;
}

db_status db_pr_cut_sink_side(db_pr_cut *pr, cl_mem out)
{
    cl_kernel k = db_stage_kernel(pr->run, "pushrelabel.cl", "pr_sink_side");
    if (!k)
        return db_error_status();
    db_status st = pr->exact ? DB_OK : global_relabel(pr);
    cl_mem h = pr->height;
    if (st == DB_OK)
        st = db_stage_args(pr->run, k, 4, sizeof h, &h, sizeof pr->n, &pr->n, sizeof pr->hmax, &pr->hmax,
                           sizeof out, &out);
    return st == DB_OK ? launch(pr, k, (size_t)pr->n) : st;
}

db_status db_pr_cut_flow(db_pr_cut *pr, cl_mem out, cl_int index)
{
    cl_kernel partial = db_stage_kernel(pr->run, "pushrelabel.cl", "pr_flow_partial");
    cl_kernel final = db_stage_kernel(pr->run, "pushrelabel.cl", "pr_flow_final");
    if (!partial || !final)
        return db_error_status();
    cl_int parts = PARTS;
    const size_t one = 1;
    db_status st = db_stage_args(pr->run, partial, 4, sizeof pr->base, &pr->base, sizeof pr->rt, &pr->rt,
                                 sizeof pr->n, &pr->n, sizeof pr->partial, &pr->partial);
    if (st == DB_OK)
        st = launch(pr, partial, (size_t)PARTS * GROUP);
    if (st == DB_OK)
        st = db_stage_args(pr->run, final, 4, sizeof pr->partial, &pr->partial, sizeof parts, &parts, sizeof index,
                           &index, sizeof out, &out);
    if (st == DB_OK)
        st = db_stage_launch(pr->run, final, 1, &one, NULL);
    return st;
}
