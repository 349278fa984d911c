#include "CFormPostDigests.h"
#include "MerkleDamgard.h"
#include "SHA256Constants.h"

#include <stdatomic.h>
#include <string.h>

const uint32_t cformpost_sha256_round_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void blocks_portable(uint32_t *state, const uint8_t *data, size_t blocks) {
    const uint32_t *k = cformpost_sha256_round_constants;
    uint32_t w[64];
    while (blocks--) {
        for (int i = 0; i < 16; i++) w[i] = cformpost_load_be32(data + 4 * i);
        for (int i = 16; i < 64; i++) {
            uint32_t s0 = ROTR(w[i - 15], 7) ^ ROTR(w[i - 15], 18) ^ (w[i - 15] >> 3);
            uint32_t s1 = ROTR(w[i - 2], 17) ^ ROTR(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
        uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
        for (int i = 0; i < 64; i++) {
            uint32_t t1 = h + (ROTR(e, 6) ^ ROTR(e, 11) ^ ROTR(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
            uint32_t t2 = (ROTR(a, 2) ^ ROTR(a, 13) ^ ROTR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
        }
        state[0] += a; state[1] += b; state[2] += c; state[3] += d;
        state[4] += e; state[5] += f; state[6] += g; state[7] += h;
        data += 64;
    }
}

/// The block function every context uses; chosen on first use.
static _Atomic(cformpost_block_function) selected = NULL;

static cformpost_block_function automatic_choice(void) {
#if defined(__x86_64__)
    if (cformpost_sha256_intel_available()) return cformpost_sha256_blocks_intel;
#endif
    return blocks_portable;
}

static cformpost_block_function block_function(void) {
    cformpost_block_function function = atomic_load_explicit(&selected, memory_order_relaxed);
    if (function == NULL) {
        function = automatic_choice();
        atomic_store_explicit(&selected, function, memory_order_relaxed);
    }
    return function;
}

int cformpost_sha256_has_accelerated(void) {
#if defined(__x86_64__)
    return cformpost_sha256_intel_available();
#else
    return 0;
#endif
}

int cformpost_sha256_select(cformpost_sha256_implementation implementation) {
    switch (implementation) {
    case cformpost_sha256_automatic:
        atomic_store_explicit(&selected, automatic_choice(), memory_order_relaxed);
        return 0;
    case cformpost_sha256_portable:
        atomic_store_explicit(&selected, blocks_portable, memory_order_relaxed);
        return 0;
    case cformpost_sha256_accelerated:
#if defined(__x86_64__)
        if (cformpost_sha256_intel_available()) {
            atomic_store_explicit(&selected, cformpost_sha256_blocks_intel, memory_order_relaxed);
            return 0;
        }
#endif
        return -1;
    }
    return -1;
}

void cformpost_sha256_init(cformpost_sha256_context *context) {
    static const uint32_t initial[8] = {
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    };
    memset(context, 0, sizeof *context);
    memcpy(context->state, initial, sizeof initial);
}

void cformpost_sha256_update(cformpost_sha256_context *context, const void *bytes, size_t count) {
    cformpost_md_context shared = {context->state, &context->length, context->pending, &context->pending_count};
    cformpost_md_update(shared, block_function(), bytes, count);
}

void cformpost_sha256_final(const cformpost_sha256_context *context, uint8_t *digest) {
    cformpost_md_final(context->state, context->length, context->pending, context->pending_count, block_function(), 8, digest);
}
