#include "CSetteeDigest.h"

#include <string.h>

static inline uint32_t settee_rotl(uint32_t value, int count) {
  return (value << count) | (value >> (32 - count));
}

static inline uint32_t settee_rotr(uint32_t value, int count) {
  return (value >> count) | (value << (32 - count));
}

static inline uint32_t settee_big_endian(const uint8_t *bytes) {
  return (uint32_t)bytes[0] << 24 | (uint32_t)bytes[1] << 16 | (uint32_t)bytes[2] << 8 |
         (uint32_t)bytes[3];
}

static inline uint32_t settee_little_endian(const uint8_t *bytes) {
  return (uint32_t)bytes[0] | (uint32_t)bytes[1] << 8 | (uint32_t)bytes[2] << 16 |
         (uint32_t)bytes[3] << 24;
}

static void settee_write_big_endian(const uint32_t *words, int count, uint8_t *out) {
  for (int i = 0; i < count; i++) {
    out[i * 4] = (uint8_t)(words[i] >> 24);
    out[i * 4 + 1] = (uint8_t)(words[i] >> 16);
    out[i * 4 + 2] = (uint8_t)(words[i] >> 8);
    out[i * 4 + 3] = (uint8_t)words[i];
  }
}

// MD5: RFC 1321, section 3.4; T[i] = floor(abs(sin(i + 1)) * 2^32).
static const uint32_t settee_md5_t[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
    0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
    0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
    0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
    0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
    0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
    0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
    0xeb86d391,
};

static const int settee_md5_shifts[64] = {
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
    5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
};

void settee_md5_blocks(uint32_t *state, const uint8_t *data, size_t blocks) {
  for (size_t block = 0; block < blocks; block++, data += 64) {
    uint32_t x[16];
    for (int i = 0; i < 16; i++) x[i] = settee_little_endian(data + i * 4);
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    for (int round = 0; round < 64; round++) {
      uint32_t f;
      int g;
      if (round < 16) {
        f = (b & c) | (~b & d);
        g = round;
      } else if (round < 32) {
        f = (d & b) | (~d & c);
        g = (5 * round + 1) % 16;
      } else if (round < 48) {
        f = b ^ c ^ d;
        g = (3 * round + 5) % 16;
      } else {
        f = c ^ (b | ~d);
        g = (7 * round) % 16;
      }
      f = f + a + settee_md5_t[round] + x[g];
      a = d;
      d = c;
      c = b;
      b = b + settee_rotl(f, settee_md5_shifts[round]);
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
  }
}

// SHA-1: FIPS 180-4, section 6.1.2.
void settee_sha1_blocks(uint32_t *state, const uint8_t *data, size_t blocks) {
  for (size_t block = 0; block < blocks; block++, data += 64) {
    uint32_t w[80];
    for (int t = 0; t < 16; t++) w[t] = settee_big_endian(data + t * 4);
    for (int t = 16; t < 80; t++) w[t] = settee_rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
    for (int t = 0; t < 80; t++) {
      uint32_t f, k;
      if (t < 20) {
        f = (b & c) | (~b & d);
        k = 0x5a827999;
      } else if (t < 40) {
        f = b ^ c ^ d;
        k = 0x6ed9eba1;
      } else if (t < 60) {
        f = (b & c) | (b & d) | (c & d);
        k = 0x8f1bbcdc;
      } else {
        f = b ^ c ^ d;
        k = 0xca62c1d6;
      }
      uint32_t temp = settee_rotl(a, 5) + f + e + k + w[t];
      e = d;
      d = c;
      c = settee_rotl(b, 30);
      b = a;
      a = temp;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
  }
}

// SHA-256: FIPS 180-4, sections 4.2.2 and 6.2.2.
static const uint32_t settee_sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
};

void settee_sha256_blocks(uint32_t *state, const uint8_t *data, size_t blocks) {
  for (size_t block = 0; block < blocks; block++, data += 64) {
    uint32_t w[64];
    for (int t = 0; t < 16; t++) w[t] = settee_big_endian(data + t * 4);
    for (int t = 16; t < 64; t++) {
      uint32_t s0 = settee_rotr(w[t - 15], 7) ^ settee_rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      uint32_t s1 = settee_rotr(w[t - 2], 17) ^ settee_rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int t = 0; t < 64; t++) {
      uint32_t s1 = settee_rotr(e, 6) ^ settee_rotr(e, 11) ^ settee_rotr(e, 25);
      uint32_t choice = (e & f) ^ (~e & g);
      uint32_t temp1 = h + s1 + choice + settee_sha256_k[t] + w[t];
      uint32_t s0 = settee_rotr(a, 2) ^ settee_rotr(a, 13) ^ settee_rotr(a, 22);
      uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
      uint32_t temp2 = s0 + majority;
      h = g;
      g = f;
      f = e;
      e = d + temp1;
      d = c;
      c = b;
      b = a;
      a = temp1 + temp2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

// One HMAC of a digest-sized message from the key's precomputed states: the message, 0x80,
// zeros and the length of 64 + `size` bytes in bits make one block, for the inner digest
// and then for the outer. `words`: the state's words (5 or 8); `size`: 4 * words.
static void settee_hmac_step(const uint32_t *inner, const uint32_t *outer, int words,
                             void (*blocks)(uint32_t *, const uint8_t *, size_t), uint8_t *u) {
  size_t size = (size_t)words * 4;
  uint8_t block[64];
  memset(block, 0, sizeof block);
  block[size] = 0x80;
  uint64_t bits = (64 + (uint64_t)size) * 8;
  block[62] = (uint8_t)(bits >> 8);
  block[63] = (uint8_t)bits;
  uint32_t state[8];
  memcpy(block, u, size);
  memcpy(state, inner, size);
  blocks(state, block, 1);
  settee_write_big_endian(state, words, block);
  memcpy(state, outer, size);
  blocks(state, block, 1);
  settee_write_big_endian(state, words, u);
}

static void settee_pbkdf2_iterate(const uint32_t *inner, const uint32_t *outer, int words,
                                  void (*blocks)(uint32_t *, const uint8_t *, size_t),
                                  uint8_t *u, uint8_t *result, uint64_t iterations) {
  size_t size = (size_t)words * 4;
  for (uint64_t n = 1; n < iterations; n++) {
    settee_hmac_step(inner, outer, words, blocks, u);
    for (size_t i = 0; i < size; i++) result[i] ^= u[i];
  }
}

void settee_pbkdf2_sha256_iterate(const uint32_t *inner, const uint32_t *outer, uint8_t *u,
                                  uint8_t *result, uint64_t iterations) {
  settee_pbkdf2_iterate(inner, outer, 8, settee_sha256_blocks, u, result, iterations);
}

void settee_pbkdf2_sha1_iterate(const uint32_t *inner, const uint32_t *outer, uint8_t *u,
                                uint8_t *result, uint64_t iterations) {
  settee_pbkdf2_iterate(inner, outer, 5, settee_sha1_blocks, u, result, iterations);
}
