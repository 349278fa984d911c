#ifndef CMEMMEM_SCAN_H
#define CMEMMEM_SCAN_H

#include <stddef.h>

/// The reference for `formpost-bench parse`: how many times `needle` occurs in `haystack`,
/// found with the C library's memmem(3), searching on after each occurrence. It is the
/// least work a parser must do on a chunk: find its delimiters.
size_t memmem_scan_count(const void *_Nonnull haystack, size_t haystack_length,
                         const void *_Nonnull needle, size_t needle_length);

#endif
