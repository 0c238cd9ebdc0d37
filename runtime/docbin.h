/*
** docbin.h — every internal header of libdocbin, in one include, for the tools
** and tests that reach past the public interface (include/docbin.h, which
** programs outside docbin use, and which this includes).
**
** Typical use: db_context_open() binds the cpu and gpu roles to OpenCL devices;
** db_algo_find() names an algorithm; db_map_parse() places its stages; db_job_*
** set its parameters; db_image_read() loads a page; db_run() runs the graph;
** db_image_write() stores the result. Every call reports failure through
** db_status and db_error_message().
*/
#ifndef DB_INTERNAL_H
#define DB_INTERNAL_H

#include "include/docbin.h"
#include "runtime/error.h"
#include "runtime/image.h"
#include "runtime/device.h"
#include "runtime/stage.h"
#include "runtime/profile.h"
#include "runtime/sched.h"
#include "runtime/batch.h"
#include "runtime/batch_log.h"
#include "runtime/sample.h"
#include "planner/map.h"
#include "planner/plan.h"
#include "algorithms/algorithms.h"
#include "algorithms/metrics.h"

#endif
