#include "CSetteeZlib.h"

#include <stdlib.h>
#include <zlib.h>

struct settee_zstream {
  z_stream z;
  int encodes;
};

settee_zstream *settee_gunzip_open(void) {
  settee_zstream *stream = calloc(1, sizeof *stream);
  if (stream == NULL) return NULL;
  // 16 + 15: a gzip wrapper (not zlib's, not raw deflate), the largest window.
  if (inflateInit2(&stream->z, 16 + MAX_WBITS) != Z_OK) {
    free(stream);
    return NULL;
  }
  return stream;
}

settee_zstream *settee_gzip_open(int level) {
  settee_zstream *stream = calloc(1, sizeof *stream);
  if (stream == NULL) return NULL;
  stream->encodes = 1;
  if (deflateInit2(&stream->z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    free(stream);
    return NULL;
  }
  return stream;
}

int settee_zstream_step(settee_zstream *stream, const uint8_t *input, size_t inputLength,
                        size_t *consumed, uint8_t *output, size_t outputCapacity,
                        size_t *produced, int finish) {
  // zlib counts in uInt: feed at most 1 GiB a step (callers loop on what was consumed).
  uInt in = inputLength > (1u << 30) ? (1u << 30) : (uInt)inputLength;
  uInt room = outputCapacity > (1u << 30) ? (1u << 30) : (uInt)outputCapacity;
  stream->z.next_in = (Bytef *)input;
  stream->z.avail_in = in;
  stream->z.next_out = output;
  stream->z.avail_out = room;
  int status = stream->encodes ? deflate(&stream->z, finish ? Z_FINISH : Z_NO_FLUSH)
                               : inflate(&stream->z, Z_NO_FLUSH);
  *consumed = in - stream->z.avail_in;
  *produced = room - stream->z.avail_out;
  if (status == Z_STREAM_END) return 1;
  if (status == Z_OK) return 0;
  if (status == Z_BUF_ERROR) return (*consumed > 0 || *produced > 0) ? 0 : Z_BUF_ERROR;
  // Z_NEED_DICT (a zlib stream asking for a preset dictionary) is no gzip member either.
  return status == Z_NEED_DICT ? Z_DATA_ERROR : (status < 0 ? status : Z_DATA_ERROR);
}

void settee_zstream_close(settee_zstream *stream) {
  if (stream == NULL) return;
  if (stream->encodes) deflateEnd(&stream->z);
  else inflateEnd(&stream->z);
  free(stream);
}
