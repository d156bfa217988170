/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * uroce-pace-perf: the control connection (TCP on 127.0.0.1, as perftest
 * exchanges QP details) and the objects of one side.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include <uroce/uroce.h>

#include "pace_perf.h"

#define PP_CQE_PER_QP	32	/* the CQ holds every outstanding WRITE */

int
pp_tcp_listen(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), on = 1;

	if (fd < 0)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 1) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &alen) < 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

int
pp_tcp_accept(int lfd)
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };

	if (poll(&pfd, 1, (int)(PP_WAIT_S * 1000)) <= 0)
		return -1;
	return accept(lfd, NULL, NULL);
}

int
pp_tcp_connect(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int fd, tries;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (tries = 0; tries < (int)(PP_WAIT_S * 10); tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&a,
				       sizeof(a)) == 0)
			return fd;
		if (fd >= 0)
			close(fd);
		usleep(100 * 1000);
	}
	return -1;
}

static bool
send_all(int fd, const void *p, size_t len)
{
	const uint8_t *b = p;
	ssize_t n;

	while (len > 0) {
		n = send(fd, b, len, MSG_NOSIGNAL);
		if (n <= 0)
			return false;
		b += n;
		len -= (size_t)n;
	}
	return true;
}

bool
pp_recv_bytes(int fd, void *p, size_t len)
{
	uint8_t *b = p;
	ssize_t n;

	while (len > 0) {
		n = recv(fd, b, len, MSG_WAITALL);
		if (n <= 0)
			return false;
		b += n;
		len -= (size_t)n;
	}
	return true;
}

bool
pp_send(int fd, const struct pp_ctl *m, const void *extra, size_t len)
{
	return send_all(fd, m, sizeof(*m)) &&
		(len == 0 || send_all(fd, extra, len));
}

bool
pp_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0;
}

bool
pp_recv(int fd, struct pp_ctl *m, uint32_t type, void *extra, size_t len,
	double wait_s)
{
	uint64_t end = rte_rdtsc() + (uint64_t)(wait_s * rte_get_tsc_hz());
	unsigned int i = 0;

	/* Keep the stack going meanwhile: the peer may still need ACKs. */
	while (!(++i % 256 == 0 && pp_readable(fd))) {
		uroce_poll();
		if (rte_rdtsc() > end) {
			fprintf(stderr, "pace-perf: no message 0x%x from the "
				"peer in %.0f s\n", type, wait_s);
			return false;
		}
	}
	if (!pp_recv_bytes(fd, m, sizeof(*m))) {
		fprintf(stderr, "pace-perf: the peer closed the connection\n");
		return false;
	}
	if (type != 0 && m->type != type) {
		fprintf(stderr, "pace-perf: message 0x%x, wanted 0x%x\n",
			m->type, type);
		return false;
	}
	return len == 0 || pp_recv_bytes(fd, extra, len);
}

/* The data pattern of region slot: byte j depends on slot and j only. */
void
pp_fill(uint8_t *dst, size_t n, uint32_t slot)
{
	size_t j;

	for (j = 0; j < n; j++)
		dst[j] = (uint8_t)((j * 131 + slot * 29 + (j >> 8)) ^ 0x5a);
}

bool
pp_side_open(struct pp_side *s, size_t buf_len)
{
	unsigned int access = IBV_ACCESS_LOCAL_WRITE |
		IBV_ACCESS_REMOTE_WRITE;
	int ret;

	s->dev = uroce_dev_get(0);
	if (s->dev == NULL)
		return false;
	s->buf_len = buf_len;
	s->buf = aligned_alloc(4096, RTE_ALIGN_CEIL(buf_len, 4096));
	if (s->buf == NULL)
		return false;
	memset(s->buf, 0, buf_len);
	ret = uroce_pd_alloc(s->dev, &s->pd);
	if (ret == 0)
		ret = uroce_dev_mr_reg(s->pd, s->buf, buf_len,
				       (uintptr_t)s->buf, access, &s->mr);
	if (ret < 0)
		fprintf(stderr, "pace-perf: PD/MR: %s\n", strerror(-ret));
	return ret == 0;
}

void
pp_side_close(struct pp_side *s)
{
	pp_qps_destroy(s);
	if (s->mr != NULL)
		uroce_dev_mr_dereg(s->mr);
	if (s->pd != NULL)
		uroce_pd_free(s->pd);
	free(s->buf);
	s->mr = NULL;
	s->pd = NULL;
	s->buf = NULL;
}

bool
pp_qps_create(struct pp_side *s, uint32_t nqp, uint32_t sq)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = sq, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	uint32_t i;
	int ret;

	s->qp = calloc(nqp, sizeof(*s->qp));
	s->qpn = calloc(nqp, sizeof(*s->qpn));
	if (s->qp == NULL || s->qpn == NULL)
		return false;
	ret = uroce_dev_cq_create(s->dev, nqp * RTE_MAX(sq, (uint32_t)PP_CQE_PER_QP),
				  NULL, &s->cq);
	for (i = 0; ret == 0 && i < nqp; i++) {
		ret = uroce_dev_qp_create(s->pd, s->cq, s->cq, &init, NULL,
					  &s->qp[i]);
		if (ret == 0) {
			s->qpn[i] = s->qp[i]->qpn;
			s->nqp = i + 1;
		}
	}
	if (ret < 0)
		fprintf(stderr, "pace-perf: creating QP %u of %u: %s\n",
			s->nqp, nqp, strerror(-ret));
	return ret == 0;
}

static int
qp_to_rts(struct pp_side *s, struct uroce_qp *qp, uint32_t dqpn,
	  const struct pp_ctl *peer, uint32_t my_psn)
{
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	ret = uroce_dev_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret < 0)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = s->path_mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	ret = uroce_dev_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER);
	if (ret < 0)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = my_psn;
	a.timeout = 14;		/* 67 ms: a busy 2-core host is no loss */
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return uroce_dev_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
				   IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				   IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

bool
pp_qps_connect(struct pp_side *s, const uint32_t *rqpn,
	       const struct pp_ctl *peer, uint32_t my_psn)
{
	uint32_t i;
	int ret = 0;

	s->path_mtu = RTE_MIN(uroce_dev_env(s->dev)->lim.active_mtu,
			      (enum ibv_mtu)peer->active_mtu);
	for (i = 0; ret == 0 && i < s->nqp; i++)
		ret = qp_to_rts(s, s->qp[i], rqpn[i], peer, my_psn);
	if (ret < 0)
		fprintf(stderr, "pace-perf: QP %u to RTS: %s\n", i - 1,
			strerror(-ret));
	return ret == 0;
}

void
pp_qps_destroy(struct pp_side *s)
{
	uint32_t i;

	for (i = 0; i < s->nqp; i++)
		uroce_dev_qp_destroy(s->qp[i]);
	if (s->cq != NULL)
		uroce_dev_cq_destroy(s->cq);
	free(s->qp);
	free(s->qpn);
	s->qp = NULL;
	s->qpn = NULL;
	s->cq = NULL;
	s->nqp = 0;
}

void
pp_my_ctl(const struct pp_side *s, struct pp_ctl *m, uint32_t psn)
{
	const struct uroce_qp_env *env = uroce_dev_env(s->dev);

	m->psn = psn;
	m->active_mtu = env->lim.active_mtu;
	m->rkey = s->mr->rkey;
	m->addr = (uintptr_t)s->buf;
	memcpy(m->gid, env->gid[0].raw, 16);
}
