/*
** test_conformance.c — the Doxa conformance vectors (docs/testing.md, "The reference
** data"): every map and every stats variant reproduces the stored outputs with 0
** differing pixels. The data comes from the data directory the build is
** configured with (meson option data_dir; README.md, "Tests").
*/
#include <string.h>
#include <sys/stat.h>
#include "tests/testutil.h"

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "../shared/data/doxa-page";
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        printf("SKIP: %s not found (the conformance data comes from the data directory, meson option "
               "data_dir)\n", dir);
        return 77;
    }
    static const struct {
        const char *algo, *file;
        int window;
        double k;
    } vectors[] = {
        {"sauvola", "2JohnC1V3-Sauvola.pbm", 27, 0.10}, {"niblack", "2JohnC1V3-Niblack.pbm", 223, -0.61},
        {"wolf", "2JohnC1V3-Wolf.pbm", 21, 0.18},       {"nick", "2JohnC1V3-NICK.pbm", 45, -0.10},
        {"otsu", "2JohnC1V3-Otsu.pbm", 0, 0},
    };
    db_context *ctx = test_open_context();
    char path[4096];
    snprintf(path, sizeof path, "%s/2JohnC1V3.ppm", dir);
    db_image *page = db_image_read(path);
    CHECK(page != NULL, "reading %s: %s", path, db_error_message());
    if (!page)
        return test_result("conformance");
    for (size_t v = 0; v < sizeof vectors / sizeof vectors[0]; v++) {
        snprintf(path, sizeof path, "%s/%s", dir, vectors[v].file);
        db_image *expect = db_image_read(path);
        CHECK(expect != NULL, "reading %s: %s", path, db_error_message());
        if (!expect)
            continue;
        const db_algo *algo = db_algo_find(vectors[v].algo);
        int n_variants = algo->n_variants ? algo->n_variants : 1;
        for (int var = 0; var < n_variants; var++)
            for (int i = 0; i < db_map_count(algo); i++) {
                /* The direct-window variants are O(w^2) per pixel: one map each is
                ** enough to prove their sums (maps are covered by test_maps). */
                if (var > 0 && i != 0 && i != db_map_count(algo) - 1)
                    continue;
                db_job job;
                db_job_defaults(algo, &job);
                job.gray = DB_GRAY_QT;
                job.variant = var;
                if (algo->n_params) {
                    job.params[0] = vectors[v].window;
                    job.params[1] = vectors[v].k;
                }
                db_map map;
                db_map_nth(algo, i, &map);
                char m[64];
                db_map_format(&map, m, sizeof m);
                db_image *out = NULL;
                db_status st = db_run(ctx, algo, &map, &job, page, &out, NULL, NULL);
                CHECK(st == DB_OK, "%s map %s: %s", algo->name, m, db_error_message());
                if (st != DB_OK)
                    continue;
                size_t d = test_diff(out->data, expect->data, (size_t)page->width * page->height);
                printf("%-8s %-14s map %-12s %zu differing pixels\n", algo->name,
                       algo->n_variants ? algo->variants[var] : "-", m, d);
                CHECK(d == 0, "%s variant %d map %s: %zu pixels differ from %s", algo->name, var, m, d,
                      vectors[v].file);
                db_image_free(out);
            }
        db_image_free(expect);
    }
    db_image_free(page);
    db_context_close(ctx);
    return test_result("conformance");
}
