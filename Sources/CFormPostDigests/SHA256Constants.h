#ifndef CFORMPOST_SHA256_CONSTANTS_H
#define CFORMPOST_SHA256_CONSTANTS_H

#include <stddef.h>
#include <stdint.h>

/// The 64 round constants of SHA-256 (FIPS 180-4, 4.2.2).
extern const uint32_t cformpost_sha256_round_constants[64];

/// SHA-256 with x86-64 SHA extensions; defined only on x86-64.
void cformpost_sha256_blocks_intel(uint32_t *state, const uint8_t *data, size_t blocks);
/// 1 when the processor has SHA extensions, SSSE3 and SSE4.1; 0 elsewhere.
int cformpost_sha256_intel_available(void);

#endif
