/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The engine starting EAL itself (lib/engine/engine.c): uroce_init() from a
 * config file in a process without DPDK, with [eal] args and one engine
 * lcore floating over the process's CPUs; an RC pair on the one device
 * moves a SEND, a WRITE and a READ byte-exact with the background lcore;
 * uroce_fini() cleans EAL up, after which a new uroce_init() fails cleanly
 * (DPDK cannot start twice in a process). uroce_engine_run_on() runs a
 * function on the engine lcore and returns its value.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_lcore.h>

#include <uroce/uroce.h>

#include "uroce_engine.h"
#include "uroce_test.h"

#define BUF_SIZE	(16 * 1024)
#define LEN		5000
#define WAIT_S		10	/* bound of every wait (not a threshold) */

struct end {
	struct uroce_pd *pd;
	struct uroce_cq *cq;
	struct uroce_qp *qp;
	struct uroce_mr *mr;
	uint8_t *buf;
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool
wait_wc(struct uroce_cq *cq, enum ibv_wc_opcode opc, uint32_t len)
{
	double end = now_s() + WAIT_S;
	struct ibv_wc wc;
	int n;

	do {
		n = uroce_cq_poll(cq, 1, &wc);
		if (n == 1) {
			UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
			UT_CHECK_EQ(wc.opcode, opc);
			if (opc == IBV_WC_RECV)
				UT_CHECK_EQ(wc.byte_len, len);
			return true;
		}
		UT_CHECK_EQ(uroce_poll(), 0);	/* the lcore does the work */
		usleep(50);
	} while (now_s() < end);
	return false;
}

static bool
end_open(struct end *e, struct uroce_dev *dev)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	bool ok = true;

	memset(e, 0, sizeof(*e));
	e->buf = calloc(1, BUF_SIZE);
	ok &= UT_CHECK(e->buf != NULL);
	ok &= UT_CHECK_EQ(uroce_pd_alloc(dev, &e->pd), 0);
	ok &= UT_CHECK_EQ(uroce_dev_cq_create(dev, 16, NULL, &e->cq), 0);
	if (!ok)
		return false;
	ok &= UT_CHECK_EQ(uroce_dev_mr_reg(e->pd, e->buf, BUF_SIZE,
		(uintptr_t)e->buf, IBV_ACCESS_LOCAL_WRITE |
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, &e->mr), 0);
	ok &= UT_CHECK_EQ(uroce_dev_qp_create(e->pd, e->cq, e->cq, &init, NULL,
					      &e->qp), 0);
	return ok;
}

static void
end_close(struct end *e)
{
	if (e->qp != NULL)
		UT_CHECK_EQ(uroce_dev_qp_destroy(e->qp), 0);
	if (e->mr != NULL)
		UT_CHECK_EQ(uroce_dev_mr_dereg(e->mr), 0);
	if (e->cq != NULL)
		UT_CHECK_EQ(uroce_dev_cq_destroy(e->cq), 0);
	if (e->pd != NULL)
		UT_CHECK_EQ(uroce_pd_free(e->pd), 0);
	free(e->buf);
}

static bool
qp_connect(struct end *e, const struct end *peer, const struct uroce_qp_env *env)
{
	struct ibv_qp_attr a;
	bool ok = true;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ok &= UT_CHECK_EQ(uroce_dev_qp_modify(e->qp, &a, IBV_QP_STATE |
		IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = env->lim.active_mtu;
	a.dest_qp_num = peer->qp->qpn;
	a.max_dest_rd_atomic = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, env->gid[0].raw, 16);
	ok &= UT_CHECK_EQ(uroce_dev_qp_modify(e->qp, &a, IBV_QP_STATE |
		IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	ok &= UT_CHECK_EQ(uroce_dev_qp_modify(e->qp, &a, IBV_QP_STATE |
		IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC), 0);
	return ok;
}

static void
post(struct end *e, enum ibv_wr_opcode op, uint32_t off, uint64_t raddr,
     uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf + off, .length = LEN, .lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	UT_CHECK_EQ(uroce_qp_post_send(e->qp, &wr, &bad), 0);
}

static void
traffic(struct uroce_dev *dev)
{
	const struct uroce_qp_env *env = uroce_dev_env(dev);
	struct ibv_sge rsge;
	struct ibv_recv_wr rwr, *rbad = NULL;
	struct end a, b;
	unsigned int i;

	if (!end_open(&a, dev) || !end_open(&b, dev) ||
	    !qp_connect(&a, &b, env) || !qp_connect(&b, &a, env))
		goto out;
	for (i = 0; i < BUF_SIZE; i++) {
		a.buf[i] = (uint8_t)ut_rand();
		b.buf[i] = (uint8_t)ut_rand();
	}
	rsge = (struct ibv_sge){ .addr = (uintptr_t)b.buf + 8192,
				 .length = 8192, .lkey = b.mr->lkey };
	rwr = (struct ibv_recv_wr){ .sg_list = &rsge, .num_sge = 1 };
	UT_CHECK_EQ(uroce_qp_post_recv(b.qp, &rwr, &rbad), 0);
	post(&a, IBV_WR_SEND, 0, 0, 0);
	UT_CHECK(wait_wc(a.cq, IBV_WC_SEND, 0));
	UT_CHECK(wait_wc(b.cq, IBV_WC_RECV, LEN));
	UT_CHECK_MEM(b.buf + 8192, a.buf, LEN);
	UT_NOTE("SEND");

	post(&b, IBV_WR_RDMA_WRITE, 0, (uintptr_t)a.buf + 8192, a.mr->rkey);
	UT_CHECK(wait_wc(b.cq, IBV_WC_RDMA_WRITE, 0));
	UT_CHECK_MEM(a.buf + 8192, b.buf, LEN);
	UT_NOTE("WRITE");

	a.buf[1] ^= 0xff;	/* differ from b's copy before reading it back */
	post(&b, IBV_WR_RDMA_READ, 0, (uintptr_t)a.buf, a.mr->rkey);
	UT_CHECK(wait_wc(b.cq, IBV_WC_RDMA_READ, 0));
	UT_CHECK_MEM(b.buf, a.buf, LEN);
	UT_NOTE("READ");
out:
	end_close(&a);
	end_close(&b);
}

static int
on_lcore(void *arg)
{
	*(unsigned int *)arg = rte_lcore_id();
	return 42;
}

/* The function runs on the engine's worker lcore, not on the caller's. */
static void
run_on(void)
{
	unsigned int where = RTE_MAX_LCORE;

	UT_CHECK_EQ(uroce_engine_run_on(0, on_lcore, &where), 42);
	UT_CHECK_EQ(where, rte_get_next_lcore(-1, 1, 0));
	UT_CHECK(where != rte_lcore_id());
	where = RTE_MAX_LCORE;
	UT_CHECK_EQ(uroce_engine_run_on(1, on_lcore, &where), -EINVAL);
	UT_CHECK_EQ(uroce_engine_run_on(0, NULL, NULL), -EINVAL);
	UT_CHECK_EQ(where, RTE_MAX_LCORE);
}

int
main(void)
{
	const char *mem = getenv("UROCE_TEST_MEM");
	char path[64], err[512] = "", rundir[PATH_MAX];
	cpu_set_t mine, lc;
	FILE *f;
	int ret;

	ut_srand(0xea1);
	/* The [eal] args carry the memory mode of the harness. */
	snprintf(path, sizeof(path), "/tmp/h4-eal-%d.conf", (int)getpid());
	f = fopen(path, "w");
	if (!UT_CHECK(f != NULL))
		return ut_summary();
	fprintf(f, "[port]\ndev = net_ring_h4e%d\nip = 10.9.9.1/24\n"
		"[eal]\nlcores = 1\nargs = %s --file-prefix=h4x%d --no-shconf "
		"--no-telemetry --log-level=*:warning\n", (int)getpid() % 1000,
		mem != NULL && *mem != '\0' ? mem : "--no-huge -m 256",
		(int)getpid());
	fclose(f);

	UT_CHECK_EQ(rte_lcore_count(), 0);
	ret = uroce_init(path, 0, err, sizeof(err));
	if (!UT_CHECK_EQ(ret, 0)) {
		fprintf(stderr, "     %s\n", err);
		unlink(path);
		return ut_summary();
	}
	/* Main lcore plus one engine lcore, both free to run on every CPU. */
	UT_CHECK_EQ(rte_lcore_count(), 2);
	UT_CHECK_EQ(uroce_engine_lcores(), 1);
	UT_CHECK_EQ(uroce_dev_count(), 1);
	UT_CHECK_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
	lc = rte_lcore_cpuset(rte_get_next_lcore(-1, 1, 0));
	UT_CHECK_EQ(CPU_COUNT(&lc), CPU_COUNT(&mine));
	UT_CHECK_EQ(uroce_init(path, 0, err, sizeof(err)), -EALREADY);

	traffic(uroce_dev_get(0));
	run_on();

	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	uroce_fini();
	/* EAL leaves its empty runtime directory behind: ours has our prefix. */
	if (strstr(rundir, "/h4x") != NULL)
		rmdir(rundir);
	UT_CHECK(!uroce_engine_running());
	UT_CHECK_EQ(uroce_poll(), -ENODEV);
	UT_CHECK_EQ(uroce_engine_run_on(0, on_lcore, err), -ENODEV);
	/* EAL is gone for good: a new start says so and leaves nothing up. */
	err[0] = '\0';
	UT_CHECK_EQ(uroce_init(path, 0, err, sizeof(err)), -ENOTSUP);
	UT_CHECK(err[0] != '\0');
	UT_CHECK(!uroce_engine_running());
	unlink(path);
	return ut_summary();
}
