/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Addresses and routes: rdma_resolve_addr(3), rdma_resolve_route(3),
 * rdma_getaddrinfo(3).
 *
 * Address resolution picks the uroce device that reaches the destination
 * (cma_dev_by_subnet) and resolves the next hop's MAC as the engine does
 * for an address handle: a temporary ibv_create_ah() to the destination
 * GID runs ARP or neighbour discovery (or reads the kernel's table on a
 * kernel interface). It runs on a thread of its own so that the call
 * returns at once; the event comes when the neighbour is known
 * (ADDR_RESOLVED) or when the application's timeout has passed
 * (ADDR_ERROR, -ETIMEDOUT), whichever is first. The id is held by both
 * threads: rdma_destroy_id() waits for them.
 */

#include <arpa/inet.h>
#include <netdb.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdmacm_priv.h"

#define CMA_HOP_LIMIT		64	/* Linux's default route hop limit */
#define CMA_PATH_RATE		IBV_RATE_10_GBPS

struct resolve {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct ibv_pd *pd;
	struct ibv_ah_attr attr;
	struct timespec deadline;	/* CLOCK_REALTIME, for timedwait */
	bool done, abandoned;
	int result;			/* 0 or negative errno */
	int users;			/* the two threads */
	struct cma_id *id;
};

static void
resolve_put(struct resolve *r)
{
	bool last;

	pthread_mutex_lock(&r->lock);
	last = --r->users == 0;
	pthread_mutex_unlock(&r->lock);
	if (last) {
		pthread_cond_destroy(&r->cond);
		pthread_mutex_destroy(&r->lock);
		free(r);
	}
}

static bool
past(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return now.tv_sec > t->tv_sec ||
	       (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

/* The neighbour: an AH to the destination, made and dropped, until it
 * resolves, fails otherwise or the waiter gave up. */
static void *
resolve_neigh(void *arg)
{
	struct resolve *r = arg;
	struct cma_id *id;
	struct ibv_ah *ah;
	int ret;

	for (;;) {
		ah = ibv_create_ah(r->pd, &r->attr);
		ret = ah != NULL ? 0 : -(errno ? errno : EHOSTUNREACH);
		if (ah != NULL)
			ibv_destroy_ah(ah);
		pthread_mutex_lock(&r->lock);
		if (ret == -EHOSTUNREACH && !r->abandoned && !past(&r->deadline)) {
			pthread_mutex_unlock(&r->lock);
			continue;
		}
		r->done = true;
		r->result = ret;
		pthread_cond_signal(&r->cond);
		pthread_mutex_unlock(&r->lock);
		break;
	}
	id = r->id;
	resolve_put(r);
	cma_id_put(id);		/* this thread's reference */
	return NULL;
}

static void *
resolve_wait(void *arg)
{
	struct resolve *r = arg;
	struct cma_id *id = r->id;
	int ret = 0;

	pthread_mutex_lock(&r->lock);
	while (!r->done && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&r->cond, &r->lock, &r->deadline);
	ret = r->done ? r->result : -ETIMEDOUT;
	if (ret == -EHOSTUNREACH && past(&r->deadline))
		ret = -ETIMEDOUT;
	r->abandoned = true;
	pthread_mutex_unlock(&r->lock);
	resolve_put(r);

	pthread_mutex_lock(&id->lock);
	if (id->state == CMA_ADDR_QUERY)
		id->state = ret == 0 ? CMA_ADDR_RESOLVED : CMA_ADDR_BOUND;
	pthread_mutex_unlock(&id->lock);
	if (ret < 0)
		CMA_LOG(INFO, "address resolution failed: %s", strerror(-ret));
	cma_post(id, NULL, ret == 0 ? RDMA_CM_EVENT_ADDR_RESOLVED :
		 RDMA_CM_EVENT_ADDR_ERROR, ret, NULL, 0);
	cma_id_put(id);		/* the worker's reference */
	return NULL;
}

/* A detached worker with every signal blocked: the program's signals go
 * to its own threads (as the CM agent's thread). */
static int
resolve_spawn(pthread_attr_t *pa, void *(*fn)(void *), struct resolve *r)
{
	sigset_t all, old;
	pthread_t t;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&t, pa, fn, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

static int
resolve_start(struct cma_id *id, int timeout_ms)
{
	struct resolve *r = calloc(1, sizeof(*r));
	pthread_attr_t pa;
	int ret;

	if (r == NULL)
		return -ENOMEM;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->pd = id->dev->pd;
	r->attr.is_global = 1;
	r->attr.port_num = 1;
	r->attr.dlid = UROCE_LID_PERMISSIVE;
	r->attr.grh.dgid = id->id.route.addr.addr.ibaddr.dgid;
	r->attr.grh.sgid_index = (uint8_t)id->gid_index;
	r->attr.grh.hop_limit = CMA_HOP_LIMIT;
	r->attr.grh.traffic_class = id->tos;
	clock_gettime(CLOCK_REALTIME, &r->deadline);
	r->deadline.tv_sec += timeout_ms / 1000;
	r->deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (r->deadline.tv_nsec >= 1000000000L) {
		r->deadline.tv_sec++;
		r->deadline.tv_nsec -= 1000000000L;
	}
	r->users = 2;
	r->id = id;
	/* each thread holds the id: a destroy waits for both (the neighbour
	 * thread ends within the engine's resolution time) */
	cma_id_get(id);
	cma_id_get(id);
	pthread_attr_init(&pa);
	pthread_attr_setdetachstate(&pa, PTHREAD_CREATE_DETACHED);
	ret = resolve_spawn(&pa, resolve_neigh, r);
	if (ret != 0) {
		pthread_attr_destroy(&pa);
		cma_id_put(id);
		cma_id_put(id);
		free(r);
		return -ret;
	}
	ret = resolve_spawn(&pa, resolve_wait, r);
	pthread_attr_destroy(&pa);
	if (ret != 0) {
		/* the neighbour thread finishes on its own */
		pthread_mutex_lock(&r->lock);
		r->abandoned = true;
		pthread_mutex_unlock(&r->lock);
		resolve_put(r);
		cma_id_put(id);
		return -ret;
	}
	return 0;
}

/* Bind an unbound id, or one bound to the wildcard, to @d's address of
 * @dst's family (keeping a port already taken). */
static int
bind_to_dev(struct cma_id *id, struct cma_dev *d, int gid,
	    const struct sockaddr *dst)
{
	struct sockaddr_storage ss;
	uint16_t port = id->port;
	int ret;

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = dst->sa_family;
	if (dst->sa_family == AF_INET)
		memcpy(&((struct sockaddr_in *)&ss)->sin_addr,
		       &d->gid[gid].raw[12], 4);
	else
		memcpy(&((struct sockaddr_in6 *)&ss)->sin6_addr,
		       d->gid[gid].raw, 16);
	if (id->state == CMA_IDLE)
		return cma_bind(id, (struct sockaddr *)&ss);
	/* bound to the wildcard: the device's address, the same port */
	cma_addr_set_port((struct sockaddr *)&ss, port);
	memcpy(&id->id.route.addr.src_storage, &ss, sizeof(ss));
	id->bound_any = false;
	id->dev = d;
	id->gid_index = gid;
	id->id.verbs = d->verbs;
	id->id.port_num = 1;
	id->id.route.addr.addr.ibaddr.sgid = d->gid[gid];
	id->id.route.addr.addr.ibaddr.pkey = htons(UROCE_DEFAULT_PKEY);
	ret = 0;
	return ret;
}

int
cma_resolve_addr(struct cma_id *id, const struct sockaddr *src,
		 const struct sockaddr *dst, int timeout_ms)
{
	struct cma_dev *d;
	int gid, ret;

	if (dst == NULL || (dst->sa_family != AF_INET &&
			    dst->sa_family != AF_INET6) || timeout_ms < 0)
		return -EINVAL;
	if (id->state == CMA_IDLE && src != NULL && src->sa_family != AF_UNSPEC) {
		if (src->sa_family != dst->sa_family)
			return -EINVAL;
		ret = cma_bind(id, src);
		if (ret < 0)
			return ret;
	}
	if (id->state != CMA_IDLE && id->state != CMA_ADDR_BOUND)
		return -EINVAL;
	if (id->dev != NULL) {
		d = id->dev;
		gid = id->gid_index;
		if (id->id.route.addr.src_addr.sa_family != dst->sa_family)
			return -EINVAL;
	} else {
		d = cma_dev_by_subnet(dst, &gid);
		if (d == NULL)
			return -ENODEV;
		ret = bind_to_dev(id, d, gid, dst);
		if (ret < 0)
			return ret;
	}
	memcpy(&id->id.route.addr.dst_storage, dst, cma_addr_len(dst));
	cma_addr_gid(dst, &id->id.route.addr.addr.ibaddr.dgid);
	id->state = CMA_ADDR_QUERY;
	ret = resolve_start(id, timeout_ms);
	if (ret < 0)
		id->state = CMA_ADDR_BOUND;
	return ret;
}

int
rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
		  struct sockaddr *dst_addr, int timeout_ms)
{
	struct cma_id *c = cma_id_of(id);
	int ret;

	if (id == NULL)
		return cma_err(-EINVAL);
	ret = cma_resolve_addr(c, src_addr, dst_addr, timeout_ms);
	if (ret == 0)
		ret = cma_sync_wait(c);
	return cma_err(ret);
}

/*
 * The route of a RoCE id is the path between the two GIDs: the port's
 * MTU, the id's TOS as traffic class, the default hop limit and packet
 * life time (as Linux's cma_resolve_iboe_route()). Nothing to ask anyone:
 * the event is queued at once.
 */
int
cma_resolve_route(struct cma_id *id, int timeout_ms)
{
	struct ibv_sa_path_rec *p;

	if (id->state != CMA_ADDR_RESOLVED)
		return -EINVAL;
	p = id->id.route.path_rec;
	if (p == NULL) {
		p = calloc(1, sizeof(*p));
		if (p == NULL)
			return -ENOMEM;
	}
	memset(p, 0, sizeof(*p));
	p->sgid = id->id.route.addr.addr.ibaddr.sgid;
	p->dgid = id->id.route.addr.addr.ibaddr.dgid;
	p->slid = htons(UROCE_LID_PERMISSIVE);
	p->dlid = htons(UROCE_LID_PERMISSIVE);
	p->hop_limit = CMA_HOP_LIMIT;
	p->traffic_class = id->tos;
	p->reversible = htonl(1);
	p->numb_path = 1;
	p->pkey = htons(UROCE_DEFAULT_PKEY);
	p->sl = 0;
	p->mtu_selector = 2;	/* exactly */
	p->mtu = id->dev->port.active_mtu;
	p->rate_selector = 2;
	p->rate = CMA_PATH_RATE;
	p->packet_life_time_selector = 2;
	p->packet_life_time = UROCE_CM_DEFAULT_PACKET_LIFE;
	id->id.route.path_rec = p;
	id->id.route.num_paths = 1;
	id->path = *p;
	id->state = CMA_ROUTE_RESOLVED;
	return cma_post(id, NULL, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, 0);
}

int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct cma_id *c = cma_id_of(id);
	int ret;

	if (id == NULL)
		return cma_err(-EINVAL);
	ret = cma_resolve_route(c, timeout_ms);
	if (ret == 0)
		ret = cma_sync_wait(c);
	return cma_err(ret);
}

/* ---- rdma_getaddrinfo(3) ---- */

static struct sockaddr *
sa_dup(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *c = malloc(len);

	if (c != NULL)
		memcpy(c, sa, len);
	return c;
}

static int
rai_fill(struct rdma_addrinfo *rai, const struct addrinfo *ai,
	 const struct rdma_addrinfo *hints)
{
	rai->ai_flags = hints ? hints->ai_flags : 0;
	rai->ai_family = ai->ai_family;
	rai->ai_qp_type = hints && hints->ai_qp_type ? hints->ai_qp_type :
			  IBV_QPT_RC;
	rai->ai_port_space = hints && hints->ai_port_space ?
		hints->ai_port_space :
		(rai->ai_qp_type == IBV_QPT_UD ? RDMA_PS_UDP : RDMA_PS_TCP);
	if (rai->ai_flags & RAI_PASSIVE) {
		rai->ai_src_addr = sa_dup(ai->ai_addr, ai->ai_addrlen);
		if (rai->ai_src_addr == NULL)
			return -ENOMEM;
		rai->ai_src_len = ai->ai_addrlen;
		return 0;
	}
	rai->ai_dst_addr = sa_dup(ai->ai_addr, ai->ai_addrlen);
	if (rai->ai_dst_addr == NULL)
		return -ENOMEM;
	rai->ai_dst_len = ai->ai_addrlen;
	if (hints && hints->ai_src_addr && hints->ai_src_len) {
		rai->ai_src_addr = sa_dup(hints->ai_src_addr, hints->ai_src_len);
		if (rai->ai_src_addr == NULL)
			return -ENOMEM;
		rai->ai_src_len = hints->ai_src_len;
	}
	if (ai->ai_canonname != NULL) {
		rai->ai_dst_canonname = strdup(ai->ai_canonname);
		if (rai->ai_dst_canonname == NULL)
			return -ENOMEM;
	}
	return 0;
}

/*
 * As getaddrinfo(3), with the rdma_addrinfo around it: RAI_PASSIVE gives
 * a source address to bind (the wildcard without a node), else a
 * destination; RAI_NUMERICHOST does not look names up; the service is a
 * port. Name errors are getaddrinfo's EAI_* codes, returned as they are
 * (rdma_getaddrinfo(3)); other errors -1 with errno.
 */
int
rdma_getaddrinfo(const char *node, const char *service,
		 const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct addrinfo ah, *ai;
	struct rdma_addrinfo *rai;
	int ret;

	if (res == NULL || (node == NULL && service == NULL &&
			    !(hints && (hints->ai_flags & RAI_PASSIVE))))
		return cma_err(-EINVAL);
	memset(&ah, 0, sizeof(ah));
	if (hints != NULL) {
		if (hints->ai_flags & ~(RAI_PASSIVE | RAI_NUMERICHOST |
					RAI_NOROUTE | RAI_FAMILY))
			return EAI_BADFLAGS;
		ah.ai_flags = ((hints->ai_flags & RAI_PASSIVE) ? AI_PASSIVE : 0) |
			      ((hints->ai_flags & RAI_NUMERICHOST) ?
			       AI_NUMERICHOST : 0);
		if (hints->ai_family == AF_IB)
			return EAI_FAMILY;
		ah.ai_family = hints->ai_family;
	}
	ah.ai_socktype = SOCK_STREAM;
	ret = getaddrinfo(node, service, &ah, &ai);
	if (ret != 0)
		return ret;
	rai = calloc(1, sizeof(*rai));
	if (rai == NULL) {
		freeaddrinfo(ai);
		return cma_err(-ENOMEM);
	}
	ret = rai_fill(rai, ai, hints);
	freeaddrinfo(ai);
	if (ret < 0) {
		rdma_freeaddrinfo(rai);
		return cma_err(ret);
	}
	*res = rai;
	return 0;
}

void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	struct rdma_addrinfo *next;

	for (; res != NULL; res = next) {
		next = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
	}
}
