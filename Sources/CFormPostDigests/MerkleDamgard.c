#include "MerkleDamgard.h"

#include <string.h>

void cformpost_md_update(cformpost_md_context context, cformpost_block_function blocks, const uint8_t *bytes, size_t count) {
    if (count == 0) return;
    *context.length += count;
    uint32_t pending = *context.pending_count;
    if (pending > 0) {
        size_t take = 64 - pending < count ? 64 - pending : count;
        memcpy(context.pending + pending, bytes, take);
        pending += (uint32_t)take;
        bytes += take;
        count -= take;
        if (pending < 64) {
            *context.pending_count = pending;
            return;
        }
        blocks(context.state, context.pending, 1);
        pending = 0;
    }
    size_t whole = count / 64;
    if (whole > 0) {
        blocks(context.state, bytes, whole);
        bytes += whole * 64;
        count -= whole * 64;
    }
    memcpy(context.pending, bytes, count);
    *context.pending_count = (uint32_t)count;
}

void cformpost_md_final(const uint32_t *state, uint64_t length, const uint8_t *pending, uint32_t pending_count,
                        cformpost_block_function blocks, int words, uint8_t *digest) {
    uint32_t final_state[8];
    memcpy(final_state, state, (size_t)words * sizeof(uint32_t));
    uint8_t tail[128] = {0};
    memcpy(tail, pending, pending_count);
    tail[pending_count] = 0x80;
    size_t tail_length = pending_count + 1 + 8 <= 64 ? 64 : 128;
    uint64_t bits = length * 8;
    for (int i = 0; i < 8; i++) tail[tail_length - 1 - i] = (uint8_t)(bits >> (8 * i));
    blocks(final_state, tail, tail_length / 64);
    for (int i = 0; i < words; i++) {
        digest[4 * i] = (uint8_t)(final_state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(final_state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(final_state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)final_state[i];
    }
}
