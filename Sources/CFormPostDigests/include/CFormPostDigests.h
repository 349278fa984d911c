#ifndef CFORMPOST_DIGESTS_H
#define CFORMPOST_DIGESTS_H

#include <stddef.h>
#include <stdint.h>

/// The running state of a SHA-256 (FIPS 180-4): plain data, so a copy is an independent
/// hash of the same bytes.
typedef struct {
    uint32_t state[8];
    uint64_t length;       // bytes hashed so far
    uint8_t pending[64];   // the bytes of a block not yet complete
    uint32_t pending_count;
} cformpost_sha256_context;

/// The running state of a SHA-1 (FIPS 180-4), for the tus checksum extension only.
typedef struct {
    uint32_t state[5];
    uint64_t length;
    uint8_t pending[64];
    uint32_t pending_count;
} cformpost_sha1_context;

/// Starts `context` over.
void cformpost_sha256_init(cformpost_sha256_context *_Nonnull context);
/// Hashes `count` more bytes.
void cformpost_sha256_update(cformpost_sha256_context *_Nonnull context, const void *_Nullable bytes, size_t count);
/// Writes the 32-byte digest to `digest`; `context` is left as it was.
void cformpost_sha256_final(const cformpost_sha256_context *_Nonnull context, uint8_t *_Nonnull digest);

/// Starts `context` over.
void cformpost_sha1_init(cformpost_sha1_context *_Nonnull context);
/// Hashes `count` more bytes.
void cformpost_sha1_update(cformpost_sha1_context *_Nonnull context, const void *_Nullable bytes, size_t count);
/// Writes the 20-byte digest to `digest`; `context` is left as it was.
void cformpost_sha1_final(const cformpost_sha1_context *_Nonnull context, uint8_t *_Nonnull digest);

/// Which SHA-256 block function `cformpost_sha256_update` uses.
typedef enum {
    /// Whatever the processor offers: SHA extensions on x86-64 when present, else portable.
    cformpost_sha256_automatic = 0,
    /// Plain C, on every processor.
    cformpost_sha256_portable = 1,
    /// x86-64 SHA extensions (SHA-NI); only when `cformpost_sha256_has_accelerated` is 1.
    cformpost_sha256_accelerated = 2,
} cformpost_sha256_implementation;

/// 1 when this processor has the instructions `cformpost_sha256_accelerated` needs.
int cformpost_sha256_has_accelerated(void);
/// Chooses the block function for the whole process (tests compare the two); returns 0,
/// or -1 when `implementation` is not available here.
int cformpost_sha256_select(cformpost_sha256_implementation implementation);

#endif
