/* The context's name, for headers that pass it on without reading it.
 * The context itself (struct ftmw_ctx: this process's records) is in
 * ftmw_impl.h; docs/architecture.md ("The context", "Who owns which
 * state") says who owns what. */
#ifndef FTMW_CTX_H
#define FTMW_CTX_H

typedef struct ftmw_ctx ftmw_ctx;

#endif
