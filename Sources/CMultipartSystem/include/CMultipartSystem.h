#ifndef CMULTIPART_SYSTEM_H
#define CMULTIPART_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

/// memmem(3): the first occurrence of `needle` in `haystack`, or NULL.
const void *_Nullable cmultipart_memmem(const void *_Nonnull haystack, size_t haystack_length,
                                        const void *_Nonnull needle, size_t needle_length);

#endif
