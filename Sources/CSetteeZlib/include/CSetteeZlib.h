// zlib's gzip decoder and encoder behind plain C calls: zlib's init functions are macros
// over versioned names (inflateInit2 -> inflateInit2_), which Swift cannot call, and an
// opaque handle keeps z_stream's pointers out of Swift.
#ifndef CSETTEE_ZLIB_H
#define CSETTEE_ZLIB_H

#include <stddef.h>
#include <stdint.h>

/// A gzip stream being decoded (or encoded); NULL when zlib could not allocate it.
typedef struct settee_zstream settee_zstream;

/// A decoder of one gzip member (RFC 1952), with its header and CRC checked.
settee_zstream *_Nullable settee_gunzip_open(void);

/// An encoder that writes one gzip member at `level` (0-9).
settee_zstream *_Nullable settee_gzip_open(int level);

/// Feeds `input` (may be empty) and writes what it can into `output`. `finish` (encoder
/// only) says the input has ended. Sets how much was consumed and produced, and returns
/// 1 when the stream ended, 0 when it needs more input or room, or a negative zlib error
/// (Z_DATA_ERROR -3 for data that is not gzip, Z_BUF_ERROR -5 when no progress was
/// possible).
int settee_zstream_step(settee_zstream *_Nonnull stream, const uint8_t *_Nullable input,
                        size_t inputLength, size_t *_Nonnull consumed,
                        uint8_t *_Nonnull output, size_t outputCapacity,
                        size_t *_Nonnull produced, int finish);

/// Releases the stream.
void settee_zstream_close(settee_zstream *_Nullable stream);

#endif
