/* The frame codec: a fixed 40-byte little-endian header and a payload.
 *
 *   0 magic u32 'FTMW'   4 version u8, type u8, flags u16
 *   8 src u32           12 dst u32          16 tag i32
 *  20 epoch u32         24 seq u64          32 len u64 (payload bytes)
 *
 * Every function here is pure (no I/O, no globals) so that the decoder and
 * the stream reader can be unit-tested and fuzzed on arbitrary bytes. */
#ifndef FTMW_WIRE_H
#define FTMW_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define FTMW_WIRE_MAGIC 0x574d5446u /* "FTMW" on the wire */
#define FTMW_WIRE_VERSION 4
#define FTMW_HDR_SIZE 40
#define FTMW_SECRET_SIZE 32
#define FTMW_HOST_MAX 64
/* Which kernel, and which of its pid namespaces, a process id belongs to:
 * the kernel's boot id (16 bytes) and the namespace's inode (8). */
#define FTMW_KERNEL_ID_SIZE 24
/* Where a process runs (ftmw_place): pid, host name, kernel id and the
 * process's start time, as HELLO and WELCOME carry it. */
#define FTMW_PLACE_SIZE (4 + FTMW_HOST_MAX + FTMW_KERNEL_ID_SIZE + 8)
#define FTMW_HELLO_SIZE (FTMW_SECRET_SIZE + 12 + FTMW_PLACE_SIZE)
/* WELCOME: the accepting master's place, for the joining process's
 * failure detector (localproc.h). */
#define FTMW_WELCOME_SIZE FTMW_PLACE_SIZE

/* Process identities on the wire: workers are their rank (1..W); masters
 * and spares live in tagged ranges so that no identity is ambiguous. */
#define FTMW_PID_MASTER(k) (0x80000000u | (uint32_t)(k))
#define FTMW_PID_SPARE(s) (0x40000000u | (uint32_t)(s))
#define FTMW_PID_IS_MASTER(p) (((p)&0xc0000000u) == 0x80000000u)
#define FTMW_PID_IS_SPARE(p) (((p)&0xc0000000u) == 0x40000000u)
#define FTMW_PID_INDEX(p) ((p)&0x3fffffffu)

#define FTMW_FRAME_TYPES(XX)                                                   \
  XX(HELLO, 1)     /* first frame of a connection: secret and identity */      \
  XX(WELCOME, 2)   /* the master accepted a HELLO: its pid, host, kernel */    \
  XX(DATA, 3)      /* application message */                                   \
  XX(ACK, 4)       /* the library received DATA seq */                         \
  XX(HEARTBEAT, 5) /* keeps an idle connection alive */                        \
  XX(FIN, 6)       /* the sender's application called ft_finalize */           \
  XX(BYE, 7)       /* master: shut down; flag CLEAN: safe to MPI_Finalize */   \
  XX(ACTIVATE, 8)  /* master to spare: become worker tag, epoch epoch */       \
  XX(ACTIVATED, 9) /* spare to masters: now worker tag, incarnation seq */   \
  XX(COPY, 10)     /* worker to replica: the DATA it sends the primary, held  \
                      unconfirmed until CONFIRM (or a verdict, a decision) */ \
  XX(ACKED, 11)    /* worker to replica: it ACKed the primary's DATA seq */   \
  XX(DONE, 12)     /* replica to primary: its exchange seq with worker tag */ \
  XX(DECIDE, 13)   /* primary to replica: decision seq of kind tag (payload) */\
  XX(SUSPECT, 14)  /* replica to primary: worker tag died in my call seq */   \
  XX(VERDICT, 15)  /* primary to replica: call seq with worker tag: flag OK */\
  XX(KEPT, 16)     /* master to master: a worker's message (FTMW_KEPT_HEAD) */ \
  XX(FENCE, 17)    /* master to any peer: you are declared failed; exit */ \
  XX(DOWN, 18)     /* primary to replica: worker tag, incarnation seq, failed */ \
  XX(ABORT, 19)    /* any to any: ft_abort(tag) was called; exit with tag */  \
  XX(CONFIRM, 20)  /* worker to replica: a master ACKed its DATA seq (COPY) */ \
  XX(MARK, 21)     /* worker to master: you are its primary now; every ACKED \
                      it sent you came before (replica.c, marked) */        \
  XX(DECIDED, 22)  /* master to master: I hold your decisions up to seq */

enum ftmw_frame_type {
#define FTMW_FT_GEN(name, val) FTMW_FRAME_##name = val,
  FTMW_FRAME_TYPES(FTMW_FT_GEN)
#undef FTMW_FT_GEN
  FTMW_FRAME_TYPE_MAX
};

#define FTMW_FLAG_CLEAN 0x1u /* BYE: no process failed; MPI_Finalize is safe */
/* FIN, a worker's: it ends without MPI_Finalize (stopped by SIGTERM,
 * term.h); the primary's: the job is being stopped (SIGTERM), a worker
 * still computing need not finish. */
#define FTMW_FLAG_LEAVING 0x2u
#define FTMW_FLAG_STOPPING 0x4u
#define FTMW_FLAG_OK 0x1u    /* VERDICT: the primary's call succeeded */
/* DECIDED: the answer to an ABANDON decision (what it holds since). */
#define FTMW_FLAG_ABANDONED 0x1u
/* KEPT, from a replica to a master that took over: a worker's COPY that
 * no CONFIRM has confirmed yet (held as such there too). */
#define FTMW_FLAG_UNCONFIRMED 0x1u
/* KEPT's payload: the worker's rank (u32), the incarnation that sent the
 * message (u32), then its data. */
#define FTMW_KEPT_HEAD 8
/* DATA: the sender does not wait for it (ft_isend): its ACK may come a
 * little later, with other frames (see ftmw_link_ack). */
#define FTMW_FLAG_LAZY 0x1u
/* DATA: nobody waits for it at all (an eager ft_send): its ACK may wait
 * for the next frame to the sender, or a few dozen frames, or the
 * heartbeat (ftmw_link_ack's FTMW_ACK_LATER). */
#define FTMW_FLAG_EAGER 0x2u
#define FTMW_FLAG_ALL 0x3u /* the most any frame type takes (DATA's) */

/* DECIDE: tag is the kind of call, seq the decision's number (each master
 * counts them), and the 16-byte payload holds the worker rank (u32, then
 * 4 zero bytes) and a value (u64): the sequence number of the message an
 * FT_ANY_SOURCE receive or ft_waitany took (0: it reported the worker's
 * failure), the answer of ft_test / ft_testany, the outcome of ft_restore
 * (see ftmw_rep_restore_value), the error ft_irecv reported, or that the
 * primary's ft_is_primary said 1 (and what it guards was done there).
 * TIMEOUT (rank 0): an FT_ANY_SOURCE receive with a deadline (timed.h)
 * took nothing by then; CLOCK (rank 0) carries the primary's clock.
 * PROBE: a probe found a message from worker rank, value its tag << 33 |
 * its bytes; PROBED: it found none (value FT_SUCCESS, rank the source
 * asked, 0 for any) or reported the error in value (rank: the worker). */
enum {
  FTMW_DECIDE_RECV = 1,
  FTMW_DECIDE_TEST = 2,
  FTMW_DECIDE_TESTANY = 3,
  FTMW_DECIDE_RESTORE = 4,
  FTMW_DECIDE_POST = 5,
  FTMW_DECIDE_PRIMARY = 6,  /* ft_is_primary answered 1 here */
  FTMW_DECIDE_CLOCK = 7,    /* rank 0, value: the masters' clock in us */
  FTMW_DECIDE_TIMEOUT = 8,  /* rank 0: a receive with a deadline gave up */
  FTMW_DECIDE_PROBE = 9,    /* a probe found a message */
  FTMW_DECIDE_PROBED = 10,  /* a probe found none, or reported an error */
  FTMW_DECIDE_TERM = 11,    /* rank 0: a receive reported SIGTERM (term.h) */
  FTMW_DECIDE_SYNC = 12,    /* rank 0, replica to a master that took over:
                               the decisions it holds were sent before this */
  FTMW_DECIDE_ABANDON = 13, /* rank 0, a master that took over to a replica:
                               drop every decision after number seq (its
                               predecessor's path, ftmw_rep_abandon) */
  FTMW_DECIDE_LAST = FTMW_DECIDE_ABANDON
};
#define FTMW_DECIDE_SIZE 16

/* Little-endian integers on the wire. */
static inline void ftmw_put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

static inline void ftmw_put64(uint8_t *p, uint64_t v) {
  ftmw_put32(p, (uint32_t)v);
  ftmw_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t ftmw_get32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static inline uint64_t ftmw_get64(const uint8_t *p) {
  return (uint64_t)ftmw_get32(p) | (uint64_t)ftmw_get32(p + 4) << 32;
}

typedef struct ftmw_hdr {
  uint8_t type;
  uint16_t flags;
  uint32_t src;
  uint32_t dst;
  int32_t tag;
  uint32_t epoch;
  uint64_t seq;
  uint64_t len;
} ftmw_hdr;

/* What a HELLO carries besides the secret. */
enum ftmw_role { FTMW_ROLE_MASTER = 1, FTMW_ROLE_WORKER, FTMW_ROLE_SPARE };

/* Where a process runs: what lets a peer on the same host ask that
 * host's kernel about it (localproc.h). */
typedef struct {
  uint32_t pid;
  char host[FTMW_HOST_MAX]; /* NUL-terminated */
  uint8_t kernel[FTMW_KERNEL_ID_SIZE]; /* all zeros: unknown */
  uint64_t start; /* clock ticks after boot (proc(5) starttime); 0: unknown */
} ftmw_place;

typedef struct {
  uint8_t secret[FTMW_SECRET_SIZE];
  uint32_t role;
  uint32_t id; /* worker rank, master index or spare index */
  uint32_t epoch;
  ftmw_place at;
} ftmw_hello;

/* Decoder results (negative: the connection must be closed). */
enum {
  FTMW_WIRE_OK = 0,
  FTMW_WIRE_EMAGIC = -1,
  FTMW_WIRE_EVERSION = -2,
  FTMW_WIRE_ETYPE = -3,
  FTMW_WIRE_EFLAGS = -4,
  FTMW_WIRE_ELEN = -5, /* length not allowed for the type, or over limit */
  FTMW_WIRE_ETAG = -6,
  FTMW_WIRE_EHELLO = -7, /* also a malformed WELCOME */
};

void ftmw_wire_encode(uint8_t out[FTMW_HDR_SIZE], const ftmw_hdr *h);

/* Decodes and validates one header: known type, allowed flags, payload
 * length allowed for the type and at most max_payload for DATA. */
int ftmw_wire_decode(const uint8_t in[FTMW_HDR_SIZE], uint64_t max_payload,
                     ftmw_hdr *h);

void ftmw_wire_encode_hello(uint8_t out[FTMW_HELLO_SIZE], const ftmw_hello *m);
int ftmw_wire_decode_hello(const uint8_t *in, size_t len, ftmw_hello *m);
void ftmw_wire_encode_welcome(uint8_t out[FTMW_WELCOME_SIZE], const ftmw_place *m);
int ftmw_wire_decode_welcome(const uint8_t *in, size_t len, ftmw_place *m);

const char *ftmw_wire_strerror(int rc);
const char *ftmw_frame_name(int type);

/* Stream reassembly. The reader hands out the buffer the next read should
 * fill: the payload of the frame in progress when enough of it remains (so
 * large messages are read in place, without a copy), otherwise the caller's
 * staging buffer, whose bytes ftmw_reader_feed then parses. Payload memory
 * comes from alloc(ctx, hdr) and is passed to emit(ctx, hdr, payload),
 * which takes ownership; a frame without payload gets payload NULL.
 * emit returns 0 to go on, non-zero to stop (the connection is closing). */
typedef void *(*ftmw_payload_alloc_fn)(void *ctx, const ftmw_hdr *h);
typedef int (*ftmw_frame_emit_fn)(void *ctx, const ftmw_hdr *h, void *payload);

typedef struct {
  uint8_t hdr_buf[FTMW_HDR_SIZE];
  size_t hdr_have;
  int in_payload;
  ftmw_hdr hdr;
  uint8_t *payload;
  uint64_t have;
  uint64_t max_payload;
  ftmw_payload_alloc_fn alloc;
  ftmw_frame_emit_fn emit;
  void (*release)(void *ctx, void *payload); /* frees unfinished payloads */
  void *ctx;
} ftmw_reader;

void ftmw_reader_init(ftmw_reader *r, uint64_t max_payload,
                      ftmw_payload_alloc_fn alloc, ftmw_frame_emit_fn emit,
                      void (*release)(void *, void *), void *ctx);
/* Where the next read should go: the in-place payload if at least
 * direct_min bytes of it remain, else NULL (use the staging buffer). */
uint8_t *ftmw_reader_direct(ftmw_reader *r, size_t direct_min, size_t *len);
/* n bytes were read into the buffer ftmw_reader_direct returned. */
int ftmw_reader_direct_done(ftmw_reader *r, size_t n);
/* Parses n staged bytes. Returns 0, a FTMW_WIRE_E* code for bad input, or
 * 1 when emit asked to stop or alloc failed (-ENOMEM is reported as 1 too;
 * the caller closes the connection either way). */
int ftmw_reader_feed(ftmw_reader *r, const uint8_t *data, size_t n);
/* Frees a payload still being assembled. */
void ftmw_reader_reset(ftmw_reader *r);

#endif
