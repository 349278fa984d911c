#define _GNU_SOURCE
#include "CMultipartSystem.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/types.h>

const void *cmultipart_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    return memmem(haystack, haystack_length, needle, needle_length);
}

int64_t cmultipart_copy_file_range(int source, int64_t *source_offset, int destination, size_t length) {
#if defined(__linux__)
    loff_t offset = (loff_t)*source_offset;
    ssize_t copied = copy_file_range(source, &offset, destination, NULL, length, 0);
    *source_offset = (int64_t)offset;
    return (int64_t)copied;
#else
    (void)source; (void)source_offset; (void)destination; (void)length;
    errno = ENOSYS;
    return -1;
#endif
}
