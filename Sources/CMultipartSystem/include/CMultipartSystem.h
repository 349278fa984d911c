#ifndef CMULTIPART_SYSTEM_H
#define CMULTIPART_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

/// memmem(3): the first occurrence of `needle` in `haystack`, or NULL.
const void *_Nullable cmultipart_memmem(const void *_Nonnull haystack, size_t haystack_length,
                                        const void *_Nonnull needle, size_t needle_length);

/// copy_file_range(2) from `source` at `*source_offset` to `destination`'s position.
/// Returns -1 with errno ENOSYS where the system has no such call.
int64_t cmultipart_copy_file_range(int source, int64_t *_Nonnull source_offset, int destination, size_t length);

#endif
