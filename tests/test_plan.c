/*
** test_plan.c — the plan search: the simulator and the choice of a map on cost
** tables made by hand, where each expected figure is worked out in the comments
** from the scheduler's rules (in-order queues, lazy fetches through the host,
** one copy per item and place, free maps on shared memory); then cost tables
** filled from a calibration built in memory for the devices of an opened
** context: missing and stale rows become notes and the default map.
** The hand-made part needs no OpenCL device; the last part skips without one.
*/
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "algorithms/algorithms.h"
#include "planner/bench.h"
#include "planner/calib.h"
#include "planner/calibrate.h"
#include "planner/map.h"
#include "planner/plan.h"
#include "runtime/util.h"
#include "testutil.h"

/* Never called: the simulator needs only to know that an implementation exists. */
static db_status impl(db_stage_run *run)
{
    (void)run;
    return DB_OK;
}

#define BOTH {impl, impl}
#define CPU_ONLY {impl, NULL}
#define FIXED(name, bytes) {name, DB_ITEM_FIXED, bytes, "", NULL}

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1, fabs(b));
}

static const char *fmt(const db_map *map)
{
    static char buf[4][64];
    static int k;
    k = (k + 1) % 4;
    db_map_format(map, buf[k], sizeof buf[k]);
    return buf[k];
}

/* A transfer model of `ms_per_kb` ms per 1000 bytes and no latency:
** bandwidth = 1000 bytes / ms_per_kb ms = 1e-3 / ms_per_kb GB/s. */
static db_transfer_model per_kb(double ms_per_kb)
{
    return (db_transfer_model){.latency_ms = 0, .bandwidth_gbs = 1e-3 / ms_per_kb, .sizes = 3, .spread = 0};
}

static void set_gpu_copies(db_plan_costs *c, double h2d_ms_per_kb, double d2h_ms_per_kb)
{
    db_transfer_model h = per_kb(h2d_ms_per_kb), d = per_kb(d2h_ms_per_kb);
    db_plan_costs_set_transfer(c, DB_ROLE_GPU, DB_H2D, &h);
    db_plan_costs_set_transfer(c, DB_ROLE_GPU, DB_D2H, &d);
}

static void choose(const db_plan_costs *c, db_plan_objective obj, db_plan_choice *ch)
{
    db_status st = db_plan_choose(c, obj, ch);
    CHECK(st == DB_OK, "choose: %s", db_error_message());
}

/* --- a chain: in -> s0 -> a -> s1 -> out, every item 1000 bytes --- */
enum { C_IN, C_A, C_OUT };
static const db_item chain_items[] = {FIXED("in", 1000), FIXED("a", 1000), FIXED("out", 1000)};
static const db_stage chain_stages[] = {
    {"s0", "", {C_IN}, 1, {C_A}, 1, BOTH, "", NULL},
    {"s1", "", {C_A}, 1, {C_OUT}, 1, BOTH, "", NULL},
};
static const db_algo chain = {.name = "chain", .items = chain_items, .n_items = 3, .input = C_IN, .output = C_OUT,
                              .stages = chain_stages, .n_stages = 2};

static db_map map_of(const db_algo *algo, const char *text)
{
    db_map m;
    db_status st = db_map_parse(algo, text, &m);
    CHECK(st == DB_OK, "parse %s: %s", text, db_error_message());
    return m;
}

static void test_latency_best(void)
{
    /* cpu shares host memory; gpu copies 1000 bytes in 1 ms host->device, 0.5 ms back.
    ** s0: cpu 10, gpu 2; s1: cpu 3, gpu 4.
    **   cpu,cpu: s0 0..10, s1 10..13, output map free: latency 13
    **   cpu,gpu: s0 0..10, a h2d 10..11, s1 11..15, out d2h 15..15.5: 15.5
    **   gpu,cpu: in h2d 0..1, s0 1..3, a d2h 3..3.5, s1 (cpu) 3.5..6.5: 6.5
    **   gpu,gpu: in h2d 0..1, s0 1..3, s1 3..7, out d2h 7..7.5: 7.5
    ** best: gpu,cpu at 6.5 ms. */
    db_job job = {0};
    db_plan_costs c;
    db_plan_costs_init(&c, &chain, &job, 10, 10, 1);
    CHECK(c.item_bytes[C_A] == 1000, "item bytes %zu", c.item_bytes[C_A]);
    db_plan_costs_set_shared(&c, DB_ROLE_CPU);
    set_gpu_copies(&c, 1, 0.5);
    db_plan_costs_set_stage(&c, 0, DB_ROLE_CPU, 10);
    db_plan_costs_set_stage(&c, 0, DB_ROLE_GPU, 2);
    db_plan_costs_set_stage(&c, 1, DB_ROLE_CPU, 3);
    db_plan_costs_set_stage(&c, 1, DB_ROLE_GPU, 4);
    const char *maps[] = {"cpu,cpu", "cpu,gpu", "gpu,cpu", "gpu,gpu"};
    const double latency[] = {13, 15.5, 6.5, 7.5};
    for (int i = 0; i < 4; i++) {
        db_map m = map_of(&chain, maps[i]);
        db_plan_sim sim;
        db_plan_simulate(&c, &m, &sim);
        CHECK(sim.known && near(sim.latency_ms, latency[i]), "%s: latency %g, expected %g", maps[i],
              sim.latency_ms, latency[i]);
    }
    db_map m = map_of(&chain, "gpu,cpu");
    db_plan_sim sim;
    db_plan_simulate(&c, &m, &sim);
    CHECK(near(sim.stage_start[0], 1) && near(sim.stage_ms[0], 2) && near(sim.stage_start[1], 3.5) &&
              near(sim.stage_ms[1], 3),
          "gpu,cpu stage times %g+%g, %g+%g", sim.stage_start[0], sim.stage_ms[0], sim.stage_start[1], sim.stage_ms[1]);
    /* Copies: in h2d (gpu) 1 ms, a d2h (gpu) 0.5 ms, a h2d (cpu) and out d2h (cpu): free maps. */
    CHECK(sim.n_copies == 4 && near(sim.transfer_ms, 1.5), "gpu,cpu: %d copies, %g ms", sim.n_copies, sim.transfer_ms);
    db_plan_choice ch;
    choose(&c, DB_PLAN_LATENCY, &ch);
    CHECK(!ch.fallback && !strcmp(fmt(&ch.map), "gpu,cpu") && ch.index == 2 && near(ch.sim.latency_ms, 6.5),
          "latency choice %s (%d), %g ms", fmt(&ch.map), ch.index, ch.sim.latency_ms);
}

static void test_throughput_differs(void)
{
    /* cpu shared; gpu copies 4 ms per 1000 bytes in, 2 ms out.
    ** s0: cpu 6, gpu 5; s1: cpu 7, gpu 5.
    **   cpu,cpu: latency 6+7 = 13;             period: cpu compute 13
    **   cpu,gpu: s0 0..6, a h2d 6..10, s1 10..15, out d2h 15..17: latency 17;
    **            period max(cpu 6, gpu compute 5, gpu copies 4+2) = 6
    **   gpu,cpu: in h2d 0..4, s0 4..9, a d2h 9..11, s1 11..18: latency 18;
    **            period max(gpu compute 5, gpu copies 4+2, cpu 7) = 7
    **   gpu,gpu: in 0..4, s0 4..9, s1 9..14, out 14..16: latency 16;
    **            period max(gpu compute 10, copies 6) = 10
    ** latency picks cpu,cpu (13); throughput picks cpu,gpu (6 ms, 166.7 pages/s). */
    db_job job = {0};
    db_plan_costs c;
    db_plan_costs_init(&c, &chain, &job, 10, 10, 1);
    db_plan_costs_set_shared(&c, DB_ROLE_CPU);
    set_gpu_copies(&c, 4, 2);
    db_plan_costs_set_stage(&c, 0, DB_ROLE_CPU, 6);
    db_plan_costs_set_stage(&c, 0, DB_ROLE_GPU, 5);
    db_plan_costs_set_stage(&c, 1, DB_ROLE_CPU, 7);
    db_plan_costs_set_stage(&c, 1, DB_ROLE_GPU, 5);
    const char *maps[] = {"cpu,cpu", "cpu,gpu", "gpu,cpu", "gpu,gpu"};
    const double latency[] = {13, 17, 18, 16}, period[] = {13, 6, 7, 10};
    for (int i = 0; i < 4; i++) {
        db_map m = map_of(&chain, maps[i]);
        db_plan_sim sim;
        db_plan_simulate(&c, &m, &sim);
        CHECK(near(sim.latency_ms, latency[i]) && near(sim.period_ms, period[i]), "%s: latency %g period %g, "
              "expected %g and %g", maps[i], sim.latency_ms, sim.period_ms, latency[i], period[i]);
    }
    db_plan_choice lat, thr;
    choose(&c, DB_PLAN_LATENCY, &lat);
    choose(&c, DB_PLAN_THROUGHPUT, &thr);
    CHECK(!strcmp(fmt(&lat.map), "cpu,cpu"), "latency chose %s", fmt(&lat.map));
    CHECK(!strcmp(fmt(&thr.map), "cpu,gpu") && near(thr.sim.period_ms, 6), "throughput chose %s (%g ms)",
          fmt(&thr.map), thr.sim.period_ms);
}

/* --- Howe's graph: laplacian and canny both read the image; graphcut joins --- */
static void test_overlap(void)
{
    /* Both roles share host memory, so copies are free and only the queues matter.
    ** laplacian: cpu 10, gpu 12; canny: cpu 8, gpu 6; graphcut: cpu 3, gpu 5.
    **   cpu,gpu,cpu: laplacian 0..10 (cpu) and canny 0..6 (gpu) at once; graphcut
    **                waits for both: 10..13. latency max(10, 6) + 3 = 13, not 10+6+3 = 19
    **   cpu,cpu,cpu: 10 + 8 + 3 = 21 (one queue)
    **   gpu,cpu,cpu: laplacian 0..12 (gpu), canny 0..8 (cpu), graphcut 12..15: 15
    **   cpu,gpu,gpu: 0..10 and 0..6; graphcut (gpu) waits for lap2 at 10: 10..15
    ** best: cpu,gpu,cpu. The period of cpu,gpu,cpu is the cpu queue: 10 + 3 = 13;
    ** of gpu,cpu,cpu max(gpu 12, cpu 8+3) = 12. */
    const db_algo *howe = db_algo_find("howe");
    CHECK(howe && howe->n_stages == 3, "howe has 3 stages");
    if (!howe)
        return;
    db_job job;
    db_job_defaults(howe, &job);
    db_plan_costs c;
    db_plan_costs_init(&c, howe, &job, 64, 48, 1);
    db_plan_costs_set_shared(&c, DB_ROLE_CPU);
    db_plan_costs_set_shared(&c, DB_ROLE_GPU);
    const double ms[3][2] = {{10, 12}, {8, 6}, {3, 5}};
    for (int s = 0; s < 3; s++)
        for (int r = 0; r < 2; r++)
            db_plan_costs_set_stage(&c, s, (db_role)r, ms[s][r]);
    const char *maps[] = {"cpu,gpu,cpu", "cpu,cpu,cpu", "gpu,cpu,cpu", "cpu,gpu,gpu"};
    const double latency[] = {13, 21, 15, 15}, period[] = {13, 21, 12, 11};
    for (int i = 0; i < 4; i++) {
        db_map m = map_of(howe, maps[i]);
        db_plan_sim sim;
        db_plan_simulate(&c, &m, &sim);
        CHECK(near(sim.latency_ms, latency[i]) && near(sim.period_ms, period[i]) && near(sim.transfer_ms, 0),
              "howe %s: latency %g period %g transfers %g, expected %g, %g, 0", maps[i], sim.latency_ms,
              sim.period_ms, sim.transfer_ms, latency[i], period[i]);
        if (i == 0)
            CHECK(near(sim.stage_start[0], 0) && near(sim.stage_start[1], 0) && near(sim.stage_start[2], 10),
                  "cpu,gpu,cpu starts %g %g %g", sim.stage_start[0], sim.stage_start[1], sim.stage_start[2]);
    }
    db_plan_choice ch;
    choose(&c, DB_PLAN_LATENCY, &ch);
    CHECK(!strcmp(fmt(&ch.map), "cpu,gpu,cpu"), "howe latency chose %s", fmt(&ch.map));
}

/* --- copies: s0 (gpu) in->a; s1 (cpu) a->b; s2 (cpu) a,b->c; s3 (gpu) a,c->out --- */
enum { K_IN, K_A, K_B, K_C, K_OUT };
static const db_item copy_items[] = {FIXED("in", 1000), FIXED("a", 2000), FIXED("b", 3000), FIXED("c", 4000),
                                     FIXED("out", 500)};
static const db_stage copy_stages[] = {
    {"s0", "", {K_IN}, 1, {K_A}, 1, BOTH, "", NULL},
    {"s1", "", {K_A}, 1, {K_B}, 1, BOTH, "", NULL},
    {"s2", "", {K_A, K_B}, 2, {K_C}, 1, BOTH, "", NULL},
    {"s3", "", {K_A, K_C}, 2, {K_OUT}, 1, BOTH, "", NULL},
};
static const db_algo copies = {.name = "copies", .items = copy_items, .n_items = 5, .input = K_IN,
                               .output = K_OUT, .stages = copy_stages, .n_stages = 4};

static int count_copies(const db_plan_sim *sim, int item, db_role role, db_transfer_dir dir)
{
    int n = 0;
    for (int i = 0; i < sim->n_copies; i++)
        n += sim->copies[i].item == item && sim->copies[i].role == role && sim->copies[i].dir == dir;
    return n;
}

static void test_copies(void)
{
    /* Map gpu,cpu,cpu,gpu, every stage 1 ms. Per 1000 bytes: gpu h2d 1 ms, d2h 0.5;
    ** cpu (not shared here) h2d 0.25, d2h 0.125. The copies, each once:
    **   in  h2d gpu 1000 B: 1       a h2d cpu 2000 B: 0.5 (s1 and s2 share it)
    **   a   d2h gpu 2000 B: 1       c d2h cpu 4000 B: 0.5
    **   c   h2d gpu 4000 B: 4       out d2h gpu 500 B: 0.25
    ** b never leaves the cpu; s3 finds a still valid on the gpu. Sum 7.25.
    ** Timeline: in 0..1, s0 1..2, a d2h 2..3, a h2d 3..3.5, s1 3.5..4.5, s2 4.5..5.5,
    ** c d2h 5.5..6, c h2d 6..10, s3 10..11, out d2h 11..11.25: latency 11.25.
    ** Period: the gpu's copies 1 + 1 + 4 + 0.25 = 6.25. */
    db_job job = {0};
    db_plan_costs c;
    db_plan_costs_init(&c, &copies, &job, 10, 10, 1);
    set_gpu_copies(&c, 1, 0.5);
    db_transfer_model h = per_kb(0.25), d = per_kb(0.125);
    db_plan_costs_set_transfer(&c, DB_ROLE_CPU, DB_H2D, &h);
    db_plan_costs_set_transfer(&c, DB_ROLE_CPU, DB_D2H, &d);
    for (int s = 0; s < 4; s++)
        for (int r = 0; r < 2; r++)
            db_plan_costs_set_stage(&c, s, (db_role)r, 1);
    db_map m = map_of(&copies, "gpu,cpu,cpu,gpu");
    db_plan_sim sim;
    db_plan_simulate(&c, &m, &sim);
    CHECK(sim.n_copies == 6, "%d copies, expected 6", sim.n_copies);
    CHECK(count_copies(&sim, K_IN, DB_ROLE_GPU, DB_H2D) == 1 && count_copies(&sim, K_A, DB_ROLE_GPU, DB_D2H) == 1 &&
              count_copies(&sim, K_A, DB_ROLE_CPU, DB_H2D) == 1 && count_copies(&sim, K_C, DB_ROLE_CPU, DB_D2H) == 1 &&
              count_copies(&sim, K_C, DB_ROLE_GPU, DB_H2D) == 1 && count_copies(&sim, K_OUT, DB_ROLE_GPU, DB_D2H) == 1,
          "not each copy once");
    CHECK(count_copies(&sim, K_B, DB_ROLE_CPU, DB_D2H) == 0 && count_copies(&sim, K_A, DB_ROLE_GPU, DB_H2D) == 0,
          "b copied, or a copied back to the gpu that wrote it");
    CHECK(near(sim.transfer_ms, 7.25) && near(sim.latency_ms, 11.25) && near(sim.period_ms, 6.25),
          "transfers %g latency %g period %g, expected 7.25, 11.25, 6.25", sim.transfer_ms, sim.latency_ms,
          sim.period_ms);
    for (int i = 0; i < sim.n_copies; i++)
        if (sim.copies[i].item == K_C && sim.copies[i].dir == DB_H2D)
            CHECK(sim.copies[i].bytes == 4000 && near(sim.copies[i].start_ms, 6) && near(sim.copies[i].ms, 4),
                  "c h2d: %zu bytes at %g for %g", sim.copies[i].bytes, sim.copies[i].start_ms, sim.copies[i].ms);

    /* The cpu shares host memory: its copies become free maps (bytes 0), the
    ** gpu's stay: 1 + 1 + 4 + 0.25 = 6.25. Both shared: nothing to pay. */
    db_plan_costs_set_shared(&c, DB_ROLE_CPU);
    db_plan_simulate(&c, &m, &sim);
    CHECK(sim.n_copies == 6 && near(sim.transfer_ms, 6.25), "cpu shared: %d copies, %g ms", sim.n_copies,
          sim.transfer_ms);
    for (int i = 0; i < sim.n_copies; i++)
        if (sim.copies[i].role == DB_ROLE_CPU)
            CHECK(sim.copies[i].ms == 0 && sim.copies[i].bytes == 0, "a map on the cpu costs %g", sim.copies[i].ms);

    /* Copies into the gpu of what the shared cpu wrote at 2 ms per 1000 bytes: c
    ** (s2's, 4000 B) costs 8 instead of 4; the input, which no stage wrote, stays
    ** 1: 6.25 - 4 + 8 = 10.25. */
    db_transfer_model w = per_kb(2);
    db_plan_costs_set_written(&c, DB_ROLE_GPU, &w);
    db_plan_simulate(&c, &m, &sim);
    CHECK(near(sim.transfer_ms, 10.25), "written copies: %g ms, expected 10.25", sim.transfer_ms);
    for (int i = 0; i < sim.n_copies; i++)
        if (sim.copies[i].role == DB_ROLE_GPU && sim.copies[i].dir == DB_H2D)
            CHECK(near(sim.copies[i].ms, sim.copies[i].item == K_C ? 8 : 1), "item %d into the gpu: %g ms",
                  sim.copies[i].item, sim.copies[i].ms);
    db_plan_costs_set_shared(&c, DB_ROLE_GPU);
    db_plan_simulate(&c, &m, &sim);
    /* Only the queues: s0 0..1, s1 1..2, s2 2..3, s3 3..4. */
    CHECK(near(sim.transfer_ms, 0) && near(sim.latency_ms, 4), "both shared: transfers %g latency %g",
          sim.transfer_ms, sim.latency_ms);

    /* Crossings, 0.5 ms into the cpu and 0.25 into the gpu: s1 reads a, which the
    ** gpu wrote (s1 1.5..2.5); s2 finds a and b on the cpu already (2.5..3.5); s3
    ** reads c from the cpu (3.75..4.75) and a, still valid on the gpu. */
    db_plan_costs_set_crossing(&c, DB_ROLE_CPU, 0.5);
    db_plan_costs_set_crossing(&c, DB_ROLE_GPU, 0.25);
    db_plan_simulate(&c, &m, &sim);
    CHECK(near(sim.stage_start[1], 1.5) && near(sim.stage_start[2], 2.5) && near(sim.stage_start[3], 3.75) &&
              near(sim.latency_ms, 4.75) && near(sim.crossing_ms, 0.75),
          "crossings: s1 at %g, s2 at %g, s3 at %g, latency %g, crossings %g", sim.stage_start[1],
          sim.stage_start[2], sim.stage_start[3], sim.latency_ms, sim.crossing_ms);
    /* One role throughout: no crossing. */
    db_map same = map_of(&copies, "cpu,cpu,cpu,cpu");
    db_plan_simulate(&c, &same, &sim);
    CHECK(near(sim.latency_ms, 4) && sim.crossing_ms == 0, "one role: latency %g, crossings %g", sim.latency_ms,
          sim.crossing_ms);
}

/* --- ties --- */
enum { D_IN, D_A, D_B, D_OUT };
static const db_item diamond_items[] = {FIXED("in", 100), FIXED("a", 100), FIXED("b", 100), FIXED("out", 100)};
static const db_stage diamond_stages[] = {
    {"left", "", {D_IN}, 1, {D_A}, 1, BOTH, "", NULL},
    {"right", "", {D_IN}, 1, {D_B}, 1, BOTH, "", NULL},
    {"join", "", {D_A, D_B}, 2, {D_OUT}, 1, BOTH, "", NULL},
};
static const db_algo diamond = {.name = "diamond", .items = diamond_items, .n_items = 4, .input = D_IN,
                                .output = D_OUT, .stages = diamond_stages, .n_stages = 3};

static void shared_costs(db_plan_costs *c, const db_algo *algo, const double (*ms)[2])
{
    db_job job = {0};
    db_plan_costs_init(c, algo, &job, 10, 10, 1);
    db_plan_costs_set_shared(c, DB_ROLE_CPU);
    db_plan_costs_set_shared(c, DB_ROLE_GPU);
    for (int s = 0; s < algo->n_stages; s++)
        for (int r = 0; r < 2; r++)
            if (algo->stages[s].impl[r])
                db_plan_costs_set_stage(c, s, (db_role)r, ms[s][r]);
}

/* Crossings on the diamond: what a stage wrote on the other role crosses, the
** input (on the host from the start) never does, and a crossing delays the run
** without occupying a queue. */
static void test_crossings(void)
{
    db_plan_costs c;
    const double ones[3][2] = {{1, 1}, {1, 1}, {1, 1}};
    shared_costs(&c, &diamond, ones);
    db_plan_costs_set_crossing(&c, DB_ROLE_CPU, 0.5);
    db_plan_costs_set_crossing(&c, DB_ROLE_GPU, 0.25);
    db_plan_sim sim;
    /* cpu,gpu,cpu: left 0..1 on cpu; right reads the input on the gpu (no crossing although the
    ** cpu read it first) 0..1; join reads b from the gpu: 1 + 0.5 = 1.5..2.5. */
    db_map m = map_of(&diamond, "cpu,gpu,cpu");
    db_plan_simulate(&c, &m, &sim);
    CHECK(near(sim.stage_start[1], 0) && near(sim.stage_start[2], 1.5) && near(sim.latency_ms, 2.5) &&
              near(sim.crossing_ms, 0.5) && near(sim.period_ms, 2),
          "cpu,gpu,cpu: right at %g, join at %g, latency %g, crossings %g, period %g", sim.stage_start[1],
          sim.stage_start[2], sim.latency_ms, sim.crossing_ms, sim.period_ms);
    /* gpu,gpu,cpu: both of join's inputs cross into the cpu, waited for together: one crossing,
    ** 2 + 0.5 = 2.5..3.5. */
    m = map_of(&diamond, "gpu,gpu,cpu");
    db_plan_simulate(&c, &m, &sim);
    CHECK(near(sim.stage_start[2], 2.5) && near(sim.latency_ms, 3.5) && near(sim.crossing_ms, 0.5),
          "gpu,gpu,cpu: join at %g, latency %g, crossings %g", sim.stage_start[2], sim.latency_ms, sim.crossing_ms);
}

static void test_ties(void)
{
    db_plan_costs c;
    db_plan_choice ch;
    /* Every map of the chain takes 1 + 1 = 2 ms: the default map gpu,gpu (no stage
    ** moved) wins although it comes last in enumeration order. */
    const double flat[2][2] = {{1, 1}, {1, 1}};
    shared_costs(&c, &chain, flat);
    choose(&c, DB_PLAN_LATENCY, &ch);
    CHECK(!strcmp(fmt(&ch.map), "gpu,gpu") && ch.index == 3, "flat tie chose %s", fmt(&ch.map));
    /* Their periods: one queue holds 2 ms for cpu,cpu and gpu,gpu, each 1 ms for
    ** cpu,gpu and gpu,cpu; those two move one stage each: the earlier, cpu,gpu. */
    choose(&c, DB_PLAN_THROUGHPUT, &ch);
    CHECK(!strcmp(fmt(&ch.map), "cpu,gpu") && near(ch.sim.period_ms, 1), "flat period tie chose %s",
          fmt(&ch.map));
    /* Diamond, free copies. left: cpu 1, gpu 2; right: cpu 1, gpu 2; join: cpu 2, gpu 2.
    **   cpu,cpu,cpu: 1 + 1 + 2 = 4 (3 stages moved)   cpu,cpu,gpu: 1 + 1, join 2..4 = 4 (2 moved)
    **   cpu,gpu,gpu: max(1, 2) + 2 = 4 (1 moved)       gpu,cpu,gpu: max(2, 1) + 2 = 4 (1 moved)
    **   gpu,gpu,gpu: 2 + 2 + 2 = 6; cpu,gpu,cpu: max(1,2)+2 = 4 (2 moved) ...
    ** the best is 4; the fewest moved is 1, held by cpu,gpu,gpu (index 3) and
    ** gpu,cpu,gpu (index 5): enumeration order gives cpu,gpu,gpu. */
    const double d[3][2] = {{1, 2}, {1, 2}, {2, 2}};
    shared_costs(&c, &diamond, d);
    choose(&c, DB_PLAN_LATENCY, &ch);
    CHECK(near(ch.sim.latency_ms, 4) && !strcmp(fmt(&ch.map), "cpu,gpu,gpu") && ch.index == 3,
          "diamond tie chose %s (%g ms)", fmt(&ch.map), ch.sim.latency_ms);
    /* Chain with s0: cpu 1, gpu 2; s1: cpu 1, gpu 1: cpu,cpu = cpu,gpu = 2 < gpu,* = 3.
    ** cpu,gpu moves one stage, cpu,cpu two: cpu,gpu, though cpu,cpu comes first. */
    const double e[2][2] = {{1, 2}, {1, 1}};
    shared_costs(&c, &chain, e);
    choose(&c, DB_PLAN_LATENCY, &ch);
    CHECK(!strcmp(fmt(&ch.map), "cpu,gpu"), "fewer-moved tie chose %s", fmt(&ch.map));
    /* The margin: s0 cpu 0.96 / gpu 1, s1 cpu 1 / gpu 1. cpu,gpu takes 1.96 ms
    ** against 2 for the default gpu,gpu: 2% better, inside DB_PLAN_MARGIN (5%),
    ** so the default stays. With s0 on cpu at 0.8 (1.8 ms, 10% better) cpu,gpu wins. */
    const double m1[2][2] = {{0.96, 1}, {1, 1}};
    shared_costs(&c, &chain, m1);
    choose(&c, DB_PLAN_LATENCY, &ch);
    CHECK(!strcmp(fmt(&ch.map), "gpu,gpu") && near(ch.sim.latency_ms, 2), "2%% better chose %s", fmt(&ch.map));
    const double m2[2][2] = {{0.8, 1}, {1, 1}};
    shared_costs(&c, &chain, m2);
    choose(&c, DB_PLAN_LATENCY, &ch);
    CHECK(!strcmp(fmt(&ch.map), "cpu,gpu") && near(ch.sim.latency_ms, 1.8), "10%% better chose %s", fmt(&ch.map));
    /* Rounding: items of 0 bytes, gpu copies cost their latency, 0.1 ms in, 0 out.
    **   cpu,cpu: 0.3 + 0 = 0.3               gpu,gpu: 0.1 + 0.2 + 0 = 0.30000000000000004
    **   gpu,cpu: 0.1 + 0.2 + 0 + 0 as well   cpu,gpu: 0.3 + 0.1 + 0 = 0.4
    ** a tie within rounding, so the default gpu,gpu, not cpu,cpu. */
    const double f[2][2] = {{0.3, 0.2}, {0, 0}};
    shared_costs(&c, &chain, f);
    c.shared[DB_ROLE_GPU] = false;
    for (int i = 0; i < 3; i++)
        c.item_bytes[i] = 0;
    db_transfer_model in = {.latency_ms = 0.1, .bandwidth_gbs = 1}, out = {.latency_ms = 0, .bandwidth_gbs = 1};
    db_plan_costs_set_transfer(&c, DB_ROLE_GPU, DB_H2D, &in);
    db_plan_costs_set_transfer(&c, DB_ROLE_GPU, DB_D2H, &out);
    choose(&c, DB_PLAN_LATENCY, &ch);
    CHECK(!strcmp(fmt(&ch.map), "gpu,gpu"), "rounding tie chose %s", fmt(&ch.map));
}

/* --- a stage with no gpu implementation --- */
static const db_stage nogpu_stages[] = {
    {"s0", "", {C_IN}, 1, {C_A}, 1, BOTH, "", NULL},
    {"s1", "", {C_A}, 1, {C_OUT}, 1, CPU_ONLY, "", NULL},
};
static const db_algo nogpu = {.name = "nogpu", .items = chain_items, .n_items = 3, .input = C_IN, .output = C_OUT,
                              .stages = nogpu_stages, .n_stages = 2};

static void test_no_gpu_impl(void)
{
    /* The gpu would be faster for both stages (s1 has no gpu cost to give);
    ** s1 must stay on the cpu: gpu,cpu = 1 + 10 = 11 beats cpu,cpu = 20. */
    const double ms[2][2] = {{10, 1}, {10, 0}};
    db_plan_costs c;
    shared_costs(&c, &nogpu, ms);
    CHECK(c.stage[1][DB_ROLE_GPU] == DB_PLAN_NO_IMPL, "s1 on gpu is %d", c.stage[1][DB_ROLE_GPU]);
    for (int o = 0; o < 2; o++) {
        db_plan_choice ch;
        choose(&c, o ? DB_PLAN_THROUGHPUT : DB_PLAN_LATENCY, &ch);
        CHECK(ch.map.role[1] == DB_ROLE_CPU && !strcmp(fmt(&ch.map), "gpu,cpu"), "objective %d chose %s", o,
              fmt(&ch.map));
    }
    char why[256];
    db_map m = map_of(&nogpu, "cpu,gpu");
    CHECK(!db_plan_runnable(&c, &m, why, sizeof why) && strstr(why, "s1") && strstr(why, "gpu"),
          "cpu,gpu runnable: %s", why);
    db_map def;
    db_map_default(&nogpu, true, &def);
    CHECK(!strcmp(fmt(&def), "gpu,cpu"), "default map %s", fmt(&def));
    /* The explain table lists every map, the unrunnable ones as such. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    db_plan_explain(&c, &def, f);
    fclose(f);
    CHECK(strstr(text, "* gpu,cpu") && strstr(text, "  cpu,gpu cannot run: stage s1 has no gpu implementation") &&
              strstr(text, "  gpu,gpu cannot run") && strstr(text, "  cpu,cpu "),
          "explain:\n%s", text);
    free(text);
    /* Without a gpu device every stage goes to the cpu. */
    db_plan_costs_unbind(&c, DB_ROLE_GPU);
    db_plan_choice ch;
    choose(&c, DB_PLAN_LATENCY, &ch);
    CHECK(!strcmp(fmt(&ch.map), "cpu,cpu") && !ch.fallback, "gpu unbound chose %s", fmt(&ch.map));
    /* And without a cpu device, no map can run. */
    db_plan_costs_unbind(&c, DB_ROLE_CPU);
    CHECK(db_plan_choose(&c, DB_PLAN_LATENCY, &ch) == DB_ERR_DEVICE &&
              strstr(db_error_message(), "no map of nogpu can run"),
          "no runnable map: %s", db_error_message());
}

static void test_unknown(void)
{
    /* One unknown entry (s1 on cpu): no comparison, the default map gpu,gpu,
    ** although cpu,cpu would be far faster on the known entries. */
    db_job job = {0};
    db_plan_costs c;
    db_plan_costs_init(&c, &chain, &job, 10, 10, 1);
    db_plan_costs_set_shared(&c, DB_ROLE_CPU);
    db_plan_costs_set_shared(&c, DB_ROLE_GPU);
    db_plan_costs_set_stage(&c, 0, DB_ROLE_CPU, 1);
    db_plan_costs_set_stage(&c, 0, DB_ROLE_GPU, 100);
    db_plan_costs_set_stage(&c, 1, DB_ROLE_GPU, 100);
    for (int o = 0; o < 2; o++) {
        db_plan_choice ch;
        choose(&c, o ? DB_PLAN_THROUGHPUT : DB_PLAN_LATENCY, &ch);
        /* The default map's own entries are known: its prediction is 100 + 100. */
        CHECK(ch.fallback && !strcmp(fmt(&ch.map), "gpu,gpu") && ch.sim.known && near(ch.sim.latency_ms, 200),
              "unknown: fallback %d map %s", ch.fallback, fmt(&ch.map));
    }
    /* An unknown copy model counts too. */
    db_plan_costs_set_stage(&c, 1, DB_ROLE_CPU, 1);
    db_plan_choice ch;
    choose(&c, DB_PLAN_LATENCY, &ch);
    CHECK(!ch.fallback && !strcmp(fmt(&ch.map), "cpu,cpu"), "all known chose %s", fmt(&ch.map));
    db_plan_costs_init(&c, &chain, &job, 10, 10, 1);
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < 2; r++)
            db_plan_costs_set_stage(&c, s, (db_role)r, 1);
    db_plan_costs_set_shared(&c, DB_ROLE_CPU);
    choose(&c, DB_PLAN_LATENCY, &ch);
    CHECK(ch.fallback && !strcmp(fmt(&ch.map), "gpu,gpu") && !ch.sim.known && isnan(ch.sim.latency_ms),
          "unknown copies: fallback %d", ch.fallback);
}

/* --- costs from a calibration, for the devices of an opened context --- */
static db_calib_stage row(const db_device *dev, const db_algo *algo, int s, db_role role, const char *variant,
                          double a, double b)
{
    db_calib_stage e;
    memset(&e, 0, sizeof e);
    snprintf(e.device, sizeof e.device, "%s", dev->info.key);
    snprintf(e.algo, sizeof e.algo, "%s", algo->name);
    snprintf(e.stage, sizeof e.stage, "%s", algo->stages[s].name);
    e.role = role;
    snprintf(e.variant, sizeof e.variant, "%s", variant);
    CHECK(db_stage_kernel_hash(&algo->stages[s], e.kernel_hash) == DB_OK, "hash: %s", db_error_message());
    e.model = (db_cost_model){.a = a, .b = b, .sizes = 3, .spread = 0.01};
    return e;
}

/* The row of the host's share of algo's runs on role (stage s < 0 in row()). */
static db_calib_stage host_row(const db_device *dev, const db_algo *algo, db_role role, const char *variant,
                               double a, double b)
{
    db_calib_stage e = row(dev, algo, 0, role, variant, a, b);
    snprintf(e.stage, sizeof e.stage, "%s", DB_CALIB_HOST_STAGE);
    CHECK(db_algo_kernel_hash(algo, e.kernel_hash) == DB_OK, "algo hash: %s", db_error_message());
    return e;
}

static int notes_with(const db_plan_costs *c, const char *a, const char *b)
{
    int n = 0;
    for (int i = 0; i < c->n_notes; i++)
        n += strstr(c->notes[i], a) && (!b || strstr(c->notes[i], b));
    return n;
}

static void test_from_calib(void)
{
    db_context *ctx = test_open_context();
    /* The figures below take the gpu role's device as sharing host memory, as
    ** PoCL does, until the part that takes it as not sharing; only the planner
    ** reads the flag here, so a machine with a GPU gives the same figures. */
    bool unified = ctx->role[DB_ROLE_GPU]->info.host_unified;
    ctx->role[DB_ROLE_GPU]->info.host_unified = true;
    const db_algo *sauvola = db_algo_find("sauvola");
    db_job job;
    db_job_defaults(sauvola, &job); /* variant 0: sliding */
    const int w = 100, h = 50;      /* 5000 pixels */
    db_calib calib;
    db_calib_init(&calib);
    db_plan_costs c;

    /* Nothing calibrated: the default map, one note per stage and role,
    ** naming the stage, the role, the device and the fix, one per role for
    ** the host's share of a run, and one for the host's staging copies. */
    CHECK(db_plan_costs_from_calib(&c, &calib, NULL, ctx, sauvola, &job, w, h, 1) == DB_OK, "from empty: %s",
          db_error_message());
    CHECK(c.n_notes == 11 && notes_with(&c, "staging copies", "docbin-bench --calibrate") == 1 &&
              notes_with(&c, "host's share of sauvola runs on the cpu role", "docbin-bench --calibrate") == 1 &&
              notes_with(&c, "host's share of sauvola runs on the gpu role", "counted as 0") == 1 &&
              notes_with(&c, "crossing into the cpu role", "counted as 0") == 1 &&
              notes_with(&c, "crossing into the gpu role", "docbin-bench --calibrate") == 1 &&
              notes_with(&c, "sauvola/gray on the cpu role, variant sliding for gray pages", NULL) == 1 &&
              notes_with(&c, "for gray pages", NULL) == 4 &&
              notes_with(&c, "host's share of sauvola runs on the gpu role, variant sliding for gray pages", NULL) == 1,
          "%d notes for an empty calibration, expected 11; gray's and the host's say the page is gray", c.n_notes);
    for (int s = 0; s < 3; s++)
        for (int r = 0; r < 2; r++) {
            char what[64];
            snprintf(what, sizeof what, "sauvola/%s on the %s role", sauvola->stages[s].name,
                     db_role_name((db_role)r));
            CHECK(notes_with(&c, what, "docbin-bench --calibrate") == 1 &&
                      notes_with(&c, what, ctx->role[r]->info.name) == 1,
                  "no note for %s", what);
        }
    db_plan_choice ch;
    choose(&c, DB_PLAN_LATENCY, &ch);
    CHECK(ch.fallback && !strcmp(fmt(&ch.map), "gpu,gpu,gpu"), "uncalibrated chose %s", fmt(&ch.map));

    /* Every row, t = a + b * 5000 (PoCL shares host memory: copies are free;
    ** crossings calibrated at 0 here, and used below):
    **   gray:      cpu 1 + 0 = 1.0        gpu 1.5 + 1e-4 * 5000 = 2.0
    **   stats:     cpu 3 + 2e-4*5000 = 4  gpu 0.25 + 5e-5 * 5000 = 0.5
    **   threshold: cpu 0.5                gpu 1.0
    ** a chain, so latency = the sum: best cpu,gpu,cpu = 1 + 0.5 + 0.5 = 2.0,
    ** plus the staging copies of the 5000-byte page and result, each
    ** 0.1 + 5000 / (0.05 * 1e6) = 0.2 ms, and the host's share of a run whose
    ** output comes from the cpu role, 0.05 + 1e-5 * 5000 = 0.1: 2.5. A run
    ** ending on the gpu role pays 0.3 instead. */
    db_transfer_model staging = {.latency_ms = 0.1, .bandwidth_gbs = 0.05, .sizes = 3};
    CHECK(db_calib_put_staging(&calib, &staging) == DB_OK, "put staging: %s", db_error_message());
    db_calib_stage host_cpu = host_row(ctx->role[DB_ROLE_CPU], sauvola, DB_ROLE_CPU, "sliding", 0.05, 1e-5);
    db_calib_stage host_gpu = host_row(ctx->role[DB_ROLE_GPU], sauvola, DB_ROLE_GPU, "sliding", 0.3, 0);
    CHECK(db_calib_put_stage(&calib, &host_cpu) == DB_OK && db_calib_put_stage(&calib, &host_gpu) == DB_OK,
          "put host rows: %s", db_error_message());
    const double ab[3][2][2] = {{{1, 0}, {1.5, 1e-4}}, {{3, 2e-4}, {0.25, 5e-5}}, {{0.5, 0}, {1, 0}}};
    for (int s = 0; s < 3; s++)
        for (int r = 0; r < 2; r++) {
            db_calib_stage e = row(ctx->role[r], sauvola, s, (db_role)r, "sliding", ab[s][r][0], ab[s][r][1]);
            CHECK(db_calib_put_stage(&calib, &e) == DB_OK, "put: %s", db_error_message());
        }
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        db_calib_crossing x = {.role = (db_role)r, .ms = 0, .sizes = 3};
        snprintf(x.from, sizeof x.from, "%s", ctx->role[!r]->info.key);
        snprintf(x.to, sizeof x.to, "%s", ctx->role[r]->info.key);
        CHECK(db_calib_put_crossing(&calib, &x) == DB_OK, "put crossing: %s", db_error_message());
    }
    CHECK(db_plan_costs_from_calib(&c, &calib, NULL, ctx, sauvola, &job, w, h, 1) == DB_OK, "from full: %s",
          db_error_message());
    CHECK(c.n_notes == 0, "%d notes for a full calibration: %s", c.n_notes, c.n_notes ? c.notes[0] : "");
    CHECK(near(c.stage_ms[0][DB_ROLE_GPU], 2.0) && near(c.stage_ms[1][DB_ROLE_CPU], 4.0) &&
              near(c.stage_ms[1][DB_ROLE_GPU], 0.5),
          "predictions %g %g %g", c.stage_ms[0][DB_ROLE_GPU], c.stage_ms[1][DB_ROLE_CPU], c.stage_ms[1][DB_ROLE_GPU]);
    choose(&c, DB_PLAN_LATENCY, &ch);
    CHECK(!ch.fallback && !strcmp(fmt(&ch.map), "cpu,gpu,cpu") && near(ch.sim.latency_ms, 2.5) &&
              near(ch.sim.staging_ms, 0.5),
          "calibrated chose %s (%g ms)", fmt(&ch.map), ch.sim.latency_ms);
    {
        /* cpu,cpu,gpu ends on the gpu role: 1 + 4 + 1 + 0.4 staging + 0.3 host. */
        db_map m = map_of(sauvola, "cpu,cpu,gpu");
        db_plan_sim sim;
        db_plan_simulate(&c, &m, &sim);
        CHECK(near(sim.latency_ms, 6.7) && near(sim.staging_ms, 0.7), "cpu,cpu,gpu: latency %g staging %g",
              sim.latency_ms, sim.staging_ms);
        /* A calibrated crossing into the gpu of 0.4 ms: threshold starts that much later, and it is
        ** part of the host's share. */
        db_calib_crossing x = {.role = DB_ROLE_GPU, .ms = 0.4, .sizes = 3};
        snprintf(x.from, sizeof x.from, "%s", ctx->role[DB_ROLE_CPU]->info.key);
        snprintf(x.to, sizeof x.to, "%s", ctx->role[DB_ROLE_GPU]->info.key);
        db_plan_costs *cx = malloc(sizeof *cx);
        CHECK(cx && db_calib_put_crossing(&calib, &x) == DB_OK &&
                  db_plan_costs_from_calib(cx, &calib, NULL, ctx, sauvola, &job, w, h, 1) == DB_OK &&
                  cx->n_notes == 0 && near(cx->crossing_ms[DB_ROLE_GPU], 0.4) && cx->crossing_ms[DB_ROLE_CPU] == 0,
              "crossing row: %s", db_error_message());
        if (cx) {
            db_plan_simulate(cx, &m, &sim);
            CHECK(near(sim.latency_ms, 7.1) && near(sim.staging_ms, 1.1) && near(sim.crossing_ms, 0.4),
                  "cpu,cpu,gpu with a crossing: latency %g staging %g", sim.latency_ms, sim.staging_ms);
        }
        free(cx);
        x.ms = 0;
        CHECK(db_calib_put_crossing(&calib, &x) == DB_OK, "put crossing back");
    }
    /* A host row measured with other kernels is stale: a note, and counted as 0. */
    db_calib_stage old_host = host_cpu;
    memset(old_host.kernel_hash, '0', 64);
    CHECK(db_calib_put_stage(&calib, &old_host) == DB_OK, "put stale host row");
    CHECK(db_plan_costs_from_calib(&c, &calib, NULL, ctx, sauvola, &job, w, h, 1) == DB_OK && c.n_notes == 1 &&
              notes_with(&c, "sauvola/host (cpu", "other kernels") == 1 && c.host_ms[DB_ROLE_CPU] == 0 &&
              near(c.host_ms[DB_ROLE_GPU], 0.3),
          "stale host row: %d notes: %s", c.n_notes, c.n_notes ? c.notes[0] : "");
    CHECK(db_calib_put_stage(&calib, &host_cpu) == DB_OK, "put host row again");

    /* Another variant has no rows. */
    db_job shared_job = job;
    CHECK(db_job_set_variant(sauvola, &shared_job, "shared") == DB_OK, "variant");
    CHECK(db_plan_costs_from_calib(&c, &calib, NULL, ctx, sauvola, &shared_job, w, h, 1) == DB_OK && c.n_notes == 8 &&
              notes_with(&c, "variant shared", NULL) == 8 && notes_with(&c, "stats", NULL) == 2,
          "variant shared: %d notes", c.n_notes);

    /* A row measured with other kernels: stale, reported by stage and device, not used. */
    db_calib_stage stale = row(ctx->role[DB_ROLE_GPU], sauvola, 1, DB_ROLE_GPU, "sliding", 0.25, 5e-5);
    memset(stale.kernel_hash, '0', 64);
    CHECK(db_calib_put_stage(&calib, &stale) == DB_OK, "put stale");
    CHECK(db_plan_costs_from_calib(&c, &calib, NULL, ctx, sauvola, &job, w, h, 1) == DB_OK, "from stale");
    CHECK(c.n_notes == 1 && c.stage[1][DB_ROLE_GPU] == DB_PLAN_UNKNOWN &&
              notes_with(&c, "sauvola/stats (gpu", "other kernels") == 1 &&
              notes_with(&c, "recalibrate that stage on that device", "docbin-bench --calibrate") == 1 &&
              notes_with(&c, ctx->role[DB_ROLE_GPU]->info.key, ctx->role[DB_ROLE_GPU]->info.name) == 1,
          "stale note: %s", c.n_notes ? c.notes[0] : "(none)");
    choose(&c, DB_PLAN_LATENCY, &ch);
    CHECK(ch.fallback && !strcmp(fmt(&ch.map), "gpu,gpu,gpu"), "stale chose %s", fmt(&ch.map));

    /* A device that does not share host memory needs its copy models: missing,
    ** they are notes; present, they are used as they are. */
    stale = row(ctx->role[DB_ROLE_GPU], sauvola, 1, DB_ROLE_GPU, "sliding", 0.25, 5e-5);
    CHECK(db_calib_put_stage(&calib, &stale) == DB_OK, "put fresh");
    ctx->role[DB_ROLE_GPU]->info.host_unified = false;
    CHECK(db_plan_costs_from_calib(&c, &calib, NULL, ctx, sauvola, &job, w, h, 1) == DB_OK, "from unshared");
    CHECK(c.n_notes == 3 && notes_with(&c, "h2d copies of the gpu role", "docbin-bench --calibrate") == 1 &&
              notes_with(&c, "d2h copies of the gpu role", ctx->role[DB_ROLE_GPU]->info.name) == 1 &&
              notes_with(&c, "copies into the gpu role", "wrote are not calibrated and counted as copies of "
                         "untouched memory") == 1,
          "copy notes: %d", c.n_notes);
    db_calib_transfer t = {.dir = DB_H2D, .model = {.latency_ms = 0.5, .bandwidth_gbs = 2, .sizes = 3}};
    snprintf(t.device, sizeof t.device, "%s", ctx->role[DB_ROLE_GPU]->info.key);
    CHECK(db_calib_put_transfer(&calib, &t) == DB_OK, "put h2d");
    t.dir = DB_D2H;
    t.model.latency_ms = 0.25;
    CHECK(db_calib_put_transfer(&calib, &t) == DB_OK, "put d2h");
    db_calib_written wr = {.model = {.latency_ms = 0.1, .bandwidth_gbs = 1, .sizes = 3}};
    snprintf(wr.from, sizeof wr.from, "%s", ctx->role[DB_ROLE_CPU]->info.key);
    snprintf(wr.to, sizeof wr.to, "%s", ctx->role[DB_ROLE_GPU]->info.key);
    CHECK(db_calib_put_written(&calib, &wr) == DB_OK, "put written");
    CHECK(db_plan_costs_from_calib(&c, &calib, NULL, ctx, sauvola, &job, w, h, 1) == DB_OK && c.n_notes == 0 &&
              c.written[DB_ROLE_GPU] && c.written_model[DB_ROLE_GPU].bandwidth_gbs == 1 && !c.written[DB_ROLE_CPU],
          "with copies: %d notes", c.n_notes);
    /* gpu,gpu,gpu: image h2d 0.5 + 5000 / 2e6 = 0.5025, out d2h 0.25 + 0.0025 = 0.2525,
    ** after and before the staging copies of 0.2 ms each, and the gpu role's host share 0.3. */
    db_map m = map_of(sauvola, "gpu");
    db_plan_sim sim;
    db_plan_simulate(&c, &m, &sim);
    CHECK(near(sim.transfer_ms, 0.5025 + 0.2525) &&
              near(sim.latency_ms, 0.2 + 0.5025 + 2.0 + 0.5 + 1.0 + 0.2525 + 0.2 + 0.3) &&
              near(sim.copies[0].start_ms, 0.2),
          "unshared gpu: transfers %g latency %g", sim.transfer_ms, sim.latency_ms);
    /* Copies the history measured scale their model: binary out of the gpu at
    ** 1.5, 2 and 4 times the d2h row (median 2); the sums into it at 3 times the
    ** written row (0.1 + 80000 / 1e6 = 0.18 ms), not the h2d row's (0.54); the
    ** image's copies of another algorithm, and two of the image's, count for nothing. */
    const char *gpu_key = ctx->role[DB_ROLE_GPU]->info.key;
    struct {
        const char *algo, *item;
        db_transfer_dir dir;
        double bytes, ms;
    } measured[] = {{"sauvola", "binary", DB_D2H, 5000, 1.5 * 0.2525}, {"sauvola", "binary", DB_D2H, 5000, 4 * 0.2525},
                    {"sauvola", "binary", DB_D2H, 5000, 2 * 0.2525},   {"sauvola", "sums", DB_H2D, 80000, 0.54},
                    {"sauvola", "sums", DB_H2D, 80000, 0.54},          {"sauvola", "sums", DB_H2D, 80000, 0.54},
                    {"otsu", "image", DB_H2D, 5000, 9},                {"otsu", "image", DB_H2D, 5000, 9},
                    {"otsu", "image", DB_H2D, 5000, 9},                {"sauvola", "image", DB_H2D, 5000, 9},
                    {"sauvola", "image", DB_H2D, 5000, 9}};
    db_history copies;
    db_history_init(&copies);
    for (size_t i = 0; i < sizeof measured / sizeof measured[0]; i++) {
        db_history_copy cp = {.dir = measured[i].dir, .bytes = measured[i].bytes, .ms = measured[i].ms};
        snprintf(cp.device, sizeof cp.device, "%s", gpu_key);
        snprintf(cp.algo, sizeof cp.algo, "%s", measured[i].algo);
        snprintf(cp.item, sizeof cp.item, "%s", measured[i].item);
        CHECK(db_history_add_copies(&copies, &cp, 1) == DB_OK, "add copy");
    }
    CHECK(db_plan_costs_from_calib(&c, &calib, &copies, ctx, sauvola, &job, w, h, 1) == DB_OK, "with copies");
    db_plan_simulate(&c, &m, &sim);
    CHECK(near(sim.transfer_ms, 0.5025 + 2 * 0.2525), "gpu map, copies from history: %g, expected %g",
          sim.transfer_ms, 0.5025 + 2 * 0.2525);
    db_map ccg = map_of(sauvola, "cpu,cpu,gpu");
    db_plan_simulate(&c, &ccg, &sim);
    /* The threshold reads gray too: its copy at the written row, 0.1 + 5000 / 1e6, no history. */
    CHECK(near(sim.transfer_ms, 3 * 0.18 + 0.105 + 2 * 0.2525), "cpu,cpu,gpu, copies from history: %g, expected %g",
          sim.transfer_ms, 3 * 0.18 + 0.105 + 2 * 0.2525);
    db_history_free(&copies);
    ctx->role[DB_ROLE_GPU]->info.host_unified = unified;

    /* gray reads the page: a row timed on gray pages (a 0.25) serves gray
    ** pages, and the row of 0 channels (a file of version 6, a 1) still RGB
    ** ones; stats, which reads gray's output, keeps its one row for both. */
    db_calib_stage gray_pages = row(ctx->role[DB_ROLE_CPU], sauvola, 0, DB_ROLE_CPU, "sliding", 0.25, 0);
    gray_pages.channels = 1;
    CHECK(db_calib_channels(sauvola, 0, 1) == 1 && db_calib_channels(sauvola, 0, 3) == 3 &&
              db_calib_channels(sauvola, 1, 1) == 0 && db_calib_put_stage(&calib, &gray_pages) == DB_OK,
          "gray row: %s", db_error_message());
    CHECK(db_plan_costs_from_calib(&c, &calib, NULL, ctx, sauvola, &job, w, h, 1) == DB_OK &&
              near(c.stage_ms[0][DB_ROLE_CPU], 0.25) && near(c.stage_ms[1][DB_ROLE_CPU], 4.0),
          "gray page: gray %g stats %g", c.stage_ms[0][DB_ROLE_CPU], c.stage_ms[1][DB_ROLE_CPU]);
    CHECK(db_plan_costs_from_calib(&c, &calib, NULL, ctx, sauvola, &job, w, h, 3) == DB_OK &&
              near(c.stage_ms[0][DB_ROLE_CPU], 1.0) && near(c.stage_ms[1][DB_ROLE_CPU], 4.0),
          "RGB page: gray %g stats %g", c.stage_ms[0][DB_ROLE_CPU], c.stage_ms[1][DB_ROLE_CPU]);

    db_calib_free(&calib);
    db_context_close(ctx);
}

/* The host's share on the gpu role that `calib` gives otsu on a 100x50 page
** of `channels`, and the notes in *c; -1 where the costs cannot be built. */
static double gpu_host_ms(const db_calib *calib, const db_context *ctx, int channels, db_plan_costs *c)
{
    const db_algo *otsu = db_algo_find("otsu");
    db_job job;
    db_job_defaults(otsu, &job);
    if (db_plan_costs_from_calib(c, calib, NULL, ctx, otsu, &job, 100, 50, channels) != DB_OK)
        return -1;
    return c->host_ms[DB_ROLE_GPU];
}

/* Puts otsu's host row on the gpu role: a ms, of `channels`. */
static void put_gpu_host(db_calib *calib, const db_context *ctx, double a, int channels)
{
    db_calib_stage e = host_row(ctx->role[DB_ROLE_GPU], db_algo_find("otsu"), DB_ROLE_GPU, "-", a, 0);
    e.channels = channels;
    CHECK(db_calib_put_stage(calib, &e) == DB_OK, "put host row of %d channels: %s", channels, db_error_message());
}

/* The host's share of a run is calibrated on RGB and on gray pages, a row
** each: a page takes the row of its channels, and a row of 0 channels (files
** of version 6 and earlier) where it has none. */
static void test_host_channels(void)
{
    db_context *ctx = test_open_context();
    db_calib calib;
    db_calib_init(&calib);
    db_plan_costs c;
    double ms;
    /* An RGB row alone says nothing of a gray page: counted as 0, with a note naming the pages. */
    put_gpu_host(&calib, ctx, 0.4, 3);
    CHECK((ms = gpu_host_ms(&calib, ctx, 1, &c)) == 0 &&
              notes_with(&c, "host's share of otsu runs on the gpu role for gray pages", "counted as 0") == 1,
          "gray page with an RGB host row only: host %g", ms);
    db_calib_free(&calib);
    db_calib_init(&calib);
    put_gpu_host(&calib, ctx, 0.3, 0);
    put_gpu_host(&calib, ctx, 0.1, 1);
    CHECK(near(ms = gpu_host_ms(&calib, ctx, 1, &c), 0.1), "gray page: host %g, not the gray row's 0.1", ms);
    CHECK(near(ms = gpu_host_ms(&calib, ctx, 3, &c), 0.3),
          "RGB page without an RGB row: host %g, not the 0-channel row's 0.3", ms);
    put_gpu_host(&calib, ctx, 0.4, 3);
    CHECK(near(ms = gpu_host_ms(&calib, ctx, 3, &c), 0.4), "RGB page: host %g, not the RGB row's 0.4", ms);
    CHECK(near(ms = gpu_host_ms(&calib, ctx, 1, &c), 0.1), "gray page beside an RGB row: host %g, not 0.1", ms);
    db_calib_free(&calib);
    db_context_close(ctx);
}

/* What --explain prints for `c`, in a static buffer. */
static const char *explain_text(const db_plan_costs *c)
{
    static char text[16384];
    FILE *f = fmemopen(text, sizeof text, "w");
    if (!f)
        return "";
    db_plan_explain(c, NULL, f);
    fclose(f);
    return text;
}

/* Rows that make everything but the stages free: instant staging copies, no
** host share on either role, crossings of 0 both ways. */
static void put_free_plumbing(db_calib *calib, const db_context *ctx, const db_algo *algo)
{
    db_transfer_model staging = {.latency_ms = 0, .bandwidth_gbs = 1e9, .sizes = 3};
    CHECK(db_calib_put_staging(calib, &staging) == DB_OK, "put staging");
    for (int r = 0; r < DB_ROLE_COUNT; r++) {
        db_calib_stage host = host_row(ctx->role[r], algo, (db_role)r, "-", 0, 0);
        CHECK(db_calib_put_stage(calib, &host) == DB_OK, "put host row");
        db_calib_crossing x = {.role = (db_role)r, .ms = 0, .sizes = 3};
        snprintf(x.from, sizeof x.from, "%s", ctx->role[!r]->info.key);
        snprintf(x.to, sizeof x.to, "%s", ctx->role[r]->info.key);
        CHECK(db_calib_put_crossing(calib, &x) == DB_OK, "put crossing");
    }
}

/* A calibration of `algo` with free plumbing (put_free_plumbing) and a row for
** every stage s on every role r: a = ab[s][r][0], b = ab[s][r][1] at work[s][r]. */
static void put_work_rows(db_calib *calib, const db_context *ctx, const db_algo *algo,
                          const double (*ab)[DB_ROLE_COUNT][2], const double (*work)[DB_ROLE_COUNT])
{
    db_calib_init(calib);
    put_free_plumbing(calib, ctx, algo);
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        for (int s = 0; s < algo->n_stages; s++) {
            db_calib_stage e = row(ctx->role[r], algo, s, (db_role)r, "-", ab[s][r][0], ab[s][r][1]);
            e.model.work = work[s][r];
            CHECK(db_calib_put_stage(calib, &e) == DB_OK, "put: %s", db_error_message());
        }
}

/* Three history rows of stage s on `role` of a device other than ctx's: 5000
** pixels, 1 ms each (so no factor for ctx's devices), at work[0..2]. */
static void other_device_runs(db_history *hist, db_history_run runs[3], const db_context *ctx,
                              const db_algo *algo, int s, db_role role, const double work[3])
{
    for (int i = 0; i < 3; i++) {
        memset(&runs[i], 0, sizeof runs[i]);
        runs[i].key = row(ctx->role[role], algo, s, role, "-", 0, 0);
        snprintf(runs[i].key.device, sizeof runs[i].key.device, "0123456789abcdef");
        runs[i].pixels = 5000;
        runs[i].ms = 1;
        runs[i].work = work[i];
    }
    db_history_init(hist);
    hist->runs = runs;
    hist->n = hist->cap = 3;
}

/* A stage whose cost follows the content: HBK's kmeans, calibrated at 4
** passes per block, t = a + b * 5000 * work / 4 on the 100x50 page (7 x 4
** blocks of 16): cpu a 1, b 1e-3 (6 ms at 4 passes), gpu a 0.5, b 1e-4. */
static void test_work(void)
{
    db_context *ctx = test_open_context();
    bool unified = ctx->role[DB_ROLE_GPU]->info.host_unified;
    ctx->role[DB_ROLE_GPU]->info.host_unified = true;
    const db_algo *hbk = db_algo_find("hbk");
    db_job job;
    db_job_defaults(hbk, &job);
    CHECK(db_job_set(hbk, &job, "block", "16") == DB_OK, "hbk block 16"); /* 28 blocks on the page below */
    const int w = 100, h = 50;
    db_calib calib;
    const double ab[2][2][2] = {{{1, 1e-3}, {0.5, 1e-4}}, {{0.2, 0}, {0.1, 0}}}, work[2][2] = {{4, 4}, {0, 0}};
    put_work_rows(&calib, ctx, hbk, ab, work);
    db_plan_costs c;
    CHECK(db_plan_costs_from_calib(&c, &calib, NULL, ctx, hbk, &job, w, h, 3) == DB_OK && c.n_notes == 0,
          "from calib: %d notes", c.n_notes);
    CHECK(c.work_source[0][DB_ROLE_CPU] == DB_PLAN_WORK_CALIBRATION && c.calib_work[0][DB_ROLE_CPU] == 4 &&
              c.work_source[1][DB_ROLE_CPU] == DB_PLAN_WORK_NONE && near(c.stage_ms[0][DB_ROLE_CPU], 6) &&
              near(c.stage_ms[0][DB_ROLE_GPU], 1),
          "at the calibration's work: %g %g", c.stage_ms[0][DB_ROLE_CPU], c.stage_ms[0][DB_ROLE_GPU]);
    CHECK(strstr(explain_text(&c), "work: kmeans predicted at the calibration pages' 4.00 passes per block"),
          "explain: %s", explain_text(&c));

    /* Three runs of another device at 8 passes: the next page is expected at
    ** 8 on both roles (no factor: those runs are not of these devices). The
    ** cpu's row scales its per-pixel part, 1 + 5 * 8 / 4; the gpu's, whose
    ** passes each pay a fixed cost too (per_unit), its whole cost, 1 * 8 / 4. */
    db_history hist;
    db_history_run runs[3];
    other_device_runs(&hist, runs, ctx, hbk, 0, DB_ROLE_CPU, (const double[3]){8, 20, 8});
    CHECK(db_plan_costs_from_calib(&c, &calib, &hist, ctx, hbk, &job, w, h, 3) == DB_OK &&
              c.work_source[0][DB_ROLE_GPU] == DB_PLAN_WORK_HISTORY && c.work[0][DB_ROLE_GPU] == 8 &&
              c.work_runs[0][DB_ROLE_GPU] == 3 &&
              near(c.stage_ms[0][DB_ROLE_CPU], 11) && near(c.stage_ms[0][DB_ROLE_GPU], 2) &&
              near(c.stage_ms[1][DB_ROLE_CPU], 0.2),
          "at the history's work: %g %g", c.stage_ms[0][DB_ROLE_CPU], c.stage_ms[0][DB_ROLE_GPU]);
    CHECK(strstr(explain_text(&c), "work: kmeans predicted at 8.00 passes per block, the median of the last 3 "
                                   "runs' pages (calibration pages 4.00)"),
          "explain: %s", explain_text(&c));

    /* A run of this page took 12 passes per block (336 over 28 blocks). */
    db_report report = {.n = hbk->n_report_fields, .fields = hbk->report_fields};
    for (int i = 0; i < report.n; i++)
        report.values[i] = !strcmp(hbk->report_fields[i].name, "local_passes") ? 336 : 1;
    db_map cpu = map_of(hbk, "cpu");
    db_plan_costs_set_page_work(&c, &cpu, &report);
    CHECK(c.work_source[0][DB_ROLE_GPU] == DB_PLAN_WORK_PAGE && c.work[0][DB_ROLE_GPU] == 12 &&
              near(c.stage_ms[0][DB_ROLE_CPU], 16) &&
              near(c.stage_ms[0][DB_ROLE_GPU], 3) && near(c.stage_ms[1][DB_ROLE_GPU], 0.1),
          "at the page's work: %g %g", c.stage_ms[0][DB_ROLE_CPU], c.stage_ms[0][DB_ROLE_GPU]);
    CHECK(strstr(explain_text(&c),
                 "work: kmeans predicted at 12.00 passes per block, this page's (calibration pages 4.00)"),
          "explain: %s", explain_text(&c));

    /* Rows without a work (a file of version 4): the same line whatever the
    ** work, a note with the fix, and nothing said of passes. */
    for (int i = 0; i < calib.n_stages; i++)
        calib.stages[i].model.work = 0;
    CHECK(db_plan_costs_from_calib(&c, &calib, &hist, ctx, hbk, &job, w, h, 3) == DB_OK &&
              c.work_source[0][DB_ROLE_CPU] == DB_PLAN_WORK_NONE && near(c.stage_ms[0][DB_ROLE_CPU], 6) &&
              notes_with(&c, "kmeans on the cpu role", "calibrated without its work") == 1 &&
              notes_with(&c, "kmeans on the gpu role", "docbin-bench --calibrate") == 1 && c.n_notes == 2,
          "rows without work: %g, %d notes", c.stage_ms[0][DB_ROLE_CPU], c.n_notes);
    db_plan_costs_set_page_work(&c, &cpu, &report);
    CHECK(c.work_source[0][DB_ROLE_CPU] == DB_PLAN_WORK_NONE && near(c.stage_ms[0][DB_ROLE_CPU], 6) &&
              !strstr(explain_text(&c), "passes"),
          "rows without work, a page's work: %g", c.stage_ms[0][DB_ROLE_CPU]);
    ctx->role[DB_ROLE_GPU]->info.host_unified = unified;
    db_calib_free(&calib);
    db_context_close(ctx);
}

/* A stage whose roles count different work: Howe's graphcut, on the 100x50
** page, calibrated on the cpu at 100 steps a pixel (a 2, b 1e-3: 7 ms) and on
** the gpu at 400 commands (a 0.5, b 1e-4: 1 ms); laplacian and canny are free.
** The gpu's commands each pay their fixed cost too (per_unit): its whole time
** scales with them, the cpu's per-pixel part alone with its steps. */
static void test_work_by_role(void)
{
    db_context *ctx = test_open_context();
    bool unified = ctx->role[DB_ROLE_GPU]->info.host_unified;
    ctx->role[DB_ROLE_GPU]->info.host_unified = true;
    const db_algo *howe = db_algo_find("howe");
    db_job job;
    db_job_defaults(howe, &job);
    const int w = 100, h = 50;
    db_calib calib;
    const double ab[3][2][2] = {{{0, 0}, {0, 0}}, {{0, 0}, {0, 0}}, {{2, 1e-3}, {0.5, 1e-4}}};
    const double work[3][2] = {{0, 0}, {0, 0}, {100, 400}};
    put_work_rows(&calib, ctx, howe, ab, work);
    db_plan_costs c;
    CHECK(db_plan_costs_from_calib(&c, &calib, NULL, ctx, howe, &job, w, h, 1) == DB_OK && c.n_notes == 0 &&
              near(c.stage_ms[2][DB_ROLE_CPU], 7) && near(c.stage_ms[2][DB_ROLE_GPU], 1),
          "at the calibration's work: %g %g (%d notes)", c.stage_ms[2][DB_ROLE_CPU], c.stage_ms[2][DB_ROLE_GPU],
          c.n_notes);
    const char *text = explain_text(&c);
    CHECK(strstr(text, "work: graphcut on cpu predicted at the calibration pages' 100.00 search steps per pixel") &&
              strstr(text, "work: graphcut on gpu predicted at the calibration pages' 400.00 commands"),
          "explain: %s", text);

    /* Three gpu runs of another device at 800 commands: the gpu is expected
    ** at 800 (2 ms), the cpu still at its calibration's 100 steps. */
    db_history hist;
    db_history_run runs[3];
    other_device_runs(&hist, runs, ctx, howe, 2, DB_ROLE_GPU, (const double[3]){800, 800, 800});
    CHECK(db_plan_costs_from_calib(&c, &calib, &hist, ctx, howe, &job, w, h, 1) == DB_OK &&
              c.work_source[2][DB_ROLE_GPU] == DB_PLAN_WORK_HISTORY && c.work[2][DB_ROLE_GPU] == 800 &&
              c.work_source[2][DB_ROLE_CPU] == DB_PLAN_WORK_CALIBRATION && near(c.stage_ms[2][DB_ROLE_CPU], 7) &&
              near(c.stage_ms[2][DB_ROLE_GPU], 2),
          "at the gpu history's work: %g %g", c.stage_ms[2][DB_ROLE_CPU], c.stage_ms[2][DB_ROLE_GPU]);

    /* A run with the cut on the gpu took 600 commands: the gpu's 1.5 ms; the
    ** cpu learns nothing from it. Then one with the cut on the cpu, 750000
    ** steps (150 a pixel): the cpu's 10.5 ms, (2 + 5) * 150 / 100, as both
    ** roles' rows are per_unit (c = 0 here). */
    db_report report = {.n = howe->n_report_fields, .fields = howe->report_fields};
    for (int i = 0; i < report.n; i++)
        report.values[i] = !strcmp(howe->report_fields[i].name, "cut_commands") ? 600
                           : !strcmp(howe->report_fields[i].name, "cut_steps")  ? 0
                                                                                : 1;
    db_map gpu_cut = map_of(howe, "cpu,cpu,gpu"), cpu_cut = map_of(howe, "gpu,gpu,cpu");
    db_plan_costs_set_page_work(&c, &gpu_cut, &report);
    CHECK(c.work_source[2][DB_ROLE_GPU] == DB_PLAN_WORK_PAGE && c.work[2][DB_ROLE_GPU] == 600 &&
              near(c.stage_ms[2][DB_ROLE_GPU], 1.5) && c.work_source[2][DB_ROLE_CPU] == DB_PLAN_WORK_CALIBRATION &&
              near(c.stage_ms[2][DB_ROLE_CPU], 7),
          "after a gpu cut: %g %g", c.stage_ms[2][DB_ROLE_CPU], c.stage_ms[2][DB_ROLE_GPU]);
    /* The gpu-cut report read as if the cut ran on the cpu says nothing. */
    db_plan_costs_set_page_work(&c, &cpu_cut, &report);
    CHECK(c.work_source[2][DB_ROLE_CPU] == DB_PLAN_WORK_CALIBRATION && near(c.stage_ms[2][DB_ROLE_CPU], 7),
          "a gpu cut's report under a cpu-cut map: %g", c.stage_ms[2][DB_ROLE_CPU]);
    for (int i = 0; i < report.n; i++)
        report.values[i] = !strcmp(howe->report_fields[i].name, "cut_steps")      ? 750000
                           : !strcmp(howe->report_fields[i].name, "cut_commands") ? 0
                                                                                  : 1;
    db_plan_costs_set_page_work(&c, &cpu_cut, &report);
    CHECK(c.work_source[2][DB_ROLE_CPU] == DB_PLAN_WORK_PAGE && c.work[2][DB_ROLE_CPU] == 150 &&
              near(c.stage_ms[2][DB_ROLE_CPU], 10.5) && c.work[2][DB_ROLE_GPU] == 600 &&
              near(c.stage_ms[2][DB_ROLE_GPU], 1.5),
          "after a cpu cut: %g %g", c.stage_ms[2][DB_ROLE_CPU], c.stage_ms[2][DB_ROLE_GPU]);
    text = explain_text(&c);
    CHECK(strstr(text, "work: graphcut on cpu predicted at 150.00 search steps per pixel, this page's "
                       "(calibration pages 100.00)") &&
              strstr(text, "work: graphcut on gpu predicted at 600.00 commands, this page's "
                           "(calibration pages 400.00)"),
          "explain: %s", text);
    ctx->role[DB_ROLE_GPU]->info.host_unified = unified;
    db_calib_free(&calib);
    db_context_close(ctx);
}

/* --- what the planner would know of a map after the page's other maps ran --- */
static void test_after_others(void)
{
    db_context *ctx = test_open_context();
    const db_algo *otsu = db_algo_find("otsu");
    db_job job;
    db_job_defaults(otsu, &job);
    const int w = 100, h = 50;
    bool unified = ctx->role[DB_ROLE_GPU]->info.host_unified;
    ctx->role[DB_ROLE_GPU]->info.host_unified = true; /* copies free, as in test_work */
    db_calib calib;
    db_calib_init(&calib);
    /* Every stage calibrated at 1 ms on the cpu role and 0.5 ms on the gpu role. */
    put_free_plumbing(&calib, ctx, otsu);
    for (int r = 0; r < DB_ROLE_COUNT; r++)
        for (int s = 0; s < 3; s++) {
            db_calib_stage e = row(ctx->role[r], otsu, s, (db_role)r, "-", r == DB_ROLE_CPU ? 1 : 0.5, 0);
            CHECK(db_calib_put_stage(&calib, &e) == DB_OK, "put: %s", db_error_message());
        }
    /* Three maps, three timed runs each. Map A ran every stage at 100 ms, which
    ** the rows for A must not contain. B and C give binarize on each role a
    ** factor of its own: cpu 2 (B), gpu 3 (C). Their gray and histogram are
    ** beside the crossing of gray into the other role: those rows leave the
    ** calibration as it was, though they would give factors 4 and 2 (gray cpu
    ** in C, gpu in B), 3.3 and 0.5 (histogram cpu in B, taking 3, 3.3 and 3.6 ms
    ** in its three runs, which shows the order; gpu in C). */
    enum { MAPS = 3, RUNS = 3 };
    const char *texts[MAPS] = {"cpu,cpu,cpu", "gpu,cpu,cpu", "cpu,gpu,gpu"};
    const double ms[MAPS][3] = {{100, 100, 100}, {1, 3, 2}, {4, 0.25, 1.5}};
    db_map maps[MAPS];
    for (int m = 0; m < MAPS; m++)
        CHECK(db_map_parse(otsu, texts[m], &maps[m]) == DB_OK, "map %s", texts[m]);
    double stage_ms[MAPS * (RUNS + 1) * DB_MAX_STAGES] = {0}, wall_ms[MAPS * (RUNS + 1)] = {0};
    for (int m = 0; m < MAPS; m++)
        for (int run = 0; run <= RUNS; run++)
            for (int s = 0; s < 3; s++)
                stage_ms[((size_t)m * (RUNS + 1) + (size_t)run) * DB_MAX_STAGES + (size_t)s] =
                    ms[m][s] + (m == 1 && s == 1 ? 0.3 * (run - 1) : 0);
    char name[] = "page.png";
    char *names[1] = {name};
    int width[1] = {w}, height[1] = {h}, channels[1] = {1};
    db_report reports[MAPS] = {{0}}; /* one per map of the one image */
    db_bench b = {.algo = otsu, .n_maps = MAPS, .n_images = 1, .runs = RUNS, .order = DB_BENCH_INTERLEAVED,
                  .maps = maps, .image_names = names, .width = width, .height = height, .channels = channels,
                  .stage_ms = stage_ms, .wall_ms = wall_ms, .reports = reports};

    db_history hist;
    db_history_init(&hist);
    CHECK(db_bench_history(&b, 0, 0, ctx, &job, &hist) == DB_OK, "history: %s", db_error_message());
    int of_a = 0;
    for (int i = 0; i < hist.n; i++)
        of_a += hist.runs[i].ms == 100;
    /* Interleaved: B's first run, C's first run, B's second run... three rows each. */
    CHECK(hist.n == 2 * RUNS * 3 && !of_a && near(hist.runs[1].ms, 3) && near(hist.runs[4].ms, 0.25) &&
              near(hist.runs[7].ms, 3.3) && hist.runs[0].key.role == DB_ROLE_GPU &&
              !strcmp(hist.runs[0].key.device, ctx->role[DB_ROLE_GPU]->info.key) &&
              !strcmp(hist.runs[1].key.stage, "histogram") && hist.runs[1].pixels == w * h &&
              hist.runs[0].at_crossing && hist.runs[1].at_crossing && !hist.runs[2].at_crossing &&
              hist.runs[3].at_crossing && hist.runs[4].at_crossing && !hist.runs[5].at_crossing,
          "rows without map A: %d rows, %d of A", hist.n, of_a);
    db_plan_costs c;
    CHECK(db_plan_costs_from_calib(&c, &calib, &hist, ctx, otsu, &job, w, h, 1) == DB_OK, "costs: %s",
          db_error_message());
    const double want[3][2] = {{1, 0.5}, {1, 0.5}, {2, 1.5}}; /* [stage][role] */
    for (int s = 0; s < 3; s++)
        for (int r = 0; r < DB_ROLE_COUNT; r++)
            CHECK(near(c.stage_ms[s][r], want[s][r]), "stage %d on %s after B and C: %g, expected %g", s,
                  db_role_name((db_role)r), c.stage_ms[s][r], want[s][r]);
    db_history_free(&hist);
    /* Map A as predicted after B and C: its three stages on the cpu role at
    ** 1 + 1 + 2 ms; from the calibration alone, 3 ms. An empty history file. */
    db_image page = {.width = w, .height = h, .channels = 1};
    double after = 0;
    CHECK(db_bench_predict_after_others(&b, 0, 0, &calib, &hist, ctx, &job, &page, &c, &after) == DB_OK &&
              near(after, 4),
          "map A after B and C: %g ms, expected 4", after);

    /* Grouped: B's three runs, then C's. */
    b.order = DB_BENCH_GROUPED;
    CHECK(db_bench_history(&b, 0, 0, ctx, &job, &hist) == DB_OK && hist.n == 2 * RUNS * 3 &&
              near(hist.runs[1].ms, 3) && near(hist.runs[4].ms, 3.3) && near(hist.runs[9 + 1].ms, 0.25),
          "grouped rows: %d", hist.n);
    db_history_free(&hist);
    /* No map left out: A's rows count too. */
    CHECK(db_bench_history(&b, 0, -1, ctx, &job, &hist) == DB_OK && hist.n == 3 * RUNS * 3 &&
              near(hist.runs[0].ms, 100),
          "every map: %d rows", hist.n);
    db_history_free(&hist);
    /* Copies: C's runs copied binary out of the gpu at 0.1 ms a run plus the run,
    ** A's the image into it: without A, C's timed runs' copies, in order. */
    static db_bench_copy item_copies[MAPS * (RUNS + 1) * DB_HISTORY_MAX_COPIES];
    const int binary = 3, image = 0; /* otsu's items: image, gray, histogram, binary */
    CHECK(!strcmp(otsu->items[binary].name, "binary") && !strcmp(otsu->items[image].name, "image"), "otsu's items");
    for (int run = 0; run <= RUNS; run++) {
        size_t c_at = (size_t)(2 * (RUNS + 1) + run) * DB_HISTORY_MAX_COPIES;
        size_t a_at = (size_t)run * DB_HISTORY_MAX_COPIES;
        item_copies[c_at + ((size_t)binary * DB_ROLE_COUNT + DB_ROLE_GPU) * DB_TRANSFER_DIR_COUNT + DB_D2H] =
            (db_bench_copy){.bytes = w * h, .ms = 0.1 + run};
        item_copies[a_at + ((size_t)image * DB_ROLE_COUNT + DB_ROLE_GPU) * DB_TRANSFER_DIR_COUNT + DB_H2D] =
            (db_bench_copy){.bytes = w * h, .ms = 5};
    }
    b.item_copies = item_copies;
    b.order = DB_BENCH_INTERLEAVED;
    CHECK(db_bench_history(&b, 0, 0, ctx, &job, &hist) == DB_OK && hist.n_copies == RUNS &&
              !strcmp(hist.copies[0].item, "binary") && hist.copies[0].dir == DB_D2H &&
              !strcmp(hist.copies[0].device, ctx->role[DB_ROLE_GPU]->info.key) && hist.copies[0].bytes == w * h &&
              near(hist.copies[0].ms, 1.1) && near(hist.copies[RUNS - 1].ms, 0.1 + RUNS),
          "copy rows without A: %d", hist.n_copies);
    db_history_free(&hist);
    ctx->role[DB_ROLE_GPU]->info.host_unified = unified;
    db_calib_free(&calib);
    db_context_close(ctx);
}

/* What a calibration's progress callback saw. */
struct progress_seen {
    int calls, last_step, steps;
    bool bad; /* a step that did not move forward, or a total that moved or was passed */
};

static void note_progress(void *user, int step, int steps, const char *what)
{
    struct progress_seen *p = user;
    (void)what;
    p->bad |= step <= p->last_step || (p->calls && steps != p->steps) || step > steps;
    p->calls++;
    p->last_step = step;
    p->steps = steps;
}

/* Options of a calibration of `algos` that takes a second: three small pages,
** three small copies, two timed runs. */
static void small_calibration(db_calibrate_options *o, const db_algo **algos, int n_algos)
{
    db_calibrate_defaults(o);
    o->algos = algos;
    o->n_algos = n_algos;
    const int sides[3][2] = {{64, 48}, {96, 64}, {128, 96}};
    for (int k = 0; k < 3; k++) {
        o->sizes[k].width = sides[k][0];
        o->sizes[k].height = sides[k][1];
        o->transfer_bytes[k] = (size_t)4096 << (2 * k);
    }
    o->n_sizes = o->n_transfer_sizes = 3;
    o->runs = 2;
}

/* Calibrates `algos` with small_calibration's options into `out`, the progress
** noted in `seen`; fails the test if the calibration fails. */
static void calibrate_small(db_context *ctx, const db_algo **algos, int n_algos, struct progress_seen *seen,
                            db_calib *out)
{
    db_calibrate_options o;
    small_calibration(&o, algos, n_algos);
    o.progress = note_progress;
    o.user = seen;
    db_calib_init(out);
    db_status st = db_calibrate(ctx, &o, out);
    CHECK(st == DB_OK, "calibration: %s", db_error_message());
}

/* A calibration whose gpu role has memory of its own (PoCL counted so, as in
** test_runtime, under a key of its own, as a GPU has) beside a cpu role that
** shares host memory: transfer rows and a written row into the gpu's device,
** fitted through every size, and a progress count that moves forward to the
** total it announced (the written copies' rounds included). */
static void test_calibrate_written(void)
{
    db_context *ctx = test_open_context();
    db_device *gpu = ctx->role[DB_ROLE_GPU];
    bool unified = gpu->info.host_unified;
    char key[sizeof gpu->info.key];
    memcpy(key, gpu->info.key, sizeof key);
    gpu->info.host_unified = false;
    gpu->info.key[0] = gpu->info.key[0] == '0' ? '1' : '0';
    const db_algo *otsu = db_algo_find("otsu");
    struct progress_seen seen = {0};
    db_calib out;
    calibrate_small(ctx, &otsu, 1, &seen, &out);
    db_transfer_model m = {0};
    CHECK(db_calib_find_transfer(&out, gpu->info.key, DB_H2D, &m) == DB_CALIB_FOUND &&
              db_calib_find_transfer(&out, gpu->info.key, DB_D2H, &m) == DB_CALIB_FOUND,
          "transfer rows of the gpu's device missing");
    CHECK(db_calib_find_written(&out, ctx->role[DB_ROLE_CPU]->info.key, gpu->info.key, &m) == DB_CALIB_FOUND &&
              m.bandwidth_gbs > 0 && m.sizes >= 5,
          "written row: found %d, %g GB/s at %d sizes", out.n_written, out.n_written ? m.bandwidth_gbs : 0,
          out.n_written ? m.sizes : 0);
    CHECK(!seen.bad && seen.calls > 0 && seen.last_step == seen.steps,
          "progress: %d calls, last step %d of %d%s", seen.calls, seen.last_step, seen.steps,
          seen.bad ? ", out of order" : "");
    db_calib_free(&out);
    gpu->info.host_unified = unified;
    memcpy(gpu->info.key, key, sizeof key);
    db_context_close(ctx);
}

/* Options a calibration refuses before it times anything: a copy size of 0
** bytes (nothing to time), more algorithms than its checkpoints can keep. */
static void test_calibrate_options(void)
{
    db_context *ctx = test_open_context();
    const db_algo *otsu = db_algo_find("otsu");
    const db_algo *many[DB_CALIBRATE_MAX_CHECKS - 1];
    for (int i = 0; i < DB_CALIBRATE_MAX_CHECKS - 1; i++)
        many[i] = otsu;
    db_calibrate_options o;
    db_calib out;
    db_calib_init(&out);
    small_calibration(&o, many, 1);
    o.transfer_bytes[1] = 0;
    CHECK(db_calibrate(ctx, &o, &out) == DB_ERR_USAGE && strstr(db_error_message(), "0 bytes"),
          "a copy size of 0 bytes: %s", db_error_message());
    small_calibration(&o, many, DB_CALIBRATE_MAX_CHECKS - 1);
    CHECK(db_calibrate(ctx, &o, &out) == DB_ERR_USAGE && strstr(db_error_message(), "at most 30 algorithms"),
          "%d algorithms: %s", DB_CALIBRATE_MAX_CHECKS - 1, db_error_message());
    CHECK(out.n_stages == 0 && !out.has_staging, "a refused calibration put %d rows", out.n_stages);
    db_calib_free(&out);
    db_context_close(ctx);
}

/* A stage two algorithms share (Niblack's and NICK's gray and stats) gets one
** model for both from a real calibration: the same code costs the same in
** each, and timed apart their rows differed by up to 1.4 times on one host.
** So does the host's share of the algorithms of one host group (Niblack and
** NICK, not Wolf). The host's speed is checked when it begins, after each
** algorithm and when it ends, and the checks come back to the caller. */
static void test_calibrate_pooled(void)
{
    db_context *ctx = test_open_context();
    db_calibrate_options o;
    const db_algo *algos[3] = {db_algo_find("niblack"), db_algo_find("nick"), db_algo_find("wolf")};
    small_calibration(&o, algos, 3);
    o.variant = "sliding";
    db_calibrate_checks checks = {0};
    o.checks = &checks;
    db_calib out;
    db_calib_init(&out);
    db_status st = db_calibrate(ctx, &o, &out);
    CHECK(st == DB_OK, "calibration: %s", db_error_message());
    const char *when[] = {"when the calibration began", "after niblack", "after nick", "after wolf", "when it ended"};
    CHECK(checks.n == 5, "%d checkpoints, not 5", checks.n);
    size_t largest = 0;
    for (int k = 0; k < o.n_transfer_sizes; k++)
        largest = o.transfer_bytes[k] > largest ? o.transfer_bytes[k] : largest;
    CHECK(checks.bytes == largest, "checkpoints of %zu bytes, not the largest copy's %zu", checks.bytes, largest);
    bool cpu_shares = ctx->role[DB_ROLE_CPU]->info.host_unified;
    for (int i = 0; i < checks.n && i < 5; i++)
        CHECK(!strcmp(checks.at[i].when, when[i]) && checks.at[i].copy_gbs > 0 &&
                  (checks.at[i].fill_gbs[DB_ROLE_CPU] > 0) == cpu_shares,
              "checkpoint %d: '%s', copies %g GB/s, the cpu role's kernel %g GB/s (want '%s', > 0, %s)", i,
              checks.at[i].when, checks.at[i].copy_gbs, checks.at[i].fill_gbs[DB_ROLE_CPU], when[i],
              cpu_shares ? "> 0" : "0");
    /* The stolen share: none at the first checkpoint, a percentage at the others where /proc/stat tells it. */
    db_cpu_ticks ticks;
    bool known = db_cpu_ticks_now(&ticks);
    CHECK(checks.at[0].stolen_pct == -1, "stolen %g%% at the first checkpoint, not -1", checks.at[0].stolen_pct);
    for (int i = 1; i < checks.n && i < 5; i++)
        CHECK(known ? checks.at[i].stolen_pct >= 0 && checks.at[i].stolen_pct <= 100 : checks.at[i].stolen_pct == -1,
              "checkpoint %d: stolen %g%% (want %s)", i, checks.at[i].stolen_pct, known ? "0 to 100" : "-1");
    /* The staging row: each copy size's median over the rounds of the checkpoints before the rows were
    ** fitted (the start and after each algorithm, not the end), and the largest round's copy is the
    ** checkpoint's speed. */
    db_cost_sample staged[DB_CALIBRATE_MAX_SIZES];
    for (int s = 0; s < o.n_transfer_sizes; s++) {
        double x[4];
        for (int i = 0; i < 4; i++)
            x[i] = checks.at[i].staging_ms[s];
        for (int i = 1; i < 4; i++) /* insertion sort of the four rounds */
            for (int j = i; j > 0 && x[j - 1] > x[j]; j--) {
                double t = x[j];
                x[j] = x[j - 1];
                x[j - 1] = t;
            }
        staged[s] = (db_cost_sample){.size = (double)o.transfer_bytes[s], .ms = (x[1] + x[2]) / 2};
        for (int i = 0; i < checks.n && i < 5; i++)
            CHECK(checks.at[i].staging_ms[s] > 0, "checkpoint %d: staging copy of %zu bytes took %g ms", i,
                  o.transfer_bytes[s], checks.at[i].staging_ms[s]);
    }
    for (int i = 0; i < checks.n && i < 5; i++) {
        double gbs = (double)largest / (checks.at[i].staging_ms[o.n_transfer_sizes - 1] * 1e6);
        CHECK(fabs(checks.at[i].copy_gbs - gbs) <= 1e-9 * gbs, "checkpoint %d: copies %g GB/s, its largest "
              "staging copy %g", i, checks.at[i].copy_gbs, gbs);
    }
    db_transfer_model want;
    CHECK(db_transfer_fit(staged, o.n_transfer_sizes, &want) == DB_OK, "fit: %s", db_error_message());
    CHECK(out.has_staging && fabs(out.staging.latency_ms - want.latency_ms) <= 1e-9 * (1 + fabs(want.latency_ms)) &&
              fabs(out.staging.bandwidth_gbs - want.bandwidth_gbs) <= 1e-9 * want.bandwidth_gbs,
          "staging row %g ms + %g GB/s, the rounds' medians give %g ms + %g GB/s", out.staging.latency_ms,
          out.staging.bandwidth_gbs, want.latency_ms, want.bandwidth_gbs);
    int shared = 0, own = 0;
    for (int i = 0; i < out.n_stages; i++) {
        const db_calib_stage *a = &out.stages[i];
        if (strcmp(a->algo, "niblack"))
            continue;
        for (int j = 0; j < out.n_stages; j++) {
            const db_calib_stage *b = &out.stages[j];
            if (strcmp(b->algo, "nick") || strcmp(a->stage, b->stage) || a->role != b->role ||
                a->channels != b->channels || strcmp(a->device, b->device))
                continue;
            bool same = a->model.a == b->model.a && a->model.b == b->model.b &&
                        a->model.spread == b->model.spread && a->model.sizes == b->model.sizes;
            if (!strcmp(a->stage, "gray") || !strcmp(a->stage, "stats") || !strcmp(a->stage, DB_CALIB_HOST_STAGE)) {
                shared++;
                CHECK(same, "%s on %s (%d channels): niblack a %g b %g, nick a %g b %g", a->stage,
                      db_role_name(a->role), a->channels, a->model.a, a->model.b, b->model.a, b->model.b);
            } else {
                own++;
            }
        }
    }
    /* gray on RGB and gray pages, stats and the host's share (Niblack and NICK are one host group), on
    ** each bound role; each algorithm's threshold. */
    CHECK(shared >= 5 && own >= 2, "%d shared and %d own rows compared", shared, own);
    /* Wolf's threshold reduces the page first: its host's share is its own. */
    int wolf_host = 0;
    for (int i = 0; i < out.n_stages; i++) {
        const db_calib_stage *a = &out.stages[i];
        if (strcmp(a->algo, "wolf") || strcmp(a->stage, DB_CALIB_HOST_STAGE))
            continue;
        for (int j = 0; j < out.n_stages; j++) {
            const db_calib_stage *b = &out.stages[j];
            if (!strcmp(b->algo, "niblack") && !strcmp(b->stage, DB_CALIB_HOST_STAGE) && a->role == b->role &&
                a->channels == b->channels && !strcmp(a->device, b->device)) {
                wolf_host++;
                CHECK(a->model.a != b->model.a || a->model.b != b->model.b,
                      "wolf's host row on %s (%d channels) is niblack's: a %g b %g", db_role_name(a->role),
                      a->channels, a->model.a, a->model.b);
            }
        }
    }
    CHECK(wolf_host >= 2, "%d of wolf's host rows compared", wolf_host);
    db_calib_free(&out);
    db_context_close(ctx);
}

/* HBK's k-means, whose passes follow content the sample pages barely vary, is
** calibrated on varied pages too: on the CPU its samples are counted at their
** work, so its row sees more sizes than the pages have, while the label stage,
** whose cost follows the size alone, is fitted to the sample pages as before.
** Its GPU row weighs its fixed cost per pass (per_unit) and was fitted at the
** median work of all six pages. The progress count covers the varied runs. */
static void test_calibrate_varied(void)
{
    db_context *ctx = test_open_context();
    const db_algo *hbk = db_algo_find("hbk");
    struct progress_seen seen = {0};
    db_calib out;
    calibrate_small(ctx, &hbk, 1, &seen, &out);
    const int n_sizes = 3; /* small_calibration's */
    int kmeans = 0, label = 0;
    for (int i = 0; i < out.n_stages; i++) {
        const db_calib_stage *e = &out.stages[i];
        if (strcmp(e->algo, "hbk") || e->role != DB_ROLE_CPU)
            continue;
        if (!strcmp(e->stage, "kmeans")) {
            kmeans++;
            CHECK(e->model.sizes > n_sizes && e->model.work > 0,
                  "kmeans on %d channels: %d sizes at work %g (the varied pages' samples, at their work, missing)",
                  e->channels, e->model.sizes, e->model.work);
        } else if (!strcmp(e->stage, "label")) {
            label++;
            CHECK(e->model.sizes == n_sizes, "label: %d sizes, not the plain pages' %d", e->model.sizes,
                  n_sizes);
        }
    }
    CHECK(kmeans == 2 && label == 2, "%d kmeans and %d label rows on the cpu role, not 2 each (RGB and gray)", kmeans,
          label);
    CHECK(!seen.bad && seen.calls > 0 && seen.last_step == seen.steps,
          "progress: %d calls, last step %d of %d%s", seen.calls, seen.last_step, seen.steps,
          seen.bad ? ", out of order" : "");
    db_calib_free(&out);
    db_context_close(ctx);
}

int main(void)
{
    test_latency_best();
    test_throughput_differs();
    test_overlap();
    test_copies();
    test_crossings();
    test_ties();
    test_no_gpu_impl();
    test_unknown();
    test_from_calib();
    test_host_channels();
    test_work();
    test_work_by_role();
    test_after_others();
    test_calibrate_options();
    test_calibrate_written();
    test_calibrate_pooled();
    test_calibrate_varied();
    return test_result("plan");
}
