/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Connections over the CM agent: the messages rdma_cm sends (REQ, REP,
 * RTU, REJ, DREQ, DREP, SIDR_REQ, SIDR_REP: their bodies are built here,
 * the agent adds the CM's own fields) and what the agent's events become
 * (rdma_cm events with the kernel's status values: REJECTED carries the
 * REJ reason, UNREACHABLE -ETIMEDOUT).
 *
 * The QP transitions rdma_cm makes for its users: the active side moves
 * its QP to RTR and RTS when the REP arrives, then sends the RTU; the
 * passive side moves it to RTR and RTS in rdma_accept(), then sends the
 * REP. rdma_disconnect() moves the QP to ERR, then sends the DREQ (or the
 * DREP to the peer's DREQ), as rdma-core's librdmacm does.
 */

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/random.h>

#include "rdmacm_priv.h"

/* One agent listener per (device, service ID), shared by the ids that
 * listen there (an address each, or the wildcard). */
struct cma_lsn {
	LIST_ENTRY(cma_lsn) link;
	struct cma_dev *dev;
	uint64_t sid;
	int users;
	struct cm_listener *l;
};

static pthread_mutex_t lsn_lock = PTHREAD_MUTEX_INITIALIZER;
static LIST_HEAD(, cma_lsn) lsns = LIST_HEAD_INITIALIZER(lsns);

static void conn_cb(void *owner, struct cm_conn *conn,
		    const struct cm_event *e);

static uint8_t
min_u8(unsigned int a, unsigned int b)
{
	return (uint8_t)(a < b ? a : b);
}

static uint32_t
random_psn(void)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)rand();
	return r & 0xffffff;
}

/* The CMA header's address field: IPv4 in the last 4 bytes. */
static void
hdr_addr(uint8_t out[16], const struct sockaddr *sa)
{
	memset(out, 0, 16);
	if (sa->sa_family == AF_INET)
		memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	else
		memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
}

static void
sa_from_hdr(struct sockaddr_storage *ss, const uint8_t a[16], int ipver,
	    uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (ipver == 4) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, a + 12, 4);
		s->sin_port = htons(port);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, a, 16);
		s->sin6_port = htons(port);
	}
}

static void
cma_hdr_of(const struct cma_id *id, struct uroce_cma_hdr *h)
{
	const struct sockaddr *src = &id->id.route.addr.src_addr;

	memset(h, 0, sizeof(*h));
	h->ip_version = src->sa_family == AF_INET ? 4 : 6;
	h->src_port = cma_addr_port(src);
	hdr_addr(h->src_addr, src);
	hdr_addr(h->dst_addr, &id->id.route.addr.dst_addr);
}

static uint64_t
id_service_id(const struct cma_id *id, const struct sockaddr *sa)
{
	return uroce_cma_service_id((uint16_t)id->id.ps, cma_addr_port(sa));
}

static void
set_state(struct cma_id *id, enum cma_state s)
{
	pthread_mutex_lock(&id->lock);
	CMA_LOG(DEBUG, "id %p: %s -> %s", (void *)id, cma_state_str(id->state),
		cma_state_str(s));
	id->state = s;
	pthread_mutex_unlock(&id->lock);
}

/* ---------------------------------------------------------------------
 * Listening
 */

static void listen_cb(void *owner, struct cm_conn *conn,
		      const struct cm_event *e);

/*
 * The agent's listener holds the requests of one receive burst until
 * their events are delivered (after the burst): its backlog only bounds
 * that, at CMA_MAX_BACKLOG for every listener. The id's own backlog (the
 * unread CONNECT_REQUESTs, rdma_listen()) is applied in listen_cb(): an
 * agent backlog of the id's would refuse, REJ 28, the third REQ of a
 * burst to a listener of backlog 2 before the first reached listen_cb().
 */
static int
lsn_add(struct cma_dev *d, uint64_t sid)
{
	struct cm_agent *a;
	struct cma_lsn *l;
	int ret;

	LIST_FOREACH(l, &lsns, link)
		if (l->dev == d && l->sid == sid) {
			l->users++;
			return 0;
		}
	ret = cma_dev_agent(d, &a);
	if (ret < 0)
		return ret;
	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return -ENOMEM;
	l->dev = d;
	l->sid = sid;
	l->users = 1;
	ret = cm_listen(a, sid, CMA_MAX_BACKLOG, listen_cb, l, &l->l);
	if (ret < 0) {
		free(l);
		return ret;
	}
	LIST_INSERT_HEAD(&lsns, l, link);
	return 0;
}

static void
lsn_del(struct cma_dev *d, uint64_t sid)
{
	struct cma_lsn *l;

	LIST_FOREACH(l, &lsns, link)
		if (l->dev == d && l->sid == sid)
			break;
	if (l == NULL || --l->users > 0)
		return;
	LIST_REMOVE(l, link);
	cm_unlisten(l->l);
	free(l);
}

/* The devices an id listens on: its own, or every one (wildcard). */
static int
listen_devs(struct cma_id *id, struct cma_dev **first, int *n)
{
	if (id->dev != NULL) {
		*first = id->dev;
		*n = 1;
		return 0;
	}
	return cma_devs(first, n);
}

int
cma_listen_start(struct cma_id *id)
{
	uint64_t sid = id_service_id(id, &id->id.route.addr.src_addr);
	struct cma_dev *d;
	int n, i, ret;

	ret = listen_devs(id, &d, &n);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&lsn_lock);
	for (i = 0; i < n; i++) {
		ret = lsn_add(&d[i], sid);
		if (ret < 0) {
			while (i-- > 0)
				lsn_del(&d[i], sid);
			break;
		}
	}
	pthread_mutex_unlock(&lsn_lock);
	return ret;
}

void
cma_listen_stop(struct cma_id *id)
{
	uint64_t sid = id_service_id(id, &id->id.route.addr.src_addr);
	struct cma_dev *d;
	int n, i;

	if (listen_devs(id, &d, &n) < 0)
		return;
	pthread_mutex_lock(&lsn_lock);
	for (i = 0; i < n; i++)
		lsn_del(&d[i], sid);
	pthread_mutex_unlock(&lsn_lock);
}

/* The route of a request's new id: addresses from the CMA header, the
 * path from the REQ's primary path (or the GIDs of a SIDR_REQ). */
static void
child_route(struct cma_id *c, struct cma_dev *d, const struct cm_peer *from,
	    const struct uroce_cma_hdr *h, uint16_t port,
	    const struct uroce_cm_path *pp, uint8_t mtu)
{
	struct ibv_sa_path_rec *p = c->id.route.path_rec;

	sa_from_hdr(&c->id.route.addr.src_storage, h->dst_addr, h->ip_version,
		    port);
	sa_from_hdr(&c->id.route.addr.dst_storage, h->src_addr, h->ip_version,
		    h->src_port);
	c->dev = d;
	c->gid_index = from->local_gid_index;
	c->id.verbs = d->verbs;
	c->id.port_num = 1;
	c->id.route.addr.addr.ibaddr.sgid = from->local_gid;
	c->id.route.addr.addr.ibaddr.dgid = from->gid;
	c->id.route.addr.addr.ibaddr.pkey = htons(UROCE_DEFAULT_PKEY);
	memset(p, 0, sizeof(*p));
	p->sgid = from->local_gid;
	p->dgid = from->gid;
	p->slid = p->dlid = htons(UROCE_LID_PERMISSIVE);
	p->hop_limit = pp ? pp->hop_limit : 64;
	p->traffic_class = pp ? pp->traffic_class : from->tclass;
	p->flow_label = htonl(pp ? pp->flow_label : from->flow_label);
	p->sl = pp ? pp->sl : 0;
	p->reversible = htonl(1);
	p->numb_path = 1;
	p->pkey = htons(UROCE_DEFAULT_PKEY);
	p->mtu_selector = 2;
	p->mtu = mtu;
	p->rate_selector = 2;
	p->rate = pp && pp->packet_rate ? pp->packet_rate : IBV_RATE_10_GBPS;
	p->packet_life_time_selector = 2;
	p->packet_life_time = UROCE_CM_DEFAULT_PACKET_LIFE;
	c->id.route.num_paths = 1;
	c->path = *p;
	c->tos = p->traffic_class;
}

/* A REQ's connection parameters, seen from the passive side (the peer's
 * initiator depth is our responder resources, as Linux's cm reports). */
static void
child_req_params(struct cma_id *c, struct cma_dev *d,
		 const struct uroce_cm_req *r, struct rdma_conn_param *p)
{
	c->qp.known = true;
	c->qp.local_psn = random_psn();
	c->qp.remote_psn = r->starting_psn;
	c->qp.remote_qpn = r->local_qpn;
	c->qp.mtu = min_u8(r->path_mtu, d->port.active_mtu);
	c->qp.retry = r->retry_count;
	c->qp.rnr_retry = r->rnr_retry_count;
	c->qp.resp_res = min_u8(r->initiator_depth, d->attr.max_qp_rd_atom);
	c->qp.init_depth = min_u8(r->responder_resources,
				  d->attr.max_qp_init_rd_atom);
	c->qp.flow_control = r->e2e_flow_control;
	c->qp.srq = r->srq;
	c->qp.req_ack_timeout = r->primary.local_ack_timeout;
	c->remote_ece.vendor_id = r->vendor_id;
	p->responder_resources = r->initiator_depth;
	p->initiator_depth = r->responder_resources;
	p->flow_control = r->e2e_flow_control;
	p->retry_count = r->retry_count;
	p->rnr_retry_count = r->rnr_retry_count;
	p->srq = r->srq;
	p->qp_num = r->local_qpn;
	if (r->transport_type == UROCE_CM_TST_UC)
		c->id.qp_type = IBV_QPT_UC;
}

/*
 * A new request on a listener of ours (agent thread): find the id that
 * listens for it, make the new id, take the connection over and queue
 * CONNECT_REQUEST on the listener's channel. A request nobody wants is
 * given back (the agent rejects it); one past the listener's backlog of
 * unread CONNECT_REQUESTs is forgotten with nothing sent.
 */
static void
listen_cb(void *owner, struct cm_conn *conn, const struct cm_event *e)
{
	struct cma_lsn *lsn = owner;
	bool sidr = e->ev == UROCE_CM_EV_SIDR_REQ_RCVD;
	struct uroce_cm_msg *m = (struct uroce_cm_msg *)e->msg;
	struct rdma_conn_param cp;
	struct uroce_cma_hdr h;
	struct cma_event *ev;
	struct cma_id *l, *c = NULL;
	uint16_t ps, port;
	const uint8_t *priv;
	size_t plen;
	int ret;

	if (m == NULL || e->from == NULL ||
	    uroce_cma_service_parse(sidr ? m->sidr_req.service_id :
				    m->req.service_id, &ps, &port) < 0)
		goto refuse;
	priv = uroce_cm_priv(m);
	plen = uroce_cm_priv_len(m->hdr.attr_id);
	if (uroce_cma_hdr_get(priv, plen, &h) < 0)
		goto refuse;
	l = cma_listener_find(lsn->dev, ps, port, h.dst_addr, h.ip_version);
	if (l == NULL)
		goto refuse;
	if (!cma_backlog_take(l)) {
		cma_id_put(l);
		goto full;
	}
	ret = cma_id_new(l->sync ? NULL : cma_channel_of(l->id.channel),
			 l->id.context, l->id.ps, sidr ? IBV_QPT_UD :
			 l->id.qp_type, &c);
	if (ret == 0) {
		c->id.route.path_rec = calloc(1, sizeof(*c->id.route.path_rec));
		if (c->id.route.path_rec == NULL)
			ret = -ENOMEM;
	}
	if (ret < 0) {
		if (c != NULL)
			cma_id_destroy_now(c);
		cma_backlog_give(l);
		cma_id_put(l);
		goto refuse;
	}
	c->listen = l;
	c->tos = l->tos;
	c->tos_set = l->tos_set;
	c->ack_timeout = l->ack_timeout;
	c->timeout_set = l->timeout_set;
	memset(&cp, 0, sizeof(cp));
	if (sidr) {
		child_route(c, lsn->dev, e->from, &h, port, NULL,
			    lsn->dev->port.active_mtu);
	} else {
		child_route(c, lsn->dev, e->from, &h, port, &m->req.primary,
			    min_u8(m->req.path_mtu, lsn->dev->port.active_mtu));
		child_req_params(c, lsn->dev, &m->req, &cp);
	}
	c->conn = conn;
	c->state = CMA_CONNECT;
	cm_conn_own(conn, conn_cb, c);
	ev = cma_event_new(c, l, RDMA_CM_EVENT_CONNECT_REQUEST, 0,
			   priv + UROCE_CMA_HDR_LEN, plen - UROCE_CMA_HDR_LEN);
	if (ev != NULL && !sidr) {
		cp.private_data = ev->ev.param.conn.private_data;
		cp.private_data_len = ev->ev.param.conn.private_data_len;
		ev->ev.param.conn = cp;
	}
	if (ev != NULL)
		cma_event_queue(ev);
	else
		cma_backlog_give(l);
	cma_id_put(l);
	if (ev == NULL)
		cma_id_destroy_now(c);	/* releases the connection: REJ */
	return;
full:
	/* The kernel's rdma_ucm fails the request with -ENOMEM and its cm
	 * then sends nothing, so that the peer's REQ resend may find room;
	 * a SIDR_REQ is answered SIDR_REP "reject". */
	CMA_LOG(DEBUG, "request dropped: the listener's backlog is full");
	if (sidr)
		cm_conn_release(conn);
	else
		cm_conn_forget(conn);
	return;
refuse:
	CMA_LOG(INFO, "request refused: no listener for it");
	cm_conn_release(conn);
}

/* ---------------------------------------------------------------------
 * Active side
 */

static void
peer_of(const struct cma_id *id, struct cm_peer *to)
{
	memset(to, 0, sizeof(*to));
	to->gid = id->id.route.addr.addr.ibaddr.dgid;
	to->local_gid = id->id.route.addr.addr.ibaddr.sgid;
	to->local_gid_index = (uint8_t)id->gid_index;
	to->tclass = id->tos;
	to->hop_limit = 0;
}

/* The depth asked for, or the device's most with RDMA_MAX_*; -EINVAL
 * above what the device has (librdmacm's ucma_valid_param). */
static int
depth(uint8_t asked, uint8_t dev_max, uint8_t *out)
{
	if (asked == 0xff) {
		*out = dev_max;
		return 0;
	}
	if (asked > dev_max)
		return -EINVAL;
	*out = asked;
	return 0;
}

static void
req_path(const struct cma_id *id, struct uroce_cm_path *pp)
{
	const struct ibv_sa_path_rec *p = &id->path;

	pp->local_lid = UROCE_LID_PERMISSIVE;
	pp->remote_lid = UROCE_LID_PERMISSIVE;
	memcpy(pp->local_gid, p->sgid.raw, 16);
	memcpy(pp->remote_gid, p->dgid.raw, 16);
	pp->flow_label = ntohl(p->flow_label) & 0xfffff;
	pp->packet_rate = p->rate & 0x3f;
	pp->traffic_class = id->tos;
	pp->hop_limit = p->hop_limit;
	pp->sl = p->sl & 0xf;
	pp->subnet_local = p->hop_limit <= 1;
	pp->local_ack_timeout = cma_ack_timeout(id);
}

static int
connect_sidr(struct cma_id *id, const struct rdma_conn_param *p)
{
	struct uroce_cma_hdr h;
	struct uroce_cm_msg m;
	struct cm_agent *a;
	struct cm_peer to;
	int ret;

	uroce_cm_msg_init(&m, UROCE_CM_ATTR_SIDR_REQ, 0);
	m.sidr_req.pkey = UROCE_DEFAULT_PKEY;
	m.sidr_req.service_id = id_service_id(id, &id->id.route.addr.dst_addr);
	cma_hdr_of(id, &h);
	ret = uroce_cma_pack(&m, &h, p ? p->private_data : NULL,
			     p ? p->private_data_len : 0);
	if (ret < 0)
		return ret;
	ret = cma_dev_agent(id->dev, &a);
	if (ret == 0)
		ret = cm_conn_create(a, conn_cb, id, &id->conn);
	if (ret < 0)
		return ret;
	peer_of(id, &to);
	id->state = CMA_CONNECT;
	ret = cm_conn_send(id->conn, UROCE_CM_IN_SEND_SIDR_REQ, &m, &to);
	return ret;
}

static int
req_build(struct cma_id *id, const struct rdma_conn_param *p,
	  struct uroce_cm_msg *m)
{
	struct cma_dev *d = id->dev;
	struct uroce_cm_req *r = &m->req;
	struct uroce_cma_hdr h;
	uint8_t rr, id_;
	int ret;

	if (p->private_data_len > UROCE_CMA_REQ_USER_MAX)
		return -EINVAL;
	ret = depth(p->responder_resources, min_u8(d->attr.max_qp_rd_atom, 0xff),
		    &rr);
	if (ret == 0)
		ret = depth(p->initiator_depth,
			    min_u8(d->attr.max_qp_init_rd_atom, 0xff), &id_);
	if (ret < 0)
		return ret;
	id->qp.local_psn = random_psn();
	id->qp.resp_res = rr;
	id->qp.init_depth = id_;
	id->qp.retry = min_u8(p->retry_count, 7);
	id->qp.rnr_retry = min_u8(p->rnr_retry_count, 7);
	id->qp.mtu = id->path.mtu;
	uroce_cm_msg_init(m, UROCE_CM_ATTR_REQ, 0);
	r->vendor_id = id->local_ece.vendor_id & 0xffffff;
	r->service_id = id_service_id(id, &id->id.route.addr.dst_addr);
	r->local_qpn = cma_id_qpn(id, p);
	r->responder_resources = rr;
	r->initiator_depth = id_;
	r->transport_type = id->id.qp_type == IBV_QPT_UC ? UROCE_CM_TST_UC :
			    UROCE_CM_TST_RC;
	r->e2e_flow_control = p->flow_control ? 1 : 0;
	r->starting_psn = id->qp.local_psn;
	r->retry_count = id->qp.retry;
	r->pkey = UROCE_DEFAULT_PKEY;
	r->path_mtu = id->qp.mtu;
	r->rnr_retry_count = id->qp.rnr_retry;
	r->srq = (id->id.srq != NULL ||
		  (id->id.qp != NULL && id->id.qp->srq != NULL) ||
		  (id->id.qp == NULL && p->srq)) ? 1 : 0;
	req_path(id, &r->primary);
	cma_hdr_of(id, &h);
	return uroce_cma_pack(m, &h, p->private_data, p->private_data_len);
}

int
cma_connect(struct cma_id *id, const struct rdma_conn_param *p)
{
	static const struct rdma_conn_param none = { .retry_count = 7,
		.rnr_retry_count = 7 };
	struct uroce_cm_msg m;
	struct cm_agent *a;
	struct cm_peer to;
	int ret;

	if (id->state != CMA_ROUTE_RESOLVED)
		return -EINVAL;
	if (id->id.qp_type == IBV_QPT_UD) {
		if (p != NULL && p->private_data_len > UROCE_CMA_SIDR_REQ_USER_MAX)
			return -EINVAL;
		ret = connect_sidr(id, p);
		goto out;
	}
	ret = req_build(id, p ? p : &none, &m);
	if (ret < 0)
		return ret;
	ret = cma_dev_agent(id->dev, &a);
	if (ret == 0)
		ret = cm_conn_create(a, conn_cb, id, &id->conn);
	if (ret < 0)
		return ret;
	peer_of(id, &to);
	set_state(id, CMA_CONNECT);
	ret = cm_conn_send(id->conn, UROCE_CM_IN_SEND_REQ, &m, &to);
out:
	if (ret < 0) {
		set_state(id, CMA_ROUTE_RESOLVED);
		if (id->conn != NULL)
			cm_conn_release(id->conn);
		id->conn = NULL;
	}
	return ret;
}

int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cma_id *c = cma_id_of(id);
	int ret;

	if (id == NULL)
		return cma_err(-EINVAL);
	ret = cma_connect(c, conn_param);
	if (ret == 0)
		ret = cma_sync_wait(c);
	return cma_err(ret);
}

static int
send_rtu(struct cma_id *id)
{
	struct uroce_cm_msg m;

	uroce_cm_msg_init(&m, UROCE_CM_ATTR_RTU, 0);
	return cm_conn_send(id->conn, UROCE_CM_IN_SEND_RTU, &m, NULL);
}

static int
send_rej(struct cma_id *id, uint16_t reason, const void *priv, uint8_t len,
	 uint8_t msg_rejected)
{
	struct uroce_cm_msg m;
	int ret;

	uroce_cm_msg_init(&m, UROCE_CM_ATTR_REJ, 0);
	m.rej.msg_rejected = msg_rejected;
	m.rej.reason = reason;
	ret = uroce_cm_priv_set(&m, priv, len);
	if (ret < 0)
		return ret;
	return cm_conn_send(id->conn, UROCE_CM_IN_SEND_REJ, &m, NULL);
}

/* Our QP through INIT (the exchange's access), RTR, RTS. */
static int
qp_connect(struct cma_id *id)
{
	static const enum ibv_qp_state s[] = {
		IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
	};

	return cma_modify_qp_seq(id, s, sizeof(s) / sizeof(s[0]));
}

/* The REP, on the active side: RTR, RTS, RTU, ESTABLISHED; without a QP
 * on the id, CONNECT_RESPONSE (the application moves its QP and calls
 * rdma_establish() or rdma_accept()). */
static void
on_rep(struct cma_id *id, const struct uroce_cm_rep *r)
{
	enum rdma_cm_event_type type = RDMA_CM_EVENT_ESTABLISHED;
	struct rdma_conn_param cp;
	struct cma_event *ev;
	int ret;

	id->qp.known = true;
	id->qp.remote_qpn = r->local_qpn;
	id->qp.remote_psn = r->starting_psn;
	id->qp.resp_res = min_u8(id->qp.resp_res, r->initiator_depth);
	id->qp.init_depth = min_u8(id->qp.init_depth, r->responder_resources);
	id->qp.rnr_retry = r->rnr_retry_count;
	id->qp.srq = r->srq;
	id->remote_ece.vendor_id = (uint32_t)r->vendor_id_h << 16 |
				   (uint32_t)r->vendor_id_m << 8 | r->vendor_id_l;
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = r->initiator_depth;
	cp.initiator_depth = r->responder_resources;
	cp.flow_control = r->e2e_flow_control;
	cp.rnr_retry_count = r->rnr_retry_count;
	cp.srq = r->srq;
	cp.qp_num = r->local_qpn;
	if (id->id.qp == NULL) {
		type = RDMA_CM_EVENT_CONNECT_RESPONSE;
		goto post;
	}
	ret = qp_connect(id);
	if (ret == 0)
		ret = send_rtu(id);
	if (ret < 0) {
		CMA_LOG(ERR, "connect: %s", strerror(-ret));
		cma_qp_to_err(id);
		id->connect_error = true;
		send_rej(id, UROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0,
			 UROCE_CM_MSG_REP);
		cma_post(id, NULL, RDMA_CM_EVENT_CONNECT_ERROR, ret, NULL, 0);
		return;
	}
	set_state(id, CMA_CONNECTED);
post:
	ev = cma_event_new(id, NULL, type, 0, r->private_data,
			   sizeof(r->private_data));
	if (ev == NULL)
		return;
	cp.private_data = ev->ev.param.conn.private_data;
	cp.private_data_len = ev->ev.param.conn.private_data_len;
	ev->ev.param.conn = cp;
	cma_event_queue(ev);
}

static void
on_sidr_rep(struct cma_id *id, const struct uroce_cm_sidr_rep *r)
{
	struct cma_event *ev;

	if (r->status != UROCE_CM_SIDR_SUCCESS) {
		cma_post(id, NULL, RDMA_CM_EVENT_UNREACHABLE, r->status, NULL, 0);
		return;
	}
	set_state(id, CMA_CONNECTED);
	ev = cma_event_new(id, NULL, RDMA_CM_EVENT_ESTABLISHED, 0,
			   r->private_data, sizeof(r->private_data));
	if (ev == NULL)
		return;
	{
		struct ibv_ah_attr ah;

		memset(&ah, 0, sizeof(ah));
		ah.is_global = 1;
		ah.port_num = 1;
		ah.dlid = UROCE_LID_PERMISSIVE;
		ah.grh.dgid = id->id.route.addr.addr.ibaddr.dgid;
		ah.grh.sgid_index = (uint8_t)id->gid_index;
		ah.grh.hop_limit = 64;
		ah.grh.traffic_class = id->tos;
		ev->ev.param.ud.ah_attr = ah;
		ev->ev.param.ud.qp_num = r->qpn;
		ev->ev.param.ud.qkey = r->qkey;
	}
	cma_event_queue(ev);
}

static void
on_rejected(struct cma_id *id, const struct cm_event *e)
{
	const struct uroce_cm_rej *r = e->msg ? &e->msg->rej : NULL;

	cma_qp_to_err(id);
	if (r == NULL && e->rej_reason == UROCE_CM_REJ_TIMEOUT) {
		cma_post(id, NULL, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, 0);
		return;
	}
	set_state(id, CMA_DISCONNECT);
	cma_post(id, NULL, id->connect_error ? RDMA_CM_EVENT_CONNECT_ERROR :
		 RDMA_CM_EVENT_REJECTED, e->rej_reason,
		 r ? r->private_data : NULL, r ? sizeof(r->private_data) : 0);
}

/* The agent's events of one connection (agent thread). */
static void
conn_cb(void *owner, struct cm_conn *conn, const struct cm_event *e)
{
	struct cma_id *id = owner;
	const struct uroce_cm_msg *m = e->msg;

	CMA_LOG(DEBUG, "id %p: CM %s in %s", (void *)id,
		uroce_cm_event_str(e->ev), cma_state_str(id->state));
	switch (e->ev) {
	case UROCE_CM_EV_REP_RCVD:
		if (m != NULL)
			on_rep(id, &m->rep);
		break;
	case UROCE_CM_EV_SIDR_REP_RCVD:
		if (m != NULL)
			on_sidr_rep(id, &m->sidr_rep);
		break;
	case UROCE_CM_EV_ESTABLISHED:
		if (id->state != CMA_CONNECT || id->listen == NULL)
			break;		/* the active side reported it at REP */
		set_state(id, CMA_CONNECTED);
		cma_post(id, NULL, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, 0);
		break;
	case UROCE_CM_EV_REJECTED:
		on_rejected(id, e);
		break;
	case UROCE_CM_EV_UNREACHABLE:
		cma_qp_to_err(id);
		cma_post(id, NULL, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, 0);
		break;
	case UROCE_CM_EV_DREQ_RCVD:
		set_state(id, CMA_DISCONNECT);
		id->disc_posted = true;
		cma_post(id, NULL, RDMA_CM_EVENT_DISCONNECTED, 0,
			 m ? m->dreq.private_data : NULL,
			 m ? sizeof(m->dreq.private_data) : 0);
		break;
	case UROCE_CM_EV_DISCONNECTED:
		/* our DREQ answered (DREP) or given up on after its retries
		 * (-ETIMEDOUT, the kernel's DREQ_ERROR: a peer that died):
		 * reported unless the peer's DREQ crossed it and was reported
		 * already */
		if (id->disc_posted && m == NULL)
			break;
		set_state(id, CMA_DISCONNECT);
		id->disc_posted = true;
		cma_post(id, NULL, RDMA_CM_EVENT_DISCONNECTED,
			 m ? 0 : -ETIMEDOUT, m ? m->drep.private_data : NULL,
			 m ? sizeof(m->drep.private_data) : 0);
		break;
	case UROCE_CM_EV_TIMEWAIT_EXIT:
		cma_post(id, NULL, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, NULL, 0);
		break;
	default:
		break;
	}
}

/* ---------------------------------------------------------------------
 * Passive side
 */

static int
accept_sidr(struct cma_id *id, const struct rdma_conn_param *p)
{
	struct uroce_cm_msg m;
	int ret;

	uroce_cm_msg_init(&m, UROCE_CM_ATTR_SIDR_REP, 0);
	m.sidr_rep.status = UROCE_CM_SIDR_SUCCESS;
	m.sidr_rep.qpn = cma_id_qpn(id, p);
	m.sidr_rep.qkey = RDMA_UDP_QKEY;
	m.sidr_rep.service_id = id_service_id(id, &id->id.route.addr.src_addr);
	ret = uroce_cm_priv_set(&m, p ? p->private_data : NULL,
				p ? p->private_data_len : 0);
	if (ret < 0)
		return ret;
	ret = cm_conn_send(id->conn, UROCE_CM_IN_SEND_SIDR_REP, &m, NULL);
	if (ret == 0)
		set_state(id, CMA_CONNECTED);
	return ret;
}

/* The depths the passive side accepts: what the application asks for
 * (RDMA_MAX_*: the most), within the device's caps and the peer's offer. */
static int
accept_depths(struct cma_id *id, const struct rdma_conn_param *p)
{
	struct cma_dev *d = id->dev;
	uint8_t rr, dp;
	int ret;

	if (p == NULL)
		return 0;
	ret = depth(p->responder_resources, min_u8(d->attr.max_qp_rd_atom, 0xff),
		    &rr);
	if (ret == 0)
		ret = depth(p->initiator_depth,
			    min_u8(d->attr.max_qp_init_rd_atom, 0xff), &dp);
	if (ret < 0)
		return ret;
	id->qp.resp_res = min_u8(rr, id->qp.resp_res);
	id->qp.init_depth = min_u8(dp, id->qp.init_depth);
	return 0;
}

int
cma_accept(struct cma_id *id, const struct rdma_conn_param *p)
{
	struct uroce_cm_msg m;
	struct uroce_cm_rep *r = &m.rep;
	int ret;

	if (id->conn == NULL || id->state != CMA_CONNECT)
		return -EINVAL;
	if (id->listen == NULL)
		return cma_establish(id);	/* active: send the RTU */
	if (id->id.qp_type == IBV_QPT_UD)
		return accept_sidr(id, p);
	if (p != NULL && p->private_data_len > UROCE_CM_REP_PRIV_LEN)
		return -EINVAL;
	ret = accept_depths(id, p);
	if (ret < 0)
		return ret;
	ret = qp_connect(id);
	if (ret < 0)
		return ret;
	uroce_cm_msg_init(&m, UROCE_CM_ATTR_REP, 0);
	r->local_qpn = cma_id_qpn(id, p);
	r->starting_psn = id->qp.local_psn;
	r->responder_resources = id->qp.resp_res;
	r->initiator_depth = id->qp.init_depth;
	r->target_ack_delay = id->dev->attr.local_ca_ack_delay & 0x1f;
	r->e2e_flow_control = p && p->flow_control ? 1 : 0;
	r->rnr_retry_count = p ? min_u8(p->rnr_retry_count, 7) : 7;
	r->srq = (id->id.srq != NULL ||
		  (id->id.qp != NULL && id->id.qp->srq != NULL) ||
		  (id->id.qp == NULL && p && p->srq)) ? 1 : 0;
	r->vendor_id_h = (uint8_t)(id->local_ece.vendor_id >> 16);
	r->vendor_id_m = (uint8_t)(id->local_ece.vendor_id >> 8);
	r->vendor_id_l = (uint8_t)id->local_ece.vendor_id;
	r->local_ca_guid = id->dev->guid;
	ret = uroce_cm_priv_set(&m, p ? p->private_data : NULL,
				p ? p->private_data_len : 0);
	if (ret == 0)
		ret = cm_conn_send(id->conn, UROCE_CM_IN_SEND_REP, &m, NULL);
	if (ret < 0)
		cma_qp_to_err(id);
	return ret;
}

int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cma_id *c = cma_id_of(id);
	int ret;

	if (id == NULL)
		return cma_err(-EINVAL);
	ret = cma_accept(c, conn_param);
	/* a synchronous id waits for ESTABLISHED (not a UD one: no event) */
	if (ret == 0 && c->listen != NULL && id->qp_type != IBV_QPT_UD)
		ret = cma_sync_wait(c);
	return cma_err(ret);
}

int
cma_reject(struct cma_id *id, const void *priv, uint8_t len, uint16_t reason)
{
	struct uroce_cm_msg m;
	int ret;

	if (id->conn == NULL || id->state != CMA_CONNECT)
		return -EINVAL;
	if (id->id.qp_type == IBV_QPT_UD) {
		uroce_cm_msg_init(&m, UROCE_CM_ATTR_SIDR_REP, 0);
		m.sidr_rep.status = UROCE_CM_SIDR_REJECT;
		m.sidr_rep.service_id =
			id_service_id(id, &id->id.route.addr.src_addr);
		ret = uroce_cm_priv_set(&m, priv, len);
		if (ret == 0)
			ret = cm_conn_send(id->conn, UROCE_CM_IN_SEND_SIDR_REP,
					   &m, NULL);
	} else {
		if (len > UROCE_CM_REJ_PRIV_LEN)
			return -EINVAL;
		ret = send_rej(id, reason, priv, len, id->listen != NULL ?
			       UROCE_CM_MSG_REQ : UROCE_CM_MSG_REP);
	}
	if (ret == 0)
		set_state(id, CMA_DISCONNECT);
	return ret;
}

int
rdma_reject(struct rdma_cm_id *id, const void *private_data,
	    uint8_t private_data_len)
{
	if (id == NULL)
		return cma_err(-EINVAL);
	return cma_err(cma_reject(cma_id_of(id), private_data,
				  private_data_len,
				  UROCE_CM_REJ_CONSUMER_DEFINED));
}

int
rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
		uint8_t private_data_len)
{
	if (id == NULL)
		return cma_err(-EINVAL);
	return cma_err(cma_reject(cma_id_of(id), private_data,
				  private_data_len,
				  UROCE_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED));
}

/* ---------------------------------------------------------------------
 * Established connections
 */

int
cma_establish(struct cma_id *id)
{
	int ret;

	if (id->conn == NULL || id->state != CMA_CONNECT || id->listen != NULL ||
	    !id->qp.known)
		return -EINVAL;
	ret = send_rtu(id);
	if (ret == 0)
		set_state(id, CMA_CONNECTED);
	return ret;
}

int
rdma_establish(struct rdma_cm_id *id)
{
	if (id == NULL || id->qp != NULL)
		return cma_err(-EINVAL);
	return cma_err(cma_establish(cma_id_of(id)));
}

int
cma_disconnect(struct cma_id *id)
{
	struct uroce_cm_msg m;
	enum uroce_cm_state st;

	if (id->conn == NULL || id->id.qp_type == IBV_QPT_UD)
		return -EINVAL;
	cma_qp_to_err(id);
	st = cm_conn_state(id->conn);
	if (st == UROCE_CM_ESTABLISHED) {
		uroce_cm_msg_init(&m, UROCE_CM_ATTR_DREQ, 0);
		m.dreq.remote_qpn = id->qp.remote_qpn;
		set_state(id, CMA_DISCONNECT);
		return cm_conn_send(id->conn, UROCE_CM_IN_SEND_DREQ, &m, NULL);
	}
	if (st == UROCE_CM_DREQ_RCVD) {
		uroce_cm_msg_init(&m, UROCE_CM_ATTR_DREP, 0);
		return cm_conn_send(id->conn, UROCE_CM_IN_SEND_DREP, &m, NULL);
	}
	return -EINVAL;
}

int
rdma_disconnect(struct rdma_cm_id *id)
{
	struct cma_id *c = cma_id_of(id);
	int ret;

	if (id == NULL)
		return cma_err(-EINVAL);
	ret = cma_disconnect(c);
	/* synchronous ids wait for DISCONNECTED, as librdmacm's */
	if (ret == 0)
		ret = cma_sync_wait(c);
	return cma_err(ret);
}

int
cma_notify(struct cma_id *id, enum ibv_event_type ev)
{
	int ret;

	if (id->conn == NULL || ev != IBV_EVENT_COMM_EST)
		return -EINVAL;
	if (id->state == CMA_CONNECTED)
		return -EISCONN;
	ret = cm_conn_send(id->conn, UROCE_CM_IN_COMM_EST, NULL, NULL);
	return ret;
}

int
rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	if (id == NULL)
		return cma_err(-EINVAL);
	return cma_err(cma_notify(cma_id_of(id), event));
}

void
cma_conn_drop(struct cma_id *id)
{
	struct cm_conn *c = id->conn;

	if (c == NULL)
		return;
	id->conn = NULL;
	cm_conn_release(c);
}

/* ---------------------------------------------------------------------
 * ECE (rdma_set_local_ece(3)): the vendor ID travels in REQ and REP.
 */

int
rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (id == NULL || ece == NULL || id->qp != NULL || ece->vendor_id == 0 ||
	    ece->comp_mask != 0)
		return cma_err(-EINVAL);
	cma_id_of(id)->local_ece = *ece;
	return 0;
}

int
rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (id == NULL || ece == NULL || id->qp != NULL)
		return cma_err(-EINVAL);
	*ece = cma_id_of(id)->remote_ece;
	return 0;
}
