#include "CFormPostDigests.h"
#include "MerkleDamgard.h"

#include <string.h>

#define ROTL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))

static void sha1_blocks(uint32_t *state, const uint8_t *data, size_t blocks) {
    uint32_t w[80];
    while (blocks--) {
        for (int i = 0; i < 16; i++) w[i] = cformpost_load_be32(data + 4 * i);
        for (int i = 16; i < 80; i++) w[i] = ROTL(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
        for (int i = 0; i < 80; i++) {
            uint32_t f, k;
            if (i < 20) { f = (b & c) | (~b & d); k = 0x5a827999; }
            else if (i < 40) { f = b ^ c ^ d; k = 0x6ed9eba1; }
            else if (i < 60) { f = (b & c) | (b & d) | (c & d); k = 0x8f1bbcdc; }
            else { f = b ^ c ^ d; k = 0xca62c1d6; }
            uint32_t t = ROTL(a, 5) + f + e + k + w[i];
            e = d; d = c; c = ROTL(b, 30); b = a; a = t;
        }
        state[0] += a; state[1] += b; state[2] += c; state[3] += d; state[4] += e;
        data += 64;
    }
}

void cformpost_sha1_init(cformpost_sha1_context *context) {
    static const uint32_t initial[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
    memset(context, 0, sizeof *context);
    memcpy(context->state, initial, sizeof initial);
}

void cformpost_sha1_update(cformpost_sha1_context *context, const void *bytes, size_t count) {
    cformpost_md_context shared = {context->state, &context->length, context->pending, &context->pending_count};
    cformpost_md_update(shared, sha1_blocks, bytes, count);
}

void cformpost_sha1_final(const cformpost_sha1_context *context, uint8_t *digest) {
    cformpost_md_final(context->state, context->length, context->pending, context->pending_count, sha1_blocks, 5, digest);
}
