/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The device verbs through our libibverbs.so.1, in one process: the
 * engine starts at ibv_open_device() (a memif server port nobody joins:
 * its link stays down, and the device loops frames for its own MAC back,
 * as an RDMA NIC does). Attributes, the documented errors, completion
 * channels, two RC QPs of the device exchanging a message, a WRITE to a QP
 * without remote write (IBV_EVENT_QP_ACCESS_ERR naming the responder's QP),
 * a READ beyond max_dest_rd_atomic (IBV_EVENT_QP_REQ_ERR; ibv_destroy_qp()
 * waits for its acknowledgement), a WRITE into a region unmapped after its
 * registration (IBV_WC_REM_ACCESS_ERR, the process alive), SENDs to a QP left in RTR (one
 * IBV_EVENT_COMM_EST), ibv_reg_mr() of memory not mapped or read-only,
 * on-demand regions and ibv_advise_mr(), the
 * context's cmd_fd, the private modify_qp_seq of uroce's librdmacm
 * (several changes in one call: each made, its errors as ibv_modify_qp's),
 * the address vector that answers a UD receive (ibv_init_ah_from_wc),
 * RLIMIT_MEMLOCK charged as the kernel's pinning charges it, and the
 * static rates of UD address handles (a bad one EINVAL; datagrams to an
 * AH at 2.5 Gb/s wait for its tokens, those to one at the port's rate on
 * the same QP never do, all arrive intact).
 */

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "uroce_test.h"
#include "uroce_test_verbs.h"
#include "uroce_verbs_cm.h"
#include "verbs_priv.h"
#include "uroce_qp.h"		/* the QP's counters */

static int
write_config(void)
{
	int pid = (int)getpid();
	FILE *f;

	snprintf(ut_verbs_conf, sizeof(ut_verbs_conf),
		 "/tmp/uroce-verbs-dev.%d.conf", pid);
	snprintf(ut_verbs_rundir, sizeof(ut_verbs_rundir),
		 "/var/run/dpdk/uroce-vdev-%d", pid);
	f = fopen(ut_verbs_conf, "w");
	if (f == NULL)
		return -1;
	fprintf(f, "[port]\n"
		"dev = net_memif0,role=server,id=0,socket=/run/uroce/vdev-%d.sock,"
		"mac=02:00:00:00:79:01\n"
		"ip = 192.168.79.1/24\nmtu = 4096\n"
		"link_wait = 0\n"	/* no peer comes: open at once */
		"[eal]\nlcores = 1\n"
		"args = --no-pci --no-huge -m 256 --file-prefix=uroce-vdev-%d "
		"--log-level=*:warning\n", pid, pid);
	fclose(f);
	setenv("UROCE_CONFIG", ut_verbs_conf, 1);
	return 0;
}

static void
test_attributes(struct ibv_context *ctx, struct ibv_device *dev)
{
	struct ibv_device_attr da;
	struct ibv_device_attr_ex dx;
	struct ibv_port_attr pa;
	struct ibv_gid_entry ge;
	enum ibv_gid_type_sysfs gt;
	union ibv_gid gid;
	uint8_t big[sizeof(pa) + 16];
	struct verbs_context *vctx;
	__be16 pkey;

	UT_CHECK_EQ(ibv_query_device(ctx, &da), 0);
	UT_CHECK(da.vendor_id != 0 && da.vendor_id != 0x02c9);
	UT_CHECK_EQ(da.node_guid, ibv_get_device_guid(dev));
	UT_CHECK_EQ(da.atomic_cap, IBV_ATOMIC_HCA);
	UT_CHECK_EQ(da.phys_port_cnt, 1);
	UT_CHECK(da.max_qp > 0 && da.max_cqe > 0 && da.max_pkeys == 1);
	UT_CHECK_EQ(da.device_cap_flags & IBV_DEVICE_RESIZE_MAX_WR, 0);
	UT_CHECK_EQ(ibv_query_device_ex(ctx, NULL, &dx), 0);
	UT_CHECK_EQ(dx.orig_attr.max_qp, da.max_qp);
	/* Packet pacing: RC, UC, UD and RAW_PACKET, 1 kbit/s to
	 * 100 Gbit/s. */
	UT_CHECK_EQ(dx.packet_pacing_caps.qp_rate_limit_min, 1);
	UT_CHECK_EQ(dx.packet_pacing_caps.qp_rate_limit_max, 100000000);
	UT_CHECK_EQ(dx.packet_pacing_caps.supported_qpts,
		    1u << IBV_QPT_RC | 1u << IBV_QPT_UC | 1u << IBV_QPT_UD |
		    1u << IBV_QPT_RAW_PACKET);
	UT_CHECK_EQ(ibv_query_port(ctx, 1, &pa), 0);
	UT_CHECK_EQ(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
	UT_CHECK_EQ(pa.lid, 0);
	UT_CHECK_EQ(pa.max_mtu, IBV_MTU_4096);
	UT_CHECK(pa.port_cap_flags & IBV_PORT_CM_SUP);
	UT_CHECK_EQ(pa.pkey_tbl_len, 1);
	UT_CHECK_EQ(ibv_query_port(ctx, 2, &pa), EINVAL);
	/* The size argument: nothing written past it, the rest zeroed. */
	vctx = verbs_get_ctx_op(ctx, query_port);
	if (UT_CHECK(vctx != NULL && vctx->sz == sizeof(*vctx))) {
		memset(big, 0xa5, sizeof(big));
		UT_CHECK_EQ(vctx->query_port(ctx, 1,
			(struct ibv_port_attr *)big, 8), 0);
		UT_CHECK_EQ(big[8], 0xa5);
		UT_CHECK_EQ(vctx->query_port(ctx, 1,
			(struct ibv_port_attr *)big, sizeof(big)), 0);
		UT_CHECK_EQ(big[sizeof(big) - 1], 0);
	}
	/* GID 0 is ::ffff:192.168.79.1, RoCE v2; 1 the link-local address
	 * of MAC 02:00:00:00:79:01, fe80::ff:fe00:7901, RoCE v2; 2 is empty;
	 * 16 is out. */
	UT_CHECK_EQ(ibv_query_gid(ctx, 1, 0, &gid), 0);
	UT_CHECK_EQ(gid.raw[10], 0xff);
	UT_CHECK_EQ(gid.raw[12], 192);
	UT_CHECK_EQ(gid.raw[15], 1);
	UT_CHECK_EQ(ibv_query_gid_type(ctx, 1, 0, &gt), 0);
	UT_CHECK_EQ(gt, IBV_GID_TYPE_SYSFS_ROCE_V2);
	UT_CHECK_EQ(ibv_query_gid_ex(ctx, 1, 0, &ge, 0), 0);
	UT_CHECK_EQ(ge.gid_type, IBV_GID_TYPE_ROCE_V2);
	UT_CHECK_EQ(ibv_query_gid(ctx, 1, 1, &gid), 0);
	UT_CHECK_EQ(gid.global.subnet_prefix, htobe64(0xfe80000000000000ull));
	UT_CHECK_EQ(gid.global.interface_id, htobe64(0x000000fffe007901ull));
	UT_CHECK_EQ(ibv_query_gid_type(ctx, 1, 1, &gt), 0);
	UT_CHECK_EQ(gt, IBV_GID_TYPE_SYSFS_ROCE_V2);
	UT_CHECK_EQ(ibv_query_gid_ex(ctx, 1, 1, &ge, 0), 0);
	UT_CHECK_EQ(ge.gid_type, IBV_GID_TYPE_ROCE_V2);
	UT_CHECK_MEM(ge.gid.raw, gid.raw, 16);
	UT_CHECK_EQ(ibv_query_gid_ex(ctx, 1, 2, &ge, 0), ENODATA);
	UT_CHECK_EQ(ibv_query_gid(ctx, 1, 2, &gid), 0);
	UT_CHECK_EQ(gid.global.interface_id, 0);
	UT_CHECK_EQ(ibv_query_gid(ctx, 1, pa.gid_tbl_len, &gid), -1);
	UT_CHECK_EQ(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
	UT_CHECK_EQ(pkey, htobe16(0xffff));
	UT_CHECK_EQ(ibv_get_pkey_index(ctx, 1, htobe16(0xffff)), 0);
	UT_CHECK_EQ(ibv_query_pkey(ctx, 1, 1, &pkey), -1);
}

/* Two RC QPs of one device, connected to each other. */
static void
connect_qp(struct ibv_qp *qp, uint32_t dest)
{
	ut_verbs_rc_connect_ex(qp, qp->context, dest, 7, 12, 1,
			       IBV_ACCESS_REMOTE_WRITE);
}

/* Wait for one completion through the channel (bounded by poll()). */
static int
wait_wc(struct ibv_comp_channel *ch, struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int n, tries;

	for (tries = 0; tries < 2; tries++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n != 0)
			return n;
		if (!UT_CHECK(poll(&pfd, 1, 5000) == 1))
			return 0;
		UT_CHECK_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
		UT_CHECK(ev_cq == cq && ev_ctx == (void *)cq->cq_context);
		ibv_ack_cq_events(ev_cq, 1);
		UT_CHECK_EQ(ibv_req_notify_cq(cq, 0), 0);
	}
	return ibv_poll_cq(cq, 1, wc);
}

/*
 * Progress nobody polls for: an RDMA READ between two QPs of the device,
 * and the thread that posted it sleeps in poll() on the completion
 * channel without one ibv_poll_cq() before. With an engine lcore, the
 * lcore serves both ends; under inline progress ([eal] lcores = 0, the
 * *_inline run) the post puts the request on the loopback and only the
 * keeper thread can receive it, answer it as the responder, take the
 * response and signal the channel. The bytes read must be the target's.
 */
static void
test_unpolled(struct ibv_context *ctx)
{
	static char tgt[2048], dst[2048];
	struct pollfd pfd = { .events = POLLIN };
	struct ibv_qp_init_attr init;
	struct ibv_comp_channel *ch;
	struct ibv_send_wr swr, *bad_s;
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_cq *cq = NULL, *ev_cq;
	struct ibv_mr *mt = NULL, *md = NULL;
	struct ibv_sge ds;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	void *ev_ctx;

	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	if (!UT_CHECK(pd != NULL && ch != NULL))
		return;
	cq = ibv_create_cq(ctx, 16, NULL, ch, 0);
	mt = ibv_reg_mr(pd, tgt, sizeof(tgt), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ);
	md = ibv_reg_mr(pd, dst, sizeof(dst), IBV_ACCESS_LOCAL_WRITE);
	memset(&init, 0, sizeof(init));
	init.send_cq = cq;
	init.recv_cq = cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 4;
	init.cap.max_recv_wr = 4;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	if (cq != NULL) {
		qa = ibv_create_qp(pd, &init);
		qb = ibv_create_qp(pd, &init);
	}
	if (!UT_CHECK(cq != NULL && mt != NULL && md != NULL && qa != NULL &&
		      qb != NULL))
		return;
	ut_verbs_rc_connect_ex(qa, ctx, qb->qp_num, 7, 12, 1, 0);
	ut_verbs_rc_connect_ex(qb, ctx, qa->qp_num, 7, 12, 1,
			       IBV_ACCESS_REMOTE_READ);
	for (size_t i = 0; i < sizeof(tgt); i++)
		tgt[i] = (char)ut_rand();
	memset(dst, 0, sizeof(dst));
	UT_CHECK_EQ(ibv_req_notify_cq(cq, 0), 0);
	ds = (struct ibv_sge){ (uintptr_t)dst, sizeof(dst), md->lkey };
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 9;
	swr.sg_list = &ds;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_RDMA_READ;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.wr.rdma.remote_addr = (uintptr_t)tgt;
	swr.wr.rdma.rkey = mt->rkey;
	UT_CHECK_EQ(ibv_post_send(qa, &swr, &bad_s), 0);
	pfd.fd = ch->fd;
	if (UT_CHECK(poll(&pfd, 1, 5000) == 1) &&
	    UT_CHECK_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0)) {
		UT_CHECK(ev_cq == cq);
		ibv_ack_cq_events(ev_cq, 1);
		if (UT_CHECK_EQ(ibv_poll_cq(cq, 1, &wc), 1)) {
			UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
			UT_CHECK_EQ(wc.wr_id, 9);
			UT_CHECK_EQ(wc.opcode, IBV_WC_RDMA_READ);
			UT_CHECK_MEM(dst, tgt, sizeof(tgt));
		}
	}
	UT_CHECK_EQ(ibv_destroy_qp(qa), 0);
	UT_CHECK_EQ(ibv_destroy_qp(qb), 0);
	UT_CHECK_EQ(ibv_dereg_mr(mt), 0);
	UT_CHECK_EQ(ibv_dereg_mr(md), 0);
	UT_CHECK_EQ(ibv_destroy_cq(cq), 0);
	UT_CHECK_EQ(ibv_destroy_comp_channel(ch), 0);
	UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

static void
test_objects(struct ibv_context *ctx, int max_cqe)
{
	static char src[4096], dst[4096];
	struct ibv_qp_init_attr init;
	struct ibv_comp_channel *ch;
	struct ibv_send_wr swr, *bad_s;
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_qp *qa, *qb;
	struct ibv_cq *cq;
	struct ibv_mr *ms, *md;
	struct ibv_sge ss, ds;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	int flags;

	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	if (!UT_CHECK(pd != NULL && ch != NULL))
		return;
	/* ibv_create_cq(3): cqe above max_cqe, a bad comp_vector: EINVAL. */
	errno = 0;
	UT_CHECK(ibv_create_cq(ctx, max_cqe + 1, NULL, ch, 0) == NULL &&
		 errno == EINVAL);
	errno = 0;
	UT_CHECK(ibv_create_cq(ctx, 16, NULL, ch, 1) == NULL && errno == EINVAL);
	/* ibv_reg_mr(3): remote write needs local write: EINVAL. */
	errno = 0;
	UT_CHECK(ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_REMOTE_WRITE) ==
		 NULL && errno == EINVAL);
	cq = ibv_create_cq(ctx, 16, &init, ch, 0);
	ms = ibv_reg_mr(pd, src, sizeof(src), 0);
	md = ibv_reg_mr(pd, dst, sizeof(dst), IBV_ACCESS_LOCAL_WRITE);
	if (!UT_CHECK(cq != NULL && ms != NULL && md != NULL))
		return;
	UT_CHECK(cq->cqe >= 16);
	UT_CHECK_EQ(ibv_destroy_comp_channel(ch), EBUSY);
	memset(&init, 0, sizeof(init));
	init.send_cq = cq;
	init.recv_cq = cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 4;
	init.cap.max_recv_wr = 4;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	qa = ibv_create_qp(pd, &init);
	qb = ibv_create_qp(pd, &init);
	if (!UT_CHECK(qa != NULL && qb != NULL))
		return;
	UT_CHECK(init.cap.max_send_wr >= 4);
	UT_CHECK_EQ(qa->state, IBV_QPS_RESET);
	UT_CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
	UT_CHECK_EQ(ibv_destroy_cq(cq), EBUSY);
	UT_CHECK(ibv_qp_to_qp_ex(qa) == NULL);
	connect_qp(qa, qb->qp_num);
	connect_qp(qb, qa->qp_num);

	/* A message from qa to qb, seen through the channel, bytes intact. */
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (char)ut_rand();
	flags = fcntl(ch->fd, F_GETFL);
	UT_CHECK(fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) == 0);
	UT_CHECK_EQ(ibv_req_notify_cq(cq, 0), 0);
	ds = (struct ibv_sge){ (uintptr_t)dst, sizeof(dst), md->lkey };
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 2;
	rwr.sg_list = &ds;
	rwr.num_sge = 1;
	UT_CHECK_EQ(ibv_post_recv(qb, &rwr, &bad_r), 0);
	ss = (struct ibv_sge){ (uintptr_t)src, sizeof(src), ms->lkey };
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 1;
	swr.sg_list = &ss;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	UT_CHECK_EQ(ibv_post_send(qa, &swr, &bad_s), 0);
	for (int got = 0, n = 0; got < 2 && n < 4; n++) {
		if (wait_wc(ch, cq, &wc) != 1)
			continue;
		got++;
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		if (wc.wr_id == 2) {
			UT_CHECK_EQ(wc.byte_len, sizeof(src));
			UT_CHECK_EQ(wc.qp_num, qb->qp_num);
			UT_CHECK_MEM(dst, src, sizeof(src));
		}
		UT_NOTE("completion wr_id %llu", (unsigned long long)wc.wr_id);
	}
	/* Nothing left on the non-blocking channel (an event the second
	 * completion raised read first): ibv_get_cq_event() returns -1 with
	 * EAGAIN at once, as libiscsi's iSER loop expects of rdma-core's. */
	{
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		struct ibv_cq *ev_cq;
		void *ev_ctx;

		while (poll(&pfd, 1, 0) == 1 &&
		       ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0)
			ibv_ack_cq_events(ev_cq, 1);
		errno = 0;
		UT_CHECK_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), -1);
		UT_CHECK_EQ(errno, EAGAIN);
		UT_CHECK_EQ(poll(&pfd, 1, 0), 0);
	}
	/* ibv_modify_qp_rate_limit(3) in RTS; query shows it; a bad rate
	 * changes nothing. */
	{
		struct ibv_qp_rate_limit_attr rl = { .rate_limit = 5000 };
		struct ibv_qp_init_attr qi;
		struct ibv_qp_attr qa_attr;

		UT_CHECK_EQ(ibv_modify_qp_rate_limit(qa, &rl), 0);
		UT_CHECK_EQ(ibv_query_qp(qa, &qa_attr, IBV_QP_RATE_LIMIT, &qi), 0);
		UT_CHECK_EQ(qa_attr.rate_limit, 5000);
		rl.rate_limit = 100000001;
		UT_CHECK_EQ(ibv_modify_qp_rate_limit(qa, &rl), EINVAL);
		UT_CHECK_EQ(ibv_query_qp(qa, &qa_attr, IBV_QP_RATE_LIMIT, &qi), 0);
		UT_CHECK_EQ(qa_attr.rate_limit, 5000);
		rl.rate_limit = 0;
		UT_CHECK_EQ(ibv_modify_qp_rate_limit(qa, &rl), 0);
		UT_CHECK_EQ(ibv_query_qp(qa, &qa_attr, IBV_QP_RATE_LIMIT, &qi), 0);
		UT_CHECK_EQ(qa_attr.rate_limit, 0);
	}
	/* A send in RESET is refused (ibv_post_send(3)). */
	UT_CHECK_EQ(ibv_modify_qp(qa, &(struct ibv_qp_attr){
		.qp_state = IBV_QPS_RESET }, IBV_QP_STATE), 0);
	UT_CHECK_EQ(qa->state, IBV_QPS_RESET);
	UT_CHECK_EQ(ibv_post_send(qa, &swr, &bad_s), EINVAL);
	UT_CHECK(bad_s == &swr);
	UT_CHECK_EQ(ibv_modify_qp_rate_limit(qa, &(struct ibv_qp_rate_limit_attr){
		.rate_limit = 5000 }), EINVAL);

	UT_CHECK_EQ(ibv_destroy_qp(qa), 0);
	UT_CHECK_EQ(ibv_destroy_qp(qb), 0);
	UT_CHECK_EQ(ibv_dereg_mr(ms), 0);
	UT_CHECK_EQ(ibv_dereg_mr(md), 0);
	UT_CHECK_EQ(ibv_destroy_cq(cq), 0);
	UT_CHECK_EQ(ibv_destroy_comp_channel(ch), 0);
	UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* The next async event (the fd is non-blocking; poll() bounds the wait):
 * it must be type, naming qp. 0 when it came, not yet acknowledged. */
static int
get_event(struct ibv_context *ctx, enum ibv_event_type type, struct ibv_qp *qp,
	  struct ibv_async_event *ev)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	int ret;

	for (;;) {
		ret = ibv_get_async_event(ctx, ev);
		if (ret == 0 || errno != EAGAIN || poll(&pfd, 1, 5000) != 1)
			break;
	}
	if (!UT_CHECK_EQ(ret, 0))
		return -1;
	UT_CHECK_EQ(ev->event_type, type);
	UT_CHECK(ev->element.qp == qp);
	UT_NOTE("event %s on QP %u", ibv_event_type_str(ev->event_type),
		ev->element.qp->qp_num);
	return 0;
}

static void
take_event(struct ibv_context *ctx, enum ibv_event_type type, struct ibv_qp *qp)
{
	struct ibv_async_event ev;

	if (get_event(ctx, type, qp, &ev) == 0)
		ibv_ack_async_event(&ev);
}

/* No event is queued: those the transport raises come before the
 * completions that the caller has polled. */
static void
no_event(struct ibv_context *ctx)
{
	struct ibv_async_event ev;

	if (!UT_CHECK(ibv_get_async_event(ctx, &ev) != 0 && errno == EAGAIN)) {
		UT_NOTE("unexpected event %s", ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
}

/* Poll cq for one completion, up to 5 s. */
static int
poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int n = 0, i;

	for (i = 0; i < 5000 && n == 0; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n == 0)
			usleep(1000);
	}
	return n;
}

/* A QP without the RDMA Write enable refuses a WRITE whatever the region
 * allows: IBV_WC_REM_ACCESS_ERR at the requester, the target untouched,
 * IBV_EVENT_QP_ACCESS_ERR naming the responder's QP (none for the
 * requester's, whose completion says it). */
static void
test_qp_access(struct ibv_context *ctx)
{
	static char src[256], dst[256];
	struct ibv_qp_init_attr init;
	struct ibv_send_wr swr, *bad_s;
	struct ibv_qp *qa, *qb;
	struct ibv_mr *ms, *md;
	struct ibv_sge ss;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	int n = 0, i;

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!UT_CHECK(pd != NULL && cq != NULL))
		return;
	memset(src, 0x5a, sizeof(src));
	memset(dst, 0, sizeof(dst));
	ms = ibv_reg_mr(pd, src, sizeof(src), 0);
	md = ibv_reg_mr(pd, dst, sizeof(dst), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	memset(&init, 0, sizeof(init));
	init.send_cq = cq;
	init.recv_cq = cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 4;
	init.cap.max_recv_wr = 4;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	qa = ibv_create_qp(pd, &init);
	qb = ibv_create_qp(pd, &init);
	if (!UT_CHECK(ms != NULL && md != NULL && qa != NULL && qb != NULL))
		return;
	ut_verbs_rc_connect_ex(qa, ctx, qb->qp_num, 7, 12, 1,
			       IBV_ACCESS_REMOTE_WRITE);
	ut_verbs_rc_connect_ex(qb, ctx, qa->qp_num, 7, 12, 1,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	ss = (struct ibv_sge){ (uintptr_t)src, sizeof(src), ms->lkey };
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 3;
	swr.sg_list = &ss;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_RDMA_WRITE;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.wr.rdma.remote_addr = (uintptr_t)dst;
	swr.wr.rdma.rkey = md->rkey;
	UT_CHECK_EQ(ibv_post_send(qa, &swr, &bad_s), 0);
	for (i = 0; i < 5000 && n == 0; i++) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n == 0)
			usleep(1000);
	}
	if (UT_CHECK_EQ(n, 1)) {
		UT_CHECK_EQ(wc.wr_id, 3);
		UT_CHECK_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
	}
	for (i = 0; i < (int)sizeof(dst) && dst[i] == 0; i++)
		;
	UT_CHECK_EQ(i, (int)sizeof(dst));
	UT_NOTE("WRITE to a QP without remote write: status %d", wc.status);
	take_event(ctx, IBV_EVENT_QP_ACCESS_ERR, qb);
	no_event(ctx);
	UT_CHECK_EQ(ibv_destroy_qp(qa), 0);
	UT_CHECK_EQ(ibv_destroy_qp(qb), 0);
	UT_CHECK_EQ(ibv_dereg_mr(ms), 0);
	UT_CHECK_EQ(ibv_dereg_mr(md), 0);
	UT_CHECK_EQ(ibv_destroy_cq(cq), 0);
	UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* A WRITE into a region the application unmapped after registering it,
 * executed on the engine's thread: IBV_WC_REM_ACCESS_ERR, the responder's
 * QP_ACCESS_ERR, the process alive (unit/mr_fault counts the fault). */
static void
test_unmapped_write(struct ibv_context *ctx)
{
	static char src[256];
	long pg = sysconf(_SC_PAGESIZE);
	struct ibv_qp_init_attr init;
	struct ibv_send_wr swr, *bad_s;
	struct ibv_qp *qa, *qb;
	struct ibv_mr *ms, *md;
	struct ibv_sge ss;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	char *dst;

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	dst = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!UT_CHECK(pd != NULL && cq != NULL && dst != MAP_FAILED))
		return;
	ms = ibv_reg_mr(pd, src, sizeof(src), 0);
	md = ibv_reg_mr(pd, dst, 2 * pg, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	UT_CHECK_EQ(munmap(dst, 2 * pg), 0);
	memset(&init, 0, sizeof(init));
	init.send_cq = cq;
	init.recv_cq = cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 4;
	init.cap.max_recv_wr = 4;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	qa = ibv_create_qp(pd, &init);
	qb = ibv_create_qp(pd, &init);
	if (!UT_CHECK(ms != NULL && md != NULL && qa != NULL && qb != NULL))
		return;
	ut_verbs_rc_connect_ex(qa, ctx, qb->qp_num, 7, 12, 1,
			       IBV_ACCESS_REMOTE_WRITE);
	ut_verbs_rc_connect_ex(qb, ctx, qa->qp_num, 7, 12, 1,
			       IBV_ACCESS_REMOTE_WRITE);
	ss = (struct ibv_sge){ (uintptr_t)src, sizeof(src), ms->lkey };
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 4;
	swr.sg_list = &ss;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_RDMA_WRITE;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.wr.rdma.remote_addr = (uintptr_t)dst + (uintptr_t)pg;
	swr.wr.rdma.rkey = md->rkey;
	UT_CHECK_EQ(ibv_post_send(qa, &swr, &bad_s), 0);
	if (UT_CHECK_EQ(poll_one(cq, &wc), 1)) {
		UT_CHECK_EQ(wc.wr_id, 4);
		UT_CHECK_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
	}
	take_event(ctx, IBV_EVENT_QP_ACCESS_ERR, qb);
	no_event(ctx);
	UT_NOTE("WRITE into a region unmapped after registration");
	UT_CHECK_EQ(ibv_destroy_qp(qa), 0);
	UT_CHECK_EQ(ibv_destroy_qp(qb), 0);
	UT_CHECK_EQ(ibv_dereg_mr(ms), 0);
	UT_CHECK_EQ(ibv_dereg_mr(md), 0);
	UT_CHECK_EQ(ibv_destroy_cq(cq), 0);
	UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* Two RC QPs with one CQ; registered src and dst of 256 bytes. */
struct pair {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qa, *qb;
	struct ibv_mr *ms, *md;
	char src[256], dst[256];
};

static int
pair_open(struct ibv_context *ctx, struct pair *p)
{
	struct ibv_qp_init_attr init;

	memset(p, 0, sizeof(*p));
	p->pd = ibv_alloc_pd(ctx);
	p->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!UT_CHECK(p->pd != NULL && p->cq != NULL))
		return -1;
	memset(p->src, 0x5a, sizeof(p->src));
	p->ms = ibv_reg_mr(p->pd, p->src, sizeof(p->src), IBV_ACCESS_LOCAL_WRITE);
	p->md = ibv_reg_mr(p->pd, p->dst, sizeof(p->dst), IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	memset(&init, 0, sizeof(init));
	init.send_cq = p->cq;
	init.recv_cq = p->cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 4;
	init.cap.max_recv_wr = 4;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	p->qa = ibv_create_qp(p->pd, &init);
	p->qb = ibv_create_qp(p->pd, &init);
	return UT_CHECK(p->ms && p->md && p->qa && p->qb) ? 0 : -1;
}

static void
pair_close(struct pair *p)
{
	UT_CHECK_EQ(ibv_destroy_qp(p->qa), 0);
	if (p->qb != NULL)
		UT_CHECK_EQ(ibv_destroy_qp(p->qb), 0);
	UT_CHECK_EQ(ibv_dereg_mr(p->ms), 0);
	UT_CHECK_EQ(ibv_dereg_mr(p->md), 0);
	UT_CHECK_EQ(ibv_destroy_cq(p->cq), 0);
	UT_CHECK_EQ(ibv_dealloc_pd(p->pd), 0);
}

struct destroy_arg {
	struct ibv_qp *qp;
	int ret;
	uint32_t done;
};

static void *
destroy_thread(void *arg)
{
	struct destroy_arg *d = arg;

	d->ret = ibv_destroy_qp(d->qp);
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A READ to a QP whose max_dest_rd_atomic is 0 (it has no responder
 * resource for it): NAK Invalid Request, IBV_WC_REM_INV_REQ_ERR at the
 * requester, IBV_EVENT_QP_REQ_ERR naming the responder's QP, whose
 * ibv_destroy_qp() waits until the event is acknowledged. */
/* Two RC QPs of pd on cq, nsend send WRs and one receive each, connected
 * to each other (qb grants qb_access): 0, or -1 with a failed check. */
static int
rc_qps(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq,
       uint32_t nsend, unsigned int qb_access, struct ibv_qp **qa,
       struct ibv_qp **qb)
{
	struct ibv_qp_init_attr init;

	memset(&init, 0, sizeof(init));
	init.send_cq = cq;
	init.recv_cq = cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = nsend;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	*qa = ibv_create_qp(pd, &init);
	*qb = ibv_create_qp(pd, &init);
	if (!UT_CHECK(*qa != NULL && *qb != NULL))
		return -1;
	ut_verbs_rc_connect_ex(*qa, ctx, (*qb)->qp_num, 7, 12, 1, 0);
	ut_verbs_rc_connect_ex(*qb, ctx, (*qa)->qp_num, 7, 12, 1, qb_access);
	return 0;
}

/* ibv_resize_cq() of a CQ in use: its lcore keeps its completions in
 * order across the resize; bad sizes are EINVAL and change nothing. */
static void
test_resize_cq(struct ibv_context *ctx, int max_cqe)
{
	enum { NWR = 6 };
	static char src[NWR][64], dst[NWR][64];
	struct ibv_send_wr swr, *bad_s;
	struct ibv_wc wc[NWR];
	struct ibv_qp *qa, *qb;
	struct ibv_mr *ms, *md;
	struct ibv_sge ss;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	int n = 0, i, k;

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!UT_CHECK(pd != NULL && cq != NULL))
		return;
	UT_CHECK_EQ(cq->cqe, 8);
	ut_fill_rand(src, sizeof(src));
	memset(dst, 0, sizeof(dst));
	ms = ibv_reg_mr(pd, src, sizeof(src), 0);
	md = ibv_reg_mr(pd, dst, sizeof(dst), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (!UT_CHECK(ms != NULL && md != NULL) ||
	    rc_qps(ctx, pd, cq, NWR, IBV_ACCESS_REMOTE_WRITE, &qa, &qb) != 0)
		return;
	for (k = 0; k < NWR; k++) {
		ss = (struct ibv_sge){ (uintptr_t)src[k], sizeof(src[k]),
				       ms->lkey };
		memset(&swr, 0, sizeof(swr));
		swr.wr_id = 100 + k;
		swr.sg_list = &ss;
		swr.num_sge = 1;
		swr.opcode = IBV_WR_RDMA_WRITE;
		swr.send_flags = IBV_SEND_SIGNALED;
		swr.wr.rdma.remote_addr = (uintptr_t)dst[k];
		swr.wr.rdma.rkey = md->rkey;
		UT_CHECK_EQ(ibv_post_send(qa, &swr, &bad_s), 0);
	}
	/* The last WRITE landed: most completions are queued by now. */
	for (i = 0; i < 5000 && memcmp(dst[NWR - 1], src[NWR - 1], 64); i++)
		usleep(1000);
	UT_CHECK_EQ(ibv_resize_cq(cq, 0), EINVAL);
	UT_CHECK_EQ(ibv_resize_cq(cq, -1), EINVAL);
	UT_CHECK_EQ(ibv_resize_cq(cq, max_cqe + 1), EINVAL);
	UT_CHECK_EQ(cq->cqe, 8);
	UT_CHECK_EQ(ibv_resize_cq(cq, 60), 0);
	UT_CHECK_EQ(cq->cqe, 64);
	for (i = 0; i < 5000 && n < NWR; i++) {
		k = ibv_poll_cq(cq, NWR - n, wc + n);
		if (!UT_CHECK(k >= 0))
			break;
		n += k;
		if (n < NWR)
			usleep(1000);
	}
	if (UT_CHECK_EQ(n, NWR))
		for (k = 0; k < NWR; k++) {
			UT_CHECK_EQ(wc[k].wr_id, 100 + k);
			UT_CHECK_EQ(wc[k].status, IBV_WC_SUCCESS);
			UT_CHECK_EQ(wc[k].opcode, IBV_WC_RDMA_WRITE);
		}
	UT_CHECK_MEM(dst, src, sizeof(src));
	/* Smaller, empty. */
	UT_CHECK_EQ(ibv_resize_cq(cq, 1), 0);
	UT_CHECK_EQ(cq->cqe, 1);
	UT_CHECK_EQ(ibv_destroy_qp(qa), 0);
	UT_CHECK_EQ(ibv_destroy_qp(qb), 0);
	UT_CHECK_EQ(ibv_dereg_mr(ms), 0);
	UT_CHECK_EQ(ibv_dereg_mr(md), 0);
	UT_CHECK_EQ(ibv_destroy_cq(cq), 0);
	UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* One signaled RDMA WRITE of 64 bytes from src to (dst, rkey); its status. */
static enum ibv_wc_status
write_once(struct ibv_qp *qa, struct ibv_cq *cq, struct ibv_mr *ms, void *src,
	   void *dst, uint32_t rkey)
{
	struct ibv_sge ss = { (uintptr_t)src, 64, ms->lkey };
	struct ibv_send_wr swr, *bad_s;
	struct ibv_wc wc;
	int n = 0, i;

	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 9;
	swr.sg_list = &ss;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_RDMA_WRITE;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.wr.rdma.remote_addr = (uintptr_t)dst;
	swr.wr.rdma.rkey = rkey;
	if (!UT_CHECK_EQ(ibv_post_send(qa, &swr, &bad_s), 0))
		return IBV_WC_GENERAL_ERR;
	for (i = 0; i < 5000 && n == 0; i++) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n == 0)
			usleep(1000);
	}
	return UT_CHECK_EQ(n, 1) ? wc.status : IBV_WC_GENERAL_ERR;
}

/* ibv_rereg_mr(): input errors change nothing; new access rights and a
 * new translation take effect under the same keys. */
static void
test_rereg_mr(struct ibv_context *ctx)
{
	static char src[64], a[4096], b[4096];
	struct ibv_qp *qa, *qb;
	struct ibv_mr *ms, *md;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	uint32_t k0, k1;

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	ut_fill_rand(src, sizeof(src));
	ms = ibv_reg_mr(pd, src, sizeof(src), 0);
	md = ibv_reg_mr(pd, a, sizeof(a), IBV_ACCESS_LOCAL_WRITE);
	if (!UT_CHECK(pd && cq && ms && md) ||
	    rc_qps(ctx, pd, cq, 1, IBV_ACCESS_REMOTE_WRITE, &qa, &qb) != 0)
		return;
	k0 = md->rkey;
	/* rdma-core's input checks: nothing changes. */
	errno = 0;
	UT_CHECK_EQ(ibv_rereg_mr(md, 0, NULL, NULL, 0, 0),
		    IBV_REREG_MR_ERR_INPUT);
	UT_CHECK_EQ(errno, EINVAL);
	UT_CHECK_EQ(ibv_rereg_mr(md, 1 << 5, NULL, NULL, 0, 0),
		    IBV_REREG_MR_ERR_INPUT);
	UT_CHECK_EQ(ibv_rereg_mr(md, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				 NULL, 64, 0), IBV_REREG_MR_ERR_INPUT);
	UT_CHECK_EQ(ibv_rereg_mr(md, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0,
				 IBV_ACCESS_LOCAL_WRITE),
		    IBV_REREG_MR_ERR_INPUT);
	UT_CHECK_EQ(ibv_rereg_mr(md, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0),
		    IBV_REREG_MR_ERR_INPUT);
	/* Refused by the registration itself (remote write without local
	 * write): the old MR stays as it was. */
	errno = 0;
	UT_CHECK_EQ(ibv_rereg_mr(md, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				 IBV_ACCESS_REMOTE_WRITE),
		    IBV_REREG_MR_ERR_INPUT);
	UT_CHECK_EQ(errno, EINVAL);
	UT_CHECK_EQ(md->rkey, k0);
	UT_CHECK_EQ(write_once(qa, cq, ms, src, a, k0), IBV_WC_REM_ACCESS_ERR);
	/* The QP is in error now: a fresh pair for the rest. */
	UT_CHECK_EQ(ibv_destroy_qp(qa), 0);
	UT_CHECK_EQ(ibv_destroy_qp(qb), 0);
	if (rc_qps(ctx, pd, cq, 1, IBV_ACCESS_REMOTE_WRITE, &qa, &qb) != 0)
		return;
	/* Remote write granted. */
	UT_CHECK_EQ(ibv_rereg_mr(md, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				 IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE), 0);
	k1 = md->rkey;
	UT_CHECK_EQ(k1, k0);
	UT_CHECK(md->addr == a && md->length == sizeof(a));
	UT_CHECK_EQ(write_once(qa, cq, ms, src, a, k1), IBV_WC_SUCCESS);
	UT_CHECK_MEM(a, src, sizeof(src));
	/* A new translation, access kept: b through a new key. */
	UT_CHECK_EQ(ibv_rereg_mr(md, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b,
				 sizeof(b), 0), 0);
	UT_CHECK(md->addr == b && md->length == sizeof(b) && md->rkey == k0);
	UT_CHECK_EQ(write_once(qa, cq, ms, src, b + 128, k0), IBV_WC_SUCCESS);
	UT_CHECK_MEM(b + 128, src, sizeof(src));
	/* The old range is gone: a is outside the key's region now. */
	UT_CHECK_EQ(write_once(qa, cq, ms, src, a, k0), IBV_WC_REM_ACCESS_ERR);
	UT_CHECK_EQ(ibv_destroy_qp(qa), 0);
	UT_CHECK_EQ(ibv_destroy_qp(qb), 0);
	UT_CHECK_EQ(ibv_dereg_mr(ms), 0);
	UT_CHECK_EQ(ibv_dereg_mr(md), 0);
	UT_CHECK_EQ(ibv_destroy_cq(cq), 0);
	UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

static void
test_req_err(struct ibv_context *ctx)
{
	struct ibv_async_event ev;
	struct destroy_arg d;
	pthread_t t;
	struct ibv_send_wr swr, *bad_s;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_sge ss;
	struct ibv_wc wc;
	struct pair p;

	if (pair_open(ctx, &p) != 0)
		return;
	ut_verbs_rc_connect_ex(p.qa, ctx, p.qb->qp_num, 7, 12, 1, 0);
	ut_verbs_rc_connect_ex(p.qb, ctx, p.qa->qp_num, 7, 12, 0,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	ss = (struct ibv_sge){ (uintptr_t)p.src, sizeof(p.src), p.ms->lkey };
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 4;
	swr.sg_list = &ss;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_RDMA_READ;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.wr.rdma.remote_addr = (uintptr_t)p.dst;
	swr.wr.rdma.rkey = p.md->rkey;
	UT_CHECK_EQ(ibv_post_send(p.qa, &swr, &bad_s), 0);
	if (UT_CHECK_EQ(poll_one(p.cq, &wc), 1)) {
		UT_CHECK_EQ(wc.wr_id, 4);
		UT_CHECK_EQ(wc.status, IBV_WC_REM_INV_REQ_ERR);
	}
	if (get_event(ctx, IBV_EVENT_QP_REQ_ERR, p.qb, &ev) != 0) {
		pair_close(&p);
		return;
	}
	no_event(ctx);
	UT_CHECK_EQ(ibv_query_qp(p.qb, &qa, IBV_QP_STATE, &qi), 0);
	UT_CHECK_EQ(qa.qp_state, IBV_QPS_ERR);
	d = (struct destroy_arg){ .qp = p.qb };
	if (UT_CHECK_EQ(pthread_create(&t, NULL, destroy_thread, &d), 0)) {
		usleep(50000);
		UT_CHECK_EQ(__atomic_load_n(&d.done, __ATOMIC_ACQUIRE), 0);
		ibv_ack_async_event(&ev);
		pthread_join(t, NULL);
		UT_CHECK_EQ(d.ret, 0);
		p.qb = NULL;
	} else {
		ibv_ack_async_event(&ev);
	}
	pair_close(&p);
}

/* A QP left in RTR takes SENDs (the CM's RTU lost): the first raises
 * IBV_EVENT_COMM_EST naming it, the second nothing. */
static void
test_comm_est(struct ibv_context *ctx)
{
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_send_wr swr, *bad_s;
	struct ibv_qp_attr a;
	struct ibv_sge ss, rs;
	struct ibv_wc wc;
	struct pair p;
	int i;

	if (pair_open(ctx, &p) != 0)
		return;
	ut_verbs_rc_connect_ex(p.qa, ctx, p.qb->qp_num, 7, 12, 1, 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
	UT_CHECK_EQ(ibv_modify_qp(p.qb, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = p.qa->qp_num;
	a.rq_psn = 7;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 1;
	UT_CHECK_EQ(ibv_query_gid(ctx, 1, 0, &a.ah_attr.grh.dgid), 0);
	UT_CHECK_EQ(ibv_modify_qp(p.qb, &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER), 0);
	UT_CHECK_EQ(p.qb->state, IBV_QPS_RTR);
	no_event(ctx);
	rs = (struct ibv_sge){ (uintptr_t)p.dst, sizeof(p.dst), p.md->lkey };
	ss = (struct ibv_sge){ (uintptr_t)p.src, 64, p.ms->lkey };
	for (i = 0; i < 2; i++) {
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = 20 + i;
		rwr.sg_list = &rs;
		rwr.num_sge = 1;
		UT_CHECK_EQ(ibv_post_recv(p.qb, &rwr, &bad_r), 0);
		memset(&swr, 0, sizeof(swr));
		swr.wr_id = 10 + i;
		swr.sg_list = &ss;
		swr.num_sge = 1;
		swr.opcode = IBV_WR_SEND;
		swr.send_flags = IBV_SEND_SIGNALED;
		UT_CHECK_EQ(ibv_post_send(p.qa, &swr, &bad_s), 0);
		/* the receive and the send completions, in either order */
		UT_CHECK_EQ(poll_one(p.cq, &wc), 1);
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(poll_one(p.cq, &wc), 1);
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		if (i == 0)
			take_event(ctx, IBV_EVENT_COMM_EST, p.qb);
		no_event(ctx);
	}
	UT_CHECK_MEM(p.dst, p.src, 64);
	UT_CHECK_EQ(p.qb->state, IBV_QPS_RTR);
	pair_close(&p);
}

/* The attributes that move an RC QP of the device to @st, towards @dest
 * (as ut_verbs_rc_connect_ex() gives them, PSNs 7). */
static int
seq_attr(struct ibv_context *ctx, enum ibv_qp_state st, uint32_t dest,
	 struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = st;
	switch (st) {
	case IBV_QPS_INIT:
		a->port_num = 1;
		a->qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
		return IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		       IBV_QP_ACCESS_FLAGS;
	case IBV_QPS_RTR:
		a->path_mtu = IBV_MTU_1024;
		a->dest_qp_num = dest;
		a->rq_psn = 7;
		a->max_dest_rd_atomic = 1;
		a->min_rnr_timer = 12;
		a->ah_attr.is_global = 1;
		a->ah_attr.port_num = 1;
		a->ah_attr.grh.hop_limit = 1;
		UT_CHECK_EQ(ibv_query_gid(ctx, 1, 0, &a->ah_attr.grh.dgid), 0);
		return IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	default:
		a->sq_psn = 7;
		a->timeout = 14;
		a->retry_cnt = 7;
		a->rnr_retry = 7;
		a->max_rd_atomic = 1;
		return IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
		       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_MAX_QP_RD_ATOMIC;
	}
}

/* The QP's state as the owner has it. */
static enum ibv_qp_state
queried_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (!UT_CHECK_EQ(ibv_query_qp(qp, &a, IBV_QP_STATE, &init), 0))
		return IBV_QPS_UNKNOWN;
	return a.qp_state;
}

/*
 * The table's create_qp_init (rdma_create_qp's QP, INIT made with it): a
 * first change that is not to INIT, or one the QP refuses, makes no QP;
 * one to INIT gives a QP in INIT for qp->state and for its owner, with the
 * access asked for, that takes a receive at once.
 */
static void
test_create_init(struct ibv_context *ctx)
{
	const struct uroce_verbs_cm_glue *g =
		uroce_verbs_cm_glue(UROCE_VERBS_CM_GLUE_V3);
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *bad_r;
	struct ibv_qp_init_attr_ex ex;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a, q;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int m;

	if (!UT_CHECK(g != NULL && g->create_qp_init != NULL))
		return;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!UT_CHECK(pd != NULL && cq != NULL))
		goto out;
	memset(&ex, 0, sizeof(ex));
	ex.send_cq = ex.recv_cq = cq;
	ex.qp_type = IBV_QPT_RC;
	ex.cap.max_send_wr = ex.cap.max_recv_wr = 4;
	ex.cap.max_send_sge = ex.cap.max_recv_sge = 1;
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	m = seq_attr(ctx, IBV_QPS_INIT, 0, &a);
	errno = 0;
	UT_CHECK(g->create_qp_init(ctx, &ex, NULL, m) == NULL);
	UT_CHECK_EQ(errno, EINVAL);
	a.qp_state = IBV_QPS_RTR;
	errno = 0;
	UT_CHECK(g->create_qp_init(ctx, &ex, &a, m) == NULL);
	UT_CHECK_EQ(errno, EINVAL);
	m = seq_attr(ctx, IBV_QPS_INIT, 0, &a);
	a.port_num = 2;		/* one port a device */
	errno = 0;
	UT_CHECK(g->create_qp_init(ctx, &ex, &a, m) == NULL);
	UT_CHECK_EQ(errno, EINVAL);
	m = seq_attr(ctx, IBV_QPS_INIT, 0, &a);
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	qp = g->create_qp_init(ctx, &ex, &a, m);
	if (!UT_CHECK(qp != NULL))
		goto out;
	UT_CHECK_EQ(qp->state, IBV_QPS_INIT);
	if (UT_CHECK_EQ(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS,
				     &init), 0)) {
		UT_CHECK_EQ(q.qp_state, IBV_QPS_INIT);
		UT_CHECK_EQ(q.qp_access_flags, a.qp_access_flags);
	}
	UT_CHECK(ex.cap.max_recv_wr >= 4);	/* the caps made, written back */
	UT_CHECK_EQ(ibv_post_recv(qp, &rwr, &bad_r), 0);
	UT_CHECK_EQ(ibv_destroy_qp(qp), 0);
out:
	if (cq != NULL)
		ibv_destroy_cq(cq);
	if (pd != NULL)
		ibv_dealloc_pd(pd);
}

/*
 * The table's modify_qp_seq (uroce_verbs_cm.h), what rdma_cm's connect and
 * accept use: a bad argument or a first change the QP refuses changes
 * nothing; a refused later change leaves the ones before it made (qp->state
 * and the owner's state agree); INIT, RTR, RTS in one call give a QP that
 * exchanges a SEND, byte-exact, with one connected by ibv_modify_qp().
 */
static void
test_modify_seq(struct ibv_context *ctx)
{
	const struct uroce_verbs_cm_glue *g =
		uroce_verbs_cm_glue(UROCE_VERBS_CM_GLUE_V2);
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_send_wr swr, *bad_s;
	struct ibv_qp_attr a[3];
	struct ibv_sge ss, rs;
	unsigned int done = 9;
	struct ibv_wc wc;
	struct pair p;
	int m[3], i;

	if (!UT_CHECK(g != NULL && g->modify_qp_seq != NULL))
		return;
	UT_CHECK(uroce_verbs_cm_glue(UROCE_VERBS_CM_GLUE_V1) == g);
	UT_CHECK(uroce_verbs_cm_glue(UROCE_VERBS_CM_GLUE_V3) == g);
	UT_CHECK(uroce_verbs_cm_glue(UROCE_VERBS_CM_GLUE_V3 + 1) == NULL);
	if (pair_open(ctx, &p) != 0)
		return;
	m[0] = seq_attr(ctx, IBV_QPS_INIT, 0, &a[0]);
	UT_CHECK_EQ(g->modify_qp_seq(NULL, a, m, 1, &done), -EINVAL);
	UT_CHECK_EQ(done, 0);
	done = 9;
	UT_CHECK_EQ(g->modify_qp_seq(p.qa, a, m, 0, &done), -EINVAL);
	UT_CHECK_EQ(done, 0);
	UT_CHECK_EQ(g->modify_qp_seq(p.qa, NULL, m, 1, &done), -EINVAL);
	UT_CHECK_EQ(g->modify_qp_seq(p.qa, a, NULL, 1, &done), -EINVAL);
	UT_CHECK_EQ(g->modify_qp_seq(p.qa, a, m, 1, NULL), -EINVAL);
	UT_CHECK_EQ(p.qa->state, IBV_QPS_RESET);
	UT_CHECK_EQ(queried_state(p.qa), IBV_QPS_RESET);
	/* RESET -> RTR is not a transition: nothing made */
	m[0] = seq_attr(ctx, IBV_QPS_RTR, p.qb->qp_num, &a[0]);
	done = 9;
	UT_CHECK_EQ(g->modify_qp_seq(p.qa, a, m, 1, &done), -EINVAL);
	UT_CHECK_EQ(done, 0);
	UT_CHECK_EQ(p.qa->state, IBV_QPS_RESET);
	UT_CHECK_EQ(queried_state(p.qa), IBV_QPS_RESET);
	/* INIT, then INIT -> RTS (not a transition): INIT stays made */
	m[0] = seq_attr(ctx, IBV_QPS_INIT, 0, &a[0]);
	m[1] = seq_attr(ctx, IBV_QPS_RTS, 0, &a[1]);
	UT_CHECK_EQ(g->modify_qp_seq(p.qa, a, m, 2, &done), -EINVAL);
	UT_CHECK_EQ(done, 1);
	UT_CHECK_EQ(p.qa->state, IBV_QPS_INIT);
	UT_CHECK_EQ(queried_state(p.qa), IBV_QPS_INIT);
	/* INIT again (as rdma_cm does), RTR, RTS in one call */
	for (i = 0; i < 3; i++)
		m[i] = seq_attr(ctx, (enum ibv_qp_state)(IBV_QPS_INIT + i),
				p.qb->qp_num, &a[i]);
	UT_CHECK_EQ(g->modify_qp_seq(p.qa, a, m, 3, &done), 0);
	UT_CHECK_EQ(done, 3);
	UT_CHECK_EQ(p.qa->state, IBV_QPS_RTS);
	UT_CHECK_EQ(queried_state(p.qa), IBV_QPS_RTS);
	ut_verbs_rc_connect_ex(p.qb, ctx, p.qa->qp_num, 7, 12, 1, 0);
	rs = (struct ibv_sge){ (uintptr_t)p.dst, sizeof(p.dst), p.md->lkey };
	ss = (struct ibv_sge){ (uintptr_t)p.src, 64, p.ms->lkey };
	memset(&rwr, 0, sizeof(rwr));
	rwr.sg_list = &rs;
	rwr.num_sge = 1;
	UT_CHECK_EQ(ibv_post_recv(p.qb, &rwr, &bad_r), 0);
	memset(&swr, 0, sizeof(swr));
	swr.sg_list = &ss;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	UT_CHECK_EQ(ibv_post_send(p.qa, &swr, &bad_s), 0);
	for (i = 0; i < 2; i++) {
		UT_CHECK_EQ(poll_one(p.cq, &wc), 1);
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	}
	UT_CHECK_MEM(p.dst, p.src, 64);
	/* RTS -> RTR is not a transition either: RTS stays */
	m[0] = seq_attr(ctx, IBV_QPS_RTR, p.qb->qp_num, &a[0]);
	UT_CHECK_EQ(g->modify_qp_seq(p.qa, a, m, 1, &done), -EINVAL);
	UT_CHECK_EQ(done, 0);
	UT_CHECK_EQ(p.qa->state, IBV_QPS_RTS);
	UT_CHECK_EQ(queried_state(p.qa), IBV_QPS_RTS);
	pair_close(&p);
	UT_NOTE("modify_qp_seq: INIT, RTR, RTS in one call");
}

/* ibv_reg_mr() as the kernel's pinning: EFAULT for memory that is not
 * mapped, or read-only with a write access; nothing changes. */
static void
test_reg_mapped(struct ibv_context *ctx)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_mr *mr;
	char *m;

	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!UT_CHECK(pd != NULL && m != MAP_FAILED))
		return;
	UT_CHECK_EQ(munmap(m + pg, pg), 0);
	UT_CHECK_EQ(mprotect(m, pg, PROT_READ), 0);
	errno = 0;
	UT_CHECK(ibv_reg_mr(pd, m + pg, pg, 0) == NULL && errno == EFAULT);
	errno = 0;
	UT_CHECK(ibv_reg_mr(pd, m, 2 * pg, 0) == NULL && errno == EFAULT);
	errno = 0;
	UT_CHECK(ibv_reg_mr(pd, m, pg, IBV_ACCESS_LOCAL_WRITE) == NULL &&
		 errno == EFAULT);
	errno = 0;
	UT_CHECK(ibv_reg_mr(pd, m, pg, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_WRITE) == NULL && errno == EFAULT);
	mr = ibv_reg_mr(pd, m, pg, IBV_ACCESS_REMOTE_READ);
	if (UT_CHECK(mr != NULL))
		UT_CHECK_EQ(ibv_dereg_mr(mr), 0);
	UT_CHECK_EQ(munmap(m, pg), 0);
	/* the refusals left nothing behind: a normal buffer, then the PD */
	m = malloc(3 * pg);
	mr = ibv_reg_mr(pd, m, 3 * pg, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (UT_CHECK(mr != NULL))
		UT_CHECK_EQ(ibv_dereg_mr(mr), 0);
	free(m);
	UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
	UT_NOTE("reg_mr of unmapped and read-only memory");
}

/* On-demand paging: the caps, a region over memory not mapped yet,
 * ibv_advise_mr()'s prefetch and its errors (ibv_advise_mr(3)). */
static void
test_odp(struct ibv_context *ctx)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_device_attr_ex dx;
	struct ibv_mr *odp, *pin, *imp;
	struct ibv_sge sge;
	char *m;

	UT_CHECK_EQ(ibv_query_device_ex(ctx, NULL, &dx), 0);
	UT_CHECK_EQ(dx.odp_caps.general_caps,
		    IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT);
	UT_CHECK(dx.odp_caps.per_transport_caps.rc_odp_caps &
		 IBV_ODP_SUPPORT_ATOMIC);
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!UT_CHECK(pd != NULL && m != MAP_FAILED))
		return;
	UT_CHECK_EQ(munmap(m + pg, pg), 0);	/* page 1: a hole */
	odp = ibv_reg_mr(pd, m, 2 * pg, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_ON_DEMAND);
	pin = ibv_reg_mr(pd, m, pg, IBV_ACCESS_LOCAL_WRITE);
	imp = ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND);
	if (UT_CHECK(odp != NULL && pin != NULL && imp != NULL)) {
		sge = (struct ibv_sge){ (uintptr_t)m, (uint32_t)pg, odp->lkey };
		UT_CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					  IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), 0);
		UT_CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 2,
					  &sge, 1), EINVAL);
		UT_CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
					  &sge, 0), EINVAL);
		UT_CHECK_EQ(ibv_advise_mr(pd, 7, 0, &sge, 1), EOPNOTSUPP);
		/* the implicit region's keys prefetch too, but not writably */
		sge.lkey = imp->lkey;
		UT_CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
					  &sge, 1), 0);
		UT_CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					  0, &sge, 1), EPERM);
		sge.lkey = pin->lkey;		/* not on demand */
		UT_CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
					  &sge, 1), ENOENT);
		/* the hole, and past the region */
		sge = (struct ibv_sge){ (uintptr_t)m + pg, 8, odp->lkey };
		UT_CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
					  &sge, 1), EFAULT);
		UT_CHECK_EQ(ibv_advise_mr(pd,
					  IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
					  0, &sge, 1), 0);
		sge.addr += pg;
		UT_CHECK_EQ(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
					  &sge, 1), EFAULT);
	}
	if (odp != NULL)
		UT_CHECK_EQ(ibv_dereg_mr(odp), 0);
	if (pin != NULL)
		UT_CHECK_EQ(ibv_dereg_mr(pin), 0);
	if (imp != NULL)
		UT_CHECK_EQ(ibv_dereg_mr(imp), 0);
	munmap(m, pg);
	UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
	UT_NOTE("on-demand regions and ibv_advise_mr");
}

/* The imports through ictx (a context on ctx's file): the PD and MR found
 * by their handles are the same objects (an MR of the imported PD takes
 * the imported MR's lkey); bad handles EINVAL; unimport frees the handle
 * objects only. */
static void
import_objects(struct ibv_context *ctx, struct ibv_context *ictx,
	       struct ibv_context *first)
{
	static char buf[4096];
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *ipd, *fpd = ibv_alloc_pd(first);
	struct ibv_mr *mr = NULL, *imr;
	uint32_t h;

	if (!UT_CHECK(pd != NULL && fpd != NULL))
		return;
	h = pd->handle;
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ipd = ibv_import_pd(ictx, pd->handle);
	if (!UT_CHECK(mr != NULL && ipd != NULL))
		return;
	UT_CHECK(pd->handle != 0 && ipd->handle == pd->handle &&
		 ipd->context == ictx);
	imr = ibv_import_mr(ipd, mr->handle);
	if (UT_CHECK(imr != NULL)) {
		UT_CHECK(imr->lkey == mr->lkey && imr->rkey == mr->rkey &&
			 imr->length == mr->length && imr->pd == ipd);
		ibv_unimport_mr(imr);
	}
	/* The same engine PD: freeing it through ctx is EBUSY while the
	 * MR lives, whichever handle object registered it. */
	UT_CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
	/* Not a handle of ctx's file (fpd is first's), not a PD, an MR of
	 * another PD: EINVAL. */
	errno = 0;
	UT_CHECK(ibv_import_pd(ictx, fpd->handle) == NULL && errno == EINVAL);
	errno = 0;
	UT_CHECK(ibv_import_pd(ictx, mr->handle) == NULL && errno == EINVAL);
	errno = 0;
	UT_CHECK(ibv_import_mr(fpd, mr->handle) == NULL && errno == EINVAL);
	ibv_unimport_pd(ipd);
	UT_CHECK_EQ(ibv_dereg_mr(mr), 0);
	errno = 0;
	UT_CHECK(ibv_import_pd(ictx, 0) == NULL && errno == EINVAL);
	UT_CHECK_EQ(ibv_dealloc_pd(fpd), 0);
	UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
	/* The handle of a PD gone finds nothing. */
	errno = 0;
	UT_CHECK(ibv_import_pd(ictx, h) == NULL && errno == EINVAL);
}

/* ibv_context.cmd_fd is a descriptor of the context's own: dup() works
 * (rdma-core's shared-PD tests start so), ibv_import_device() on the dup
 * opens a context of the same device that owns it, and
 * ibv_close_device() closes it. A descriptor of no context: EINVAL; none
 * at all: EBADF. */
static void
test_cmd_fd(struct ibv_device *dev, struct ibv_context *first)
{
	struct ibv_context *ctx = ibv_open_device(dev), *ictx;
	int fd, d, nul;

	if (!UT_CHECK(ctx != NULL))
		return;
	fd = ctx->cmd_fd;
	UT_CHECK(fd >= 0 && fd != ctx->async_fd && fd != first->cmd_fd);
	UT_CHECK(fcntl(fd, F_GETFD) == FD_CLOEXEC);
	d = dup(fd);
	UT_CHECK(d >= 0);
	ictx = ibv_import_device(d);
	if (UT_CHECK(ictx != NULL)) {
		UT_CHECK(ictx != ctx && ictx->cmd_fd == d &&
			 ictx->device == ctx->device);
		import_objects(ctx, ictx, first);
		UT_CHECK_EQ(ibv_close_device(ictx), 0);
		errno = 0;
		UT_CHECK(fcntl(d, F_GETFD) == -1 && errno == EBADF);
	}
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	errno = 0;
	UT_CHECK(ibv_import_device(nul) == NULL && errno == EINVAL);
	close(nul);
	errno = 0;
	UT_CHECK(ibv_import_device(-1) == NULL && errno == EBADF);
	UT_CHECK_EQ(ibv_close_device(ctx), 0);
	errno = 0;
	UT_CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF);
	UT_NOTE("cmd_fd %d", fd);
}

/* CAP_IPC_LOCK in the effective set on or off (kept permitted). */
static int
ipc_lock_set(bool on)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, d) != 0)
		return -1;
	if (on)
		d[CAP_TO_INDEX(CAP_IPC_LOCK)].effective |= CAP_TO_MASK(CAP_IPC_LOCK);
	else
		d[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	return (int)syscall(SYS_capset, &h, d);
}

/*
 * RLIMIT_MEMLOCK as the kernel's pinning charges it: the pages each region
 * spans, for the whole process, ENOMEM past the soft limit without
 * CAP_IPC_LOCK, given back at dereg; a rereg to a larger range past it
 * fails and leaves the MR as it was. Run before any other MR exists.
 */
static void
test_memlock(struct ibv_context *ctx)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct ibv_mr *m[3], *extra;
	struct rlimit old, rl;
	struct ibv_pd *pd;
	char *buf;

	buf = mmap(NULL, (size_t)pg * 32, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pd = ibv_alloc_pd(ctx);
	if (!UT_CHECK(buf != MAP_FAILED && pd != NULL) ||
	    !UT_CHECK_EQ(getrlimit(RLIMIT_MEMLOCK, &old), 0))
		return;
	rl = old;
	rl.rlim_cur = (rlim_t)pg * 16;
	if (!UT_CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0) ||
	    !UT_CHECK_EQ(ipc_lock_set(false), 0))
		goto out;
	/* 8 pages, then 100 bytes across a page boundary: 2 pages. */
	m[0] = ibv_reg_mr(pd, buf, (size_t)pg * 8, IBV_ACCESS_LOCAL_WRITE);
	m[1] = ibv_reg_mr(pd, buf + pg * 9 - 50, 100, IBV_ACCESS_LOCAL_WRITE);
	/* 6 more make 16, the limit itself. */
	m[2] = ibv_reg_mr(pd, buf + pg * 16, (size_t)pg * 6, 0);
	UT_CHECK(m[0] != NULL && m[1] != NULL && m[2] != NULL);
	errno = 0;
	extra = ibv_reg_mr(pd, buf + pg * 24, 1, 0);
	UT_CHECK(extra == NULL);
	UT_CHECK_EQ(errno, ENOMEM);
	/* A rereg to 3 pages (one more) is refused; the MR is as it was. */
	errno = 0;
	UT_CHECK_EQ(ibv_rereg_mr(m[1], IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				 buf + pg * 9, (size_t)pg * 3, 0),
		    IBV_REREG_MR_ERR_INPUT);
	UT_CHECK_EQ(errno, ENOMEM);
	UT_CHECK(m[1]->addr == buf + pg * 9 - 50 && m[1]->length == 100);
	/* Access alone pins nothing new, even at the limit. */
	UT_CHECK_EQ(ibv_rereg_mr(m[2], IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				 0, IBV_ACCESS_LOCAL_WRITE), 0);
	/* On demand pins nothing: not charged, even at the limit. */
	extra = ibv_reg_mr(pd, buf + pg * 24, (size_t)pg * 8,
			   IBV_ACCESS_ON_DEMAND);
	UT_CHECK(extra != NULL);
	if (extra != NULL)
		UT_CHECK_EQ(ibv_dereg_mr(extra), 0);
	/* Dereg gives its pages back. */
	UT_CHECK_EQ(ibv_dereg_mr(m[1]), 0);
	extra = ibv_reg_mr(pd, buf + pg * 24, (size_t)pg * 2, 0);
	UT_CHECK(extra != NULL);
	if (extra != NULL)
		UT_CHECK_EQ(ibv_dereg_mr(extra), 0);
	/* CAP_IPC_LOCK lifts the limit. */
	UT_CHECK_EQ(ipc_lock_set(true), 0);
	extra = ibv_reg_mr(pd, buf + pg * 24, (size_t)pg * 8, 0);
	UT_CHECK(extra != NULL);
	if (extra != NULL)
		UT_CHECK_EQ(ibv_dereg_mr(extra), 0);
	UT_CHECK_EQ(ibv_dereg_mr(m[0]), 0);
	UT_CHECK_EQ(ibv_dereg_mr(m[2]), 0);
out:
	ipc_lock_set(true);
	UT_CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &old), 0);
	UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
	munmap(buf, (size_t)pg * 32);
}

/* A UD receive's 40 bytes: 20 zero then the IPv4 header. */
static void
grh_v4(struct ibv_grh *g, const uint8_t src[4], const uint8_t dst[4])
{
	uint8_t *b = (uint8_t *)g;

	memset(g, 0, sizeof(*g));
	b[20] = 0x45;
	b[21] = 0x28;			/* TOS */
	b[28] = 17;			/* TTL */
	b[29] = IPPROTO_UDP;
	memcpy(b + 32, src, 4);
	memcpy(b + 36, dst, 4);
}

/* The IPv4 header's checksum (RFC 791), written into it. */
static void
grh_v4_cksum(struct ibv_grh *g)
{
	uint8_t *ip4 = (uint8_t *)g + 20;
	uint32_t sum = 0;
	uint16_t w;
	int i;

	ip4[10] = ip4[11] = 0;
	for (i = 0; i < 20; i += 2) {
		memcpy(&w, ip4 + i, 2);
		sum += w;
	}
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	w = (uint16_t)~sum;
	memcpy(ip4 + 10, &w, 2);
}

/* The IPv6 header; dst[0] 0xff: multicast. */
static void
grh_v6(struct ibv_grh *g, const union ibv_gid *dst, uint8_t next)
{
	memset(g, 0, sizeof(*g));
	g->version_tclass_flow = htobe32(6u << 28 | 0x12u << 20 | 0xabcde);
	g->next_hdr = next;
	g->hop_limit = 9;
	g->sgid.global.subnet_prefix = htobe64(0xfe80000000000000ull);
	g->sgid.global.interface_id = htobe64(0x1234);
	g->dgid = *dst;
}

/* ibv_init_ah_from_wc / ibv_create_ah_from_wc as rdma-core's libibverbs
 * builds the answer: the source GID is the one the datagram was sent to,
 * hop limit, class and flow label kept; multicast and foreign
 * destinations refused. */
static void
test_ah_from_wc(struct ibv_context *ctx)
{
	static const uint8_t peer[4] = { 192, 168, 79, 2 };
	static const uint8_t us[4] = { 192, 168, 79, 1 };
	static const uint8_t other[4] = { 192, 168, 79, 9 };
	static const uint8_t group[4] = { 239, 1, 1, 1 };
	struct ibv_wc wc = { .wc_flags = IBV_WC_GRH, .sl = 3 };
	struct ibv_ah_attr a;
	struct ibv_grh g;
	union ibv_gid ll, mc;
	struct ibv_pd *pd;
	struct ibv_ah *ah;

	grh_v4(&g, peer, us);
	UT_CHECK_EQ(ibv_init_ah_from_wc(ctx, 1, &wc, &g, &a), 0);
	UT_CHECK_EQ(a.is_global, 1);
	UT_CHECK_EQ(a.port_num, 1);
	UT_CHECK_EQ(a.sl, 3);
	UT_CHECK_EQ(a.grh.sgid_index, 0);
	UT_CHECK_EQ(a.grh.dgid.raw[11], 0xff);
	UT_CHECK_MEM(&a.grh.dgid.raw[12], peer, 4);
	UT_CHECK_EQ(a.grh.hop_limit, 17);
	UT_CHECK_EQ(a.grh.traffic_class, 0x28);
	UT_CHECK_EQ(a.grh.flow_label, 0);
	pd = ibv_alloc_pd(ctx);
	if (UT_CHECK(pd != NULL)) {
		/* From ourselves: the device's own MAC, no neighbour to ask
		 * on a link nobody joins. */
		grh_v4(&g, us, us);
		ah = ibv_create_ah_from_wc(pd, &wc, &g, 1);
		if (UT_CHECK(ah != NULL))
			UT_CHECK_EQ(ibv_destroy_ah(ah), 0);
		/* Not global: built, and refused by a RoCE AH. */
		wc.wc_flags = 0;
		UT_CHECK_EQ(ibv_init_ah_from_wc(ctx, 1, &wc, &g, &a), 0);
		UT_CHECK_EQ(a.is_global, 0);
		errno = 0;
		UT_CHECK(ibv_create_ah_from_wc(pd, &wc, &g, 1) == NULL);
		UT_CHECK_EQ(errno, EINVAL);
		wc.wc_flags = IBV_WC_GRH;
		UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
	}
	/* rdma-core's reading of the 40 bytes: an IPv4 header at 20 is
	 * IPv4 whatever the first 20 hold unless they start as IPv6 (the
	 * flow label comes from the first word all the same)... */
	grh_v4(&g, peer, us);
	memset(&g, 0x5a, 20);
	UT_CHECK_EQ(ibv_init_ah_from_wc(ctx, 1, &wc, &g, &a), 0);
	UT_CHECK_EQ(a.grh.sgid_index, 0);
	UT_CHECK_MEM(&a.grh.dgid.raw[12], peer, 4);
	UT_CHECK_EQ(a.grh.flow_label, 0xa5a5a);
	UT_CHECK_EQ(a.grh.hop_limit, 17);
	/* ... and when they do, IPv4 only with a right checksum. */
	grh_v4(&g, peer, us);
	grh_v4_cksum(&g);
	g.version_tclass_flow = htobe32(6u << 28);
	UT_CHECK_EQ(ibv_init_ah_from_wc(ctx, 1, &wc, &g, &a), 0);
	UT_CHECK_MEM(&a.grh.dgid.raw[12], peer, 4);
	UT_CHECK_EQ(a.grh.traffic_class, 0x28);
	((uint8_t *)&g)[30] ^= 1;	/* the checksum wrong: IPv6, not UDP */
	UT_CHECK_EQ(ibv_init_ah_from_wc(ctx, 1, &wc, &g, &a), -1);
	UT_CHECK_EQ(errno, EPROTONOSUPPORT);
	/* Neither version: not RoCEv2. */
	memset(&g, 0, sizeof(g));
	UT_CHECK_EQ(ibv_init_ah_from_wc(ctx, 1, &wc, &g, &a), -1);
	UT_CHECK_EQ(errno, EPROTONOSUPPORT);
	grh_v4(&g, peer, group);
	UT_CHECK_EQ(ibv_init_ah_from_wc(ctx, 1, &wc, &g, &a), -1);
	UT_CHECK_EQ(errno, EINVAL);
	grh_v4(&g, peer, other);
	UT_CHECK_EQ(ibv_init_ah_from_wc(ctx, 1, &wc, &g, &a), -1);
	UT_CHECK_EQ(errno, ENOENT);
	/* IPv6 to our link-local GID (index 1). */
	UT_CHECK_EQ(ibv_query_gid(ctx, 1, 1, &ll), 0);
	grh_v6(&g, &ll, IPPROTO_UDP);
	UT_CHECK_EQ(ibv_init_ah_from_wc(ctx, 1, &wc, &g, &a), 0);
	UT_CHECK_EQ(a.grh.sgid_index, 1);
	UT_CHECK_MEM(a.grh.dgid.raw, g.sgid.raw, 16);
	UT_CHECK_EQ(a.grh.hop_limit, 9);
	UT_CHECK_EQ(a.grh.traffic_class, 0x12);
	UT_CHECK_EQ(a.grh.flow_label, 0xabcde);
	grh_v6(&g, &ll, 0x1b);		/* RoCE v1's IB next header */
	UT_CHECK_EQ(ibv_init_ah_from_wc(ctx, 1, &wc, &g, &a), -1);
	UT_CHECK_EQ(errno, EPROTONOSUPPORT);
	memset(&mc, 0, sizeof(mc));
	mc.raw[0] = 0xff;
	mc.raw[1] = 0x02;
	mc.raw[15] = 1;
	grh_v6(&g, &mc, IPPROTO_UDP);
	UT_CHECK_EQ(ibv_init_ah_from_wc(ctx, 1, &wc, &g, &a), -1);
	UT_CHECK_EQ(errno, EINVAL);
	UT_CHECK_EQ(ibv_init_ah_from_wc(ctx, 2, &wc, &g, &a), -1);
	UT_CHECK_EQ(errno, EINVAL);
}

/* ------------------------------------------------------------------------
 * UD address handles' static rates (ud_pace.c), through the verbs: one UD
 * QP sends to two AHs of the device's own GID, one at the port's rate and
 * one at 2.5 Gb/s, and a second UD QP receives. The AH waits are the QP's
 * pace_ah_waits counter: none for the port-rate AH's datagrams, some for
 * the slow one's (more than its tight burst of about 34 KB is posted at
 * once), and every datagram arrives with its bytes. The exact spacing is
 * checked on the unit tests' fake clock (qp_pace).
 */
#define UDR_N		48
#define UDR_LEN		2000
#define UDR_QKEY	0x1234567u

struct udr {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qa, *qb;
	struct ibv_mr *ms, *md;
	struct ibv_ah *ah[2];
	uint8_t *src, *dst;
};

static int
udr_qp_up(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = UDR_QKEY;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY) != 0)
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE) != 0)
		return -1;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static struct ibv_ah *
udr_ah(struct ibv_context *ctx, struct ibv_pd *pd, uint8_t rate)
{
	struct ibv_ah_attr a;

	memset(&a, 0, sizeof(a));
	a.is_global = 1;
	a.port_num = 1;
	a.static_rate = rate;
	a.grh.hop_limit = 1;
	if (ibv_query_gid(ctx, 1, 0, &a.grh.dgid) != 0)
		return NULL;
	return ibv_create_ah(pd, &a);
}

static int
udr_open(struct ibv_context *ctx, struct udr *u)
{
	struct ibv_qp_init_attr init;

	memset(u, 0, sizeof(*u));
	u->src = malloc(UDR_LEN);
	u->dst = calloc(UDR_N * 2, UDR_LEN + 40);
	u->pd = ibv_alloc_pd(ctx);
	u->cq = ibv_create_cq(ctx, 4 * UDR_N, NULL, NULL, 0);
	if (!UT_CHECK(u->src && u->dst && u->pd && u->cq))
		return -1;
	for (int i = 0; i < UDR_LEN; i++)
		u->src[i] = (uint8_t)(i * 13 + 1);
	u->ms = ibv_reg_mr(u->pd, u->src, UDR_LEN, 0);
	u->md = ibv_reg_mr(u->pd, u->dst, (size_t)UDR_N * 2 * (UDR_LEN + 40),
			   IBV_ACCESS_LOCAL_WRITE);
	memset(&init, 0, sizeof(init));
	init.send_cq = u->cq;
	init.recv_cq = u->cq;
	init.qp_type = IBV_QPT_UD;
	init.cap.max_send_wr = UDR_N;
	init.cap.max_recv_wr = 2 * UDR_N;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	u->qa = ibv_create_qp(u->pd, &init);
	u->qb = ibv_create_qp(u->pd, &init);
	u->ah[0] = udr_ah(ctx, u->pd, IBV_RATE_MAX);
	u->ah[1] = udr_ah(ctx, u->pd, IBV_RATE_2_5_GBPS);
	if (!UT_CHECK(u->ms && u->md && u->qa && u->qb && u->ah[0] && u->ah[1]))
		return -1;
	if (!UT_CHECK_EQ(udr_qp_up(u->qa), 0) || !UT_CHECK_EQ(udr_qp_up(u->qb), 0))
		return -1;
	return 0;
}

static void
udr_close(struct udr *u)
{
	for (int i = 0; i < 2; i++)
		if (u->ah[i] != NULL)
			UT_CHECK_EQ(ibv_destroy_ah(u->ah[i]), 0);
	if (u->qa != NULL)
		UT_CHECK_EQ(ibv_destroy_qp(u->qa), 0);
	if (u->qb != NULL)
		UT_CHECK_EQ(ibv_destroy_qp(u->qb), 0);
	if (u->ms != NULL)
		UT_CHECK_EQ(ibv_dereg_mr(u->ms), 0);
	if (u->md != NULL)
		UT_CHECK_EQ(ibv_dereg_mr(u->md), 0);
	if (u->cq != NULL)
		UT_CHECK_EQ(ibv_destroy_cq(u->cq), 0);
	if (u->pd != NULL)
		UT_CHECK_EQ(ibv_dealloc_pd(u->pd), 0);
	free(u->src);
	free(u->dst);
}

/* UDR_N datagrams to ah[k], each received into its own slot; every
 * completion successful and every payload intact. */
static void
udr_round(struct udr *u, int k)
{
	struct ibv_sge ss = { (uintptr_t)u->src, UDR_LEN, u->ms->lkey };
	unsigned int sends = 0, recvs = 0, bad = 0, i;
	struct ibv_send_wr swr, *bad_s;
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_wc wc[16];
	int n, idle = 0;

	for (i = 0; i < UDR_N; i++) {
		struct ibv_sge rs = {
			(uintptr_t)(u->dst + (size_t)i * (UDR_LEN + 40)),
			UDR_LEN + 40, u->md->lkey,
		};

		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = i;
		rwr.sg_list = &rs;
		rwr.num_sge = 1;
		UT_CHECK_EQ(ibv_post_recv(u->qb, &rwr, &bad_r), 0);
	}
	for (i = 0; i < UDR_N; i++) {
		memset(&swr, 0, sizeof(swr));
		swr.wr_id = 1000 + i;
		swr.sg_list = &ss;
		swr.num_sge = 1;
		swr.opcode = IBV_WR_SEND;
		swr.send_flags = IBV_SEND_SIGNALED;
		swr.wr.ud.ah = u->ah[k];
		swr.wr.ud.remote_qpn = u->qb->qp_num;
		swr.wr.ud.remote_qkey = UDR_QKEY;
		UT_CHECK_EQ(ibv_post_send(u->qa, &swr, &bad_s), 0);
	}
	/* A hang guard of 5 s without a completion, not a bound. */
	while ((sends < UDR_N || recvs < UDR_N) && idle < 5000) {
		n = ibv_poll_cq(u->cq, 16, wc);
		if (n <= 0) {
			idle++;
			usleep(1000);
			continue;
		}
		idle = 0;
		for (i = 0; i < (unsigned int)n; i++) {
			bad += wc[i].status != IBV_WC_SUCCESS;
			if (wc[i].opcode == IBV_WC_RECV) {
				recvs++;
				bad += wc[i].byte_len != UDR_LEN + 40 ||
				       memcmp(u->dst + wc[i].wr_id *
					      (UDR_LEN + 40) + 40,
					      u->src, UDR_LEN) != 0;
			} else {
				sends++;
			}
		}
	}
	UT_CHECK_EQ(sends, UDR_N);
	UT_CHECK_EQ(recvs, UDR_N);
	UT_CHECK_EQ(bad, 0);
}

static void
test_ud_static_rate(struct ibv_context *ctx)
{
	struct ibv_ah_attr bad;
	struct udr u;
	const struct uroce_qp *uqp;
	uint64_t waits;

	if (udr_open(ctx, &u) == 0) {
		/* 1 is reserved, 25 is past the enum: EINVAL, nothing made. */
		memset(&bad, 0, sizeof(bad));
		bad.is_global = 1;
		bad.port_num = 1;
		UT_CHECK_EQ(ibv_query_gid(ctx, 1, 0, &bad.grh.dgid), 0);
		bad.static_rate = 1;
		errno = 0;
		UT_CHECK(ibv_create_ah(u.pd, &bad) == NULL && errno == EINVAL);
		bad.static_rate = 25;
		errno = 0;
		UT_CHECK(ibv_create_ah(u.pd, &bad) == NULL && errno == EINVAL);
		uqp = ((struct uroce_vqp *)(void *)u.qa)->uqp;
		udr_round(&u, 0);
		UT_CHECK_EQ(__atomic_load_n(&uqp->stats.pace_ah_waits,
					    __ATOMIC_RELAXED), 0);
		udr_round(&u, 1);
		waits = __atomic_load_n(&uqp->stats.pace_ah_waits,
					__ATOMIC_RELAXED);
		UT_CHECK(waits > 0);
		udr_round(&u, 0);
		UT_CHECK_EQ(__atomic_load_n(&uqp->stats.pace_ah_waits,
					    __ATOMIC_RELAXED), waits);
		UT_NOTE("UD static rate: %lu AH waits", (unsigned long)waits);
	}
	udr_close(&u);
}

int
main(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int num = 0;

	ut_srand(6);
	if (write_config() != 0) {
		perror("config");
		return 1;
	}
	atexit(ut_verbs_cleanup);
	list = ibv_get_device_list(&num);
	if (UT_CHECK(list != NULL && num == 1)) {
		ctx = ibv_open_device(list[0]);
		if (UT_CHECK(ctx != NULL)) {
			UT_CHECK(ctx->async_fd >= 0);
			struct ibv_device_attr da;

			/* no_event() reads it without blocking */
			UT_CHECK_EQ(fcntl(ctx->async_fd, F_SETFL,
					  fcntl(ctx->async_fd, F_GETFL) |
					  O_NONBLOCK), 0);

			test_memlock(ctx);
			test_attributes(ctx, list[0]);
			UT_CHECK_EQ(ibv_query_device(ctx, &da), 0);
			test_objects(ctx, da.max_cqe);
			test_unpolled(ctx);
			test_qp_access(ctx);
			test_unmapped_write(ctx);
			test_resize_cq(ctx, da.max_cqe);
			test_rereg_mr(ctx);
			test_req_err(ctx);
			test_comm_est(ctx);
			test_modify_seq(ctx);
			test_create_init(ctx);
			test_reg_mapped(ctx);
			test_odp(ctx);
			test_cmd_fd(list[0], ctx);
			test_ah_from_wc(ctx);
			test_ud_static_rate(ctx);
			UT_CHECK_EQ(ibv_close_device(ctx), 0);
		}
		ibv_free_device_list(list);
	}
	unlink(ut_verbs_conf);
	unsetenv("UROCE_CONFIG");
	return ut_summary();
}
