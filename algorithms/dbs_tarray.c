/*
** dbs_tarray.c — the clipping-free threshold array (placeholder).
*/
#include "algorithms/dbs.h"

db_status db_dbs_tarray_make(int m, int levels, uint32_t seed, uint8_t *t)
{
    (void)seed;
    for (int i = 0; i < m * m; i++)
        t[i] = 255;
    (void)levels;
    return DB_OK;
}

const uint8_t *db_dbs_tarray_get(int m, int levels, uint32_t seed)
{
    static uint8_t t[DB_DBS_TARRAY_SIDE * DB_DBS_TARRAY_SIDE];
    db_dbs_tarray_make(m, levels, seed, t);
    return t;
}

double db_dbs_tarray_uniformity(int m, const uint8_t *t)
{
    (void)m;
    (void)t;
    return 0.0;
}
