/* libFuzzer entry point for the frame codec and the stream reader
 * (ftmw/wire.c): no input may crash them, leak a payload, or make them
 * emit a frame that breaks the decoder's own rules.
 * Input: byte 0 picks the chunk size the stream is cut into; the rest is
 * the stream, also tried as one header and as one HELLO payload. */
#include <stdlib.h>
#include <string.h>

#include "ftmw_impl.h"

#define MAX_PAYLOAD (1u << 16)

static int live; /* payloads allocated and not yet freed */

static void *fz_alloc(void *ctx, const ftmw_hdr *h) {
  (void)ctx;
  if (h->len > MAX_PAYLOAD) /* the decoder must have refused it */
    __builtin_trap();
  live++;
  return malloc(h->len);
}

static void fz_release(void *ctx, void *p) {
  (void)ctx;
  live--;
  free(p);
}

static int fz_emit(void *ctx, const ftmw_hdr *h, void *payload) {
  /* What was accepted re-encodes to a header that decodes the same. */
  uint8_t buf[FTMW_HDR_SIZE];
  ftmw_hdr again;
  ftmw_wire_encode(buf, h);
  if (ftmw_wire_decode(buf, MAX_PAYLOAD, &again) != FTMW_WIRE_OK ||
      again.len != h->len || again.type != h->type || again.seq != h->seq)
    __builtin_trap();
  if ((payload == NULL) != (h->len == 0))
    __builtin_trap();
  if (payload)
    fz_release(ctx, payload);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  size_t chunk = (size_t)data[0] + 1;
  data++;
  size--;
  ftmw_hdr h;
  if (size >= FTMW_HDR_SIZE)
    (void)ftmw_wire_decode(data, MAX_PAYLOAD, &h);
  ftmw_hello m;
  (void)ftmw_wire_decode_hello(data, size, &m);
  (void)ftmw_wire_decode_welcome(data, size, &m.at);

  ftmw_reader r;
  ftmw_reader_init(&r, MAX_PAYLOAD, fz_alloc, fz_emit, fz_release, NULL);
  size_t off = 0;
  while (off < size) {
    size_t take = size - off < chunk ? size - off : chunk;
    size_t len;
    uint8_t *direct = ftmw_reader_direct(&r, 16, &len);
    int rc;
    if (direct) { /* the in-place payload path, as the transport uses it */
      if (take > len)
        take = len;
      memcpy(direct, data + off, take);
      rc = ftmw_reader_direct_done(&r, take);
    } else {
      rc = ftmw_reader_feed(&r, data + off, take);
    }
    off += take;
    if (rc != 0)
      break;
  }
  ftmw_reader_reset(&r);
  if (live != 0)
    __builtin_trap();
  return 0;
}
