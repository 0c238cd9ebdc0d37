/*
** map.c — parsing, printing and enumerating maps.
*/
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "planner/map.h"

static int parse_role(const char *word, size_t len, db_role *role)
{
    if (len == 3 && !strncasecmp(word, "cpu", 3)) {
        *role = DB_ROLE_CPU;
        return 1;
    }
    if (len == 3 && !strncasecmp(word, "gpu", 3)) {
        *role = DB_ROLE_GPU;
        return 1;
    }
    return 0;
}

static void stage_names(const db_algo *algo, char *buf, size_t size)
{
    buf[0] = '\0';
    for (int s = 0; s < algo->n_stages; s++) {
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", s ? "," : "", algo->stages[s].name);
    }
}

db_status db_map_parse(const db_algo *algo, const char *text, db_map *map)
{
    char names[256];
    stage_names(algo, names, sizeof names);
    *map = (db_map){.n = algo->n_stages};
    db_role role;
    if (!strcasecmp(text, "auto") || !strcasecmp(text, "measure"))
        return db_fail(DB_ERR_USAGE, "map '%s' is a way of choosing a map (planner/plan.h), not a map; "
                       "give a map such as 'gpu' or one role per stage (%s)", text, names);
    if (parse_role(text, strlen(text), &role)) {
        for (int s = 0; s < map->n; s++)
            map->role[s] = role;
        return DB_OK;
    }
    int named = strchr(text, '=') != NULL;
    for (int s = 0; s < map->n; s++)
        map->role[s] = DB_MAP_DEFAULT_ROLE;
    int seen[DB_MAX_STAGES] = {0};
    int count = 0;
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (named) {
            const char *eq = memchr(p, '=', len);
            if (!eq)
                return db_fail(DB_ERR_USAGE, "map '%s': '%.*s' is not stage=role; %s's stages are %s", text,
                               (int)len, p, algo->name, names);
            size_t nlen = (size_t)(eq - p);
            int stage = -1;
            for (int s = 0; s < algo->n_stages; s++)
                if (strlen(algo->stages[s].name) == nlen && !strncmp(algo->stages[s].name, p, nlen))
                    stage = s;
            if (stage < 0)
                return db_fail(DB_ERR_USAGE, "map '%s': %s has no stage '%.*s'; its stages are %s", text,
                               algo->name, (int)nlen, p, names);
            if (!parse_role(eq + 1, len - nlen - 1, &role))
                return db_fail(DB_ERR_USAGE, "map '%s': '%.*s' is not a role; use cpu or gpu", text,
                               (int)(len - nlen - 1), eq + 1);
            if (seen[stage]++)
                return db_fail(DB_ERR_USAGE, "map '%s': stage %s is named twice", text, algo->stages[stage].name);
            map->role[stage] = role;
        } else {
            if (!parse_role(p, len, &role))
                return db_fail(DB_ERR_USAGE, "map '%s': '%.*s' is not a role; use cpu or gpu for each of "
                               "%s's stages (%s), or stage=role", text, (int)len, p, algo->name, names);
            if (count < DB_MAX_STAGES)
                map->role[count] = role;
            count++;
        }
        if (!end)
            break;
        p = end + 1;
    }
    if (!named && count != algo->n_stages)
        return db_fail(DB_ERR_USAGE, "map '%s' has %d roles but %s has %d stages (%s); give one role per "
                       "stage, or a single cpu or gpu for all", text, count, algo->name, algo->n_stages, names);
    return DB_OK;
}

void db_map_format(const db_map *map, char *buf, size_t size)
{
    if (size == 0)
        return;
    buf[0] = '\0';
    for (int s = 0; s < map->n; s++) {
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", s ? "," : "", db_role_name(map->role[s]));
    }
}

int db_map_count(const db_algo *algo)
{
    return 1 << algo->n_stages;
}

void db_map_nth(const db_algo *algo, int i, db_map *map)
{
    *map = (db_map){.n = algo->n_stages};
    for (int s = 0; s < map->n; s++)
        map->role[s] = (i >> (map->n - 1 - s)) & 1 ? DB_ROLE_GPU : DB_ROLE_CPU;
}

void db_map_default(const db_algo *algo, bool gpu_bound, db_map *map)
{
    *map = (db_map){.n = algo->n_stages};
    for (int s = 0; s < map->n; s++)
        map->role[s] = gpu_bound && algo->stages[s].impl[DB_ROLE_GPU] ? DB_ROLE_GPU : DB_ROLE_CPU;
}
