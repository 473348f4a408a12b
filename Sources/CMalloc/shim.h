// glibc's malloc statistics (mallinfo2, malloc_trim), which the Glibc module does not export.
// Imported by HearthCLI alone (ProcessHeap: /metrics, and hearth-bench counting a tree's heap bytes).
#include <malloc.h>
