/* Frame codec and stream reassembly (see wire.h). */
#include "wire.h"

#include <string.h>

void ftmw_wire_encode(uint8_t out[FTMW_HDR_SIZE], const ftmw_hdr *h) {
  ftmw_put32(out, FTMW_WIRE_MAGIC);
  out[4] = FTMW_WIRE_VERSION;
  out[5] = h->type;
  out[6] = (uint8_t)h->flags;
  out[7] = (uint8_t)(h->flags >> 8);
  ftmw_put32(out + 8, h->src);
  ftmw_put32(out + 12, h->dst);
  ftmw_put32(out + 16, (uint32_t)h->tag);
  ftmw_put32(out + 20, h->epoch);
  ftmw_put64(out + 24, h->seq);
  ftmw_put64(out + 32, h->len);
}

int ftmw_wire_decode(const uint8_t in[FTMW_HDR_SIZE], uint64_t max_payload,
                     ftmw_hdr *h) {
  if (ftmw_get32(in) != FTMW_WIRE_MAGIC)
    return FTMW_WIRE_EMAGIC;
  if (in[4] != FTMW_WIRE_VERSION)
    return FTMW_WIRE_EVERSION;
  h->type = in[5];
  h->flags = (uint16_t)(in[6] | in[7] << 8);
  h->src = ftmw_get32(in + 8);
  h->dst = ftmw_get32(in + 12);
  h->tag = (int32_t)ftmw_get32(in + 16);
  h->epoch = ftmw_get32(in + 20);
  h->seq = ftmw_get64(in + 24);
  h->len = ftmw_get64(in + 32);
  if (h->type == 0 || h->type >= FTMW_FRAME_TYPE_MAX)
    return FTMW_WIRE_ETYPE;
  if (h->flags & ~(uint16_t)(h->type == FTMW_FRAME_DATA ? FTMW_FLAG_ALL
                             : h->type == FTMW_FRAME_BYE ||
                                     h->type == FTMW_FRAME_VERDICT ||
                                     h->type == FTMW_FRAME_KEPT ||
                                     h->type == FTMW_FRAME_DECIDED
                                 ? 0x1u
                             : h->type == FTMW_FRAME_FIN
                                 ? FTMW_FLAG_LEAVING | FTMW_FLAG_STOPPING
                                 : 0))
    return FTMW_WIRE_EFLAGS;
  switch (h->type) {
  case FTMW_FRAME_HELLO:
    if (h->len != FTMW_HELLO_SIZE)
      return FTMW_WIRE_ELEN;
    break;
  case FTMW_FRAME_WELCOME:
    if (h->len != FTMW_WELCOME_SIZE)
      return FTMW_WIRE_ELEN;
    break;
  case FTMW_FRAME_KEPT:
    if (h->len < FTMW_KEPT_HEAD)
      return FTMW_WIRE_ELEN;
    /* fall through */
  case FTMW_FRAME_DATA:
  case FTMW_FRAME_COPY:
    if (h->len > max_payload)
      return FTMW_WIRE_ELEN;
    if (h->tag < 0)
      return FTMW_WIRE_ETAG;
    break;
  case FTMW_FRAME_DECIDE:
    if (h->len != FTMW_DECIDE_SIZE)
      return FTMW_WIRE_ELEN;
    if (h->tag < FTMW_DECIDE_RECV || h->tag > FTMW_DECIDE_LAST)
      return FTMW_WIRE_ETAG;
    break;
  case FTMW_FRAME_ABORT:
    if (h->len != 0)
      return FTMW_WIRE_ELEN;
    if (h->tag < 0 || h->tag > 255)
      return FTMW_WIRE_ETAG;
    break;
  case FTMW_FRAME_ACTIVATE:
  case FTMW_FRAME_DONE:
  case FTMW_FRAME_SUSPECT:
  case FTMW_FRAME_VERDICT:
  case FTMW_FRAME_DOWN:
    if (h->len != 0)
      return FTMW_WIRE_ELEN;
    if (h->tag <= 0)
      return FTMW_WIRE_ETAG;
    break;
  default:
    if (h->len != 0)
      return FTMW_WIRE_ELEN;
  }
  return FTMW_WIRE_OK;
}

/* A place: pid, host (NUL-padded, NUL-terminated within its field),
 * kernel id, start time. */
static void put_place(uint8_t out[FTMW_PLACE_SIZE], const ftmw_place *m) {
  ftmw_put32(out, m->pid);
  memset(out + 4, 0, FTMW_HOST_MAX);
  memcpy(out + 4, m->host, strnlen(m->host, FTMW_HOST_MAX - 1));
  memcpy(out + 4 + FTMW_HOST_MAX, m->kernel, FTMW_KERNEL_ID_SIZE);
  ftmw_put64(out + 4 + FTMW_HOST_MAX + FTMW_KERNEL_ID_SIZE, m->start);
}

static int get_place(const uint8_t in[FTMW_PLACE_SIZE], ftmw_place *m) {
  if (in[4 + FTMW_HOST_MAX - 1] != '\0')
    return FTMW_WIRE_EHELLO;
  m->pid = ftmw_get32(in);
  memcpy(m->host, in + 4, FTMW_HOST_MAX);
  memcpy(m->kernel, in + 4 + FTMW_HOST_MAX, FTMW_KERNEL_ID_SIZE);
  m->start = ftmw_get64(in + 4 + FTMW_HOST_MAX + FTMW_KERNEL_ID_SIZE);
  return FTMW_WIRE_OK;
}

void ftmw_wire_encode_hello(uint8_t out[FTMW_HELLO_SIZE], const ftmw_hello *m) {
  memcpy(out, m->secret, FTMW_SECRET_SIZE);
  ftmw_put32(out + 32, m->role);
  ftmw_put32(out + 36, m->id);
  ftmw_put32(out + 40, m->epoch);
  put_place(out + 44, &m->at);
}

int ftmw_wire_decode_hello(const uint8_t *in, size_t len, ftmw_hello *m) {
  if (len != FTMW_HELLO_SIZE)
    return FTMW_WIRE_EHELLO;
  memcpy(m->secret, in, FTMW_SECRET_SIZE);
  m->role = ftmw_get32(in + 32);
  m->id = ftmw_get32(in + 36);
  m->epoch = ftmw_get32(in + 40);
  if (get_place(in + 44, &m->at) != FTMW_WIRE_OK)
    return FTMW_WIRE_EHELLO;
  if (m->role < FTMW_ROLE_MASTER || m->role > FTMW_ROLE_SPARE)
    return FTMW_WIRE_EHELLO;
  return FTMW_WIRE_OK;
}

void ftmw_wire_encode_welcome(uint8_t out[FTMW_WELCOME_SIZE], const ftmw_place *m) {
  put_place(out, m);
}

int ftmw_wire_decode_welcome(const uint8_t *in, size_t len, ftmw_place *m) {
  return len == FTMW_WELCOME_SIZE ? get_place(in, m) : FTMW_WIRE_EHELLO;
}

const char *ftmw_wire_strerror(int rc) {
  switch (rc) {
  case FTMW_WIRE_OK: return "ok";
  case FTMW_WIRE_EMAGIC: return "bad magic";
  case FTMW_WIRE_EVERSION: return "unsupported protocol version";
  case FTMW_WIRE_ETYPE: return "unknown frame type";
  case FTMW_WIRE_EFLAGS: return "unknown flags";
  case FTMW_WIRE_ELEN: return "payload length not allowed";
  case FTMW_WIRE_ETAG: return "bad tag";
  case FTMW_WIRE_EHELLO: return "malformed HELLO or WELCOME";
  default: return "unknown wire error";
  }
}

const char *ftmw_frame_name(int type) {
  switch (type) {
#define FTMW_FN_GEN(name, val)                                                 \
  case val:                                                                    \
    return #name;
    FTMW_FRAME_TYPES(FTMW_FN_GEN)
#undef FTMW_FN_GEN
  default:
    return "?";
  }
}

void ftmw_reader_init(ftmw_reader *r, uint64_t max_payload,
                      ftmw_payload_alloc_fn alloc, ftmw_frame_emit_fn emit,
                      void (*release)(void *, void *), void *ctx) {
  memset(r, 0, sizeof(*r));
  r->max_payload = max_payload;
  r->alloc = alloc;
  r->emit = emit;
  r->release = release;
  r->ctx = ctx;
}

void ftmw_reader_reset(ftmw_reader *r) {
  if (r->payload)
    r->release(r->ctx, r->payload);
  r->payload = NULL;
  r->in_payload = 0;
  r->hdr_have = 0;
  r->have = 0;
}

/* The frame in r->hdr is complete: hand it over. */
static int finish(ftmw_reader *r) {
  void *p = r->payload;
  r->payload = NULL;
  r->in_payload = 0;
  r->hdr_have = 0;
  r->have = 0;
  return r->emit(r->ctx, &r->hdr, p) ? 1 : 0;
}

uint8_t *ftmw_reader_direct(ftmw_reader *r, size_t direct_min, size_t *len) {
  if (!r->in_payload)
    return NULL;
  uint64_t left = r->hdr.len - r->have;
  if (left < direct_min)
    return NULL;
  *len = left > (1u << 30) ? (size_t)1 << 30 : (size_t)left;
  return r->payload + r->have;
}

int ftmw_reader_direct_done(ftmw_reader *r, size_t n) {
  r->have += n;
  return r->have == r->hdr.len ? finish(r) : 0;
}

int ftmw_reader_feed(ftmw_reader *r, const uint8_t *data, size_t n) {
  while (n > 0) {
    if (!r->in_payload) {
      size_t take = FTMW_HDR_SIZE - r->hdr_have;
      if (take > n)
        take = n;
      memcpy(r->hdr_buf + r->hdr_have, data, take);
      r->hdr_have += take;
      data += take;
      n -= take;
      if (r->hdr_have < FTMW_HDR_SIZE)
        return 0;
      int rc = ftmw_wire_decode(r->hdr_buf, r->max_payload, &r->hdr);
      if (rc != FTMW_WIRE_OK)
        return rc;
      r->have = 0;
      if (r->hdr.len == 0) {
        r->payload = NULL;
        if (finish(r))
          return 1;
        continue;
      }
      r->payload = r->alloc(r->ctx, &r->hdr);
      if (r->payload == NULL)
        return 1;
      r->in_payload = 1;
    }
    uint64_t left = r->hdr.len - r->have;
    size_t take = left < n ? (size_t)left : n;
    memcpy(r->payload + r->have, data, take);
    r->have += take;
    data += take;
    n -= take;
    if (r->have == r->hdr.len && finish(r))
      return 1;
  }
  return 0;
}
