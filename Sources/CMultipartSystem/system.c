#define _GNU_SOURCE
#include "CMultipartSystem.h"
#include <string.h>
#include <errno.h>
#include <pthread.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/uio.h>
#include <sys/random.h>
#elif defined(__APPLE__)
#include <stdlib.h>
#endif

const void *cmultipart_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    return memmem(haystack, haystack_length, needle, needle_length);
}

long cmultipart_pread_cached(int descriptor, void *buffer, size_t count, int64_t offset) {
#if defined(__linux__) && defined(RWF_NOWAIT)
    struct iovec vector = { .iov_base = buffer, .iov_len = count };
    ssize_t result;
    do {
        result = preadv2(descriptor, &vector, 1, (off_t)offset, RWF_NOWAIT);
    } while (result < 0 && errno == EINTR);
    /* Kernels or file systems without RWF_NOWAIT answer EOPNOTSUPP, kernels without preadv2
       ENOSYS, a seccomp filter that forbids it EPERM: read elsewhere, as for bytes not cached. */
    if (result < 0 && (errno == EOPNOTSUPP || errno == ENOSYS || errno == EPERM)) errno = EAGAIN;
    return (long)result;
#else
    (void)descriptor; (void)buffer; (void)count; (void)offset;
    errno = EAGAIN;
    return -1;
#endif
}

int cmultipart_random_bytes(void *buffer, size_t count) {
#if defined(__APPLE__)
    arc4random_buf(buffer, count);
    return 0;
#elif defined(__linux__)
    size_t filled = 0;
    while (filled < count) {
        ssize_t result = getrandom((char *)buffer + filled, count - filled, 0);
        if (result > 0) {
            filled += (size_t)result;
        } else if (errno != EINTR) {
            return -1;
        }
    }
    return 0;
#else
    (void)buffer; (void)count;
    return -1;
#endif
}

void cmultipart_name_thread(const char *name) {
#if defined(__APPLE__)
    pthread_setname_np(name);
#elif defined(__linux__)
    char short_name[16];
    strncpy(short_name, name, sizeof short_name - 1);
    short_name[sizeof short_name - 1] = '\0';
    pthread_setname_np(pthread_self(), short_name);
#else
    (void)name;
#endif
}

int cmultipart_fix_mmap_threshold(int bytes) {
#if defined(__GLIBC__)
    return mallopt(M_MMAP_THRESHOLD, bytes) == 1 ? 0 : -1;
#else
    (void)bytes;
    return -1;
#endif
}
