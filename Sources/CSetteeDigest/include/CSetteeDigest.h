// The block functions of MD5 (RFC 1321), SHA-1 and SHA-256 (FIPS 180-4), and PBKDF2's
// inner loop (RFC 8018), in C: Swift's unoptimized (debug) code ran PBKDF2-HMAC-SHA-256's
// 100,000 iterations in 3.3 s where C at -O0 takes 0.16 s, and a debug build is what
// `swift run settee` and a newcomer's tests use. Padding, HMAC and PBKDF2's outer loop stay
// in Swift (SetteeCore's `MD5`, `SHA1` and `SHA256`).
#ifndef CSETTEE_DIGEST_H
#define CSETTEE_DIGEST_H

#include <stddef.h>
#include <stdint.h>

/// Digests `blocks` 64-byte blocks at `data` into MD5's four-word `state`.
void settee_md5_blocks(uint32_t *_Nonnull state, const uint8_t *_Nonnull data, size_t blocks);

/// Digests `blocks` 64-byte blocks at `data` into SHA-1's five-word `state`.
void settee_sha1_blocks(uint32_t *_Nonnull state, const uint8_t *_Nonnull data, size_t blocks);

/// Digests `blocks` 64-byte blocks at `data` into SHA-256's eight-word `state`.
void settee_sha256_blocks(uint32_t *_Nonnull state, const uint8_t *_Nonnull data,
                          size_t blocks);

/// PBKDF2's iterations 2 to `iterations` of one block with HMAC-SHA-256: `inner` and
/// `outer` are the states after the key's padded block (key XOR 0x36, key XOR 0x5c), `u`
/// holds U(1) (32 bytes) and `result` its running XOR, updated in place.
void settee_pbkdf2_sha256_iterate(const uint32_t *_Nonnull inner, const uint32_t *_Nonnull outer,
                                  uint8_t *_Nonnull u, uint8_t *_Nonnull result,
                                  uint64_t iterations);

/// The same with HMAC-SHA-1 (20-byte `u` and `result`; five-word states).
void settee_pbkdf2_sha1_iterate(const uint32_t *_Nonnull inner, const uint32_t *_Nonnull outer,
                                uint8_t *_Nonnull u, uint8_t *_Nonnull result,
                                uint64_t iterations);

#endif
