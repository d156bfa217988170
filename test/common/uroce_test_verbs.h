/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Set-up of tests that drive the stack through our libibverbs.so.1: a
 * configuration file for UROCE_CONFIG, and the EAL run directory of its
 * file prefix removed at exit. Register the clean-up before the first verb
 * starts the engine: atexit handlers run in reverse, so the engine stops
 * first.
 */
#ifndef UROCE_TEST_VERBS_H
#define UROCE_TEST_VERBS_H

#include <errno.h>
#include <ftw.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "uroce_test.h"

static char ut_verbs_conf[64];
static char ut_verbs_rundir[96];

static inline int
ut_verbs_rm_entry(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static inline void
ut_verbs_cleanup(void)
{
	nftw(ut_verbs_rundir, ut_verbs_rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	remove(ut_verbs_conf);
}

/*
 * Two ports of this process joined by ringlink name (no socket, no lock):
 * 192.168.<subnet>.1 and .2, MTU 1500, one engine lcore, EAL memory from
 * UROCE_TEST_MEM, file prefix uroce-<name>-<pid>. Sets UROCE_CONFIG and
 * registers the clean-up. @return 0, or -1 (errno) if the file fails.
 */
static inline int
ut_verbs_ringlink_config(const char *name, unsigned int subnet)
{
	const char *mem = getenv("UROCE_TEST_MEM");
	int pid = (int)getpid();
	FILE *f;

	snprintf(ut_verbs_conf, sizeof(ut_verbs_conf), "/tmp/uroce-%s.%d.conf",
		 name, pid);
	snprintf(ut_verbs_rundir, sizeof(ut_verbs_rundir),
		 "/var/run/dpdk/uroce-%s-%d", name, pid);
	f = fopen(ut_verbs_conf, "w");
	if (f == NULL)
		return -1;
	fprintf(f, "[port0]\ndev = ringlink:%s,side=0\n"
		"ip = 192.168.%u.1/24\nmtu = 1500\n"
		"[port1]\ndev = ringlink:%s,side=1\n"
		"ip = 192.168.%u.2/24\nmtu = 1500\n"
		"[eal]\nlcores = 1\n"
		"args = --no-pci %s --file-prefix=uroce-%s-%d "
		"--log-level=*:warning\n", name, subnet, name, subnet,
		mem != NULL ? mem : "--no-huge -m 256", name, pid);
	fclose(f);
	setenv("UROCE_CONFIG", ut_verbs_conf, 1);
	atexit(ut_verbs_cleanup);
	return 0;
}

/*
 * The two devices of a ringlink configuration (ut_verbs_ringlink_config()
 * first), opened: 0, or -1 with what failed left NULL. Needs the test's
 * uroce_test.h and <infiniband/verbs.h>.
 */
static inline int
ut_verbs_open_pair(struct ibv_device ***list, struct ibv_context **c0,
		   struct ibv_context **c1)
{
	int num = 0;

	*c0 = *c1 = NULL;
	*list = ibv_get_device_list(&num);
	if (!UT_CHECK(*list != NULL && num == 2))
		return -1;
	*c0 = ibv_open_device((*list)[0]);
	*c1 = ibv_open_device((*list)[1]);
	return UT_CHECK(*c0 != NULL && *c1 != NULL) ? 0 : -1;
}

/*
 * ut_verbs_ringlink_config() then ut_verbs_open_pair(), what a two-device
 * test's main() starts with. A configuration file that cannot be written
 * ends the test at once (exit 1, said on stderr); @return as
 * ut_verbs_open_pair().
 */
static inline int
ut_verbs_ringlink_pair(const char *name, unsigned int subnet,
		       struct ibv_device ***list, struct ibv_context **c0,
		       struct ibv_context **c1)
{
	if (ut_verbs_ringlink_config(name, subnet) != 0) {
		perror("config");
		exit(1);
	}
	return ut_verbs_open_pair(list, c0, c1);
}

/* Close what ut_verbs_open_pair() opened, forget the configuration. */
static inline void
ut_verbs_close_pair(struct ibv_device **list, struct ibv_context *c0,
		    struct ibv_context *c1)
{
	if (c0 != NULL)
		UT_CHECK_EQ(ibv_close_device(c0), 0);
	if (c1 != NULL)
		UT_CHECK_EQ(ibv_close_device(c1), 0);
	if (list != NULL)
		ibv_free_device_list(list);
	unsetenv("UROCE_CONFIG");
}

/*
 * Tear down a test's QP, MR, CQ and PD in that order, each checked, any of
 * them NULL (never made) skipped.
 */
static inline void
ut_verbs_destroy(struct ibv_qp *qp, struct ibv_mr *mr, struct ibv_cq *cq,
		 struct ibv_pd *pd)
{
	if (qp != NULL)
		UT_CHECK_EQ(ibv_destroy_qp(qp), 0);
	if (mr != NULL)
		UT_CHECK_EQ(ibv_dereg_mr(mr), 0);
	if (cq != NULL)
		UT_CHECK_EQ(ibv_destroy_cq(cq), 0);
	if (pd != NULL)
		UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/*
 * An RC QP from RESET to RTS towards peer_qpn of peer_ctx (GID 0, path MTU
 * 1024, PSN psn both ways, retry and RNR retry 7: for ever), each step
 * checked with the state it leaves; rd_atomic READs/atomics outstanding
 * each way, remote access flags access.
 */
static inline void
ut_verbs_rc_connect_ex(struct ibv_qp *qp, struct ibv_context *peer_ctx,
		       uint32_t peer_qpn, uint32_t psn, uint8_t min_rnr_timer,
		       uint8_t rd_atomic, unsigned int access)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = access;
	UT_CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	UT_CHECK_EQ(qp->state, IBV_QPS_INIT);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer_qpn;
	a.rq_psn = psn;
	a.max_dest_rd_atomic = rd_atomic;
	a.min_rnr_timer = min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 1;
	UT_CHECK_EQ(ibv_query_gid(peer_ctx, 1, 0, &a.ah_attr.grh.dgid), 0);
	UT_CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER), 0);
	UT_CHECK_EQ(qp->state, IBV_QPS_RTR);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = psn;
	a.max_rd_atomic = rd_atomic;
	UT_CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC), 0);
	UT_CHECK_EQ(qp->state, IBV_QPS_RTS);
}

/* ut_verbs_rc_connect_ex() with one READ/atomic each way, no remote access. */
static inline void
ut_verbs_rc_connect(struct ibv_qp *qp, struct ibv_context *peer_ctx,
		    uint32_t peer_qpn, uint32_t psn, uint8_t min_rnr_timer)
{
	ut_verbs_rc_connect_ex(qp, peer_ctx, peer_qpn, psn, min_rnr_timer, 1, 0);
}

/* The one device of the configuration, opened; NULL (and a line) if not. */
static inline struct ibv_context *
ut_verbs_open_one(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int num = 0;

	list = ibv_get_device_list(&num);
	if (list != NULL && num == 1)
		ctx = ibv_open_device(list[0]);
	if (ctx == NULL)
		fprintf(stderr, "ibv_open_device: %s\n", strerror(errno));
	if (list != NULL)
		ibv_free_device_list(list);
	return ctx;
}

/* Port 1's state, IBV_PORT_NOP when the query fails. */
static inline enum ibv_port_state
ut_verbs_port_state(struct ibv_context *ctx)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(ctx, 1, &pa) != 0)
		return IBV_PORT_NOP;
	return pa.state;
}

/* The next port or device event on ctx (PORT_ACTIVE, PORT_ERR,
 * DEVICE_FATAL; its port number in *port), others acknowledged and passed
 * over; -1 if none comes within guard_ms (a guard against a hang). */
static inline int
ut_verbs_port_event(struct ibv_context *ctx, int guard_ms, int *port)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int type;

	for (;;) {
		if (poll(&pfd, 1, guard_ms) != 1)
			return -1;
		if (ibv_get_async_event(ctx, &ev) != 0)
			return -1;
		type = ev.event_type;
		*port = ev.element.port_num;
		ibv_ack_async_event(&ev);
		if (type == IBV_EVENT_PORT_ACTIVE ||
		    type == IBV_EVENT_PORT_ERR ||
		    type == IBV_EVENT_DEVICE_FATAL)
			return type;
	}
}

#endif /* UROCE_TEST_VERBS_H */
