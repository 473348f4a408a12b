// glibc's malloc statistics (mallinfo2, malloc_trim), which the Glibc module does not export.
// Imported by HearthBenchmarks, to count the heap bytes a tree holds, and by HearthCLI, for /metrics.
#include <malloc.h>
