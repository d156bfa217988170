/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * XRC through our libibverbs.so.1, in one process with two devices joined
 * by a ringlink (uroce0 and uroce1):
 *  - ibv_open_xrcd / ibv_close_xrcd: every error (nothing opened), private
 *    domains (fd -1) apart, a file's domain shared by every handle of its
 *    inode, O_CREAT and O_EXCL, EBUSY closing the last handle of a domain
 *    in use (the domain still works after), a non-last handle closes;
 *  - XRC_RECV QPs in a domain, XRC_SEND QPs with a send CQ only, their
 *    creation errors; neither takes ibv_post_recv, a target no send;
 *  - ibv_open_qp: its errors, a second handle on a target QP (a modify
 *    through one is seen through the other), the QP living on until its
 *    last handle is destroyed;
 *  - the XRC modify_qp tables through the verbs (a failed modify changes
 *    nothing);
 *  - end to end, uroce0 -> uroce1: XRC SRQ creation errors, SENDs of 0 B to
 *    8 MTUs (with immediate data) through an XRC_SEND QP and an XRC_RECV QP
 *    into the XRC SRQ the WR names, byte-exact across two SGEs, completions
 *    on the SRQ's CQ with the target QP's number; RDMA WRITE and READ
 *    checked against the SRQ's PD; a request naming an SRQ of another
 *    domain NAKed (REM_INV_REQ_ERR at the sender, the target in ERR).
 */

#include <endian.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "uroce_test.h"
#include "uroce_test_verbs.h"

#define XRC_FILE_FMT	"/tmp/uroce-xrc-test.%d"

static char xrc_file[64];

static struct ibv_xrcd *
xrcd_open(struct ibv_context *ctx, uint32_t mask, int fd, int oflags)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = mask, .fd = fd, .oflags = oflags,
	};

	errno = 0;
	return ibv_open_xrcd(ctx, &a);
}

#define FD_OF	(IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS)

static struct ibv_qp *
tgt_qp(struct ibv_context *ctx, struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_RECV;
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	a.xrcd = xrcd;
	errno = 0;
	return ibv_create_qp_ex(ctx, &a);
}

static struct ibv_qp *
ini_qp(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_SEND;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd;
	a.send_cq = cq;
	a.cap.max_send_wr = 16;
	a.cap.max_send_sge = 1;
	errno = 0;
	return ibv_create_qp_ex(ctx, &a);
}

static struct ibv_qp *
open_qp(struct ibv_context *ctx, uint32_t mask, struct ibv_xrcd *xrcd,
	uint32_t qpn, enum ibv_qp_type type)
{
	struct ibv_qp_open_attr a = {
		.comp_mask = mask, .qp_num = qpn, .xrcd = xrcd,
		.qp_context = &xrc_file, .qp_type = type,
	};

	errno = 0;
	return ibv_open_qp(ctx, &a);
}

#define OPEN_ALL (IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | \
		  IBV_QP_OPEN_ATTR_TYPE)

/* ------------------------------------------------------------------------
 * Domains.
 */
static void
test_xrcd_errors(struct ibv_context *ctx)
{
	int fd = open(xrc_file, O_RDONLY | O_CREAT, 0600);
	int closed = dup(fd);

	close(closed);
	UT_CHECK(ibv_open_xrcd(ctx, NULL) == NULL && errno == EINVAL);
	UT_CHECK(xrcd_open(ctx, 0, -1, O_CREAT) == NULL && errno == EINVAL);
	UT_CHECK(xrcd_open(ctx, IBV_XRCD_INIT_ATTR_FD, -1, O_CREAT) == NULL &&
		 errno == EINVAL);
	UT_CHECK(xrcd_open(ctx, FD_OF | IBV_XRCD_INIT_ATTR_RESERVED, -1,
			   O_CREAT) == NULL && errno == EOPNOTSUPP);
	UT_CHECK(xrcd_open(ctx, FD_OF, -1, 0) == NULL && errno == EINVAL);
	UT_CHECK(xrcd_open(ctx, FD_OF, -1, O_CREAT | O_TRUNC) == NULL &&
		 errno == EINVAL);
	UT_CHECK(xrcd_open(ctx, FD_OF, closed, O_CREAT) == NULL && errno == EBADF);
	/* A file without a domain, and no O_CREAT: the kernel's EAGAIN. */
	UT_CHECK(xrcd_open(ctx, FD_OF, fd, 0) == NULL && errno == EAGAIN);
	close(fd);
}

/* Whether a target QP of a is found through b (the same domain). */
static bool
same_domain(struct ibv_context *ctx, struct ibv_xrcd *a, struct ibv_xrcd *b)
{
	struct ibv_qp *t = tgt_qp(ctx, a), *o;
	bool same;

	if (!UT_CHECK(t != NULL))
		return false;
	o = open_qp(ctx, OPEN_ALL, b, t->qp_num, IBV_QPT_XRC_RECV);
	same = o != NULL;
	if (o != NULL) {
		UT_CHECK_EQ(o->qp_num, t->qp_num);
		UT_CHECK_EQ(ibv_destroy_qp(o), 0);
	} else {
		UT_CHECK_EQ(errno, EINVAL);
		UT_NOTE("open_qp of 0x%x through the other handle", t->qp_num);
	}
	UT_CHECK_EQ(ibv_destroy_qp(t), 0);
	return same;
}

static void
test_xrcd_share(struct ibv_context *ctx)
{
	struct ibv_xrcd *p1, *p2, *f1, *f2, *f3;
	int fd1 = open(xrc_file, O_RDONLY | O_CREAT, 0600);
	int fd2 = open(xrc_file, O_RDONLY);
	struct ibv_qp *t;

	p1 = xrcd_open(ctx, FD_OF, -1, O_CREAT);
	p2 = xrcd_open(ctx, FD_OF, -1, O_CREAT);
	f1 = xrcd_open(ctx, FD_OF, fd1, O_CREAT);
	f2 = xrcd_open(ctx, FD_OF, fd2, 0);	/* exists now: no O_CREAT needed */
	f3 = xrcd_open(ctx, FD_OF, fd2, O_CREAT);
	if (!UT_CHECK(p1 != NULL && p2 != NULL && f1 != NULL && f2 != NULL &&
		      f3 != NULL))
		return;
	UT_CHECK(p1->context == ctx && f2->context == ctx);
	UT_CHECK(!same_domain(ctx, p1, p2));
	UT_CHECK(!same_domain(ctx, p1, f1));
	UT_CHECK(same_domain(ctx, f1, f2));
	UT_CHECK(same_domain(ctx, f3, f1));
	UT_CHECK(xrcd_open(ctx, FD_OF, fd1, O_CREAT | O_EXCL) == NULL &&
		 errno == EINVAL);
	/* In use: closing a handle that is not the last one works; the last
	 * one is EBUSY, and the domain stays usable. */
	t = tgt_qp(ctx, f1);
	if (UT_CHECK(t != NULL)) {
		UT_CHECK_EQ(ibv_close_xrcd(f1), 0);
		UT_CHECK_EQ(ibv_close_xrcd(f2), 0);
		UT_CHECK_EQ(ibv_close_xrcd(f3), EBUSY);
		UT_CHECK(same_domain(ctx, f3, f3));
		UT_CHECK_EQ(ibv_destroy_qp(t), 0);
	} else {
		UT_CHECK_EQ(ibv_close_xrcd(f1), 0);
		UT_CHECK_EQ(ibv_close_xrcd(f2), 0);
	}
	UT_CHECK_EQ(ibv_close_xrcd(f3), 0);
	/* The inode's domain is gone with its last handle. */
	UT_CHECK(xrcd_open(ctx, FD_OF, fd1, 0) == NULL && errno == EAGAIN);
	f1 = xrcd_open(ctx, FD_OF, fd1, O_CREAT | O_EXCL);
	if (UT_CHECK(f1 != NULL))
		UT_CHECK_EQ(ibv_close_xrcd(f1), 0);
	t = tgt_qp(ctx, p2);
	if (UT_CHECK(t != NULL)) {
		UT_CHECK_EQ(ibv_close_xrcd(p2), EBUSY);
		UT_CHECK_EQ(ibv_destroy_qp(t), 0);
	}
	UT_CHECK_EQ(ibv_close_xrcd(p1), 0);
	UT_CHECK_EQ(ibv_close_xrcd(p2), 0);
	close(fd1);
	close(fd2);
}

/* ------------------------------------------------------------------------
 * QPs.
 */
static void
test_qp_create(struct ibv_context *ctx, struct ibv_context *other,
	       struct ibv_xrcd *xrcd, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp_init_attr ia;
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *rbad = NULL;
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_SEND }, *bad = NULL;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	const int init_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			      IBV_QP_ACCESS_FLAGS;
	struct ibv_qp *t, *s;

	/* A target needs its domain, of this device. */
	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_RECV;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd;
	UT_CHECK(ibv_create_qp_ex(ctx, &a) == NULL && errno == EINVAL);
	UT_CHECK(tgt_qp(other, xrcd) == NULL && errno == EINVAL);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = IBV_QPT_XRC_RECV;
	ia.send_cq = cq;
	ia.recv_cq = cq;
	UT_CHECK(ibv_create_qp(pd, &ia) == NULL && errno == EINVAL);
	/* An initiator needs a send CQ, not a receive one. */
	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_SEND;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd;
	UT_CHECK(ibv_create_qp_ex(ctx, &a) == NULL && errno == EINVAL);

	t = tgt_qp(ctx, xrcd);
	s = ini_qp(ctx, pd, cq);
	if (!UT_CHECK(t != NULL && s != NULL))
		return;
	UT_CHECK(t->qp_num != 0 && t->qp_num != s->qp_num);
	UT_CHECK(t->pd == NULL && t->send_cq == NULL && t->recv_cq == NULL);
	UT_CHECK_EQ(t->qp_type, IBV_QPT_XRC_RECV);
	UT_CHECK(s->pd == pd && s->send_cq == cq && s->recv_cq == NULL);
	UT_CHECK_EQ(s->qp_type, IBV_QPT_XRC_SEND);
	UT_CHECK_EQ(ibv_modify_qp(t, &qa, init_mask), 0);
	UT_CHECK_EQ(ibv_modify_qp(s, &qa, init_mask), 0);
	UT_CHECK_EQ(ibv_post_recv(s, &rwr, &rbad), EINVAL);
	UT_CHECK(rbad == &rwr);
	rbad = NULL;
	UT_CHECK_EQ(ibv_post_recv(t, &rwr, &rbad), EINVAL);
	UT_CHECK_EQ(ibv_post_send(t, &wr, &bad), EINVAL);
	UT_CHECK(bad == &wr);
	UT_CHECK_EQ(ibv_destroy_qp(s), 0);
	UT_CHECK_EQ(ibv_destroy_qp(t), 0);
}

/* The XRC modify tables through the verbs: a missing required attribute
 * is EINVAL and changes nothing; the masks ibv_xsrq_pingpong uses pass. */
static void
test_qp_modify(struct ibv_context *ctx, struct ibv_xrcd *xrcd)
{
	struct ibv_qp *t = tgt_qp(ctx, xrcd);
	struct ibv_qp_attr qa, q;
	struct ibv_qp_init_attr qi;
	const int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MIN_RNR_TIMER;

	if (!UT_CHECK(t != NULL))
		return;
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_INIT;
	qa.port_num = 1;
	UT_CHECK_EQ(ibv_modify_qp(t, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTR;
	qa.path_mtu = IBV_MTU_1024;
	qa.dest_qp_num = 0x123;
	qa.rq_psn = 77;
	qa.min_rnr_timer = 12;
	qa.ah_attr.is_global = 1;
	qa.ah_attr.port_num = 1;
	qa.ah_attr.grh.hop_limit = 1;
	qa.ah_attr.grh.dgid.raw[10] = 0xff;
	qa.ah_attr.grh.dgid.raw[11] = 0xff;
	qa.ah_attr.grh.dgid.raw[12] = 192;
	qa.ah_attr.grh.dgid.raw[13] = 168;
	qa.ah_attr.grh.dgid.raw[14] = 84;
	qa.ah_attr.grh.dgid.raw[15] = 2;
	/* A target's RTR needs its responder resources. */
	UT_CHECK_EQ(ibv_modify_qp(t, &qa, rtr), EINVAL);
	UT_CHECK_EQ(ibv_query_qp(t, &q, IBV_QP_STATE, &qi), 0);
	UT_CHECK_EQ(q.qp_state, IBV_QPS_INIT);
	UT_CHECK_EQ(q.rq_psn, 0);
	UT_CHECK_EQ(ibv_modify_qp(t, &qa, rtr | IBV_QP_MAX_DEST_RD_ATOMIC), 0);
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTS;
	qa.timeout = 14;
	qa.sq_psn = 5;
	/* ... and its RTS a timeout and an SQ PSN, but no retry counts. */
	UT_CHECK_EQ(ibv_modify_qp(t, &qa, IBV_QP_STATE | IBV_QP_TIMEOUT |
				  IBV_QP_SQ_PSN | IBV_QP_RETRY_CNT), EINVAL);
	UT_CHECK_EQ(ibv_modify_qp(t, &qa, IBV_QP_STATE | IBV_QP_TIMEOUT |
				  IBV_QP_SQ_PSN), 0);
	UT_CHECK_EQ(ibv_query_qp(t, &q, IBV_QP_STATE, &qi), 0);
	UT_CHECK_EQ(q.qp_state, IBV_QPS_RTS);
	UT_CHECK_EQ(q.rq_psn, 77);
	UT_CHECK_EQ(q.dest_qp_num, 0x123);
	UT_CHECK_EQ(qi.qp_type, IBV_QPT_XRC_RECV);
	UT_CHECK_EQ(ibv_destroy_qp(t), 0);
}

static void
test_open_qp(struct ibv_context *ctx, struct ibv_context *other,
	     struct ibv_xrcd *xrcd, struct ibv_xrcd *xrcd2,
	     struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp *t = tgt_qp(ctx, xrcd), *s = ini_qp(ctx, pd, cq), *o;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 }, q;
	struct ibv_qp_init_attr qi;
	uint32_t qpn;

	if (!UT_CHECK(t != NULL && s != NULL))
		return;
	qpn = t->qp_num;
	UT_CHECK(open_qp(ctx, OPEN_ALL, NULL, qpn, IBV_QPT_XRC_RECV) == NULL &&
		 errno == EINVAL);
	UT_CHECK(ibv_open_qp(ctx, NULL) == NULL && errno == EINVAL);
	UT_CHECK(open_qp(ctx, OPEN_ALL & ~IBV_QP_OPEN_ATTR_TYPE, xrcd, qpn,
			 IBV_QPT_XRC_RECV) == NULL && errno == EINVAL);
	UT_CHECK(open_qp(ctx, OPEN_ALL | IBV_QP_OPEN_ATTR_RESERVED, xrcd, qpn,
			 IBV_QPT_XRC_RECV) == NULL && errno == EOPNOTSUPP);
	UT_CHECK(open_qp(ctx, OPEN_ALL, xrcd, qpn, IBV_QPT_RC) == NULL &&
		 errno == EINVAL);
	UT_CHECK(open_qp(ctx, OPEN_ALL, xrcd, qpn ^ 0x800000, IBV_QPT_XRC_RECV) ==
		 NULL && errno == EINVAL);
	UT_CHECK(open_qp(ctx, OPEN_ALL, xrcd2, qpn, IBV_QPT_XRC_RECV) == NULL &&
		 errno == EINVAL);
	/* An initiator is no shareable QP. */
	UT_CHECK(open_qp(ctx, OPEN_ALL, xrcd, s->qp_num, IBV_QPT_XRC_RECV) ==
		 NULL && errno == EINVAL);
	UT_CHECK(open_qp(other, OPEN_ALL, xrcd, qpn, IBV_QPT_XRC_RECV) == NULL &&
		 errno == EINVAL);
	o = open_qp(ctx, OPEN_ALL | IBV_QP_OPEN_ATTR_CONTEXT, xrcd, qpn,
		    IBV_QPT_XRC_RECV);
	if (!UT_CHECK(o != NULL)) {
		ibv_destroy_qp(t);
		ibv_destroy_qp(s);
		return;
	}
	UT_CHECK(o != t && o->qp_num == qpn && o->qp_context == &xrc_file);
	UT_CHECK_EQ(o->qp_type, IBV_QPT_XRC_RECV);
	/* One QP behind both handles. */
	UT_CHECK_EQ(ibv_modify_qp(o, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	UT_CHECK_EQ(ibv_query_qp(t, &q, IBV_QP_STATE, &qi), 0);
	UT_CHECK_EQ(q.qp_state, IBV_QPS_INIT);
	/* The creator's handle goes first: the QP stays for the other. */
	UT_CHECK_EQ(ibv_destroy_qp(t), 0);
	UT_CHECK_EQ(ibv_query_qp(o, &q, IBV_QP_STATE, &qi), 0);
	UT_CHECK_EQ(q.qp_state, IBV_QPS_INIT);
	t = open_qp(ctx, OPEN_ALL, xrcd, qpn, IBV_QPT_XRC_RECV);
	if (UT_CHECK(t != NULL))
		UT_CHECK_EQ(ibv_destroy_qp(t), 0);
	UT_CHECK_EQ(ibv_destroy_qp(o), 0);
	/* Gone with its last handle. */
	UT_CHECK(open_qp(ctx, OPEN_ALL, xrcd, qpn, IBV_QPT_XRC_RECV) == NULL &&
		 errno == EINVAL);
	UT_CHECK_EQ(ibv_destroy_qp(s), 0);
}

/* ------------------------------------------------------------------------
 * End to end: XRC_SEND on uroce0 -> XRC_RECV on uroce1 -> XRC SRQs.
 */
#define E2E_BUF		65536
#define E2E_MSGS	6

struct e2e {
	struct ibv_context *c0, *c1;
	struct ibv_pd *pd0, *pd1;
	struct ibv_cq *scq, *srq_cq;
	struct ibv_xrcd *x, *y;
	struct ibv_srq *srq, *srq_y;
	struct ibv_qp *s, *t;
	struct ibv_mr *mr0, *mr1;
	uint8_t *buf0, *buf1;
	uint32_t srqn, srqn_y;
};

static struct ibv_srq *
xrc_srq(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_xrcd *xrcd,
	struct ibv_cq *cq, uint32_t mask)
{
	struct ibv_srq_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.attr.max_wr = 16;
	a.attr.max_sge = 2;
	a.comp_mask = mask;
	a.srq_type = IBV_SRQT_XRC;
	a.pd = pd;
	a.xrcd = xrcd;
	a.cq = cq;
	errno = 0;
	return ibv_create_srq_ex(ctx, &a);
}

#define SRQ_ALL (IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | \
		 IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)

/* Wait for one completion on cq (a hang guard of 10 s, no timing bound). */
static bool
poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i, n;

	for (i = 0; i < 1000000; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n != 0)
			return n == 1;
		usleep(10);
	}
	return false;
}

static void
set_av(struct ibv_qp_attr *qa, struct ibv_context *peer)
{
	union ibv_gid gid;

	ibv_query_gid(peer, 1, 0, &gid);
	qa->ah_attr.is_global = 1;
	qa->ah_attr.port_num = 1;
	qa->ah_attr.grh.hop_limit = 1;
	qa->ah_attr.grh.dgid = gid;
}

/* RESET -> RTS with the masks ibv_xsrq_pingpong uses. */
static int
xrc_connect(struct ibv_qp *qp, struct ibv_context *peer, uint32_t dqpn)
{
	struct ibv_qp_attr qa;
	bool tgt = qp->qp_type == IBV_QPT_XRC_RECV;
	int ret;

	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_INIT;
	qa.port_num = 1;
	qa.qp_access_flags = tgt ? IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ : 0;
	ret = ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTR;
	qa.dest_qp_num = dqpn;
	qa.path_mtu = IBV_MTU_1024;
	qa.rq_psn = 0x100;
	qa.min_rnr_timer = 12;
	qa.max_dest_rd_atomic = 4;
	set_av(&qa, peer);
	ret = ret ? ret : ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_AV |
			IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			(tgt ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0));
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTS;
	qa.timeout = 14;
	qa.retry_cnt = 7;
	qa.rnr_retry = 7;
	qa.sq_psn = 0x100;
	qa.max_rd_atomic = 4;
	return ret ? ret : ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_TIMEOUT |
			IBV_QP_SQ_PSN | (tgt ? 0 : IBV_QP_RETRY_CNT |
			IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC));
}

static int
e2e_open(struct e2e *e, struct ibv_context *c0, struct ibv_context *c1)
{
	memset(e, 0, sizeof(*e));
	e->c0 = c0;
	e->c1 = c1;
	e->buf0 = calloc(1, E2E_BUF);
	e->buf1 = calloc(1, E2E_BUF);
	e->pd0 = ibv_alloc_pd(c0);
	e->pd1 = ibv_alloc_pd(c1);
	e->scq = ibv_create_cq(c0, 64, NULL, NULL, 0);
	e->srq_cq = ibv_create_cq(c1, 64, NULL, NULL, 0);
	e->x = xrcd_open(c1, FD_OF, -1, O_CREAT);
	e->y = xrcd_open(c1, FD_OF, -1, O_CREAT);
	if (!UT_CHECK(e->buf0 && e->buf1 && e->pd0 && e->pd1 && e->scq &&
		      e->srq_cq && e->x && e->y))
		return -1;
	e->mr0 = ibv_reg_mr(e->pd0, e->buf0, E2E_BUF, IBV_ACCESS_LOCAL_WRITE);
	e->mr1 = ibv_reg_mr(e->pd1, e->buf1, E2E_BUF, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	/* Creation errors: an XRC SRQ needs its domain and its CQ. */
	UT_CHECK(xrc_srq(c1, e->pd1, e->x, e->srq_cq,
			 SRQ_ALL & ~IBV_SRQ_INIT_ATTR_CQ) == NULL && errno == EINVAL);
	UT_CHECK(xrc_srq(c1, e->pd1, e->x, e->srq_cq,
			 SRQ_ALL & ~IBV_SRQ_INIT_ATTR_XRCD) == NULL && errno == EINVAL);
	UT_CHECK(xrc_srq(c1, e->pd1, e->x, e->scq, SRQ_ALL) == NULL &&
		 errno == EINVAL);	/* a CQ of another device */
	e->srq = xrc_srq(c1, e->pd1, e->x, e->srq_cq, SRQ_ALL);
	e->srq_y = xrc_srq(c1, e->pd1, e->y, e->srq_cq, SRQ_ALL);
	e->t = tgt_qp(c1, e->x);
	e->s = ini_qp(c0, e->pd0, e->scq);
	if (!UT_CHECK(e->mr0 && e->mr1 && e->srq && e->srq_y && e->t && e->s))
		return -1;
	UT_CHECK_EQ(ibv_get_srq_num(e->srq, &e->srqn), 0);
	UT_CHECK_EQ(ibv_get_srq_num(e->srq_y, &e->srqn_y), 0);
	UT_CHECK(e->srqn != 0 && e->srqn != e->srqn_y);
	/* The domain has an SRQ: its last handle cannot close. */
	UT_CHECK_EQ(ibv_close_xrcd(e->y), EBUSY);
	if (!UT_CHECK_EQ(xrc_connect(e->t, c0, e->s->qp_num), 0) ||
	    !UT_CHECK_EQ(xrc_connect(e->s, c1, e->t->qp_num), 0))
		return -1;
	return 0;
}

static void
e2e_post_recv(struct e2e *e, uint64_t id, uint32_t off, uint32_t len)
{
	/* Two SGEs: the message lands split across them. */
	struct ibv_sge sge[2] = {
		{ (uintptr_t)e->buf1 + off, len / 2, e->mr1->lkey },
		{ (uintptr_t)e->buf1 + off + len / 2, len - len / 2, e->mr1->lkey },
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = sge, .num_sge = 2 }, *bad;

	UT_CHECK_EQ(ibv_post_srq_recv(e->srq, &wr, &bad), 0);
}

static int
e2e_send(struct e2e *e, uint64_t id, enum ibv_wr_opcode op, uint32_t off,
	 uint32_t len, uint32_t srqn, uint64_t raddr)
{
	struct ibv_sge sge = { (uintptr_t)e->buf0 + off, len, e->mr0->lkey };
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htobe32(0xabc00000u + (uint32_t)id);
	wr.qp_type.xrc.remote_srqn = srqn;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = e->mr1->rkey;
	return ibv_post_send(e->s, &wr, &bad);
}

/* SENDs of sizes 0 .. several MTUs (with immediate too) into the SRQ,
 * byte-exact, completions on the SRQ's CQ naming the target QP. */
static void
e2e_sends(struct e2e *e)
{
	static const uint32_t len[E2E_MSGS] = { 0, 1, 100, 1024, 3000, 8192 };
	struct ibv_wc wc;
	uint32_t i, j, off;

	for (i = 0; i < E2E_BUF / 2; i++)
		e->buf0[i] = (uint8_t)(i * 13 + 5);
	for (i = 0, off = 0; i < E2E_MSGS; off += 8192, i++)
		e2e_post_recv(e, 100 + i, off, 8192);
	for (i = 0, off = 0; i < E2E_MSGS; off += len[i] + 7, i++)
		UT_CHECK_EQ(e2e_send(e, 1 + i, i % 2 ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
				     off, len[i], e->srqn, 0), 0);
	for (i = 0, off = 0; i < E2E_MSGS; off += len[i] + 7, i++) {
		if (!UT_CHECK(poll_one(e->scq, &wc)))
			return;
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc.wr_id, 1 + i);
		if (!UT_CHECK(poll_one(e->srq_cq, &wc)))
			return;
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc.wr_id, 100 + i);	/* the SRQ's WQEs in order */
		UT_CHECK_EQ(wc.opcode, IBV_WC_RECV);
		UT_CHECK_EQ(wc.byte_len, len[i]);
		UT_CHECK_EQ(wc.qp_num, e->t->qp_num);
		UT_CHECK_EQ(wc.src_qp, e->s->qp_num);
		UT_CHECK_EQ(!!(wc.wc_flags & IBV_WC_WITH_IMM), i % 2);
		if (i % 2)
			UT_CHECK_EQ(be32toh(wc.imm_data), 0xabc00000u + 1 + i);
		j = i * 8192;
		UT_CHECK_MEM(e->buf1 + j, e->buf0 + off, len[i]);
		UT_NOTE("message %u of %u bytes", i, len[i]);
	}
}

/* RDMA WRITE and READ through the target: the R_Key is checked against
 * the PD of the SRQ the request names. */
static void
e2e_rdma(struct e2e *e)
{
	struct ibv_wc wc;

	memset(e->buf1 + 49152, 0, 5000);
	UT_CHECK_EQ(e2e_send(e, 20, IBV_WR_RDMA_WRITE, 100, 5000, e->srqn,
			     (uintptr_t)e->buf1 + 49152), 0);
	if (UT_CHECK(poll_one(e->scq, &wc)))
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	UT_CHECK_MEM(e->buf1 + 49152, e->buf0 + 100, 5000);
	memset(e->buf0 + 40000, 0, 3000);
	UT_CHECK_EQ(e2e_send(e, 21, IBV_WR_RDMA_READ, 40000, 3000, e->srqn,
			     (uintptr_t)e->buf1 + 49152), 0);
	if (UT_CHECK(poll_one(e->scq, &wc))) {
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc.opcode, IBV_WC_RDMA_READ);
	}
	UT_CHECK_MEM(e->buf0 + 40000, e->buf0 + 100, 3000);
}

/* A request naming the SRQ of another domain: NAK Invalid Request (the
 * sender's REM_INV_REQ_ERR), the target in ERR, nothing taken from it. */
static void
e2e_wrong_domain(struct e2e *e)
{
	struct ibv_qp_attr q;
	struct ibv_qp_init_attr qi;
	struct ibv_recv_wr wr = { .wr_id = 300 }, *bad;
	struct ibv_wc wc;

	UT_CHECK_EQ(ibv_post_srq_recv(e->srq_y, &wr, &bad), 0);
	UT_CHECK_EQ(e2e_send(e, 30, IBV_WR_SEND, 0, 64, e->srqn_y, 0), 0);
	if (UT_CHECK(poll_one(e->scq, &wc))) {
		UT_CHECK_EQ(wc.wr_id, 30);
		UT_CHECK_EQ(wc.status, IBV_WC_REM_INV_REQ_ERR);
	}
	UT_CHECK_EQ(ibv_query_qp(e->t, &q, IBV_QP_STATE, &qi), 0);
	UT_CHECK_EQ(q.qp_state, IBV_QPS_ERR);
	UT_CHECK_EQ(ibv_poll_cq(e->srq_cq, 1, &wc), 0);
}

static void
e2e_close(struct e2e *e)
{
	if (e->s != NULL)
		UT_CHECK_EQ(ibv_destroy_qp(e->s), 0);
	if (e->t != NULL)
		UT_CHECK_EQ(ibv_destroy_qp(e->t), 0);
	if (e->srq != NULL)
		UT_CHECK_EQ(ibv_destroy_srq(e->srq), 0);
	if (e->srq_y != NULL)
		UT_CHECK_EQ(ibv_destroy_srq(e->srq_y), 0);
	if (e->mr0 != NULL)
		UT_CHECK_EQ(ibv_dereg_mr(e->mr0), 0);
	if (e->mr1 != NULL)
		UT_CHECK_EQ(ibv_dereg_mr(e->mr1), 0);
	if (e->x != NULL)
		UT_CHECK_EQ(ibv_close_xrcd(e->x), 0);
	if (e->y != NULL)
		UT_CHECK_EQ(ibv_close_xrcd(e->y), 0);
	if (e->scq != NULL)
		UT_CHECK_EQ(ibv_destroy_cq(e->scq), 0);
	if (e->srq_cq != NULL)
		UT_CHECK_EQ(ibv_destroy_cq(e->srq_cq), 0);
	if (e->pd0 != NULL)
		UT_CHECK_EQ(ibv_dealloc_pd(e->pd0), 0);
	if (e->pd1 != NULL)
		UT_CHECK_EQ(ibv_dealloc_pd(e->pd1), 0);
	free(e->buf0);
	free(e->buf1);
}

static void
test_e2e(struct ibv_context *c0, struct ibv_context *c1)
{
	struct ibv_device_attr da;
	struct e2e e;

	UT_CHECK_EQ(ibv_query_device(c1, &da), 0);
	UT_CHECK(da.device_cap_flags & IBV_DEVICE_XRC);
	if (e2e_open(&e, c0, c1) == 0) {
		e2e_sends(&e);
		e2e_rdma(&e);
		e2e_wrong_domain(&e);
	}
	e2e_close(&e);
}

int
main(void)
{
	struct ibv_device **list = NULL;
	struct ibv_context *c0 = NULL, *c1 = NULL;
	struct ibv_xrcd *x = NULL, *x2 = NULL;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;

	snprintf(xrc_file, sizeof(xrc_file), XRC_FILE_FMT, (int)getpid());
	if (ut_verbs_ringlink_pair("xrc", 84, &list, &c0, &c1) == 0) {
		test_xrcd_errors(c0);
		test_xrcd_share(c0);
		x = xrcd_open(c0, FD_OF, -1, O_CREAT);
		x2 = xrcd_open(c0, FD_OF, -1, O_CREAT);
		pd = ibv_alloc_pd(c0);
		cq = ibv_create_cq(c0, 16, NULL, NULL, 0);
	}
	if (UT_CHECK(x != NULL && x2 != NULL && pd != NULL && cq != NULL)) {
		test_qp_create(c0, c1, x, pd, cq);
		test_qp_modify(c0, x);
		test_open_qp(c0, c1, x, x2, pd, cq);
		test_e2e(c0, c1);
	}
	if (cq != NULL)
		UT_CHECK_EQ(ibv_destroy_cq(cq), 0);
	if (pd != NULL)
		UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
	if (x != NULL)
		UT_CHECK_EQ(ibv_close_xrcd(x), 0);
	if (x2 != NULL)
		UT_CHECK_EQ(ibv_close_xrcd(x2), 0);
	unlink(xrc_file);
	ut_verbs_close_pair(list, c0, c1);
	return ut_summary();
}
