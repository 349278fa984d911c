#define _GNU_SOURCE
#include <string.h>
#include "CMemmemScan.h"

size_t memmem_scan_count(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    const char *position = haystack;
    const char *end = position + haystack_length;
    size_t count = 0;
    while ((size_t)(end - position) >= needle_length) {
        const char *found = memmem(position, (size_t)(end - position), needle, needle_length);
        if (found == NULL) break;
        count += 1;
        position = found + needle_length;
    }
    return count;
}
