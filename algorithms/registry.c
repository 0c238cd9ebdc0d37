/*
** registry.c — the list of algorithms, lookup by name, and --list-algos output.
*/
#include <string.h>
#include "algorithms/algorithms.h"

static const db_algo *const all[] = {
    &db_algo_otsu, &db_algo_niblack, &db_algo_sauvola, &db_algo_nick, &db_algo_wolf, &db_algo_hbk, &db_algo_howe,
    &db_algo_howe_auto, &db_algo_howe_predict, &db_algo_dbs,
};

#define N_ALGOS ((int)(sizeof all / sizeof all[0]))

int db_algo_count(void)
{
    return N_ALGOS;
}

const db_algo *db_algo_at(int i)
{
    return i >= 0 && i < N_ALGOS ? all[i] : NULL;
}

const db_algo *db_algo_find(const char *name)
{
    char names[256] = "";
    for (int i = 0; i < N_ALGOS; i++) {
        if (!strcmp(all[i]->name, name))
            return all[i];
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", all[i]->name);
    }
    db_fail(DB_ERR_USAGE, "unknown algorithm '%s'; the algorithms are: %s (docbin-run --list-algos)", name, names);
    return NULL;
}

static const char *role_list(const db_stage *s)
{
    if (s->impl[DB_ROLE_CPU] && s->impl[DB_ROLE_GPU])
        return "cpu,gpu";
    return s->impl[DB_ROLE_CPU] ? "cpu" : "gpu";
}

void db_algo_print(const db_algo *algo, FILE *f)
{
    fprintf(f, "%s — %s\n", algo->name, algo->doc);
    fprintf(f, "  stages (map order, %d maps):\n", 1 << algo->n_stages);
    for (int s = 0; s < algo->n_stages; s++) {
        const db_stage *st = &algo->stages[s];
        char ports[256] = "";
        for (int i = 0; i < st->in.n; i++) {
            size_t len = strlen(ports);
            snprintf(ports + len, sizeof ports - len, "%s%s", i ? "," : "", algo->items[st->in.item[i]].name);
        }
        size_t len = strlen(ports);
        snprintf(ports + len, sizeof ports - len, " -> ");
        for (int i = 0; i < st->out.n; i++) {
            len = strlen(ports);
            snprintf(ports + len, sizeof ports - len, "%s%s", i ? "," : "", algo->items[st->out.item[i]].name);
        }
        fprintf(f, "    %d. %-10s [%s]  %s\n       %s\n", s + 1, st->name, role_list(st), ports, st->doc);
    }
    if (algo->n_params) {
        fprintf(f, "  parameters (--param name=value):\n");
        for (int i = 0; i < algo->n_params; i++) {
            const db_param *p = &algo->params[i];
            if (p->names) {
                fprintf(f, "    %-10s default %-6s one of", p->name, p->names[(int)p->def]);
                for (int c = 0; c < p->n_names; c++)
                    fprintf(f, "%s%s", c ? ", " : " ", p->names[c]);
                fprintf(f, "  %s\n", p->doc);
                continue;
            }
            if (p->choices) {
                fprintf(f, "    %-10s default %-6g one of", p->name, p->def);
                for (int c = 0; c < p->n_choices; c++)
                    fprintf(f, "%s%g", c ? ", " : " ", p->choices[c]);
                fprintf(f, "  %s\n", p->doc);
                continue;
            }
            fprintf(f, "    %-10s default %-6g range [%g, %g]%s  %s\n", p->name, p->def, p->min, p->max,
                    p->kind == DB_PARAM_ODD_INT ? ", odd integer" : p->kind == DB_PARAM_INT ? ", integer" : "",
                    p->doc);
        }
    } else {
        fprintf(f, "  parameters: none\n");
    }
    for (int i = 0; i < algo->n_report_fields; i++)
        fprintf(f, "  reports: %s\n", algo->report_fields[i].name);
    if (algo->n_variants) {
        fprintf(f, "  variants of stage %s (--variant):", algo->variant_stage);
        for (int i = 0; i < algo->n_variants; i++)
            fprintf(f, " %s%s", algo->variants[i], i == 0 ? " (default)" : "");
        fputc('\n', f);
    }
}
