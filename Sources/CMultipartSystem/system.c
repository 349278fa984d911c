#define _GNU_SOURCE
#include "CMultipartSystem.h"
#include <string.h>

const void *cmultipart_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    return memmem(haystack, haystack_length, needle, needle_length);
}
