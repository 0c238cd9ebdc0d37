/*
** map.h — the text form of maps: parse, print and enumerate.
**
** One syntax everywhere (the CLI's --map, DOCBIN_MAP, planner output):
**   positional   gpu,cpu,gpu      one role per stage, in stage order
**   named        stats=cpu        the named stages get those roles, the others the default
**   uniform      cpu | gpu        every stage on one role
**   auto                          the planner chooses from calibrated costs
**                                 (planner/plan.h); db_map_parse takes only
**                                 explicit maps, callers test db_map_is_auto first
*/
#ifndef DB_MAP_H
#define DB_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include "runtime/stage.h"

/* The role of stages a map does not name, and of the whole map when none is given:
** the data-parallel default, every stage on the gpu role. */
#define DB_MAP_DEFAULT_ROLE DB_ROLE_GPU

/* The map every stage takes without calibration: gpu where the stage has a gpu
** implementation and `gpu_bound`, else cpu (DESIGN.md "Planner": data-parallel
** stages on the GPU). */
void db_map_default(const db_algo *algo, bool gpu_bound, db_map *map);

/* Whether `text` asks for the planner's choice ("auto", any case). */
bool db_map_is_auto(const char *text);

/* Parses `text` for `algo`. Errors name the bad part and list the stage names. */
db_status db_map_parse(const db_algo *algo, const char *text, db_map *map);

/* Writes the positional form ("gpu,cpu,gpu") into buf. */
void db_map_format(const db_map *map, char *buf, size_t size);

/* The number of maps of `algo`: 2^stages. */
int db_map_count(const db_algo *algo);

/* The i-th map of `algo` (0 <= i < db_map_count): stage s gets gpu iff bit
** (n-1-s) of i is set, so maps come in the order cpu,cpu,cpu ... gpu,gpu,gpu. */
void db_map_nth(const db_algo *algo, int i, db_map *map);

/* Sets at_crossing[s] for each stage of `algo` under `map`: whether the stage
** is on either side of a crossing (planner/calib.h): it takes an item that a
** stage on the other role wrote and its own role has no copy of yet, or a
** stage on the other role takes such an item from it. The page's input never
** crosses. A GPU stage beside a crossing runs longer than the same stage
** between stages of its own role, which calibration times: the crossing's
** calibrated cost holds that difference. */
void db_map_at_crossing(const db_algo *algo, const db_map *map, bool at_crossing[DB_MAX_STAGES]);

#endif
