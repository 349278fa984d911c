#ifndef CMULTIPART_SYSTEM_H
#define CMULTIPART_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

/// memmem(3): the first occurrence of `needle` in `haystack`, or NULL.
const void *_Nullable cmultipart_memmem(const void *_Nonnull haystack, size_t haystack_length,
                                        const void *_Nonnull needle, size_t needle_length);

/// pread(2) that only copies from the page cache: on Linux, preadv2 with RWF_NOWAIT, so
/// it returns -1 with errno EAGAIN instead of waiting for the disk. Elsewhere it always
/// returns -1 with errno EAGAIN (the caller reads off its thread instead).
long cmultipart_pread_cached(int descriptor, void *_Nonnull buffer, size_t count, int64_t offset);

/// Fills `buffer` with `count` bytes of the system's cryptographic generator in one call
/// where it can (`getrandom` on Linux, `arc4random_buf` on Apple platforms): 0, or -1 when
/// the kernel offers no generator (the caller then uses another).
int cmultipart_random_bytes(void *_Nonnull buffer, size_t count);

/// Names the calling thread for debuggers and `top -H` (Linux keeps the first 15 bytes).
void cmultipart_name_thread(const char *_Nonnull name);

/// Fixes glibc's mmap threshold at `bytes` (mallopt M_MMAP_THRESHOLD), which glibc
/// otherwise raises to the size of each large block freed: blocks that large are then
/// mapped and unmapped, never kept by the heap. 0 when set; -1 where there is no glibc.
int cmultipart_fix_mmap_threshold(int bytes);

#endif
