/*
** dbs_search.c — the fixed-point model of the eye and the sequential (raster)
** DBS search on the host: the quality reference for the parallel block search
** of cl/dbs.cl, and the `order=raster` search of the `search` stage.
** Formulas: docs/dbs.md §2 and §3.
*/
#include <math.h>
#include <stdlib.h>
#include "algorithms/dbs.h"

/* round(2^20 v) for sigma = 1.2 by (|dy|, |dx|), docs/dbs.md §2. */
static const int32_t shipped_v[DB_DBS_W + 1][DB_DBS_W + 1] = {
    {115920, 81915, 28905, 5093, 448},
    {81915, 57885, 20426, 3599, 317},
    {28905, 20426, 7207, 1270, 112},
    {5093, 3599, 1270, 224, 20},
    {448, 317, 112, 20, 2},
};

void db_dbs_model_make(double sigma, db_dbs_model *m)
{
    if (sigma == 1.2) {
        for (int dy = -DB_DBS_W; dy <= DB_DBS_W; dy++)
            for (int dx = -DB_DBS_W; dx <= DB_DBS_W; dx++)
                m->v[(dy + DB_DBS_W) * DB_DBS_TAPS + dx + DB_DBS_W] = shipped_v[abs(dy)][abs(dx)];
    } else {
        double g[DB_DBS_TAPS * DB_DBS_TAPS], sum = 0.0;
        for (int dy = -DB_DBS_W; dy <= DB_DBS_W; dy++)
            for (int dx = -DB_DBS_W; dx <= DB_DBS_W; dx++) {
                double e = exp(-(double)(dx * dx + dy * dy) / (2.0 * sigma * sigma));
                g[(dy + DB_DBS_W) * DB_DBS_TAPS + dx + DB_DBS_W] = e;
                sum += e;
            }
        for (int i = 0; i < DB_DBS_TAPS * DB_DBS_TAPS; i++)
            m->v[i] = (int32_t)llround(1048576.0 * (g[i] / sum));
    }
    m->sv = 0;
    for (int i = 0; i < DB_DBS_TAPS * DB_DBS_TAPS; i++)
        m->sv += m->v[i];
    for (int dy = -DB_DBS_CW; dy <= DB_DBS_CW; dy++)
        for (int dx = -DB_DBS_CW; dx <= DB_DBS_CW; dx++) {
            int64_t s = 0;
            for (int y = -DB_DBS_W; y <= DB_DBS_W; y++)
                for (int x = -DB_DBS_W; x <= DB_DBS_W; x++) {
                    int y2 = y + dy, x2 = x + dx;
                    if (y2 < -DB_DBS_W || y2 > DB_DBS_W || x2 < -DB_DBS_W || x2 > DB_DBS_W)
                        continue;
                    s += (int64_t)m->v[(y + DB_DBS_W) * DB_DBS_TAPS + x + DB_DBS_W] *
                         m->v[(y2 + DB_DBS_W) * DB_DBS_TAPS + x2 + DB_DBS_W];
                }
            m->cvv[(dy + DB_DBS_CW) * DB_DBS_CTAPS + dx + DB_DBS_CW] = s;
        }
}

db_status db_dbs_error_init(const db_dbs_model *m, const uint8_t *gray, const uint8_t *state, int width,
                            int height, int64_t *c)
{
    /* e over the image grown by w on every side, where V*b still reaches. */
    const int r = DB_DBS_W, ew = width + 2 * r, eh = height + 2 * r;
    int64_t *e = malloc(sizeof *e * (size_t)ew * (size_t)eh);
    if (!e)
        return db_fail(DB_ERR_NOMEM, "out of memory for the DBS error of a %dx%d image", width, height);
    for (int y = -r; y < height + r; y++)
        for (int x = -r; x < width + r; x++) {
            int64_t vb = 0;
            for (int dy = -r; dy <= r; dy++)
                for (int dx = -r; dx <= r; dx++) {
                    int yy = y + dy, xx = x + dx;
                    if (yy >= 0 && yy < height && xx >= 0 && xx < width &&
                        (state[(size_t)yy * width + xx] & DB_DBS_WHITE))
                        vb += m->v[(dy + r) * DB_DBS_TAPS + dx + r];
                }
            int64_t a = (y >= 0 && y < height && x >= 0 && x < width) ? gray[(size_t)y * width + x] : 0;
            e[(size_t)(y + r) * ew + (x + r)] = m->sv * a - 255 * vb;
        }
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            int64_t s = 0;
            for (int dy = -r; dy <= r; dy++)
                for (int dx = -r; dx <= r; dx++)
                    s += m->v[(dy + r) * DB_DBS_TAPS + dx + r] * e[(size_t)(y + dy + r) * ew + (x + dx + r)];
            c[(size_t)y * width + x] = s;
        }
    free(e);
    return DB_OK;
}

const int db_dbs_partner_dy[8] = {-1, -1, -1, 0, 0, 1, 1, 1};
const int db_dbs_partner_dx[8] = {-1, 0, 1, -1, 1, -1, 0, 1};

static int64_t cvv_at(const db_dbs_model *m, int dy, int dx)
{
    return m->cvv[(dy + DB_DBS_CW) * DB_DBS_CTAPS + dx + DB_DBS_CW];
}

/* C(y) -= 255 a CVV(y - p) over the image pixels within CW of p. */
static void update(db_dbs_search *s, int px, int py, int64_t a)
{
    int y0 = py - DB_DBS_CW < 0 ? 0 : py - DB_DBS_CW;
    int y1 = py + DB_DBS_CW >= s->height ? s->height - 1 : py + DB_DBS_CW;
    int x0 = px - DB_DBS_CW < 0 ? 0 : px - DB_DBS_CW;
    int x1 = px + DB_DBS_CW >= s->width ? s->width - 1 : px + DB_DBS_CW;
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++)
            s->c[(size_t)y * s->width + x] -= 255 * a * cvv_at(s->model, y - py, x - px);
}

db_dbs_change db_dbs_visit(db_dbs_search *s, int x, int y, int *qx, int *qy)
{
    size_t p = (size_t)y * s->width + x;
    uint8_t sp = s->state[p];
    if (sp & DB_DBS_FROZEN)
        return DB_DBS_NONE;
    const int64_t a0 = (sp & DB_DBS_WHITE) ? -1 : 1, c0 = cvv_at(s->model, 0, 0), cp = s->c[p];
    int64_t best = 255 * c0 - 2 * a0 * cp;
    int best_j = -1;
    for (int j = 0; j < 8; j++) {
        int yy = y + db_dbs_partner_dy[j], xx = x + db_dbs_partner_dx[j];
        if (yy < 0 || yy >= s->height || xx < 0 || xx >= s->width)
            continue;
        uint8_t sq = s->state[(size_t)yy * s->width + xx];
        if ((sq & DB_DBS_FROZEN) || (sq & DB_DBS_WHITE) == (sp & DB_DBS_WHITE))
            continue;
        int64_t cq = s->c[(size_t)yy * s->width + xx];
        int64_t d = 255 * (2 * c0 - 2 * cvv_at(s->model, db_dbs_partner_dy[j], db_dbs_partner_dx[j])) -
                    2 * (a0 * cp - a0 * cq);
        if (d < best) {
            best = d;
            best_j = j;
        }
    }
    if (best >= 0)
        return DB_DBS_NONE;
    s->state[p] ^= DB_DBS_WHITE;
    update(s, x, y, a0);
    if (best_j < 0) {
        s->toggles++;
        return DB_DBS_TOGGLE;
    }
    *qx = x + db_dbs_partner_dx[best_j];
    *qy = y + db_dbs_partner_dy[best_j];
    s->state[(size_t)*qy * s->width + *qx] ^= DB_DBS_WHITE;
    update(s, *qx, *qy, -a0);
    s->swaps++;
    return DB_DBS_SWAP;
}

int db_dbs_raster(db_dbs_search *s, int max_passes, int *converged)
{
    *converged = 0;
    int passes = 0;
    while (passes < max_passes) {
        int64_t changes = 0;
        for (int y = 0; y < s->height; y++)
            for (int x = 0; x < s->width; x++) {
                int qx, qy;
                changes += db_dbs_visit(s, x, y, &qx, &qy) != DB_DBS_NONE;
            }
        passes++;
        if (!changes) {
            *converged = 1;
            break;
        }
    }
    return passes;
}
