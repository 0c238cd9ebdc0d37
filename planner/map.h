/*
** map.h — the text form of maps: parse, print and enumerate.
**
** One syntax everywhere (the CLI's --map, DOCBIN_MAP, planner output):
**   positional   gpu,cpu,gpu      one role per stage, in stage order
**   named        stats=cpu        the named stages get those roles, the others the default
**   uniform      cpu | gpu        every stage on one role
**   auto | measure                the planner chooses (planner/plan.h);
**                                 db_map_parse takes only explicit maps,
**                                 callers test db_plan_mode_of first
*/
#ifndef DB_MAP_H
#define DB_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include "runtime/stage.h"

/* The role of the stages a named map does not name. */
#define DB_MAP_DEFAULT_ROLE DB_ROLE_GPU

/* The planner's estimate: gpu where the stage has a gpu implementation and
** `gpu_bound`, else cpu. */
void db_map_default(const db_algo *algo, bool gpu_bound, db_map *map);

/* Maps come out of the calls below with the roles past n zeroed, so that two
** equal maps compare equal with memcmp. */

/* Parses `text` for `algo`. Errors name the bad part and list the stage names. */
db_status db_map_parse(const db_algo *algo, const char *text, db_map *map);

/* Writes the positional form ("gpu,cpu,gpu") into buf. */
void db_map_format(const db_map *map, char *buf, size_t size);

/* The number of maps of `algo`: 2^stages. */
int db_map_count(const db_algo *algo);

/* The i-th map of `algo` (0 <= i < db_map_count): stage s gets gpu iff bit
** (n-1-s) of i is set, so maps come in the order cpu,cpu,cpu ... gpu,gpu,gpu. */
void db_map_nth(const db_algo *algo, int i, db_map *map);

#endif
