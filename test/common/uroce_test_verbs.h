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

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>

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
 * RESET -> INIT -> RTR -> RTS of an RC QP towards peer_qpn on the device
 * of peer_ctx (GID 0): path MTU 1024, PSNs 100, remote write, read and
 * atomics allowed, 4 reads/atomics each way, retries 7 (RNR: for ever).
 * @return 0, or the errno of the first ibv_modify_qp() that failed.
 */
static inline int
ut_verbs_rc_connect(struct ibv_qp *qp, struct ibv_context *peer_ctx,
		    uint32_t peer_qpn)
{
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_ATOMIC;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret != 0)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer_qpn;
	a.rq_psn = 100;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 1;
	ret = ibv_query_gid(peer_ctx, 1, 0, &a.ah_attr.grh.dgid);
	if (ret == 0)
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER);
	if (ret != 0)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 100;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

#endif /* UROCE_TEST_VERBS_H */
