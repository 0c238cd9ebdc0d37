#include "tests/testutil.h"
int main(void) { fprintf(stderr, "SKIP: not written yet\n"); return 77; }
