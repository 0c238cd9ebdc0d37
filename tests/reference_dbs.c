#include "tests/reference_dbs.h"
