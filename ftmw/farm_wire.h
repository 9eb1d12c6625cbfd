/* The task farm's messages (ftmw_farm.h), shared by its master side
 * (farm.c) and its worker side (farm_worker.c). Each is one ft_* message
 * of bytes: a little-endian header, then the payload.
 *
 *   TASK    master -> worker  id u64, run u32, checkpoint length u32,
 *                             input length u64, attempt u32, 0 u32; the
 *                             input, the checkpoint
 *   STOP    master -> worker  empty: leave ft_farm_work
 *   RESULT  worker -> master  id u64, run u32, code i32; the output
 *   CKPT    worker -> master  id u64, run u32, 0 u32; the state
 *
 * run numbers the copies the master hands out, so that a reply names
 * the copy it answers. */
#ifndef FTMW_FARM_WIRE_H
#define FTMW_FARM_WIRE_H

#include <stdint.h>

#include "ftmw_farm.h"
#include "wire.h" /* ftmw_put32/64, ftmw_get32/64 */

enum {
  FARM_TAG_TASK = FT_FARM_TAG_BASE,
  FARM_TAG_STOP,
  FARM_TAG_RESULT,
  FARM_TAG_CKPT
};

#define FARM_TASK_HDR 32
#define FARM_REPLY_HDR 16 /* RESULT and CKPT */

#endif
