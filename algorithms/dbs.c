/*
** dbs.c — clipping-free DBS halftoning on the scheduler (placeholder).
*/
#include "algorithms/dbs.h"
