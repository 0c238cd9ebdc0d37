/*
** test_parallel.c — the process's worker pool (runtime/parallel.c): every
** item of every call runs exactly once and the call returns after the last,
** with calls from several threads at once, call sizes that grow the pool
** mid-way, and a child forked while other threads use the pool.
*/
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>
#include "runtime/parallel.h"
#include "tests/testutil.h"

enum { CALLERS = 4, CALLS = 2000, MAX_N = 64 };

typedef struct call {
    atomic_int runs[MAX_N]; /* times each item ran */
    atomic_int done;        /* items finished */
} call;

static void item(void *arg, int i)
{
    call *c = arg;
    atomic_fetch_add(&c->runs[i], 1);
    atomic_fetch_add(&c->done, 1);
}

static atomic_int bad;

/* CALLS calls of 1 to MAX_N items; each is checked as soon as it returns. */
static void *caller(void *seed_arg)
{
    uint32_t seed = (uint32_t)(uintptr_t)seed_arg;
    for (int k = 0; k < CALLS; k++) {
        int n = 1 + (int)(test_random(&seed) % MAX_N);
        call c;
        memset(&c, 0, sizeof c);
        db_parallel(n, item, &c);
        int wrong = atomic_load(&c.done) != n;
        for (int i = 0; i < MAX_N; i++)
            wrong |= atomic_load(&c.runs[i]) != (i < n);
        if (wrong)
            atomic_fetch_add(&bad, 1);
    }
    return NULL;
}

int main(void)
{
    /* A call of none runs nothing; a call of one runs on the caller. */
    call c;
    memset(&c, 0, sizeof c);
    db_parallel(0, item, &c);
    CHECK(atomic_load(&c.done) == 0, "a call of 0 items ran %d", atomic_load(&c.done));
    db_parallel(1, item, &c);
    CHECK(atomic_load(&c.runs[0]) == 1 && atomic_load(&c.done) == 1, "a call of 1 item ran %d",
          atomic_load(&c.done));

    pthread_t t[CALLERS];
    for (int i = 0; i < CALLERS; i++)
        CHECK(pthread_create(&t[i], NULL, caller, (void *)(uintptr_t)(i * 7919 + 1)) == 0, "thread %d", i);
    /* A child forked while the callers run starts with a pool of its own. */
    for (int f = 0; f < 5; f++) {
        pid_t pid = fork();
        if (pid == 0) {
            call cc;
            memset(&cc, 0, sizeof cc);
            db_parallel(MAX_N, item, &cc);
            int ok = atomic_load(&cc.done) == MAX_N;
            for (int i = 0; i < MAX_N; i++)
                ok &= atomic_load(&cc.runs[i]) == 1;
            _exit(ok ? 0 : 1);
        }
        int status = 0;
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "forked child %d: status %d", f, status);
    }
    for (int i = 0; i < CALLERS; i++)
        pthread_join(t[i], NULL);
    CHECK(atomic_load(&bad) == 0, "%d of %d calls ran an item other than once or returned early",
          atomic_load(&bad), CALLERS * CALLS);
    if (test_failures)
        return 1;
    printf("%d calls from %d threads and 5 forks: every item once\n", CALLERS * CALLS, CALLERS);
    return 0;
}
