// glibc's malloc statistics (mallinfo2, malloc_trim), which the Glibc module does not export.
// Imported only by HearthBenchmarks, to count the heap bytes a tree holds.
#include <malloc.h>
