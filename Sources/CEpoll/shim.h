// Linux epoll, which the Glibc Swift module does not export. Imported only by HearthBenchmarks (the
// realtime load generator's worker processes). `struct epoll_event` is packed on x86-64, so Swift code
// never touches it: these helpers take and give plain fd/event numbers.
#include <sys/epoll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

static inline int cepoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static inline int cepoll_control(int epoll, int operation, int fd, unsigned int events) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = (unsigned long long)fd;
    return epoll_ctl(epoll, operation, fd, &event);
}

static inline int cepoll_add(int epoll, int fd, unsigned int events) {
    return cepoll_control(epoll, EPOLL_CTL_ADD, fd, events);
}

static inline int cepoll_modify(int epoll, int fd, unsigned int events) {
    return cepoll_control(epoll, EPOLL_CTL_MOD, fd, events);
}

static inline int cepoll_remove(int epoll, int fd) {
    return epoll_ctl(epoll, EPOLL_CTL_DEL, fd, 0);
}

/// Waits for up to `capacity` events; writes each ready fd and its event bits; returns the count (or -1).
static inline int cepoll_wait(int epoll, int *fds, unsigned int *events, int capacity, int timeoutMilliseconds) {
    struct epoll_event ready[1024];
    if (capacity > 1024) capacity = 1024;
    int count = epoll_wait(epoll, ready, capacity, timeoutMilliseconds);
    for (int index = 0; index < count; index++) {
        fds[index] = (int)ready[index].data.u64;
        events[index] = ready[index].events;
    }
    return count;
}

static const unsigned int CEPOLL_IN = EPOLLIN;
static const unsigned int CEPOLL_OUT = EPOLLOUT;
static const unsigned int CEPOLL_ERR = EPOLLERR;
static const unsigned int CEPOLL_HUP = EPOLLHUP;
#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif
static const int CEPOLL_IP_BIND_ADDRESS_NO_PORT = IP_BIND_ADDRESS_NO_PORT;
