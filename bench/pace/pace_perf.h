/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * uroce-pace-perf: pacing measured on a real link (the memif pair), two
 * processes with one busy thread each (native progress, uroce_poll()).
 * The client runs RC WRITE streams, paced or not; the server only keeps its
 * QPs in RTS with a buffer registered. See main.c for the command line and
 * client.c for what is measured.
 */
#ifndef PACE_PERF_H
#define PACE_PERF_H

#include <stdbool.h>
#include <stdint.h>

#include "uroce_engine.h"

#define PP_SLOTS	16	/* distinct remote regions (and data patterns) */
#define PP_WAIT_S	30.0	/* bound of every wait for the peer */

/* Control messages over TCP on 127.0.0.1 (same host, same ABI: sent as
 * is). SETUP and REPLY are followed by nqp QPNs (uint32_t). */
enum pp_type {
	PP_SETUP = 0x70700001,	/* client: nqp QPs with msg-byte WRITEs */
	PP_REPLY,		/* server: its QPs are in RTS */
	PP_DONE,		/* client: traffic is over, check and tear down */
	PP_RESULT,		/* server: failures, bytes received */
	PP_QUIT,		/* client: end the server */
};

#define PP_F_CHECK	0x1u	/* server verifies the regions at DONE */

struct pp_ctl {
	uint32_t type;
	uint32_t nqp;
	uint32_t msg;		/* WRITE size */
	uint32_t flags;		/* PP_F_* */
	uint32_t psn;		/* first PSN of every QP of the sender */
	uint32_t active_mtu;	/* enum ibv_mtu */
	uint32_t rkey;
	uint32_t failed;	/* RESULT: the server's failed checks */
	uint64_t addr;		/* the sender's buffer */
	uint64_t rx_bytes;	/* RESULT: frame bytes its QPs received */
	uint64_t rx_pkts;
	uint8_t gid[16];
};

/* One side's objects: nqp RC QPs on one CQ, one buffer. */
struct pp_side {
	struct uroce_dev *dev;
	struct uroce_pd *pd;
	struct uroce_cq *cq;
	struct uroce_mr *mr;
	struct uroce_qp **qp;
	uint32_t *qpn;		/* the QPNs, as sent */
	uint32_t nqp;
	uint8_t *buf;
	size_t buf_len;
	enum ibv_mtu path_mtu;
	int fd;			/* control connection */
};

/* conn.c: control connection */
int pp_tcp_listen(uint16_t *port);
int pp_tcp_accept(int lfd);
int pp_tcp_connect(uint16_t port);
bool pp_send(int fd, const struct pp_ctl *m, const void *extra, size_t len);
/* Wait (polling the engine) up to wait_s for a message of type type (0:
 * any), then read len extra bytes. */
bool pp_recv(int fd, struct pp_ctl *m, uint32_t type, void *extra,
	     size_t len, double wait_s);
/* Read exactly len bytes (blocking). */
bool pp_recv_bytes(int fd, void *p, size_t len);
/* Whether a message is waiting (no wait). */
bool pp_readable(int fd);

/* conn.c: objects */
bool pp_side_open(struct pp_side *s, size_t buf_len);
void pp_side_close(struct pp_side *s);
/* nqp RC QPs (send depth sq) on the side's CQ, in RESET. */
bool pp_qps_create(struct pp_side *s, uint32_t nqp, uint32_t sq);
/* RESET -> INIT -> RTR -> RTS towards the peer's QPNs. */
bool pp_qps_connect(struct pp_side *s, const uint32_t *rqpn,
		    const struct pp_ctl *peer, uint32_t my_psn);
void pp_qps_destroy(struct pp_side *s);
void pp_fill(uint8_t *dst, size_t n, uint32_t slot);
void pp_my_ctl(const struct pp_side *s, struct pp_ctl *m, uint32_t psn);

/* client.c */
struct pp_opts {
	const char *suite;	/* "full", "one" */
	const char *json;	/* results file, or NULL */
	double window_s;	/* measuring window */
	unsigned int windows;	/* per scenario, the first discarded */
	uint32_t msg;		/* WRITE size */
	uint32_t nqp;		/* suite "one": QPs */
	uint32_t rate_kbps;	/* suite "one": each QP's rate (0: unpaced) */
	uint32_t burst;		/* max_burst_sz (0: the default) */
	bool check;		/* verify delivery (tests) */
};

int pp_client(struct pp_side *s, const struct pp_opts *o);

#endif /* PACE_PERF_H */
