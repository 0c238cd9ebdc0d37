/*
** dbs_search.c — the fixed-point model and the sequential search (placeholder).
*/
#include "algorithms/dbs.h"
