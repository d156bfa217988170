/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * QPs and SRQs on an id (rdma_create_qp(3), rdma_create_srq(3),
 * rdma_create_ep(3)) and the QP attributes the CM exchange fixes
 * (rdma_init_qp_attr(3)): what rdma-core's librdmacm asks the kernel's
 * rdma_cm for, computed here.
 *
 * A connected QP goes to INIT when created (P_Key index 0, port 1,
 * LOCAL_WRITE | REMOTE_WRITE, and REMOTE_READ | REMOTE_ATOMIC once the
 * QP has responder resources, as the CM's init attributes); before RTR it
 * is moved INIT -> INIT again with the access of the exchange (as
 * librdmacm's ucma_modify_qp_rtr), then RTR and RTS with the peer's QPN
 * and PSN, the path, the MTU and the RDMA read depths. A UD QP goes
 * straight to RTS with the port space's Q_Key.
 *
 * States that follow each other (INIT, RTR, RTS) go to libibverbs in one
 * call, the table's modify_qp_seq (uroce_verbs_cm.h): one round trip to
 * the QP's owner lcore instead of one a state, which is most of what a
 * connection's setup costs each side. A connected QP's first INIT is made
 * with its creation (create_qp_init), before its owner lcore sees it: no
 * round trip at all.
 */

#include <arpa/inet.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_verbs.h>

#include "rdmacm_priv.h"
#include "uroce_verbs_cm.h"

static bool
qp_is_ud(const struct cma_id *id)
{
	return id->id.qp_type == IBV_QPT_UD;
}

static uint32_t
id_qkey(const struct cma_id *id)
{
	return id->id.ps == RDMA_PS_UDP || id->id.ps == RDMA_PS_IB ?
	       RDMA_UDP_QKEY : 0;
}

static int
access_flags(const struct cma_id *id)
{
	int f = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	if (id->qp.resp_res > 0)
		f |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	return f;
}

static void
init_ah(const struct cma_id *id, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = 1;
	ah->dlid = UROCE_LID_PERMISSIVE;
	ah->sl = id->path.sl;
	ah->grh.dgid = id->id.route.addr.addr.ibaddr.dgid;
	ah->grh.sgid_index = (uint8_t)id->gid_index;
	ah->grh.hop_limit = id->path.hop_limit ? id->path.hop_limit : 64;
	ah->grh.traffic_class = id->tos;
	ah->grh.flow_label = ntohl(id->path.flow_label);
}

/*
 * rdma_init_qp_attr(3): the attributes (and mask) that move the id's QP
 * to @a->qp_state. RTR and RTS need the peer's REQ or REP (EINVAL before).
 */
int
cma_init_qp_attr(struct cma_id *id, struct ibv_qp_attr *a, int *mask)
{
	enum ibv_qp_state st = a->qp_state;
	bool ud = qp_is_ud(id);

	if (id->dev == NULL)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->qp_state = st;
	switch (st) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (ud) {
			a->qkey = id_qkey(id);
			*mask |= IBV_QP_QKEY;
		} else {
			a->qp_access_flags = access_flags(id);
			*mask |= IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	case IBV_QPS_RTR:
		*mask = IBV_QP_STATE;
		if (ud)
			return 0;
		if (!id->qp.known)
			return -EINVAL;
		init_ah(id, &a->ah_attr);
		a->path_mtu = id->qp.mtu;
		a->dest_qp_num = id->qp.remote_qpn;
		a->rq_psn = id->qp.local_psn;
		*mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			 IBV_QP_RQ_PSN;
		if (id->id.qp_type == IBV_QPT_RC) {
			a->max_dest_rd_atomic = id->qp.resp_res;
			a->min_rnr_timer = 0;
			*mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
		return 0;
	case IBV_QPS_RTS:
		a->sq_psn = id->qp.remote_psn;
		*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		if (ud || id->id.qp_type == IBV_QPT_UC)
			return 0;
		if (!id->qp.known)
			return -EINVAL;
		a->timeout = cma_ack_timeout(id);
		a->retry_cnt = id->qp.retry;
		a->rnr_retry = id->qp.rnr_retry;
		a->max_rd_atomic = id->qp.init_depth;
		*mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			 IBV_QP_MAX_QP_RD_ATOMIC;
		return 0;
	default:
		return -EINVAL;
	}
}

int
rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr,
		  int *qp_attr_mask)
{
	if (id == NULL || qp_attr == NULL || qp_attr_mask == NULL)
		return cma_err(-EINVAL);
	return cma_err(cma_init_qp_attr(cma_id_of(id), qp_attr, qp_attr_mask));
}

static const char *
qp_state_str(enum ibv_qp_state s)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	return (unsigned int)s < sizeof(names) / sizeof(names[0]) ? names[s] :
	       "?";
}

static const struct uroce_verbs_cm_glue *qp_glue;
static pthread_once_t qp_glue_once = PTHREAD_ONCE_INIT;

/* libibverbs' table; NULL when libibverbs.so.1 is not uroce's (then one
 * ibv_modify_qp() a state). */
static void
qp_glue_init(void)
{
	qp_glue = uroce_verbs_cm_glue_find(UROCE_VERBS_CM_GLUE_V3);
	if (qp_glue == NULL)
		qp_glue = uroce_verbs_cm_glue_find(UROCE_VERBS_CM_GLUE_V2);
}

/*
 * The id's QP through @n states in turn (rdma_init_qp_attr()'s attributes
 * for each): the attributes of all first, then the changes those allow in
 * one call (a state whose attributes are not known yet fails after the
 * ones before it are made, as one at a time would).
 */
int
cma_modify_qp_seq(struct cma_id *id, const enum ibv_qp_state *states,
		  unsigned int n)
{
	struct ibv_qp_attr a[CMA_QP_SEQ_MAX];
	int mask[CMA_QP_SEQ_MAX];
	unsigned int i, done = 0;
	int ret = 0, err = 0;

	if (id->id.qp == NULL)
		return 0;
	if (n > CMA_QP_SEQ_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		a[i].qp_state = states[i];
		err = cma_init_qp_attr(id, &a[i], &mask[i]);
		if (err < 0)
			break;
	}
	n = i;
	pthread_once(&qp_glue_once, qp_glue_init);
	if (n > 0 && qp_glue != NULL && qp_glue->modify_qp_seq != NULL) {
		ret = qp_glue->modify_qp_seq(id->id.qp, a, mask, n, &done);
	} else {
		for (; done < n; done++) {
			ret = -ibv_modify_qp(id->id.qp, &a[done], mask[done]);
			if (ret < 0)
				break;
		}
	}
	if (ret < 0) {
		CMA_LOG(ERR, "QP 0x%x to %s: %s", id->id.qp->qp_num,
			qp_state_str(states[done]), strerror(-ret));
		return ret;
	}
	return err;
}

int
cma_qp_to_err(struct cma_id *id)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (id->id.qp == NULL)
		return 0;
	return -ibv_modify_qp(id->id.qp, &a, IBV_QP_STATE);
}

uint32_t
cma_id_qpn(struct cma_id *id, const struct rdma_conn_param *p)
{
	if (id->id.qp != NULL)
		return id->id.qp->qp_num;
	return p != NULL ? p->qp_num : 0;
}

/*
 * A connected id's QP made in INIT already when libibverbs can (the
 * table's create_qp_init: the change is made before the QP's owner lcore
 * sees it, no round trip); *@inited says whether it was.
 */
static struct ibv_qp *
qp_create(struct cma_id *id, struct ibv_qp_init_attr_ex *attr, bool *inited)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT };
	int mask;

	*inited = false;
	pthread_once(&qp_glue_once, qp_glue_init);
	if (qp_glue == NULL || qp_glue->version < UROCE_VERBS_CM_GLUE_V3 ||
	    qp_is_ud(id) || cma_init_qp_attr(id, &a, &mask) < 0)
		return ibv_create_qp_ex(id->id.verbs, attr);
	*inited = true;
	return qp_glue->create_qp_init(id->id.verbs, attr, &a, mask);
}

/* The new QP's first states: connected INIT; UD INIT, RTR, RTS. */
static int
qp_first_states(struct cma_id *id)
{
	static const enum ibv_qp_state s[] = {
		IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
	};

	return cma_modify_qp_seq(id, s, qp_is_ud(id) ? 3 : 1);
}

static void
destroy_own_cqs(struct cma_id *id)
{
	if (!id->own_cqs)
		return;
	if (id->id.recv_cq != NULL && id->id.recv_cq != id->id.send_cq)
		ibv_destroy_cq(id->id.recv_cq);
	if (id->id.send_cq != NULL)
		ibv_destroy_cq(id->id.send_cq);
	if (id->id.recv_cq_channel != NULL &&
	    id->id.recv_cq_channel != id->id.send_cq_channel)
		ibv_destroy_comp_channel(id->id.recv_cq_channel);
	if (id->id.send_cq_channel != NULL)
		ibv_destroy_comp_channel(id->id.send_cq_channel);
	id->id.send_cq = id->id.recv_cq = NULL;
	id->id.send_cq_channel = id->id.recv_cq_channel = NULL;
	id->own_cqs = false;
}

/* CQs with completion channels for a QP created without them (librdmacm's
 * ucma_create_cqs): one each for send and receive, of the QP's depths. */
static int
create_own_cqs(struct cma_id *id, uint32_t send_wr, uint32_t recv_wr,
	       bool need_send, bool need_recv)
{
	struct ibv_context *v = id->id.verbs;

	id->own_cqs = true;
	if (need_recv) {
		id->id.recv_cq_channel = ibv_create_comp_channel(v);
		if (id->id.recv_cq_channel == NULL)
			goto fail;
		id->id.recv_cq = ibv_create_cq(v, recv_wr ? (int)recv_wr : 1,
					       id, id->id.recv_cq_channel, 0);
		if (id->id.recv_cq == NULL)
			goto fail;
	}
	if (need_send) {
		id->id.send_cq_channel = ibv_create_comp_channel(v);
		if (id->id.send_cq_channel == NULL)
			goto fail;
		id->id.send_cq = ibv_create_cq(v, send_wr ? (int)send_wr : 1,
					       id, id->id.send_cq_channel, 0);
		if (id->id.send_cq == NULL)
			goto fail;
	}
	return 0;
fail:
	destroy_own_cqs(id);
	return -(errno ? errno : ENOMEM);
}

int
rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct cma_id *c = cma_id_of(id);
	struct ibv_qp *qp;
	bool inited;
	int ret;

	if (id == NULL || attr == NULL || id->verbs == NULL || c->dev == NULL)
		return cma_err(-EINVAL);
	if (id->qp != NULL)
		return cma_err(-EINVAL);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
		attr->pd = id->pd != NULL ? id->pd : c->dev->pd;
	}
	if (attr->pd->context != id->verbs)
		return cma_err(-EINVAL);
	if (attr->qp_type != id->qp_type &&
	    !(id->qp_type == IBV_QPT_RC && attr->qp_type == IBV_QPT_UC))
		return cma_err(-EINVAL);
	if (attr->srq == NULL && id->srq != NULL)
		attr->srq = id->srq;
	if (attr->send_cq == NULL || attr->recv_cq == NULL) {
		ret = create_own_cqs(c, attr->cap.max_send_wr,
				     attr->cap.max_recv_wr,
				     attr->send_cq == NULL,
				     attr->recv_cq == NULL && attr->srq == NULL);
		if (ret < 0)
			return cma_err(ret);
		if (attr->send_cq == NULL)
			attr->send_cq = id->send_cq;
		if (attr->recv_cq == NULL)
			attr->recv_cq = id->recv_cq ? id->recv_cq : id->send_cq;
	}
	qp = qp_create(c, attr, &inited);
	if (qp == NULL) {
		ret = -(errno ? errno : ENOMEM);
		destroy_own_cqs(c);
		return cma_err(ret);
	}
	id->qp = qp;
	id->qp_type = attr->qp_type;
	/* rdma_reg_msgs() and the other <rdma/rdma_verbs.h> helpers use the
	 * id's PD */
	if (id->pd == NULL)
		id->pd = attr->pd;
	ret = inited ? 0 : qp_first_states(c);
	if (ret < 0) {
		ibv_destroy_qp(qp);
		id->qp = NULL;
		destroy_own_cqs(c);
		return cma_err(ret);
	}
	return 0;
}

int
rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex ex;
	int ret;

	if (id == NULL || qp_init_attr == NULL)
		return cma_err(-EINVAL);
	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, qp_init_attr, sizeof(*qp_init_attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	ret = rdma_create_qp_ex(id, &ex);
	if (ret == 0) {
		/* the caps the QP got, as ibv_create_qp(3) reports them */
		memcpy(qp_init_attr, &ex, sizeof(*qp_init_attr));
	}
	return ret;
}

void
rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (id == NULL || id->qp == NULL)
		return;
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	destroy_own_cqs(cma_id_of(id));
}

int
rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct cma_id *c = cma_id_of(id);
	struct ibv_srq *srq;
	int ret;

	if (id == NULL || attr == NULL || id->verbs == NULL || c->dev == NULL)
		return cma_err(-EINVAL);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)) {
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_TYPE;
		attr->srq_type = IBV_SRQT_BASIC;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
		attr->pd = id->pd != NULL ? id->pd : c->dev->pd;
	}
	if (attr->srq_type == IBV_SRQT_XRC &&
	    (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || attr->cq == NULL)) {
		ret = create_own_cqs(c, 0, attr->attr.max_wr, false, true);
		if (ret < 0)
			return cma_err(ret);
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_CQ;
		attr->cq = id->recv_cq;
	}
	srq = ibv_create_srq_ex(id->verbs, attr);
	if (srq == NULL)
		return -1;
	id->srq = srq;
	if (id->pd == NULL)
		id->pd = attr->pd;
	return 0;
}

int
rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
		struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex;
	int ret;

	if (id == NULL || attr == NULL)
		return cma_err(-EINVAL);
	memset(&ex, 0, sizeof(ex));
	ex.srq_context = attr->srq_context;
	ex.attr = attr->attr;
	ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	ex.srq_type = IBV_SRQT_BASIC;
	ex.pd = pd;
	ret = rdma_create_srq_ex(id, &ex);
	if (ret == 0)
		attr->attr = ex.attr;
	return ret;
}

void
rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (id == NULL || id->srq == NULL)
		return;
	ibv_destroy_srq(id->srq);
	id->srq = NULL;
}

/*
 * rdma_create_ep(3): a synchronous id from @res; passive: bound, the QP
 * attributes kept for the ids rdma_get_request() returns; active:
 * address and route resolved, and the QP created when asked.
 */
int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
	       struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;
	struct cma_id *c;
	int ret;

	if (id == NULL || res == NULL)
		return cma_err(-EINVAL);
	if (rdma_create_id(NULL, &cid, NULL,
			   (enum rdma_port_space)res->ai_port_space) != 0)
		return -1;
	c = cma_id_of(cid);
	if (res->ai_flags & RAI_PASSIVE) {
		ret = cma_bind(c, res->ai_src_addr);
		if (ret < 0)
			goto fail;
		if (qp_init_attr != NULL) {
			c->ep_qp_attr = malloc(sizeof(*qp_init_attr));
			if (c->ep_qp_attr == NULL) {
				ret = -ENOMEM;
				goto fail;
			}
			*c->ep_qp_attr = *qp_init_attr;
			c->ep_qp_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
		}
		cid->pd = pd;
		*id = cid;
		return 0;
	}
	if (rdma_resolve_addr(cid, res->ai_src_addr, res->ai_dst_addr,
			      2000) != 0 ||
	    rdma_resolve_route(cid, 2000) != 0)
		goto fail_errno;
	cid->pd = pd;
	/* the QP's type is the address info's, as rdma-core's */
	if (qp_init_attr != NULL)
		qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
	if (qp_init_attr != NULL && rdma_create_qp(cid, pd, qp_init_attr) != 0)
		goto fail_errno;
	*id = cid;
	return 0;
fail_errno:
	ret = -errno;
fail:
	rdma_destroy_id(cid);
	return cma_err(ret);
}

void
rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id == NULL)
		return;
	rdma_destroy_qp(id);
	rdma_destroy_srq(id);
	rdma_destroy_id(id);
}
