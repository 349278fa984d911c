#ifndef CFORMPOST_MERKLE_DAMGARD_H
#define CFORMPOST_MERKLE_DAMGARD_H

#include <stddef.h>
#include <stdint.h>

/// Compresses `blocks` 64-byte blocks of `data` into `state`.
typedef void (*cformpost_block_function)(uint32_t *state, const uint8_t *data, size_t blocks);

/// What SHA-1 and SHA-256 share: 64-byte blocks, a 64-bit big-endian bit length in the
/// padding, big-endian state words in the digest.
typedef struct {
    uint32_t *state;
    uint64_t *length;
    uint8_t *pending;
    uint32_t *pending_count;
} cformpost_md_context;

/// Feeds `count` bytes: whole blocks straight from `bytes`, the rest kept pending.
void cformpost_md_update(cformpost_md_context context, cformpost_block_function blocks, const uint8_t *bytes, size_t count);

/// Pads a copy of the pending bytes, compresses a copy of the state (`words` of them) and
/// writes it big-endian to `digest`.
void cformpost_md_final(const uint32_t *state, uint64_t length, const uint8_t *pending, uint32_t pending_count,
                        cformpost_block_function blocks, int words, uint8_t *digest);

static inline uint32_t cformpost_load_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

#endif
