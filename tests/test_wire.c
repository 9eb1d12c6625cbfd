/* Frame codec and stream reader (ftmw/wire.c). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "ftmw_impl.h"

static ftmw_hdr data_hdr(uint64_t len) {
  ftmw_hdr h = {.type = FTMW_FRAME_DATA, .src = 3, .dst = FTMW_PID_MASTER(0),
                .tag = 7, .epoch = 2, .seq = 99, .len = len};
  return h;
}

Test(wire, round_trip, .timeout = 5) {
  uint8_t buf[FTMW_HDR_SIZE];
  ftmw_hdr in = data_hdr(1234), out;
  ftmw_wire_encode(buf, &in);
  cr_assert_eq(ftmw_wire_decode(buf, 1u << 20, &out), FTMW_WIRE_OK);
  cr_assert_eq(out.type, in.type);
  cr_assert_eq(out.src, in.src);
  cr_assert_eq(out.dst, in.dst);
  cr_assert_eq(out.tag, in.tag);
  cr_assert_eq(out.epoch, in.epoch);
  cr_assert_eq(out.seq, in.seq);
  cr_assert_eq(out.len, in.len);
  /* Little-endian on the wire whatever the host: magic spells FTMW. */
  cr_assert_eq(memcmp(buf, "FTMW", 4), 0);
}

Test(wire, malformed_headers, .timeout = 5) {
  uint8_t buf[FTMW_HDR_SIZE];
  ftmw_hdr h = data_hdr(10), out;
  ftmw_wire_encode(buf, &h);
  uint8_t bad[FTMW_HDR_SIZE];
  memcpy(bad, buf, sizeof(bad)); bad[0] ^= 1;
  cr_assert_eq(ftmw_wire_decode(bad, 100, &out), FTMW_WIRE_EMAGIC);
  memcpy(bad, buf, sizeof(bad)); bad[4] = 9;
  cr_assert_eq(ftmw_wire_decode(bad, 100, &out), FTMW_WIRE_EVERSION);
  memcpy(bad, buf, sizeof(bad)); bad[5] = 0;
  cr_assert_eq(ftmw_wire_decode(bad, 100, &out), FTMW_WIRE_ETYPE);
  memcpy(bad, buf, sizeof(bad)); bad[5] = FTMW_FRAME_TYPE_MAX;
  cr_assert_eq(ftmw_wire_decode(bad, 100, &out), FTMW_WIRE_ETYPE);
  memcpy(bad, buf, sizeof(bad)); bad[6] = 4; /* unknown flags on DATA */
  cr_assert_eq(ftmw_wire_decode(bad, 100, &out), FTMW_WIRE_EFLAGS);
  cr_assert_eq(ftmw_wire_decode(buf, 9, &out), FTMW_WIRE_ELEN); /* oversize */
  h.tag = -1;
  ftmw_wire_encode(bad, &h);
  cr_assert_eq(ftmw_wire_decode(bad, 100, &out), FTMW_WIRE_ETAG);
  ftmw_hdr ack = {.type = FTMW_FRAME_ACK, .len = 1};
  ftmw_wire_encode(bad, &ack);
  cr_assert_eq(ftmw_wire_decode(bad, 100, &out), FTMW_WIRE_ELEN);
  ftmw_hdr hello = {.type = FTMW_FRAME_HELLO, .len = FTMW_HELLO_SIZE + 1};
  ftmw_wire_encode(bad, &hello);
  cr_assert_eq(ftmw_wire_decode(bad, 1u << 30, &out), FTMW_WIRE_ELEN);
  ftmw_hdr act = {.type = FTMW_FRAME_ACTIVATE, .tag = 0};
  ftmw_wire_encode(bad, &act);
  cr_assert_eq(ftmw_wire_decode(bad, 100, &out), FTMW_WIRE_ETAG);
}

/* The replica frames: what each may carry. */
Test(wire, replica_frames, .timeout = 5) {
  uint8_t buf[FTMW_HDR_SIZE];
  ftmw_hdr out;
  struct {
    ftmw_hdr h;
    int want;
  } cases[] = {
      {{.type = FTMW_FRAME_DECIDE, .tag = FTMW_DECIDE_RECV, .seq = 1,
        .len = FTMW_DECIDE_SIZE}, FTMW_WIRE_OK},
      {{.type = FTMW_FRAME_DECIDE, .tag = FTMW_DECIDE_CLOCK,
        .len = FTMW_DECIDE_SIZE}, FTMW_WIRE_OK},
      {{.type = FTMW_FRAME_DECIDE, .tag = FTMW_DECIDE_POST,
        .len = FTMW_DECIDE_SIZE}, FTMW_WIRE_OK},
      {{.type = FTMW_FRAME_DECIDE, .tag = FTMW_DECIDE_LAST + 1,
        .len = FTMW_DECIDE_SIZE}, FTMW_WIRE_ETAG},
      {{.type = FTMW_FRAME_DECIDE, .tag = 0, .len = FTMW_DECIDE_SIZE},
       FTMW_WIRE_ETAG},
      {{.type = FTMW_FRAME_DECIDE, .tag = FTMW_DECIDE_TEST, .len = 8},
       FTMW_WIRE_ELEN},
      {{.type = FTMW_FRAME_VERDICT, .tag = 2, .flags = FTMW_FLAG_OK}, FTMW_WIRE_OK},
      {{.type = FTMW_FRAME_VERDICT, .tag = 2, .flags = 2}, FTMW_WIRE_EFLAGS},
      {{.type = FTMW_FRAME_DATA, .flags = FTMW_FLAG_EAGER}, FTMW_WIRE_OK},
      {{.type = FTMW_FRAME_DATA, .flags = FTMW_FLAG_ALL}, FTMW_WIRE_OK},
      {{.type = FTMW_FRAME_BYE, .flags = FTMW_FLAG_EAGER}, FTMW_WIRE_EFLAGS},
      {{.type = FTMW_FRAME_FIN, .flags = FTMW_FLAG_LEAVING}, FTMW_WIRE_OK},
      {{.type = FTMW_FRAME_FIN, .flags = FTMW_FLAG_STOPPING}, FTMW_WIRE_OK},
      {{.type = FTMW_FRAME_FIN, .flags = FTMW_FLAG_CLEAN}, FTMW_WIRE_EFLAGS},
      {{.type = FTMW_FRAME_DONE, .tag = 2, .len = 1}, FTMW_WIRE_ELEN},
      {{.type = FTMW_FRAME_SUSPECT, .tag = 0}, FTMW_WIRE_ETAG},
      {{.type = FTMW_FRAME_KEPT, .tag = 1, .len = FTMW_KEPT_HEAD - 1},
       FTMW_WIRE_ELEN},
      {{.type = FTMW_FRAME_WELCOME, .len = FTMW_WELCOME_SIZE}, FTMW_WIRE_OK},
      {{.type = FTMW_FRAME_WELCOME, .len = 0}, FTMW_WIRE_ELEN},
      {{.type = FTMW_FRAME_KEPT, .tag = 1, .len = 12}, FTMW_WIRE_OK},
      {{.type = FTMW_FRAME_KEPT, .tag = 1, .len = FTMW_KEPT_HEAD,
        .flags = FTMW_FLAG_UNCONFIRMED}, FTMW_WIRE_OK},
      {{.type = FTMW_FRAME_KEPT, .tag = 1, .len = 8, .flags = 0x2},
       FTMW_WIRE_EFLAGS},
      /* CONFIRM: a sequence number, nothing else */
      {{.type = FTMW_FRAME_CONFIRM, .seq = 7}, FTMW_WIRE_OK},
      {{.type = FTMW_FRAME_CONFIRM, .seq = 7, .len = 1}, FTMW_WIRE_ELEN},
      {{.type = FTMW_FRAME_CONFIRM, .flags = 0x1}, FTMW_WIRE_EFLAGS},
      /* MARK: a header alone */
      {{.type = FTMW_FRAME_MARK}, FTMW_WIRE_OK},
      {{.type = FTMW_FRAME_MARK, .len = 1}, FTMW_WIRE_ELEN},
      {{.type = FTMW_FRAME_MARK, .flags = 0x1}, FTMW_WIRE_EFLAGS},
      /* DECIDED: a count of decisions, nothing else */
      {{.type = FTMW_FRAME_DECIDED, .seq = 9}, FTMW_WIRE_OK},
      {{.type = FTMW_FRAME_DECIDED, .seq = 9, .len = 8}, FTMW_WIRE_ELEN},
      {{.type = FTMW_FRAME_COPY, .tag = -1, .len = 1}, FTMW_WIRE_ETAG},
      {{.type = FTMW_FRAME_DECIDE, .tag = FTMW_DECIDE_PROBED,
        .len = FTMW_DECIDE_SIZE}, FTMW_WIRE_OK},
      /* ABORT: an exit status, nothing else */
      {{.type = FTMW_FRAME_ABORT, .tag = 255}, FTMW_WIRE_OK},
      {{.type = FTMW_FRAME_ABORT, .tag = 0}, FTMW_WIRE_OK},
      {{.type = FTMW_FRAME_ABORT, .tag = 256}, FTMW_WIRE_ETAG},
      {{.type = FTMW_FRAME_ABORT, .tag = -1}, FTMW_WIRE_ETAG},
      {{.type = FTMW_FRAME_ABORT, .tag = 1, .len = 4}, FTMW_WIRE_ELEN},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    ftmw_wire_encode(buf, &cases[i].h);
    cr_expect_eq(ftmw_wire_decode(buf, 100, &out), cases[i].want, "case %zu", i);
  }
}

Test(wire, hello_round_trip_and_rejects, .timeout = 5) {
  ftmw_hello m = {.role = FTMW_ROLE_WORKER, .id = 5, .epoch = 1,
                  .at = {.pid = 42, .start = 0x0102030405060708ull}};
  memset(m.secret, 0xab, sizeof(m.secret));
  memset(m.at.kernel, 0x3c, sizeof(m.at.kernel));
  strcpy(m.at.host, "node-7");
  uint8_t buf[FTMW_HELLO_SIZE], copy[FTMW_HELLO_SIZE];
  ftmw_hello out;
  ftmw_wire_encode_hello(buf, &m);
  cr_assert_eq(ftmw_wire_decode_hello(buf, sizeof(buf), &out), FTMW_WIRE_OK);
  cr_assert_eq(out.id, 5);
  cr_assert_eq(out.at.pid, 42);
  cr_assert_eq(out.at.start, m.at.start);
  cr_assert_str_eq(out.at.host, "node-7");
  cr_assert_eq(memcmp(out.secret, m.secret, sizeof(m.secret)), 0);
  cr_assert_eq(memcmp(out.at.kernel, m.at.kernel, sizeof(m.at.kernel)), 0);
  cr_assert_eq(ftmw_wire_decode_hello(buf, sizeof(buf) - 1, &out), FTMW_WIRE_EHELLO);
  memcpy(copy, buf, sizeof(copy));
  memset(copy + 48, 'x', FTMW_HOST_MAX); /* host not NUL-terminated */
  cr_assert_eq(ftmw_wire_decode_hello(copy, sizeof(copy), &out), FTMW_WIRE_EHELLO);
  memcpy(copy, buf, sizeof(copy));
  copy[32] = 9; /* unknown role */
  cr_assert_eq(ftmw_wire_decode_hello(copy, sizeof(copy), &out), FTMW_WIRE_EHELLO);
}

Test(wire, welcome_round_trip_and_rejects, .timeout = 5) {
  ftmw_place m = {.pid = 4242, .start = 77}, out;
  strcpy(m.host, "node-3");
  memset(m.kernel, 0x5a, sizeof(m.kernel));
  uint8_t buf[FTMW_WELCOME_SIZE];
  ftmw_wire_encode_welcome(buf, &m);
  cr_assert_eq(ftmw_wire_decode_welcome(buf, sizeof(buf), &out), FTMW_WIRE_OK);
  cr_assert_eq(out.pid, 4242);
  cr_assert_eq(out.start, 77);
  cr_assert_str_eq(out.host, "node-3");
  cr_assert_eq(memcmp(out.kernel, m.kernel, sizeof(m.kernel)), 0);
  cr_assert_eq(ftmw_wire_decode_welcome(buf, sizeof(buf) - 1, &out), FTMW_WIRE_EHELLO);
  memset(buf + 4, 'x', FTMW_HOST_MAX); /* host not NUL-terminated */
  cr_assert_eq(ftmw_wire_decode_welcome(buf, sizeof(buf), &out), FTMW_WIRE_EHELLO);
}

/* A reader fed byte streams, collecting what it emits. */
typedef struct {
  int frames;
  uint64_t bytes;
  uint8_t last[64];
  int allocs, frees;
} sink_t;

static void *sink_alloc(void *ctx, const ftmw_hdr *h) {
  ((sink_t *)ctx)->allocs++;
  return malloc(h->len);
}
static void sink_release(void *ctx, void *p) {
  ((sink_t *)ctx)->frees++;
  free(p);
}
static int sink_emit(void *ctx, const ftmw_hdr *h, void *payload) {
  sink_t *s = ctx;
  s->frames++;
  s->bytes += h->len;
  if (payload) {
    memcpy(s->last, payload, h->len < 64 ? h->len : 64);
    sink_release(s, payload);
  }
  return 0;
}

static size_t put_frame(uint8_t *out, uint64_t len, uint8_t fill) {
  ftmw_hdr h = data_hdr(len);
  ftmw_wire_encode(out, &h);
  memset(out + FTMW_HDR_SIZE, fill, len);
  return FTMW_HDR_SIZE + len;
}

Test(wire, reader_reassembles_any_split, .timeout = 10) {
  uint8_t stream[512];
  size_t n = put_frame(stream, 10, 'a');
  n += put_frame(stream + n, 0, 0);
  n += put_frame(stream + n, 100, 'c');
  for (size_t chunk = 1; chunk <= n; chunk++) {
    sink_t s = {0};
    ftmw_reader r;
    ftmw_reader_init(&r, 1000, sink_alloc, sink_emit, sink_release, &s);
    for (size_t off = 0; off < n; off += chunk) {
      size_t take = n - off < chunk ? n - off : chunk;
      cr_assert_eq(ftmw_reader_feed(&r, stream + off, take), 0);
    }
    cr_assert_eq(s.frames, 3, "chunk %zu", chunk);
    cr_assert_eq(s.bytes, 110);
    cr_assert_eq(s.last[0], 'c');
    cr_assert_eq(s.allocs, s.frees);
  }
}

Test(wire, reader_direct_payload_and_truncation, .timeout = 5) {
  uint8_t stream[FTMW_HDR_SIZE + 8192];
  size_t n = put_frame(stream, 8192, 'z');
  sink_t s = {0};
  ftmw_reader r;
  ftmw_reader_init(&r, 1u << 20, sink_alloc, sink_emit, sink_release, &s);
  cr_assert_eq(ftmw_reader_feed(&r, stream, FTMW_HDR_SIZE + 100), 0);
  size_t len;
  uint8_t *d = ftmw_reader_direct(&r, 4096, &len);
  cr_assert_not_null(d);
  cr_assert_eq(len, 8092);
  memcpy(d, stream + FTMW_HDR_SIZE + 100, len);
  cr_assert_eq(ftmw_reader_direct_done(&r, len), 0);
  cr_assert_eq(s.frames, 1);
  cr_assert_eq(s.last[0], 'z');
  /* A truncated frame (peer died mid-frame) is freed by reset. */
  cr_assert_eq(ftmw_reader_feed(&r, stream, n - 5), 0);
  cr_assert_eq(s.frames, 1);
  ftmw_reader_reset(&r);
  cr_assert_eq(s.allocs, s.frees);
}

Test(wire, reader_refuses_oversize_before_allocating, .timeout = 5) {
  uint8_t hdr[FTMW_HDR_SIZE];
  ftmw_hdr h = data_hdr((uint64_t)1 << 40);
  ftmw_wire_encode(hdr, &h);
  sink_t s = {0};
  ftmw_reader r;
  ftmw_reader_init(&r, 1u << 20, sink_alloc, sink_emit, sink_release, &s);
  cr_assert_eq(ftmw_reader_feed(&r, hdr, sizeof(hdr)), FTMW_WIRE_ELEN);
  cr_assert_eq(s.allocs, 0);
}
