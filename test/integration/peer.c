/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * One end of a two-process test over a real link (memif): run_peer.sh
 * starts a server and a client, each with its own engine (one background
 * engine lcore) from its own config. The two exchange QPNs, PSNs, GIDs and
 * the buffer's address and rkey over TCP on 127.0.0.1 (as perftest does),
 * bring RC, UC and UD QPs up, and then:
 *  - mix:   the client runs a seeded random mix of SEND, SEND_WITH_IMM,
 *           RDMA_WRITE, WRITE_WITH_IMM, RDMA_READ, CMP_SWAP and FETCH_ADD
 *           (0 B .. 4 MTU + 1, the MTU edges, 1..4 SGEs, inline,
 *           unsignaled) while the server keeps receives posted. Every byte
 *           is derived from the seed and the op index, so each side knows
 *           what to expect: receives are checked on the server as they
 *           complete (data, canaries around the SGEs, byte_len, imm), READ
 *           data and atomic results on the client, the WRITE area and the
 *           atomic counters on the server at the end against a replay of
 *           the op list. Then (clean links) a UC WRITE stream and a UD
 *           exchange both ways with the GRH checked.
 *  - fault: the same mix over ports with fault injection: still exact,
 *           and the client's retransmit counter must have moved.
 *  - gone:  after the mix and a few WRITEs on a second RC QP pair (the one
 *           with the small --timeout and --retry), the client announces
 *           PEER-GONE-READY; the script kills the server; the client's next
 *           WQEs on that QP must complete with RETRY_EXC_ERR, then
 *           WR_FLUSH_ERR, within the bound that its timeout and retry_cnt
 *           give (checked with the TSC). The mix QP keeps timeout 14 so
 *           that a busy machine cannot end the mix early.
 *  - rnr:   the server posts no receive until it has sent an RNR NAK; the
 *           client (rnr_retry 7) must still complete everything.
 * Counters go to stdout; the exit status is 0 only when every check held.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "uroce_engine.h"
#include "uroce_test.h"

/* ---------------------------------------------------------------------------
 * Sizes and the buffer layout (the same on both sides).
 */
#define SQ_DEPTH	128
#define RQ_DEPTH	64
#define MAX_SGE		4
#define RECV_SGE	3
#define INLINE_MAX	128
#define GAP		64		/* canary bytes between SGEs */
#define MSG_MAX		(4 * 4096 + 64)	/* > 4 x the largest path MTU + 1 */
#define SLOT		(MSG_MAX + MAX_SGE * GAP)
#define WRITE_AREA	(256 * 1024)
#define READ_AREA	(256 * 1024)
#define NCNT		16		/* atomic counters */
#define UC_AREA		(64 * 1024)
#define NUC		64		/* UC WRITEs, the last with imm */
#define NUD		6		/* UD datagrams each way */
#define UD_SLOT		(UROCE_GRH_LEN + 4096 + 88)
#define NGONE		8		/* WQEs posted after the peer died */
#define NGONE_LATE	2		/* ... and after the QP went to ERR */
#define CQ_SIZE		512
#define REF_LEN		WRITE_AREA	/* scratch: the largest area or slot */

#define OFF_SLOTS	0
#define OFF_RECV	(OFF_SLOTS + SQ_DEPTH * SLOT)
#define OFF_WRITE	(OFF_RECV + RQ_DEPTH * SLOT)
#define OFF_READ	(OFF_WRITE + WRITE_AREA)
#define OFF_CNT		(OFF_READ + READ_AREA)
#define OFF_UC		(OFF_CNT + 4096)
#define OFF_UD		(OFF_UC + UC_AREA)
#define BUF_LEN		RTE_ALIGN_CEIL(OFF_UD + NUD * UD_SLOT, 4096)

#define CANARY		0xa5
#define UD_QKEY		0x11223344u
#define UC_IMM		0x5ec0de01u
#define WAIT_S		30.0	/* bound of every wait without progress */

/* Pattern keys: each area and op has its own stream. */
#define TAG_OP		0x6f70000000000000ull
#define TAG_UC		0x7563000000000000ull
#define TAG_UD		0x7564000000000000ull
#define TAG_READ	0x7264000000000000ull
#define TAG_WRITE	0x7772000000000000ull
#define TAG_CNT		0x636e000000000000ull

_Static_assert(REF_LEN >= SLOT && REF_LEN >= READ_AREA && REF_LEN >= UC_AREA &&
	       REF_LEN >= UD_SLOT, "scratch buffers too small");

enum mode { MODE_MIX, MODE_FAULT, MODE_GONE, MODE_RNR, MODE_COUNT };

static const char *const mode_names[MODE_COUNT] = {
	[MODE_MIX] = "mix", [MODE_FAULT] = "fault",
	[MODE_GONE] = "gone", [MODE_RNR] = "rnr",
};

/* ---------------------------------------------------------------------------
 * The operations: one table drives generation, posting and checking.
 */
enum kind { K_SEND, K_SEND_IMM, K_WRITE, K_WRITE_IMM, K_READ, K_CAS, K_FADD,
	    K_COUNT };

#define F_OUT	0x1	/* carries data from the requester */
#define F_RECV	0x2	/* consumes a receive WQE at the responder */
#define F_IMM	0x4
#define F_READ	0x8
#define F_ATOM	0x10
#define F_RDMA	0x20	/* RETH: targets the WRITE area */

static const struct kind_info {
	const char *name;
	enum ibv_wr_opcode wr;
	enum ibv_wc_opcode wc;		/* requester's completion */
	enum ibv_wc_opcode rwc;		/* responder's, when F_RECV */
	unsigned int flags;
	unsigned int weight;		/* of 100 */
} kinds[K_COUNT] = {
	[K_SEND] = { "SEND", IBV_WR_SEND, IBV_WC_SEND, IBV_WC_RECV,
		     F_OUT | F_RECV, 20 },
	[K_SEND_IMM] = { "SEND_WITH_IMM", IBV_WR_SEND_WITH_IMM, IBV_WC_SEND,
			 IBV_WC_RECV, F_OUT | F_RECV | F_IMM, 10 },
	[K_WRITE] = { "RDMA_WRITE", IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE, 0,
		      F_OUT | F_RDMA, 20 },
	[K_WRITE_IMM] = { "RDMA_WRITE_WITH_IMM", IBV_WR_RDMA_WRITE_WITH_IMM,
			  IBV_WC_RDMA_WRITE, IBV_WC_RECV_RDMA_WITH_IMM,
			  F_OUT | F_RDMA | F_RECV | F_IMM, 10 },
	[K_READ] = { "RDMA_READ", IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, 0,
		     F_READ, 20 },
	[K_CAS] = { "CMP_SWAP", IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WC_COMP_SWAP, 0,
		    F_ATOM, 10 },
	[K_FADD] = { "FETCH_ADD", IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WC_FETCH_ADD,
		     0, F_ATOM, 10 },
};

struct op {
	uint32_t idx;
	enum kind kind;
	uint32_t len;
	uint32_t nsge;
	uint32_t sge_len[MAX_SGE];
	bool inl, sig;
	uint32_t roff;			/* offset in the peer's buffer */
	uint32_t imm;
	uint64_t key;			/* data pattern */
	bool cas_hit;			/* CAS compares with the current value */
	uint64_t arg;			/* add, or swap */
};

/* splitmix64: independent streams from (seed, tag, index). */
static uint64_t
mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Value i of stream tag of a seed: unrelated for different seeds (a plain
 * seed ^ i would give seeds 1 and 2 the same values in another order). */
static uint64_t
stream(uint64_t seed, uint64_t tag, uint64_t i)
{
	return mix64(mix64(seed ^ tag) + i);
}

struct rng {
	uint64_t s;
};

static uint64_t
rng_next(struct rng *r)
{
	r->s = mix64(r->s);
	return r->s;
}

static uint32_t
rng_below(struct rng *r, uint32_t n)
{
	return n == 0 ? 0 : (uint32_t)(rng_next(r) % n);
}

/* The bytes of a pattern stream: byte j depends on key and j only. */
static void
fill_pattern(uint8_t *dst, size_t n, uint64_t key)
{
	uint64_t x;
	size_t i;

	for (i = 0; i < n; i += 8) {
		x = mix64(key + i);
		memcpy(dst + i, &x, RTE_MIN((size_t)8, n - i));
	}
}

/* A length: MTU edges, small (inline-able) sizes, or anything up to
 * 4 MTU + 1. */
static uint32_t
pick_len(struct rng *r, uint32_t mtu)
{
	const uint32_t edges[] = { 0, 1, mtu - 1, mtu, mtu + 1, 2 * mtu - 1,
				   2 * mtu, 2 * mtu + 1, 4 * mtu, 4 * mtu + 1 };
	uint32_t c = rng_below(r, 10);

	if (c < 3)
		return edges[rng_below(r, RTE_DIM(edges))];
	if (c < 6)
		return 1 + rng_below(r, 64);
	return rng_below(r, 4 * mtu + 2);
}

/* Split len into nsge non-empty pieces (none for len 0). */
static void
pick_sges(struct rng *r, struct op *op, unsigned int max_sge)
{
	uint32_t left = op->len, i;

	op->nsge = op->len == 0 ? 0 :
		1 + rng_below(r, RTE_MIN(max_sge, op->len));
	for (i = 0; i < op->nsge; i++) {
		uint32_t rest = op->nsge - i - 1;

		op->sge_len[i] = rest == 0 ? left :
			1 + rng_below(r, left - rest);
		left -= op->sge_len[i];
	}
}

static enum kind
pick_kind(struct rng *r)
{
	uint32_t w = rng_below(r, 100);
	unsigned int k;

	for (k = 0; k < K_COUNT - 1 && w >= kinds[k].weight; k++)
		w -= kinds[k].weight;
	return (enum kind)k;
}

/* Op i of the mix: both sides derive the same list from the seed. */
static void
op_gen(uint64_t seed, uint32_t i, enum mode mode, uint32_t mtu,
       uint32_t nops, struct op *op)
{
	struct rng r = { stream(seed, TAG_OP, i) };

	memset(op, 0, sizeof(*op));
	op->idx = i;
	op->kind = pick_kind(&r);
	if (mode == MODE_RNR && i == 0)
		op->kind = K_SEND;	/* the first op meets the empty RQ */
	op->key = rng_next(&r);
	op->imm = (uint32_t)rng_next(&r);
	op->arg = rng_next(&r);
	op->cas_hit = rng_next(&r) & 1;
	/* Unsignaled now and then; every 32nd and the last are signaled, so
	 * the SQ never holds more than 32 unreported WQEs. */
	op->sig = (rng_next(&r) & 1) || i % 32 == 31 || i == nops - 1;
	if (kinds[op->kind].flags & F_ATOM) {
		op->len = 8;
		op->nsge = 1;
		op->sge_len[0] = 8;
		op->roff = OFF_CNT + 8 * rng_below(&r, NCNT);
		return;
	}
	op->len = pick_len(&r, mtu);
	pick_sges(&r, op, MAX_SGE);
	op->inl = (kinds[op->kind].flags & F_OUT) && op->len <= INLINE_MAX &&
		(rng_next(&r) & 1);
	if (kinds[op->kind].flags & F_RDMA)
		op->roff = OFF_WRITE + rng_below(&r, WRITE_AREA - op->len + 1);
	else if (kinds[op->kind].flags & F_READ)
		op->roff = OFF_READ + rng_below(&r, READ_AREA - op->len + 1);
}

/* UC op k: WRITEs into the UC area, the last one WRITE_WITH_IMM. */
static void
uc_op_gen(uint64_t seed, uint32_t k, uint32_t mtu, struct op *op)
{
	struct rng r = { stream(seed, TAG_UC, k) };

	memset(op, 0, sizeof(*op));
	op->idx = k;
	op->kind = k == NUC - 1 ? K_WRITE_IMM : K_WRITE;
	op->key = rng_next(&r);
	op->imm = UC_IMM;
	op->sig = true;
	op->len = pick_len(&r, mtu);
	pick_sges(&r, op, MAX_SGE);
	op->inl = op->len <= INLINE_MAX && (rng_next(&r) & 1);
	op->roff = OFF_UC + rng_below(&r, UC_AREA - op->len + 1);
}

static uint32_t
ud_len(uint32_t k, uint32_t mtu)
{
	const uint32_t lens[NUD] = { 0, 1, 100, mtu - 1, mtu, 777 };

	return lens[k % NUD];
}

/* The atomic counters as the responder holds them: the initial values
 * and the effect of each atomic in order (RC executes them in order).
 * Returns the value the requester gets back. */
static uint64_t
cnt_init(uint64_t seed, unsigned int k)
{
	return stream(seed, TAG_CNT, k);
}

static uint64_t
cas_compare(const struct op *op, uint64_t cur)
{
	return op->cas_hit ? cur : cur ^ 0x5a5a5a5a5a5a5a5aull;
}

static uint64_t
model_atomic(uint64_t *cnt, const struct op *op)
{
	uint64_t *c = &cnt[(op->roff - OFF_CNT) / 8];
	uint64_t old = *c;

	if (op->kind == K_FADD)
		*c = old + op->arg;
	else if (cas_compare(op, old) == old)
		*c = op->arg;
	return old;
}

/* ---------------------------------------------------------------------------
 * The process's side.
 */
struct remote {
	uint32_t rc_qpn, uc_qpn, ud_qpn, gq_qpn;
	uint32_t rc_psn, uc_psn, gq_psn;
	uint32_t active_mtu;
	uint8_t gid[16];
	uint64_t addr;
	uint32_t rkey;
};

/* One control message (same machine, same ABI: sent as is). */
enum ctl_type { CTL_HELLO = 0x68656c6f, CTL_READY, CTL_DONE, CTL_RESULT };

struct ctl {
	uint32_t type;
	uint32_t mode;
	uint64_t seed;
	uint32_t nops;
	uint32_t failed;		/* CTL_RESULT: the server's failures */
	struct remote info;
};

struct peer {
	bool server;
	enum mode mode;
	uint64_t seed;
	uint32_t nops;
	bool extras;			/* UC and UD too */
	uint8_t timeout, retry_cnt;	/* of the gq QP */
	int fd;				/* control connection */

	struct uroce_dev *dev;
	struct uroce_pd *pd;
	struct uroce_mr *mr;
	struct uroce_cq *rc_cq, *uc_cq, *ud_cq, *gq_cq;
	struct uroce_qp *rc, *uc, *ud;
	struct uroce_qp *gq;		/* RC with --timeout/--retry (gone) */
	struct uroce_ah *ah;
	uint8_t *buf;
	uint8_t *ref;			/* scratch: expected images */
	uint8_t *tmp;			/* scratch: expected data */
	uint8_t *readref;		/* the peer's READ area, as seeded */
	uint32_t mtu;			/* path MTU bytes */
	enum ibv_mtu path_mtu;
	uint32_t my_psn;
	struct remote peer;

	/* client */
	struct op *ops;			/* SQ_DEPTH in flight, by index */
	uint64_t *expect;		/* atomic results, by slot */
	uint64_t cnt[NCNT];
	uint64_t bytes;
	/* server */
	uint32_t *recv_ops;		/* op index of each receive */
	uint32_t nrecv;
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Background lcores run the stack: the main thread only sleeps a little
 * when there is nothing to do (two processes on two cores). */
static void
idle(void)
{
	usleep(20);
}

static const char *
wc_status_name(enum ibv_wc_status s)
{
	static const char *const names[] = {
		[IBV_WC_SUCCESS] = "SUCCESS",
		[IBV_WC_LOC_LEN_ERR] = "LOC_LEN_ERR",
		[IBV_WC_LOC_QP_OP_ERR] = "LOC_QP_OP_ERR",
		[IBV_WC_LOC_PROT_ERR] = "LOC_PROT_ERR",
		[IBV_WC_WR_FLUSH_ERR] = "WR_FLUSH_ERR",
		[IBV_WC_REM_INV_REQ_ERR] = "REM_INV_REQ_ERR",
		[IBV_WC_REM_ACCESS_ERR] = "REM_ACCESS_ERR",
		[IBV_WC_REM_OP_ERR] = "REM_OP_ERR",
		[IBV_WC_RETRY_EXC_ERR] = "RETRY_EXC_ERR",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR_RETRY_EXC_ERR",
		[IBV_WC_GENERAL_ERR] = "GENERAL_ERR",
	};

	if ((unsigned int)s < RTE_DIM(names) && names[s] != NULL)
		return names[s];
	return "other";
}

static uint8_t *
slot_ptr(struct peer *p, uint32_t off, uint32_t slot, uint32_t size)
{
	return p->buf + off + (size_t)slot * size;
}

/* ---------------------------------------------------------------------------
 * Control connection.
 */
static bool
ctl_send(struct peer *p, struct ctl *m)
{
	const uint8_t *b = (const uint8_t *)m;
	size_t done = 0;
	ssize_t n;

	while (done < sizeof(*m)) {
		n = send(p->fd, b + done, sizeof(*m) - done, MSG_NOSIGNAL);
		if (n <= 0)
			return false;
		done += (size_t)n;
	}
	return true;
}

/* Wait up to wait_s for a message. 1: one, 0: none yet, -1: EOF/error. */
static int
ctl_recv(struct peer *p, struct ctl *m, double wait_s)
{
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
	uint8_t *b = (uint8_t *)m;
	size_t done = 0;
	ssize_t n;

	if (poll(&pfd, 1, (int)(wait_s * 1000)) <= 0)
		return 0;
	while (done < sizeof(*m)) {
		n = recv(p->fd, b + done, sizeof(*m) - done, MSG_WAITALL);
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 1;
}

static bool
ctl_expect(struct peer *p, struct ctl *m, uint32_t type)
{
	if (!UT_CHECK_EQ(ctl_recv(p, m, WAIT_S), 1))
		return false;
	return UT_CHECK_EQ(m->type, type);
}

static int
tcp_listen(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), on = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &alen) < 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static int
tcp_accept(int lfd)
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };

	if (poll(&pfd, 1, (int)(WAIT_S * 1000)) <= 0)
		return -1;
	return accept(lfd, NULL, NULL);
}

static int
tcp_connect(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	double end = now_s() + WAIT_S;
	int fd;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	do {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			return fd;
		if (fd >= 0)
			close(fd);
		usleep(100 * 1000);
	} while (now_s() < end);
	return -1;
}

/* ---------------------------------------------------------------------------
 * Objects and connection.
 */
static bool
objects_create(struct peer *p)
{
	struct ibv_qp_init_attr init = {
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = RQ_DEPTH,
			 .max_send_sge = MAX_SGE, .max_recv_sge = RECV_SGE,
			 .max_inline_data = INLINE_MAX },
	};
	unsigned int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	bool ok = true;

	p->dev = uroce_dev_get(0);
	if (!UT_CHECK(p->dev != NULL))
		return false;
	p->buf = aligned_alloc(4096, BUF_LEN);
	p->ref = malloc(REF_LEN);
	p->tmp = malloc(REF_LEN);
	p->readref = malloc(READ_AREA);
	p->ops = calloc(SQ_DEPTH, sizeof(*p->ops));
	p->expect = calloc(SQ_DEPTH, sizeof(*p->expect));
	if (!UT_CHECK(p->buf && p->ref && p->tmp && p->readref && p->ops &&
		      p->expect))
		return false;
	memset(p->buf, 0, BUF_LEN);
	ok &= UT_CHECK_EQ(uroce_pd_alloc(p->dev, &p->pd), 0);
	ok &= UT_CHECK_EQ(uroce_dev_cq_create(p->dev, CQ_SIZE, p, &p->rc_cq), 0);
	ok &= UT_CHECK_EQ(uroce_dev_cq_create(p->dev, CQ_SIZE, p, &p->uc_cq), 0);
	ok &= UT_CHECK_EQ(uroce_dev_cq_create(p->dev, CQ_SIZE, p, &p->ud_cq), 0);
	ok &= UT_CHECK_EQ(uroce_dev_cq_create(p->dev, CQ_SIZE, p, &p->gq_cq), 0);
	if (!ok)
		return false;
	ok &= UT_CHECK_EQ(uroce_dev_mr_reg(p->pd, p->buf, BUF_LEN,
					   (uintptr_t)p->buf, access, &p->mr), 0);
	init.qp_type = IBV_QPT_RC;
	ok &= UT_CHECK_EQ(uroce_dev_qp_create(p->pd, p->rc_cq, p->rc_cq, &init,
					      p, &p->rc), 0);
	ok &= UT_CHECK_EQ(uroce_dev_qp_create(p->pd, p->gq_cq, p->gq_cq, &init,
					      p, &p->gq), 0);
	init.qp_type = IBV_QPT_UC;
	ok &= UT_CHECK_EQ(uroce_dev_qp_create(p->pd, p->uc_cq, p->uc_cq, &init,
					      p, &p->uc), 0);
	init.qp_type = IBV_QPT_UD;
	init.cap.max_recv_sge = 1;
	ok &= UT_CHECK_EQ(uroce_dev_qp_create(p->pd, p->ud_cq, p->ud_cq, &init,
					      p, &p->ud), 0);
	return ok;
}

static void
objects_destroy(struct peer *p)
{
	if (p->ah != NULL)
		UT_CHECK_EQ(uroce_dev_ah_destroy(p->ah), 0);
	if (p->rc != NULL)
		UT_CHECK_EQ(uroce_dev_qp_destroy(p->rc), 0);
	if (p->uc != NULL)
		UT_CHECK_EQ(uroce_dev_qp_destroy(p->uc), 0);
	if (p->ud != NULL)
		UT_CHECK_EQ(uroce_dev_qp_destroy(p->ud), 0);
	if (p->gq != NULL)
		UT_CHECK_EQ(uroce_dev_qp_destroy(p->gq), 0);
	if (p->mr != NULL)
		UT_CHECK_EQ(uroce_dev_mr_dereg(p->mr), 0);
	if (p->rc_cq != NULL)
		UT_CHECK_EQ(uroce_dev_cq_destroy(p->rc_cq), 0);
	if (p->uc_cq != NULL)
		UT_CHECK_EQ(uroce_dev_cq_destroy(p->uc_cq), 0);
	if (p->ud_cq != NULL)
		UT_CHECK_EQ(uroce_dev_cq_destroy(p->ud_cq), 0);
	if (p->gq_cq != NULL)
		UT_CHECK_EQ(uroce_dev_cq_destroy(p->gq_cq), 0);
	if (p->pd != NULL)
		UT_CHECK_EQ(uroce_pd_free(p->pd), 0);
	free(p->buf);
	free(p->ref);
	free(p->tmp);
	free(p->readref);
	free(p->ops);
	free(p->expect);
	free(p->recv_ops);
}

static void
my_info(const struct peer *p, struct remote *r)
{
	const struct uroce_qp_env *env = uroce_dev_env(p->dev);

	memset(r, 0, sizeof(*r));
	r->rc_qpn = p->rc->qpn;
	r->uc_qpn = p->uc->qpn;
	r->ud_qpn = p->ud->qpn;
	r->gq_qpn = p->gq->qpn;
	r->rc_psn = p->my_psn;
	r->uc_psn = (p->my_psn + 0x1000) & UROCE_PSN_MASK;
	r->gq_psn = (p->my_psn + 0x2000) & UROCE_PSN_MASK;
	r->active_mtu = env->lim.active_mtu;
	memcpy(r->gid, env->gid[0].raw, 16);
	r->addr = (uintptr_t)p->buf;
	r->rkey = p->mr->rkey;
}

static void
av_to_peer(const struct peer *p, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.sgid_index = 0;
	ah->grh.hop_limit = 64;
	memcpy(ah->grh.dgid.raw, p->peer.gid, 16);
}

/* RC or UC: RESET -> INIT -> RTR -> RTS (ibv_modify_qp(3) masks); RC
 * with the local ACK timeout and retry_cnt given. */
static bool
connect_rc_uc(struct peer *p, struct uroce_qp *qp, uint32_t dqpn,
	      uint32_t rq_psn, uint32_t sq_psn, uint8_t timeout,
	      uint8_t retry_cnt)
{
	bool rc = qp->type == IBV_QPT_RC;
	struct ibv_qp_attr a;
	int mask;
	bool ok = true;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
		(rc ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0);
	ok &= UT_CHECK_EQ(uroce_dev_qp_modify(qp, &a, IBV_QP_STATE |
			  IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = p->path_mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	av_to_peer(p, &a.ah_attr);
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		IBV_QP_RQ_PSN;
	if (rc) {
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 12;	/* 0.64 ms (IBTA 9.7.5.2.8 table) */
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	ok &= UT_CHECK_EQ(uroce_dev_qp_modify(qp, &a, mask), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (rc) {
		a.timeout = timeout;
		a.retry_cnt = retry_cnt;
		a.rnr_retry = 7;	/* for ever */
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	ok &= UT_CHECK_EQ(uroce_dev_qp_modify(qp, &a, mask), 0);
	return ok;
}

static bool
connect_ud(struct peer *p)
{
	struct ibv_ah_attr ah;
	struct ibv_qp_attr a;
	bool ok = true;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = UD_QKEY;
	ok &= UT_CHECK_EQ(uroce_dev_qp_modify(p->ud, &a, IBV_QP_STATE |
			  IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	ok &= UT_CHECK_EQ(uroce_dev_qp_modify(p->ud, &a, IBV_QP_STATE), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = p->my_psn;
	ok &= UT_CHECK_EQ(uroce_dev_qp_modify(p->ud, &a, IBV_QP_STATE |
					      IBV_QP_SQ_PSN), 0);
	av_to_peer(p, &ah);
	ok &= UT_CHECK_EQ(uroce_dev_ah_create(p->pd, &ah, &p->ah), 0);
	return ok;
}

static bool
connect_all(struct peer *p)
{
	bool ok;

	p->path_mtu = RTE_MIN(uroce_dev_env(p->dev)->lim.active_mtu,
			      (enum ibv_mtu)p->peer.active_mtu);
	p->mtu = uroce_mtu_bytes(p->path_mtu);
	ok = connect_rc_uc(p, p->rc, p->peer.rc_qpn, p->peer.rc_psn, p->my_psn,
			   14, 7);
	ok &= connect_rc_uc(p, p->uc, p->peer.uc_qpn, p->peer.uc_psn,
			    (p->my_psn + 0x1000) & UROCE_PSN_MASK, 0, 0);
	ok &= connect_rc_uc(p, p->gq, p->peer.gq_qpn, p->peer.gq_psn,
			    (p->my_psn + 0x2000) & UROCE_PSN_MASK, p->timeout,
			    p->retry_cnt);
	ok &= connect_ud(p);
	return ok;
}

static bool
wait_link(struct peer *p)
{
	struct uroce_port *port = uroce_dev_port(p->dev);
	double end = now_s() + WAIT_S;

	while (!uroce_port_link_up(port) && now_s() < end)
		usleep(10 * 1000);
	return UT_CHECK(uroce_port_link_up(port));
}

/* ---------------------------------------------------------------------------
 * Posting (client).
 */

/* Piece k of an op in a slot: the pieces back to back with GAP canary
 * bytes between them. */
static void
op_sges(struct peer *p, const struct op *op, uint8_t *base,
	struct ibv_sge *sge)
{
	uint32_t off = 0, k;

	for (k = 0; k < op->nsge; k++) {
		sge[k].addr = (uintptr_t)(base + off);
		sge[k].length = op->sge_len[k];
		sge[k].lkey = p->mr->lkey;
		off += op->sge_len[k] + GAP;
	}
}

/* The image of a slot whose pieces (lens[], GAP bytes apart) received
 * len bytes of data in order: canaries everywhere else. */
static void
scatter_image(const uint32_t *lens, uint32_t n, const uint8_t *data,
	      uint32_t len, uint8_t *img)
{
	uint32_t off = 0, done = 0, k, c;

	memset(img, CANARY, SLOT);
	for (k = 0; k < n && done < len; k++) {
		c = RTE_MIN(lens[k], len - done);
		memcpy(img + off, data + done, c);
		done += c;
		off += lens[k] + GAP;
	}
}

static void
op_image(const struct op *op, const uint8_t *data, uint8_t *img)
{
	scatter_image(op->sge_len, op->nsge, data, op->len, img);
}

static void
wr_remote(struct peer *p, const struct op *op, struct ibv_send_wr *wr)
{
	uint64_t raddr = p->peer.addr + op->roff;

	if (kinds[op->kind].flags & F_ATOM) {
		wr->wr.atomic.remote_addr = raddr;
		wr->wr.atomic.rkey = p->peer.rkey;
		wr->wr.atomic.compare_add = op->kind == K_FADD ? op->arg :
			cas_compare(op, p->cnt[(op->roff - OFF_CNT) / 8]);
		wr->wr.atomic.swap = op->arg;
	} else {
		wr->wr.rdma.remote_addr = raddr;
		wr->wr.rdma.rkey = p->peer.rkey;
	}
}

/* Post op into SQ slot `slot` of qp. */
static bool
post_op(struct peer *p, struct uroce_qp *qp, const struct op *op,
	uint32_t slot)
{
	uint8_t *base = slot_ptr(p, OFF_SLOTS, slot, SLOT);
	unsigned int f = kinds[op->kind].flags;
	struct ibv_sge sge[MAX_SGE];
	struct ibv_send_wr wr, *bad = NULL;

	if (f & F_OUT) {
		fill_pattern(p->ref, op->len, op->key);
		op_image(op, p->ref, base);
	} else {
		memset(base, CANARY, SLOT);
	}
	op_sges(p, op, base, sge);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = op->idx;
	wr.sg_list = op->nsge ? sge : NULL;
	wr.num_sge = (int)op->nsge;
	wr.opcode = kinds[op->kind].wr;
	wr.imm_data = htobe32(op->imm);
	wr.send_flags = (op->sig ? IBV_SEND_SIGNALED : 0) |
		(op->inl ? IBV_SEND_INLINE : 0);
	if (f & (F_RDMA | F_READ | F_ATOM))
		wr_remote(p, op, &wr);
	if (qp == p->rc && (f & F_ATOM))
		p->expect[slot] = model_atomic(p->cnt, op);
	if (!UT_CHECK_EQ(uroce_qp_post_send(qp, &wr, &bad), 0)) {
		fprintf(stderr, "     post of op %u (%s, %u B) failed\n",
			op->idx, kinds[op->kind].name, op->len);
		return false;
	}
	if (op->inl)	/* the data was copied at post: spoil the source */
		memset(base, 0, op->len + op->nsge * GAP);
	return true;
}

/* ---------------------------------------------------------------------------
 * Completions (client).
 */

/* An op known complete: READ data (and the canaries around its pieces)
 * and atomic results. */
static bool
op_verify(struct peer *p, const struct op *op, uint32_t slot)
{
	const uint8_t *base = slot_ptr(p, OFF_SLOTS, slot, SLOT);
	unsigned int f = kinds[op->kind].flags;
	uint64_t got;
	bool ok = true;

	if (f & F_READ) {
		op_image(op, p->readref + (op->roff - OFF_READ), p->ref);
		ok &= UT_CHECK_MEM(base, p->ref, SLOT);
	}
	if (f & F_ATOM) {
		memcpy(&got, base, 8);	/* host order, as rxe writes it */
		ok &= UT_CHECK_EQ(got, p->expect[slot]);
		ok &= UT_CHECK(base[8] == CANARY);
	}
	UT_NOTE("op %u (%s, %u B, %u SGEs)", op->idx, kinds[op->kind].name,
		op->len, op->nsge);
	return ok;
}

/* The first signaled op in [done, posted): the one the next completion
 * reports (completions come in order; unsignaled ops before it are done
 * with it). */
static uint32_t
next_signaled(const struct peer *p, uint32_t done, uint32_t posted)
{
	uint32_t i;

	for (i = done; i < posted; i++)
		if (p->ops[i % SQ_DEPTH].sig)
			return i;
	return posted;
}

static bool
client_wc(struct peer *p, const struct ibv_wc *wc, uint32_t *done,
	  uint32_t posted)
{
	uint32_t j = next_signaled(p, *done, posted), i;
	const struct op *op;
	bool ok;

	if (!UT_CHECK(j < posted))
		return false;
	op = &p->ops[j % SQ_DEPTH];
	ok = UT_CHECK_EQ(wc->status, IBV_WC_SUCCESS);
	ok &= UT_CHECK_EQ(wc->wr_id, j);
	ok &= UT_CHECK_EQ(wc->opcode, kinds[op->kind].wc);
	ok &= UT_CHECK_EQ(wc->qp_num, p->rc->qpn);
	if (kinds[op->kind].flags & (F_READ | F_ATOM))
		ok &= UT_CHECK_EQ(wc->byte_len, op->len);
	if (!ok) {
		fprintf(stderr, "     op %u (%s, %u B): completion %s for wr_id %"
			PRIu64 "\n", j, kinds[op->kind].name, op->len,
			wc_status_name(wc->status), wc->wr_id);
		return false;
	}
	for (i = *done; i <= j; i++) {
		ok &= op_verify(p, &p->ops[i % SQ_DEPTH], i % SQ_DEPTH);
		p->bytes += p->ops[i % SQ_DEPTH].len;
	}
	*done = j + 1;
	return ok;
}

/* Ops [first, end) of the mix, at most SQ_DEPTH - 1 outstanding. */
static bool
client_mix(struct peer *p, uint32_t first, uint32_t end)
{
	uint32_t posted = first, done = first;
	double deadline = now_s() + WAIT_S;
	struct ibv_wc wc[16];
	struct op *op;
	int i, n;

	while (done < end) {
		while (posted < end && posted - done < SQ_DEPTH - 1) {
			op = &p->ops[posted % SQ_DEPTH];
			op_gen(p->seed, posted, p->mode, p->mtu, p->nops, op);
			if (!post_op(p, p->rc, op, posted % SQ_DEPTH))
				return false;
			posted++;
		}
		n = uroce_cq_poll(p->rc_cq, RTE_DIM(wc), wc);
		if (!UT_CHECK(n >= 0))
			return false;
		for (i = 0; i < n; i++)
			if (!client_wc(p, &wc[i], &done, posted))
				return false;
		if (n > 0) {
			deadline = now_s() + WAIT_S;
		} else if (now_s() > deadline) {
			UT_CHECK(!"mix stalled");
			fprintf(stderr, "     %u ops done, %u posted\n", done,
				posted);
			return false;
		} else {
			idle();
		}
	}
	return true;
}

/* n completions from cq, in order, bounded. */
static bool
wait_wcs(struct uroce_cq *cq, struct ibv_wc *wc, int n)
{
	double deadline = now_s() + WAIT_S;
	int got = 0, r;

	while (got < n) {
		r = uroce_cq_poll(cq, n - got, wc + got);
		if (r < 0)
			break;
		got += r;
		if (r > 0)
			deadline = now_s() + WAIT_S;
		else if (now_s() > deadline)
			break;
		else
			idle();
	}
	return UT_CHECK_EQ(got, n);
}

/* ---------------------------------------------------------------------------
 * Receives (server).
 */
static void
recv_layout(uint32_t s, uint32_t lens[RECV_SGE])
{
	lens[0] = 1 + (s * 97) % 3000;
	lens[1] = 1 + (s * 389) % 5000;
	lens[2] = MSG_MAX - lens[0] - lens[1];
}

static bool
post_recv_slot(struct peer *p, uint32_t s)
{
	uint8_t *base = slot_ptr(p, OFF_RECV, s, SLOT);
	struct ibv_sge sge[RECV_SGE];
	struct ibv_recv_wr wr, *bad = NULL;
	uint32_t lens[RECV_SGE], off = 0, k;

	recv_layout(s, lens);
	memset(base, CANARY, SLOT);
	for (k = 0; k < RECV_SGE; k++) {
		sge[k].addr = (uintptr_t)(base + off);
		sge[k].length = lens[k];
		sge[k].lkey = p->mr->lkey;
		off += lens[k] + GAP;
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = s;
	wr.sg_list = sge;
	wr.num_sge = RECV_SGE;
	return UT_CHECK_EQ(uroce_qp_post_recv(p->rc, &wr, &bad), 0);
}

static bool
post_recvs(struct peer *p)
{
	bool ok = true;
	uint32_t s;

	for (s = 0; s < RQ_DEPTH && ok; s++)
		ok = post_recv_slot(p, s);
	return ok;
}

/* The ops of the mix that consume a receive, in order. */
static bool
recv_list(struct peer *p)
{
	struct op op;
	uint32_t i;

	p->recv_ops = calloc(p->nops, sizeof(*p->recv_ops));
	if (!UT_CHECK(p->recv_ops != NULL))
		return false;
	for (i = 0; i < p->nops; i++) {
		op_gen(p->seed, i, p->mode, p->mtu, p->nops, &op);
		if (kinds[op.kind].flags & F_RECV)
			p->recv_ops[p->nrecv++] = i;
	}
	return true;
}

/* Receive k of the mix: its completion, its bytes and the canaries. */
static bool
server_wc(struct peer *p, const struct ibv_wc *wc, uint32_t k)
{
	uint32_t s = k % RQ_DEPTH, lens[RECV_SGE];
	bool imm = false;
	struct op op;
	bool ok;

	op_gen(p->seed, p->recv_ops[k], p->mode, p->mtu, p->nops, &op);
	ok = UT_CHECK_EQ(wc->status, IBV_WC_SUCCESS);
	ok &= UT_CHECK_EQ(wc->wr_id, s);
	ok &= UT_CHECK_EQ(wc->opcode, kinds[op.kind].rwc);
	ok &= UT_CHECK_EQ(wc->byte_len, op.len);
	ok &= UT_CHECK_EQ(wc->qp_num, p->rc->qpn);
	ok &= UT_CHECK_EQ(wc->src_qp, p->peer.rc_qpn);
	imm = kinds[op.kind].flags & F_IMM;
	ok &= UT_CHECK_EQ(!!(wc->wc_flags & IBV_WC_WITH_IMM), imm);
	if (imm)
		ok &= UT_CHECK_EQ(wc->imm_data, htobe32(op.imm));
	recv_layout(s, lens);
	if (op.kind == K_WRITE_IMM) {
		memset(p->ref, CANARY, SLOT);	/* the data went elsewhere */
	} else {
		fill_pattern(p->tmp, op.len, op.key);
		scatter_image(lens, RECV_SGE, p->tmp, op.len, p->ref);
	}
	ok &= UT_CHECK_MEM(slot_ptr(p, OFF_RECV, s, SLOT), p->ref, SLOT);
	UT_NOTE("receive %u: op %u (%s, %u B, %s)", k, op.idx,
		kinds[op.kind].name, op.len, wc_status_name(wc->status));
	return post_recv_slot(p, s) && ok;
}

/* Serve receives until the client says DONE and every receive is in. */
static bool
server_mix(struct peer *p)
{
	double deadline = now_s() + WAIT_S;
	bool done = false;
	struct ibv_wc wc[16];
	uint32_t k = 0;
	struct ctl m;
	int i, n, r = 0;

	while (k < p->nrecv || !done) {
		n = uroce_cq_poll(p->rc_cq, RTE_DIM(wc), wc);
		if (!UT_CHECK(n >= 0))
			return false;
		for (i = 0; i < n; i++) {
			if (!UT_CHECK(k < p->nrecv))
				return false;
			if (!server_wc(p, &wc[i], k++) && ut_failed > 20)
				return false;
		}
		if (!done) {
			r = ctl_recv(p, &m, 0);
			if (!UT_CHECK(r >= 0))	/* the client went away */
				return false;
			done = r == 1 && UT_CHECK_EQ(m.type, CTL_DONE);
		}
		if (n > 0 || r > 0) {
			deadline = now_s() + WAIT_S;
		} else if (now_s() > deadline) {
			UT_CHECK(!"receives stalled");
			fprintf(stderr, "     %u of %u receives, done %d\n", k,
				p->nrecv, done);
			return false;
		} else {
			idle();
		}
	}
	return true;
}

/* After the mix: the WRITE area and the counters against a replay of
 * the op list; the READ area untouched. */
static bool
server_verify_mix(struct peer *p)
{
	uint64_t cnt[NCNT], got;
	struct op op;
	uint32_t i;
	bool ok;

	fill_pattern(p->ref, WRITE_AREA, stream(p->seed, TAG_WRITE, 0));
	for (i = 0; i < NCNT; i++)
		cnt[i] = cnt_init(p->seed, i);
	for (i = 0; i < p->nops; i++) {
		op_gen(p->seed, i, p->mode, p->mtu, p->nops, &op);
		if (kinds[op.kind].flags & F_RDMA)
			fill_pattern(p->ref + op.roff - OFF_WRITE, op.len, op.key);
		else if (kinds[op.kind].flags & F_ATOM)
			model_atomic(cnt, &op);
	}
	ok = UT_CHECK_MEM(p->buf + OFF_WRITE, p->ref, WRITE_AREA);
	for (i = 0; !ok && i < WRITE_AREA; i++) {
		if (p->buf[OFF_WRITE + i] != p->ref[i]) {
			fprintf(stderr, "     WRITE area differs at 0x%x\n", i);
			break;
		}
	}
	for (i = 0; i < NCNT; i++) {
		memcpy(&got, p->buf + OFF_CNT + 8 * i, 8);
		ok &= UT_CHECK_EQ(got, cnt[i]);
	}
	fill_pattern(p->ref, READ_AREA, stream(p->seed, TAG_READ, 0));
	ok &= UT_CHECK_MEM(p->buf + OFF_READ, p->ref, READ_AREA);
	return ok;
}

/* Wait (bounded) until the server's RC QP has sent an RNR NAK. */
static bool
wait_rnr_nak(struct peer *p)
{
	double end = now_s() + WAIT_S;
	struct uroce_qp_stats st;

	do {
		memset(&st, 0, sizeof(st));
		if (uroce_dev_qp_stats(p->rc, &st) < 0 || st.rnr_naks_tx > 0)
			break;
		usleep(1000);
	} while (now_s() < end);
	return UT_CHECK(st.rnr_naks_tx > 0);
}

/* ---------------------------------------------------------------------------
 * UC: a WRITE stream, the last one with immediate data.
 */
static bool
client_uc(struct peer *p)
{
	struct ibv_wc wc[NUC];
	struct op op;
	bool ok = true;
	uint32_t k;

	for (k = 0; k < NUC && ok; k++) {
		uc_op_gen(p->seed, k, p->mtu, &op);
		ok = post_op(p, p->uc, &op, k);
	}
	if (!ok || !wait_wcs(p->uc_cq, wc, NUC))
		return false;
	for (k = 0; k < NUC; k++) {
		ok &= UT_CHECK_EQ(wc[k].status, IBV_WC_SUCCESS);
		ok &= UT_CHECK_EQ(wc[k].wr_id, k);
		ok &= UT_CHECK_EQ(wc[k].opcode, IBV_WC_RDMA_WRITE);
	}
	return ok;
}

static bool
post_uc_recv(struct peer *p)
{
	struct ibv_recv_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x0c;
	return UT_CHECK_EQ(uroce_qp_post_recv(p->uc, &wr, &bad), 0);
}

static bool
server_uc(struct peer *p)
{
	struct ibv_wc wc;
	struct op op;
	uint32_t k;
	bool ok;

	if (!wait_wcs(p->uc_cq, &wc, 1))
		return false;
	fill_pattern(p->ref, UC_AREA, stream(p->seed, TAG_UC, UINT64_MAX));
	for (k = 0; k < NUC; k++) {
		uc_op_gen(p->seed, k, p->mtu, &op);
		fill_pattern(p->ref + op.roff - OFF_UC, op.len, op.key);
	}
	ok = UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	ok &= UT_CHECK_EQ(wc.wr_id, 0x0c);
	ok &= UT_CHECK_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	ok &= UT_CHECK_EQ(wc.byte_len, op.len);
	ok &= UT_CHECK(wc.wc_flags & IBV_WC_WITH_IMM);
	ok &= UT_CHECK_EQ(wc.imm_data, htobe32(UC_IMM));
	ok &= UT_CHECK_EQ(wc.qp_num, p->uc->qpn);
	ok &= UT_CHECK_MEM(p->buf + OFF_UC, p->ref, UC_AREA);
	return ok;
}

/* ---------------------------------------------------------------------------
 * UD: NUD datagrams each way; the receiver checks the GRH (RoCEv2 over
 * IPv4: 20 zero bytes, then the IPv4 header, ibv_poll_cq(3) IBV_WC_GRH).
 */
static uint64_t
ud_key(const struct peer *p, bool from_server, uint32_t k)
{
	return stream(p->seed, TAG_UD, ((uint64_t)from_server << 32) | k);
}

static bool
post_ud_recvs(struct peer *p)
{
	struct ibv_recv_wr wr, *bad = NULL;
	struct ibv_sge sge;
	bool ok = true;
	uint32_t k;

	for (k = 0; k < NUD && ok; k++) {
		memset(slot_ptr(p, OFF_UD, k, UD_SLOT), CANARY, UD_SLOT);
		sge.addr = (uintptr_t)slot_ptr(p, OFF_UD, k, UD_SLOT);
		sge.length = UROCE_GRH_LEN + 4096;
		sge.lkey = p->mr->lkey;
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = k;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		ok = UT_CHECK_EQ(uroce_qp_post_recv(p->ud, &wr, &bad), 0);
	}
	return ok;
}

static bool
ud_send(struct peer *p)
{
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_wc wc[NUD];
	struct ibv_sge sge;
	bool ok = true;
	uint32_t k, len;
	uint8_t *base;

	for (k = 0; k < NUD && ok; k++) {
		len = ud_len(k, p->mtu);
		base = slot_ptr(p, OFF_SLOTS, k, SLOT);
		fill_pattern(base, len, ud_key(p, p->server, k));
		sge.addr = (uintptr_t)base;
		sge.length = len;
		sge.lkey = p->mr->lkey;
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = k;
		wr.sg_list = len ? &sge : NULL;
		wr.num_sge = len ? 1 : 0;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.ud.ah = (struct ibv_ah *)(void *)p->ah;
		wr.wr.ud.remote_qpn = p->peer.ud_qpn;
		wr.wr.ud.remote_qkey = UD_QKEY;
		ok = UT_CHECK_EQ(uroce_qp_post_send(p->ud, &wr, &bad), 0);
	}
	if (!ok || !wait_wcs(p->ud_cq, wc, NUD))
		return false;
	for (k = 0; k < NUD; k++) {
		ok &= UT_CHECK_EQ(wc[k].status, IBV_WC_SUCCESS);
		ok &= UT_CHECK_EQ(wc[k].wr_id, k);
		ok &= UT_CHECK_EQ(wc[k].opcode, IBV_WC_SEND);
	}
	return ok;
}

/* The GRH area of a receive over IPv4: 20 zero bytes, then the header. */
static bool
grh_ok(const struct peer *p, const uint8_t *grh)
{
	const uint8_t *ip = grh + 20;
	const uint8_t zero[20] = { 0 };
	bool ok;

	ok = UT_CHECK_MEM(grh, zero, 20);
	ok &= UT_CHECK_EQ(ip[0], 0x45);		/* IPv4, 20-byte header */
	ok &= UT_CHECK_EQ(ip[9], IPPROTO_UDP);
	ok &= UT_CHECK_MEM(ip + 12, p->peer.gid + 12, 4);	/* source */
	ok &= UT_CHECK_MEM(ip + 16, uroce_dev_env(p->dev)->gid[0].raw + 12, 4);
	return ok;
}

static bool
ud_recv(struct peer *p)
{
	struct ibv_wc wc[NUD];
	bool ok = true;
	uint32_t k, len;
	uint8_t *base;

	if (!wait_wcs(p->ud_cq, wc, NUD))
		return false;
	for (k = 0; k < NUD; k++) {
		len = ud_len(k, p->mtu);
		base = slot_ptr(p, OFF_UD, k, UD_SLOT);
		ok &= UT_CHECK_EQ(wc[k].status, IBV_WC_SUCCESS);
		ok &= UT_CHECK_EQ(wc[k].wr_id, k);
		ok &= UT_CHECK_EQ(wc[k].opcode, IBV_WC_RECV);
		ok &= UT_CHECK_EQ(wc[k].byte_len, UROCE_GRH_LEN + len);
		ok &= UT_CHECK(wc[k].wc_flags & IBV_WC_GRH);
		ok &= UT_CHECK_EQ(wc[k].src_qp, p->peer.ud_qpn);
		ok &= UT_CHECK_EQ(wc[k].qp_num, p->ud->qpn);
		ok &= grh_ok(p, base);
		memset(p->ref, CANARY, UD_SLOT);
		fill_pattern(p->ref + UROCE_GRH_LEN, len, ud_key(p, !p->server, k));
		ok &= UT_CHECK_MEM(base + UROCE_GRH_LEN, p->ref + UROCE_GRH_LEN,
				   UD_SLOT - UROCE_GRH_LEN);
		if (!ok) {
			fprintf(stderr, "     UD datagram %u of %u B\n", k, len);
			return false;
		}
	}
	return ok;
}

/*
 * Peer gone (client), on the gq QP pair: a few WRITEs while the server
 * lives, then the server is killed. The next WQEs complete with
 * RETRY_EXC_ERR (the first) and WR_FLUSH_ERR (the rest, and anything
 * posted later) within (retry_cnt + 1) local ACK timeouts of 4.096 us *
 * 2^timeout (IBTA 9.7.6.1.3), give or take scheduling: the bound checked is
 * four times that plus two seconds ("it ends").
 */
static bool
gone_warmup(struct peer *p)
{
	struct ibv_wc wc[NGONE];
	struct op op;
	bool ok = true;
	uint32_t k;

	for (k = 0; k < NGONE && ok; k++) {
		uc_op_gen(p->seed, k, p->mtu, &op);	/* into the UC area */
		op.kind = K_WRITE;
		ok = post_op(p, p->gq, &op, k);
	}
	if (!ok || !wait_wcs(p->gq_cq, wc, NGONE))
		return false;
	for (k = 0; k < NGONE; k++) {
		ok &= UT_CHECK_EQ(wc[k].status, IBV_WC_SUCCESS);
		ok &= UT_CHECK_EQ(wc[k].wr_id, k);
	}
	return ok;
}

/* Ops [first, first + n) of an endless mix, all signaled, on gq. */
static bool
gone_post(struct peer *p, uint32_t first, uint32_t n)
{
	struct op *op;
	bool ok = true;
	uint32_t i;

	for (i = first; i < first + n && ok; i++) {
		op = &p->ops[i % SQ_DEPTH];
		op_gen(p->seed, i, MODE_MIX, p->mtu, UINT32_MAX, op);
		op->sig = true;
		ok = post_op(p, p->gq, op, i % SQ_DEPTH);
	}
	return ok;
}

static bool
gone_check(struct peer *p, const struct ibv_wc *wc, uint32_t n,
	   uint32_t first, bool retry_err_first)
{
	enum ibv_wc_status want;
	bool ok = true;
	uint32_t i;

	for (i = 0; i < n; i++) {
		want = retry_err_first && i == 0 ? IBV_WC_RETRY_EXC_ERR :
			IBV_WC_WR_FLUSH_ERR;
		ok &= UT_CHECK_EQ(wc[i].wr_id, first + i);
		if (!UT_CHECK_EQ(wc[i].status, want)) {
			ok = false;
			fprintf(stderr, "     wr_id %" PRIu64 ": %s, want %s\n",
				wc[i].wr_id, wc_status_name(wc[i].status),
				wc_status_name(want));
		}
		ok &= UT_CHECK_EQ(wc[i].qp_num, p->gq->qpn);
	}
	return ok;
}

/* The gq QP's counters over the failure, and its state. */
static bool
gone_after(struct peer *p, const struct uroce_qp_stats *st0)
{
	struct uroce_qp_stats st1;
	struct ibv_qp_attr attr;
	bool ok;

	memset(&st1, 0, sizeof(st1));
	ok = UT_CHECK_EQ(uroce_dev_qp_stats(p->gq, &st1), 0);
	/* retry_cnt retries: retry_cnt + 1 expiries with an ACK owed (IBTA
	 * 9.7.6.1.3). If a memif ring the dead server no longer drains
	 * filled up in the middle of a message, nothing sent asked for an
	 * ACK: that expiry is late and spends no retry (requester.c
	 * timeout()), and the port's watchdog lets the packet that asks
	 * leave. */
	ok &= UT_CHECK_EQ(st1.timeouts - st0->timeouts, p->retry_cnt + 1);
	printf("peer client: gq qp 0x%06x after the peer died: %" PRIu64
	       " timeouts (%" PRIu64 " late), %" PRIu64 " retransmits\n",
	       p->gq->qpn, st1.timeouts - st0->timeouts,
	       st1.late_timeouts - st0->late_timeouts,
	       st1.retransmits - st0->retransmits);
	memset(&attr, 0, sizeof(attr));
	ok &= UT_CHECK_EQ(uroce_dev_qp_query(p->gq, &attr, NULL), 0);
	ok &= UT_CHECK_EQ(attr.qp_state, IBV_QPS_ERR);
	return ok;
}

static bool
client_gone(struct peer *p)
{
	double rto_s = 4.096e-6 * (double)(1u << p->timeout);
	double bound_s = (p->retry_cnt + 1) * rto_s, took_s;
	uint32_t first = p->nops;
	struct uroce_qp_stats st0;
	struct ibv_wc wc[NGONE];
	uint64_t t0, t1;
	struct ctl m;
	bool ok;

	if (!gone_warmup(p))
		return false;
	printf("PEER-GONE-READY\n");
	fflush(stdout);
	/* The control connection ends when the server dies. */
	if (!UT_CHECK_EQ(ctl_recv(p, &m, 4 * WAIT_S), -1))
		return false;
	memset(&st0, 0, sizeof(st0));
	UT_CHECK_EQ(uroce_dev_qp_stats(p->gq, &st0), 0);
	t0 = rte_rdtsc();
	if (!gone_post(p, first, NGONE) || !wait_wcs(p->gq_cq, wc, 1))
		return false;
	t1 = rte_rdtsc();
	ok = wait_wcs(p->gq_cq, wc + 1, NGONE - 1) &&
		gone_check(p, wc, NGONE, first, true);
	took_s = (double)(t1 - t0) / (double)rte_get_tsc_hz();
	printf("peer client: RETRY_EXC_ERR after %.3f s (timeout %u, retry_cnt"
	       " %u: (retry_cnt + 1) x %.3f ms = %.3f s; bound checked %.3f s)\n",
	       took_s, p->timeout, p->retry_cnt, rto_s * 1e3, bound_s,
	       4 * bound_s + 2.0);
	ok &= UT_CHECK(took_s <= 4 * bound_s + 2.0);
	ok &= gone_after(p, &st0);
	/* Posted in ERR: flushed too. */
	ok &= gone_post(p, first + NGONE, NGONE_LATE) &&
		wait_wcs(p->gq_cq, wc, NGONE_LATE) &&
		gone_check(p, wc, NGONE_LATE, first + NGONE, false);
	return ok;
}

/* ---------------------------------------------------------------------------
 * Counters.
 */
static void
print_stats(struct peer *p)
{
	struct uroce_qp_stats q;
	struct uroce_port_stats ps;

	memset(&q, 0, sizeof(q));
	UT_CHECK_EQ(uroce_dev_qp_stats(p->rc, &q), 0);
	uroce_port_stats_get(uroce_dev_port(p->dev), &ps);
	printf("peer %s: mode %s, seed %" PRIu64 ", path MTU %u: %u ops",
	       p->server ? "server" : "client", mode_names[p->mode], p->seed,
	       p->mtu, p->nops);
	if (!p->server)
		printf(", %" PRIu64 " bytes", p->bytes);
	printf("\n  rc qp 0x%06x: tx %" PRIu64 " pkts %" PRIu64 " B, rx %"
	       PRIu64 " pkts, retransmits %" PRIu64 ", timeouts %" PRIu64
	       ", acks tx %" PRIu64 " rx %" PRIu64 ", naks tx seq %" PRIu64
	       " rx seq %" PRIu64 ", rnr naks tx %" PRIu64 " rx %" PRIu64
	       ", dup reqs %" PRIu64 ", out of seq %" PRIu64 ", drops %" PRIu64
	       "\n", p->rc->qpn, q.tx_pkts, q.tx_bytes, q.rx_pkts,
	       q.retransmits, q.timeouts, q.acks_tx, q.acks_rx, q.naks_tx[0],
	       q.naks_rx[0], q.rnr_naks_tx, q.rnr_naks_rx, q.dup_reqs,
	       q.out_of_seq, q.drops);
	printf("  port: rx %" PRIu64 " tx %" PRIu64 " tx_full %" PRIu64
	       ", faults: drop %" PRIu64 " reorder %" PRIu64 " dup %" PRIu64
	       " corrupt %" PRIu64 "\n", ps.rx_pkts, ps.tx_pkts, ps.tx_full,
	       ps.fault_drop, ps.fault_reorder, ps.fault_dup, ps.fault_corrupt);
	if (p->mode == MODE_FAULT && !p->server) {
		UT_CHECK(q.retransmits > 0);
		UT_CHECK(ps.fault_drop > 0);
	}
	if (p->mode == MODE_RNR)
		UT_CHECK((p->server ? q.rnr_naks_tx : q.rnr_naks_rx) > 0);
}

/* ---------------------------------------------------------------------------
 * The two roles.
 */

/* The seeded contents both sides agree on. */
static void
areas_init(struct peer *p)
{
	uint32_t k;

	for (k = 0; k < NCNT; k++)
		p->cnt[k] = cnt_init(p->seed, k);
	fill_pattern(p->readref, READ_AREA, stream(p->seed, TAG_READ, 0));
	if (!p->server)
		return;
	memcpy(p->buf + OFF_CNT, p->cnt, sizeof(p->cnt));
	memcpy(p->buf + OFF_READ, p->readref, READ_AREA);
	fill_pattern(p->buf + OFF_WRITE, WRITE_AREA, stream(p->seed, TAG_WRITE, 0));
	fill_pattern(p->buf + OFF_UC, UC_AREA, stream(p->seed, TAG_UC, UINT64_MAX));
}

static bool
server_setup(struct peer *p)
{
	struct ctl m;
	uint16_t port;
	int lfd;

	lfd = tcp_listen(&port);
	if (!UT_CHECK(lfd >= 0))
		return false;
	printf("PEER-LISTEN %u\n", port);
	fflush(stdout);
	p->fd = tcp_accept(lfd);
	close(lfd);
	if (!UT_CHECK(p->fd >= 0) || !ctl_expect(p, &m, CTL_HELLO))
		return false;
	if (!UT_CHECK(m.mode < MODE_COUNT))
		return false;
	p->mode = (enum mode)m.mode;
	p->seed = m.seed;
	p->nops = m.nops;
	p->extras = p->mode == MODE_MIX;
	p->peer = m.info;
	p->my_psn = (uint32_t)stream(p->seed, TAG_OP, UINT64_MAX) &
		UROCE_PSN_MASK;
	memset(&m, 0, sizeof(m));
	m.type = CTL_HELLO;
	my_info(p, &m.info);
	return UT_CHECK(ctl_send(p, &m)) && wait_link(p) && connect_all(p) &&
		recv_list(p);
}

static bool
run_server(struct peer *p)
{
	struct ctl m;
	bool ok;

	if (!server_setup(p))
		return false;
	areas_init(p);
	ok = post_uc_recv(p) && post_ud_recvs(p);
	if (ok && p->mode != MODE_RNR)
		ok = post_recvs(p);
	memset(&m, 0, sizeof(m));
	m.type = CTL_READY;
	if (!ok || !UT_CHECK(ctl_send(p, &m)) || !ctl_expect(p, &m, CTL_READY))
		return false;
	/* rnr: the client's first SEND finds no receive. */
	if (p->mode == MODE_RNR && !(wait_rnr_nak(p) && post_recvs(p)))
		return false;
	ok = server_mix(p) && server_verify_mix(p);
	if (ok && p->extras)
		ok = server_uc(p) && ud_recv(p) && ud_send(p);
	print_stats(p);
	memset(&m, 0, sizeof(m));
	m.type = CTL_RESULT;
	m.failed = (uint32_t)ut_failed + !ok;
	return UT_CHECK(ctl_send(p, &m)) && ok;
}

static bool
client_setup(struct peer *p, uint16_t port)
{
	struct ctl m;

	p->fd = tcp_connect(port);
	if (!UT_CHECK(p->fd >= 0))
		return false;
	/* A start PSN close to the wrap, so that every run crosses it. */
	p->my_psn = (UROCE_PSN_MASK - (uint32_t)(p->seed * 37 % 512)) &
		UROCE_PSN_MASK;
	memset(&m, 0, sizeof(m));
	m.type = CTL_HELLO;
	m.mode = p->mode;
	m.seed = p->seed;
	m.nops = p->nops;
	my_info(p, &m.info);
	if (!UT_CHECK(ctl_send(p, &m)) || !ctl_expect(p, &m, CTL_HELLO))
		return false;
	p->peer = m.info;
	return wait_link(p) && connect_all(p);
}

static bool
run_client(struct peer *p, uint16_t port)
{
	struct ctl m;
	bool ok;

	if (!client_setup(p, port))
		return false;
	areas_init(p);
	ok = post_ud_recvs(p);
	memset(&m, 0, sizeof(m));
	m.type = CTL_READY;
	if (!ok || !UT_CHECK(ctl_send(p, &m)) || !ctl_expect(p, &m, CTL_READY))
		return false;
	ok = client_mix(p, 0, p->nops);
	if (ok && p->mode == MODE_GONE) {
		ok = client_gone(p);
		print_stats(p);
		return ok;
	}
	memset(&m, 0, sizeof(m));
	m.type = CTL_DONE;
	ok &= UT_CHECK(ctl_send(p, &m));
	if (ok && p->extras)
		ok = client_uc(p) && ud_send(p) && ud_recv(p);
	print_stats(p);
	if (!ctl_expect(p, &m, CTL_RESULT))
		return false;
	return UT_CHECK_EQ(m.failed, 0) && ok;
}

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s --role server --config FILE\n"
		"       %s --role client --config FILE --tcp PORT [--mode "
		"mix|fault|gone|rnr]\n"
		"          [--seed S] [--ops N] [--timeout T] [--retry R]\n",
		prog, prog);
}

struct args {
	const char *role, *config;
	uint16_t tcp;
};

static bool
parse_args(int argc, char **argv, struct args *a, struct peer *p)
{
	static const struct option opts[] = {
		{ "role", required_argument, NULL, 'r' },
		{ "config", required_argument, NULL, 'c' },
		{ "tcp", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 's' },
		{ "ops", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "retry", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int m;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			a->role = optarg;
			break;
		case 'c':
			a->config = optarg;
			break;
		case 'p':
			a->tcp = (uint16_t)strtoul(optarg, NULL, 0);
			break;
		case 's':
			p->seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			p->nops = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 't':
			p->timeout = (uint8_t)strtoul(optarg, NULL, 0);
			break;
		case 'R':
			p->retry_cnt = (uint8_t)strtoul(optarg, NULL, 0);
			break;
		case 'm':
			for (m = 0; m < MODE_COUNT &&
			     strcmp(optarg, mode_names[m]) != 0; m++)
				;
			if (m == MODE_COUNT)
				return false;
			p->mode = (enum mode)m;
			break;
		default:
			return false;
		}
	}
	if (a->role == NULL || a->config == NULL)
		return false;
	p->server = strcmp(a->role, "server") == 0;
	p->extras = p->mode == MODE_MIX;
	return (p->server || strcmp(a->role, "client") == 0) &&
		(p->server || (a->tcp != 0 && p->nops > 0 && p->timeout <= 31 &&
			       p->retry_cnt <= 7));
}

int
main(int argc, char **argv)
{
	struct peer p = { .seed = 1, .nops = 2000, .timeout = 10,
			  .retry_cnt = 3, .fd = -1 };
	char err[UROCE_CONFIG_ERR_LEN];
	struct uroce_config cfg;
	struct args a = { 0 };
	bool ok;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!parse_args(argc, argv, &a, &p)) {
		usage(argv[0]);
		return 2;
	}
	memset(&cfg, 0, sizeof(cfg));
	if (uroce_config_load(a.config, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (!UT_CHECK_EQ(uroce_engine_init(&cfg, 0, err, sizeof(err)), 0)) {
		fprintf(stderr, "     %s\n", err);
		uroce_config_free(&cfg);
		return ut_summary_named(a.role);
	}
	UT_CHECK_EQ(uroce_engine_lcores(), 1);
	ok = objects_create(&p);
	if (ok)
		ok = p.server ? run_server(&p) : run_client(&p, a.tcp);
	UT_CHECK(ok);
	objects_destroy(&p);
	if (p.fd >= 0)
		close(p.fd);
	uroce_engine_fini();
	uroce_config_free(&cfg);
	return ut_summary_named(p.server ? "peer server" : "peer client");
}
