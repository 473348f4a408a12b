// An LD_PRELOAD shim for the storage fault tests (docs/reliability.md, Tests/compat/test_storage_faults.py):
// fsync, fdatasync, write and pwrite of files whose path contains $HEARTH_FAULT_PATH (or, when it ends in
// '$', ends with the rest: "ns.sqlite$" is the database file and not its -wal) fail with EIO while
// the file named by $HEARTH_FAULT_CONTROL holds the word for that call ("fsync" fails fsync and fdatasync,
// "write" fails write and pwrite; several words, one per line). The test writes and removes the control
// file while the server runs. Every other call goes through.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int control_says(const char *word) {
    const char *control = getenv("HEARTH_FAULT_CONTROL");
    if (control == NULL) return 0;
    int descriptor = open(control, O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) return 0;
    char text[256];
    ssize_t count = read(descriptor, text, sizeof text - 1);
    close(descriptor);
    if (count <= 0) return 0;
    text[count] = 0;
    return strstr(text, word) != NULL;
}

static int concerns(int descriptor) {
    const char *pattern = getenv("HEARTH_FAULT_PATH");
    if (pattern == NULL || *pattern == 0) return 0;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", descriptor);
    ssize_t length = readlink(link, path, sizeof path - 1);
    if (length <= 0) return 0;
    path[length] = 0;
    size_t patternLength = strlen(pattern);
    if (pattern[patternLength - 1] == '$') {
        size_t stem = patternLength - 1;
        return (size_t)length >= stem && strncmp(path + length - stem, pattern, stem) == 0;
    }
    return strstr(path, pattern) != NULL;
}

static int failing(int descriptor, const char *word) { return concerns(descriptor) && control_says(word); }

int fsync(int descriptor) {
    static int (*real)(int);
    if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    if (failing(descriptor, "fsync")) { errno = EIO; return -1; }
    return real(descriptor);
}

int fdatasync(int descriptor) {
    static int (*real)(int);
    if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    if (failing(descriptor, "fsync")) { errno = EIO; return -1; }
    return real(descriptor);
}

ssize_t write(int descriptor, const void *bytes, size_t count) {
    static ssize_t (*real)(int, const void *, size_t);
    if (real == NULL) real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (descriptor > 2 && failing(descriptor, "write")) { errno = EIO; return -1; }
    return real(descriptor, bytes, count);
}

ssize_t pwrite(int descriptor, const void *bytes, size_t count, off_t offset) {
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (real == NULL) real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
    if (failing(descriptor, "write")) { errno = EIO; return -1; }
    return real(descriptor, bytes, count, offset);
}

ssize_t pwrite64(int descriptor, const void *bytes, size_t count, off_t offset) {
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (real == NULL) real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
    if (failing(descriptor, "write")) { errno = EIO; return -1; }
    return real(descriptor, bytes, count, offset);
}
