/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Shared receive queues through our libibverbs.so.1, in one process with
 * two devices joined by a ringlink (uroce0 sends, uroce1 receives; its
 * engine lcore runs in the background, so the SRQ is taken from while the
 * test thread posts, modifies and resizes it):
 *  - ibv_query_device's max_srq, max_srq_wr, max_srq_sge and
 *    IBV_DEVICE_SRQ_RESIZE; ibv_create_srq / ibv_create_srq_ex: attr back
 *    with max_wr >= requested, the limits (EINVAL), the types and masks we
 *    do not offer (EOPNOTSUPP), a PD of another device (EINVAL);
 *  - ibv_post_recv on a QP with an SRQ: EINVAL; ibv_destroy_srq: EBUSY
 *    while QPs use it;
 *  - the limit: exactly one IBV_EVENT_SRQ_LIMIT_REACHED on the async fd
 *    when the count drops below it, srq_limit 0 after, none until re-armed,
 *    at once when armed above the count;
 *  - a failed ibv_modify_srq changes nothing, even a valid part of it;
 *  - resize under traffic: three QPs' SENDs keep landing byte-exact and in
 *    order while the SRQ grows and shrinks under them;
 *  - a QP in ERR: IBV_EVENT_QP_LAST_WQE_REACHED, the SRQ's WQEs stay;
 *  - ibv_destroy_srq waits until its events are acknowledged.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uroce_test.h"
#include "uroce_test_verbs.h"
#include "verbs_priv.h"

#define NQP		3
#define MSG		2100		/* three packets at MTU 1024 */
#define SLOT		4096
#define NSLOT		512
#define WAIT_MS		10000		/* a hang guard, not a performance bound */
#define DIM(a)		(sizeof(a) / sizeof((a)[0]))

struct rig {
	struct ibv_context *c0, *c1;
	struct ibv_pd *pd0, *pd1;
	struct ibv_cq *scq, *rcq, *bcq;	/* senders', SRQ QPs', spare */
	struct ibv_srq *srq;
	struct ibv_qp *qa[NQP], *qb[NQP];
	struct ibv_mr *smr, *rmr;
	uint8_t *sbuf, *rbuf;
	uint32_t sent[NQP], got[NQP];	/* messages per QP */
	unsigned int posted;		/* receive WQEs posted, not completed */
};

/* ------------------------------------------------------------------------
 * Async events.
 */

/* The next async event within WAIT_MS: 0, or -1 if none came. */
static int
next_event(struct ibv_context *ctx, struct ibv_async_event *ev, int ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };

	for (;;) {
		if (ibv_get_async_event(ctx, ev) == 0)
			return 0;
		if (errno != EAGAIN || poll(&pfd, 1, ms) != 1)
			return -1;
	}
}

/* No event is queued (the ones that will come are raised before the
 * completions that caused them, which the caller has polled). */
static bool
no_event(struct ibv_context *ctx)
{
	struct ibv_async_event ev;

	if (ibv_get_async_event(ctx, &ev) == 0) {
		fprintf(stderr, "     unexpected event %s\n",
			ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
		return false;
	}
	return errno == EAGAIN;
}

/* ------------------------------------------------------------------------
 * Set-up: senders on c0, receivers sharing the SRQ on c1.
 */
static struct ibv_qp *
rc_qp(struct ibv_pd *pd, struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr qa;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.srq = srq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = 64;	/* ignored with an SRQ */
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	return ibv_create_qp(pd, &qa);
}

static int
rig_open(struct rig *r, struct ibv_context *c0, struct ibv_context *c1)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 100, .max_sge = 2 } };
	unsigned int q;

	r->c0 = c0;
	r->c1 = c1;
	r->pd0 = ibv_alloc_pd(c0);
	r->pd1 = ibv_alloc_pd(c1);
	r->scq = ibv_create_cq(c0, 1024, NULL, NULL, 0);
	r->rcq = ibv_create_cq(c1, 4096, NULL, NULL, 0);
	r->sbuf = aligned_alloc(4096, (size_t)NQP * SLOT);
	r->rbuf = aligned_alloc(4096, (size_t)NSLOT * SLOT);
	if (!UT_CHECK(r->pd0 && r->pd1 && r->scq && r->rcq && r->sbuf && r->rbuf))
		return -1;
	r->smr = ibv_reg_mr(r->pd0, r->sbuf, (size_t)NQP * SLOT, IBV_ACCESS_LOCAL_WRITE);
	r->rmr = ibv_reg_mr(r->pd1, r->rbuf, (size_t)NSLOT * SLOT, IBV_ACCESS_LOCAL_WRITE);
	r->srq = ibv_create_srq(r->pd1, &sa);
	if (!UT_CHECK(r->smr && r->rmr && r->srq))
		return -1;
	UT_CHECK_EQ(sa.attr.max_wr, 128);	/* >= 100 */
	UT_CHECK_EQ(sa.attr.max_sge, 2);
	UT_CHECK(r->srq->context == c1 && r->srq->pd == r->pd1);
	for (q = 0; q < NQP; q++) {
		r->qa[q] = rc_qp(r->pd0, r->scq, NULL);
		r->qb[q] = rc_qp(r->pd1, r->rcq, r->srq);
		if (!UT_CHECK(r->qa[q] != NULL && r->qb[q] != NULL))
			return -1;
		UT_CHECK(r->qb[q]->srq == r->srq);
		/* RNR retry for ever: the SRQ runs dry at times. */
		ut_verbs_rc_connect(r->qa[q], c1, r->qb[q]->qp_num, 7, 1);
		ut_verbs_rc_connect(r->qb[q], c0, r->qa[q]->qp_num, 7, 1);
	}
	return 0;
}

/* Post receive slot s (two SGEs: 64 bytes, then the rest). */
static int
post_slot(struct rig *r, unsigned int s)
{
	uint8_t *b = r->rbuf + (size_t)s * SLOT;
	struct ibv_sge sge[2] = {
		{ (uintptr_t)b, 64, r->rmr->lkey },
		{ (uintptr_t)b + 64, SLOT - 64, r->rmr->lkey },
	};
	struct ibv_recv_wr wr = { .wr_id = s, .sg_list = sge, .num_sge = 2 }, *bad;
	int ret;

	memset(b, 0, SLOT);
	ret = ibv_post_srq_recv(r->srq, &wr, &bad);
	if (ret == 0)
		r->posted++;
	return ret;
}

static uint8_t
pat(unsigned int q, uint32_t m, uint32_t i)
{
	return (uint8_t)(q * 73 + m * 13 + i);
}

/* SEND message sent[q] from QP q (its number in the immediate). */
static int
send_one(struct rig *r, unsigned int q)
{
	uint8_t *b = r->sbuf + (size_t)q * SLOT;
	uint32_t m = r->sent[q], i;
	struct ibv_sge sge = { (uintptr_t)b, MSG, r->smr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = m, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htobe32(m),
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int ret;

	for (i = 0; i < MSG; i++)
		b[i] = pat(q, m, i);
	ret = ibv_post_send(r->qa[q], &wr, &bad);
	if (ret == 0)
		r->sent[q]++;
	return ret;
}

/* Wait for the send completion of QP q's last message (one in flight per
 * QP keeps its buffer stable). */
static bool
wait_send(struct rig *r)
{
	struct ibv_wc wc;
	int n, spins = 0;

	while ((n = ibv_poll_cq(r->scq, 1, &wc)) == 0 && ++spins < WAIT_MS * 100)
		usleep(10);
	return UT_CHECK_EQ(n, 1) && UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
}

static int
qb_index(const struct rig *r, uint32_t qpn)
{
	unsigned int q;

	for (q = 0; q < NQP; q++)
		if (r->qb[q]->qp_num == qpn)
			return (int)q;
	return -1;
}

/* One receive completion: QP, order, immediate, bytes over both SGEs. */
static void
check_recv(struct rig *r, const struct ibv_wc *wc)
{
	int q = qb_index(r, wc->qp_num);
	const uint8_t *b = r->rbuf + wc->wr_id * SLOT;
	uint32_t m, i;
	bool same = true;

	r->posted--;
	if (!UT_CHECK(q >= 0) || !UT_CHECK_EQ(wc->status, IBV_WC_SUCCESS))
		return;
	m = r->got[q]++;
	UT_CHECK_EQ(wc->opcode, IBV_WC_RECV);
	UT_CHECK_EQ(wc->byte_len, MSG);
	UT_CHECK(wc->wc_flags & IBV_WC_WITH_IMM);
	UT_CHECK_EQ(be32toh(wc->imm_data), m);
	UT_CHECK_EQ(wc->src_qp, r->qa[q]->qp_num);
	for (i = 0; i < MSG; i++)
		same = same && b[i] == pat((unsigned int)q, m, i);
	UT_CHECK(same);
	UT_NOTE("qp %d message %u", q, m);
}

/* Send n messages round-robin over the QPs and receive them; no repost. */
static void
exchange(struct rig *r, unsigned int n)
{
	struct ibv_wc wc;
	unsigned int i, got = 0, spins = 0;

	for (i = 0; i < n; i++) {
		UT_CHECK_EQ(send_one(r, i % NQP), 0);
		wait_send(r);
	}
	while (got < n && ++spins < WAIT_MS * 100) {
		if (ibv_poll_cq(r->rcq, 1, &wc) == 1) {
			check_recv(r, &wc);
			got++;
		} else {
			usleep(10);
		}
	}
	UT_CHECK_EQ(got, n);
}

/* ------------------------------------------------------------------------
 * The tests.
 */
static void
test_caps_and_create(struct ibv_context *c0, struct ibv_context *c1,
		     struct ibv_pd *pd1)
{
	struct ibv_device_attr da;
	struct ibv_srq_init_attr sa;
	struct ibv_srq_init_attr_ex sx;
	struct ibv_srq *srq;

	if (!UT_CHECK_EQ(ibv_query_device(c1, &da), 0))
		return;
	UT_CHECK(da.max_srq > 0 && da.max_srq_wr >= 1024 && da.max_srq_sge >= 1);
	UT_CHECK(da.device_cap_flags & IBV_DEVICE_SRQ_RESIZE);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = (uint32_t)da.max_srq_wr + 1;
	sa.attr.max_sge = 1;
	errno = 0;
	UT_CHECK(ibv_create_srq(pd1, &sa) == NULL && errno == EINVAL);
	sa.attr.max_wr = 1;
	sa.attr.max_sge = (uint32_t)da.max_srq_sge + 1;
	errno = 0;
	UT_CHECK(ibv_create_srq(pd1, &sa) == NULL && errno == EINVAL);
	sa.attr.max_wr = 0;
	sa.attr.max_sge = 1;
	errno = 0;
	UT_CHECK(ibv_create_srq(pd1, &sa) == NULL && errno == EINVAL);
	UT_CHECK_EQ(sa.attr.max_wr, 0);		/* a failure writes nothing */
	/* The largest one the device says it has. */
	sa.attr.max_wr = (uint32_t)da.max_srq_wr;
	sa.attr.max_sge = (uint32_t)da.max_srq_sge;
	srq = ibv_create_srq(pd1, &sa);
	if (UT_CHECK(srq != NULL)) {
		UT_CHECK_EQ(sa.attr.max_wr, (uint32_t)da.max_srq_wr);
		UT_CHECK_EQ(ibv_destroy_srq(srq), 0);
	}
	/* ibv_create_srq_ex: through our op when the mask has more than PD. */
	memset(&sx, 0, sizeof(sx));
	sx.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
		       IBV_SRQ_INIT_ATTR_CQ;
	sx.srq_type = IBV_SRQT_BASIC;
	sx.pd = pd1;
	sx.attr.max_wr = 10;
	sx.attr.max_sge = 3;
	srq = ibv_create_srq_ex(c1, &sx);
	if (UT_CHECK(srq != NULL)) {
		UT_CHECK_EQ(sx.attr.max_wr, 16);
		UT_CHECK_EQ(sx.attr.max_sge, 3);
		UT_CHECK_EQ(ibv_destroy_srq(srq), 0);
	}
	sx.srq_type = IBV_SRQT_XRC;		/* no XRCD and CQ: test_verbs_xrc.c */
	errno = 0;
	UT_CHECK(ibv_create_srq_ex(c1, &sx) == NULL && errno == EINVAL);
	sx.srq_type = IBV_SRQT_TM;		/* no CQ, tm_cap 0 (test_verbs_tm.c) */
	sx.comp_mask |= IBV_SRQ_INIT_ATTR_TM;
	errno = 0;
	UT_CHECK(ibv_create_srq_ex(c1, &sx) == NULL && errno == EINVAL);
	sx.srq_type = IBV_SRQT_BASIC;
	sx.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_RESERVED;
	errno = 0;
	UT_CHECK(ibv_create_srq_ex(c1, &sx) == NULL && errno == EOPNOTSUPP);
	sx.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_CQ;
	errno = 0;				/* no PD */
	UT_CHECK(ibv_create_srq_ex(c1, &sx) == NULL && errno == EINVAL);
	sx.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ;
	errno = 0;				/* the PD of another device */
	UT_CHECK(ibv_create_srq_ex(c0, &sx) == NULL && errno == EINVAL);
}

static void
test_busy_and_post(struct rig *r)
{
	struct ibv_recv_wr wr = { .wr_id = 1 }, *bad = NULL;
	struct ibv_sge sge[3] = { { 0 } };
	struct ibv_srq_attr q;

	UT_CHECK_EQ(ibv_post_recv(r->qb[0], &wr, &bad), EINVAL);
	UT_CHECK(bad == &wr);
	wr.sg_list = sge;
	wr.num_sge = 3;				/* above max_sge 2 */
	bad = NULL;
	UT_CHECK_EQ(ibv_post_srq_recv(r->srq, &wr, &bad), EINVAL);
	UT_CHECK(bad == &wr);
	UT_CHECK_EQ(ibv_destroy_srq(r->srq), EBUSY);
	UT_CHECK_EQ(ibv_query_srq(r->srq, &q), 0);
	UT_CHECK_EQ(q.max_wr, 128);
	UT_CHECK_EQ(q.max_sge, 2);
	UT_CHECK_EQ(q.srq_limit, 0);
}

/* The limit rules with real traffic taking the WQEs. */
static void
test_limit(struct rig *r)
{
	struct ibv_srq_attr a = { 0 }, q;
	struct ibv_async_event ev;
	unsigned int s;

	for (s = 0; s < 8; s++)
		UT_CHECK_EQ(post_slot(r, s), 0);
	a.srq_limit = 4;
	UT_CHECK_EQ(ibv_modify_srq(r->srq, &a, IBV_SRQ_LIMIT), 0);
	UT_CHECK(no_event(r->c1));
	exchange(r, 4);				/* 4 left: not below 4 */
	UT_CHECK(no_event(r->c1));
	UT_CHECK_EQ(ibv_query_srq(r->srq, &q), 0);
	UT_CHECK_EQ(q.srq_limit, 4);
	exchange(r, 1);				/* 3 < 4 */
	if (UT_CHECK_EQ(next_event(r->c1, &ev, WAIT_MS), 0)) {
		UT_CHECK_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
		UT_CHECK(ev.element.srq == r->srq);
		ibv_ack_async_event(&ev);
	}
	UT_CHECK_EQ(ibv_query_srq(r->srq, &q), 0);
	UT_CHECK_EQ(q.srq_limit, 0);		/* disarmed */
	exchange(r, 2);
	UT_CHECK(no_event(r->c1));		/* once only */
	/* Armed above the count (1): at once. */
	a.srq_limit = 2;
	UT_CHECK_EQ(ibv_modify_srq(r->srq, &a, IBV_SRQ_LIMIT), 0);
	if (UT_CHECK_EQ(next_event(r->c1, &ev, 0), 0)) {
		UT_CHECK_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
		ibv_ack_async_event(&ev);
	}
	UT_CHECK_EQ(ibv_query_srq(r->srq, &q), 0);
	UT_CHECK_EQ(q.srq_limit, 0);
	UT_CHECK(no_event(r->c1));
}

/* A failed modify changes nothing, even the valid half of its mask. */
static void
test_modify_atomic(struct rig *r)
{
	struct ibv_srq_attr a, q;

	UT_CHECK_EQ(post_slot(r, 8), 0);
	UT_CHECK_EQ(post_slot(r, 9), 0);	/* 3 outstanding now */
	memset(&a, 0, sizeof(a));
	a.max_wr = 2;				/* below the 3 outstanding */
	a.srq_limit = 1;
	UT_CHECK_EQ(ibv_modify_srq(r->srq, &a, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT), EINVAL);
	a.max_wr = 64;
	a.srq_limit = 65;			/* above the new max_wr */
	UT_CHECK_EQ(ibv_modify_srq(r->srq, &a, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT), EINVAL);
	a.srq_limit = 1;
	UT_CHECK_EQ(ibv_modify_srq(r->srq, &a, IBV_SRQ_MAX_WR | (1 << 5)), EINVAL);
	a.max_wr = 0;
	UT_CHECK_EQ(ibv_modify_srq(r->srq, &a, IBV_SRQ_MAX_WR), EINVAL);
	UT_CHECK_EQ(ibv_query_srq(r->srq, &q), 0);
	UT_CHECK_EQ(q.max_wr, 128);
	UT_CHECK_EQ(q.srq_limit, 0);
	UT_CHECK(no_event(r->c1));
	/* The three outstanding WQEs are still there and still work. */
	exchange(r, 3);
}

/* Resize while three QPs' messages land in the SRQ. */
static void
test_resize_traffic(struct rig *r)
{
	static const uint32_t sizes[] = { 512, 64, 256, 32, 128 };
	struct ibv_srq_attr a = { 0 };
	struct ibv_wc wc[16];
	unsigned int slot = 0, total = 0, want = 600, k = 0, spins = 0;
	unsigned int inflight = 0, q;
	int n, i;

	/* 24 WQEs at a time, fewer than the smallest size. */
	while (r->posted < 24)
		UT_CHECK_EQ(post_slot(r, slot++ % NSLOT), 0);
	while (total < want && spins < WAIT_MS * 100) {
		/* One SEND per QP in flight (its buffer is rewritten). */
		if (inflight == 0 && r->sent[0] - r->got[0] < 4) {
			for (q = 0; q < NQP; q++)
				UT_CHECK_EQ(send_one(r, q), 0);
			inflight = NQP;
		}
		n = ibv_poll_cq(r->scq, 16, wc);
		for (i = 0; i < n; i++)
			UT_CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
		inflight -= (unsigned int)(n > 0 ? n : 0);
		n = ibv_poll_cq(r->rcq, 16, wc);
		for (i = 0; i < n; i++) {
			check_recv(r, &wc[i]);
			UT_CHECK_EQ(post_slot(r, slot++ % NSLOT), 0);
			total++;
		}
		if (n == 0) {
			spins++;
			usleep(10);
		}
		/* Grow and shrink under the traffic. */
		a.max_wr = sizes[k++ % DIM(sizes)];
		UT_CHECK_EQ(ibv_modify_srq(r->srq, &a, IBV_SRQ_MAX_WR), 0);
		UT_CHECK_EQ(a.max_wr, sizes[(k - 1) % DIM(sizes)]);
	}
	UT_CHECK(total >= want);
	printf("resize under traffic: %u messages, %u resizes\n", total, k);
}

/* A QP in ERR: LAST_WQE_REACHED; the SRQ keeps its WQEs for the others. */
static void
test_last_wqe(struct rig *r)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_async_event ev;
	struct ibv_wc wc;
	unsigned int before = r->posted;

	UT_CHECK_EQ(ibv_modify_qp(r->qb[0], &a, IBV_QP_STATE), 0);
	if (UT_CHECK_EQ(next_event(r->c1, &ev, WAIT_MS), 0)) {
		UT_CHECK_EQ(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
		UT_CHECK(ev.element.qp == r->qb[0]);
		ibv_ack_async_event(&ev);
	}
	/* The modify ran on the owner: a flush would be there already. */
	UT_CHECK_EQ(ibv_poll_cq(r->rcq, 1, &wc), 0);
	UT_CHECK_EQ(r->posted, before);
	/* QP 1 still receives from it. */
	UT_CHECK_EQ(send_one(r, 1), 0);
	wait_send(r);
	while (ibv_poll_cq(r->rcq, 1, &wc) == 0)
		usleep(10);
	check_recv(r, &wc);
	UT_CHECK_EQ(ibv_destroy_qp(r->qb[0]), 0);
	r->qb[0] = NULL;
}

struct destroy_arg {
	struct ibv_srq *srq;
	int ret;
	uint32_t done;
};

static void *
destroy_thread(void *p)
{
	struct destroy_arg *d = p;

	d->ret = ibv_destroy_srq(d->srq);
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* ibv_destroy_srq waits for its events to be acknowledged. */
static void
test_destroy_waits(struct rig *r)
{
	struct ibv_srq_attr a = { .max_wr = 128, .srq_limit = 128 };
	struct destroy_arg d = { .srq = r->srq };
	struct ibv_async_event ev;
	pthread_t t;
	unsigned int q;

	for (q = 0; q < NQP; q++) {
		if (r->qb[q] != NULL)
			UT_CHECK_EQ(ibv_destroy_qp(r->qb[q]), 0);
		r->qb[q] = NULL;
	}
	UT_CHECK_EQ(ibv_modify_srq(r->srq, &a, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT), 0);
	if (!UT_CHECK_EQ(next_event(r->c1, &ev, WAIT_MS), 0))
		return;
	UT_CHECK(ev.element.srq == r->srq);
	pthread_create(&t, NULL, destroy_thread, &d);
	usleep(50000);
	UT_CHECK_EQ(__atomic_load_n(&d.done, __ATOMIC_ACQUIRE), 0);
	ibv_ack_async_event(&ev);
	pthread_join(t, NULL);
	UT_CHECK_EQ(d.ret, 0);
	r->srq = NULL;
}

static void
rig_close(struct rig *r)
{
	unsigned int q;

	for (q = 0; q < NQP; q++) {
		if (r->qa[q] != NULL)
			UT_CHECK_EQ(ibv_destroy_qp(r->qa[q]), 0);
		if (r->qb[q] != NULL)
			UT_CHECK_EQ(ibv_destroy_qp(r->qb[q]), 0);
	}
	if (r->srq != NULL)
		UT_CHECK_EQ(ibv_destroy_srq(r->srq), 0);
	if (r->smr != NULL)
		UT_CHECK_EQ(ibv_dereg_mr(r->smr), 0);
	if (r->rmr != NULL)
		UT_CHECK_EQ(ibv_dereg_mr(r->rmr), 0);
	if (r->scq != NULL)
		UT_CHECK_EQ(ibv_destroy_cq(r->scq), 0);
	if (r->rcq != NULL)
		UT_CHECK_EQ(ibv_destroy_cq(r->rcq), 0);
	if (r->pd0 != NULL)
		UT_CHECK_EQ(ibv_dealloc_pd(r->pd0), 0);
	if (r->pd1 != NULL)
		UT_CHECK_EQ(ibv_dealloc_pd(r->pd1), 0);
	free(r->sbuf);
	free(r->rbuf);
}

int
main(void)
{
	struct ibv_device **list = NULL;
	struct ibv_context *c0 = NULL, *c1 = NULL;
	struct rig r;

	memset(&r, 0, sizeof(r));
	if (ut_verbs_ringlink_pair("srq", 85, &list, &c0, &c1) == 0) {
		fcntl(c1->async_fd, F_SETFL,
		      fcntl(c1->async_fd, F_GETFL) | O_NONBLOCK);
		if (rig_open(&r, c0, c1) == 0) {
			test_caps_and_create(c0, c1, r.pd1);
			test_busy_and_post(&r);
			test_limit(&r);
			test_modify_atomic(&r);
			test_resize_traffic(&r);
			test_last_wqe(&r);
			test_destroy_waits(&r);
		}
		rig_close(&r);
	}
	ut_verbs_close_pair(list, c0, c1);
	return ut_summary();
}
