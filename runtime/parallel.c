/*
** parallel.c — one pool of worker threads for the process's host code.
**
** Threads made for each call start on the core of the thread that made them
** and wait there until the scheduler moves them: with two bands on two
** cores, a call often took as long as both bands one after the other.
** Workers that live on are woken where they last ran, each on its own core.
*/
#include <pthread.h>
#include <stdint.h>
#include "runtime/parallel.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t call_lock = PTHREAD_MUTEX_INITIALIZER; /* one call at a time */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;      /* the pool below */
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;

static struct {
    int workers;                 /* started */
    unsigned long job;           /* the current call's number */
    void (*fn)(void *arg, int i);
    void *arg;
    int n, next, finished;       /* the call's items: how many, the next to take, those done */
} pool;

/* Takes the call's items until none is left (lock held, released while an item runs). */
static void take_items(void)
{
    while (pool.next < pool.n) {
        int i = pool.next++;
        void (*fn)(void *, int) = pool.fn;
        void *arg = pool.arg;
        pthread_mutex_unlock(&lock);
        fn(arg, i);
        pthread_mutex_lock(&lock);
        if (++pool.finished == pool.n)
            pthread_cond_signal(&done);
    }
}

/* `job`: the number of the call before the one that started the worker, which it joins. */
static void *worker(void *job)
{
    pthread_mutex_lock(&lock);
    unsigned long seen = (unsigned long)(uintptr_t)job;
    for (;;) {
        while (pool.job == seen)
            pthread_cond_wait(&wake, &lock);
        seen = pool.job;
        take_items();
    }
    return NULL;
}

/* A child of fork has none of the parent's workers, and its locks start free. */
static void after_fork(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t fresh_cv = PTHREAD_COND_INITIALIZER;
    call_lock = lock = fresh;
    wake = done = fresh_cv;
    pool.workers = 0;
    pool.n = pool.next = pool.finished = 0;
}

static void register_fork(void)
{
    pthread_atfork(NULL, NULL, after_fork);
}

void db_parallel(int n, void (*fn)(void *arg, int i), void *arg)
{
    if (n <= 1) {
        if (n == 1)
            fn(arg, 0);
        return;
    }
    pthread_once(&once, register_fork);
    pthread_mutex_lock(&call_lock);
    pthread_mutex_lock(&lock);
    /* Workers that cannot start are not needed: the caller takes what they would have. */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, (size_t)1 << 20);
    while (pool.workers < n - 1 && pool.workers < DB_PARALLEL_MAX - 1) {
        pthread_t t;
        if (pthread_create(&t, &attr, worker, (void *)(uintptr_t)pool.job) != 0)
            break;
        pool.workers++;
    }
    pthread_attr_destroy(&attr);
    pool.fn = fn;
    pool.arg = arg;
    pool.n = n;
    pool.next = pool.finished = 0;
    pool.job++;
    pthread_cond_broadcast(&wake);
    take_items();
    while (pool.finished < pool.n)
        pthread_cond_wait(&done, &lock);
    pthread_mutex_unlock(&lock);
    pthread_mutex_unlock(&call_lock);
}
