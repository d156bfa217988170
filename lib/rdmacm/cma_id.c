/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * rdma_cm ids (rdma_create_id(3), rdma_destroy_id(3), rdma_bind_addr(3),
 * rdma_listen(3), rdma_set_option(3), rdma_migrate_id(3)) and the port
 * spaces: the kernel keeps one port table per port space for the host;
 * ours is the process's, since the CM runs in the process.
 */

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "rdmacm_priv.h"

/* The ids bound to a port, all port spaces. */
static pthread_mutex_t ports_lock = PTHREAD_MUTEX_INITIALIZER;
static LIST_HEAD(, cma_id) bound_ids = LIST_HEAD_INITIALIZER(bound_ids);

/* Ephemeral ports, as Linux's default ip_local_port_range. */
#define CMA_PORT_MIN	32768
#define CMA_PORT_MAX	60999

static const char *const state_names[CMA_STATE_COUNT] = {
	[CMA_IDLE] = "IDLE",
	[CMA_ADDR_BOUND] = "ADDR_BOUND",
	[CMA_ADDR_QUERY] = "ADDR_QUERY",
	[CMA_ADDR_RESOLVED] = "ADDR_RESOLVED",
	[CMA_ROUTE_QUERY] = "ROUTE_QUERY",
	[CMA_ROUTE_RESOLVED] = "ROUTE_RESOLVED",
	[CMA_CONNECT] = "CONNECT",
	[CMA_CONNECTED] = "CONNECTED",
	[CMA_DISCONNECT] = "DISCONNECT",
	[CMA_LISTEN] = "LISTEN",
};

const char *
cma_state_str(enum cma_state s)
{
	return (unsigned int)s < CMA_STATE_COUNT ? state_names[s] : "?";
}

uint16_t
cma_addr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return ntohs(((const struct sockaddr_in *)sa)->sin_port);
}

void
cma_addr_set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)sa)->sin_port = htons(port);
}

socklen_t
cma_addr_len(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	case AF_IB:
		return sizeof(struct sockaddr_storage);
	default:
		return 0;
	}
}

bool
cma_addr_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(
		&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

int
cma_id_new(struct cma_channel *ch, void *context, enum rdma_port_space ps,
	   enum ibv_qp_type qpt, struct cma_id **out)
{
	struct cma_id *id = calloc(1, sizeof(*id));

	if (id == NULL)
		return -ENOMEM;
	if (ch == NULL) {
		ch = cma_channel_new();
		if (ch == NULL) {
			free(id);
			return -ENOMEM;
		}
		id->sync = true;
	}
	pthread_mutex_init(&id->lock, NULL);
	pthread_cond_init(&id->cond, NULL);
	id->id.channel = &ch->ch;
	id->id.context = context;
	id->id.ps = ps;
	id->id.qp_type = qpt;
	id->state = CMA_IDLE;
	*out = id;
	return 0;
}

static int
ps_qp_type(enum rdma_port_space ps, enum ibv_qp_type *qpt)
{
	switch (ps) {
	case RDMA_PS_TCP:
		*qpt = IBV_QPT_RC;
		return 0;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		*qpt = IBV_QPT_UD;
		return 0;
	case RDMA_PS_IB:
		*qpt = IBV_QPT_RC;
		return 0;
	default:
		return -EINVAL;
	}
}

int
rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
	       void *context, enum rdma_port_space ps)
{
	enum ibv_qp_type qpt;
	struct cma_id *c;
	int ret;

	if (id == NULL)
		return cma_err(-EINVAL);
	ret = ps_qp_type(ps, &qpt);
	if (ret == 0 && ps == RDMA_PS_IPOIB)
		ret = -EPROTONOSUPPORT;
	if (ret == 0)
		ret = cma_id_new(channel ? cma_channel_of(channel) : NULL,
				 context, ps, qpt, &c);
	if (ret < 0)
		return cma_err(ret);
	*id = &c->id;
	return 0;
}

void
cma_id_get(struct cma_id *id)
{
	pthread_mutex_lock(&id->lock);
	id->refs++;
	pthread_mutex_unlock(&id->lock);
}

void
cma_id_put(struct cma_id *id)
{
	pthread_mutex_lock(&id->lock);
	if (--id->refs == 0)
		pthread_cond_broadcast(&id->cond);
	pthread_mutex_unlock(&id->lock);
}

static void
port_release(struct cma_id *id)
{
	pthread_mutex_lock(&ports_lock);
	if (id->port != 0)
		LIST_REMOVE(id, port_link);
	id->port = 0;
	pthread_mutex_unlock(&ports_lock);
}

/* The id itself. Its QP is the application's to destroy (rdma_destroy_qp
 * or ibv_destroy_qp, as rping does), as with rdma-core's librdmacm. */
static void
id_free(struct cma_id *id)
{
	if (id->ep_qp_attr != NULL)
		free(id->ep_qp_attr);
	if (id->sync)
		cma_channel_free(cma_channel_of(id->id.channel));
	free(id->id.route.path_rec);
	pthread_cond_destroy(&id->cond);
	pthread_mutex_destroy(&id->lock);
	free(id);
}

/*
 * Tear down: stop listening, let the agent finish the connection on its
 * own (cm_conn_release: DREQ, DREP or REJ as the state needs), drop the
 * unread events, wait until the events read are acked and no worker holds
 * the id (rdma_destroy_id(3) blocks the same way), free.
 */
static void
id_destroy(struct cma_id *id)
{
	struct rdma_cm_event *ev;

	pthread_mutex_lock(&id->lock);
	id->destroying = true;
	ev = id->id.event;
	id->id.event = NULL;
	pthread_mutex_unlock(&id->lock);
	if (ev != NULL)
		rdma_ack_cm_event(ev);
	if (id->state == CMA_LISTEN)
		cma_listen_stop(id);
	port_release(id);
	cma_conn_drop(id);
	cma_channel_drop(id);
	pthread_mutex_lock(&id->lock);
	while (id->refs > 0)
		pthread_cond_wait(&id->cond, &id->lock);
	pthread_mutex_unlock(&id->lock);
	id_free(id);
}

void
cma_id_destroy_now(struct cma_id *id)
{
	id_destroy(id);
}

int
rdma_destroy_id(struct rdma_cm_id *id)
{
	if (id == NULL)
		return cma_err(-EINVAL);
	id_destroy(cma_id_of(id));
	return 0;
}

/* Whether the host has @sa on an interface (not ours: the kernel's). */
static bool
host_has_addr(const struct sockaddr *sa)
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (getifaddrs(&ifa) != 0)
		return false;
	for (i = ifa; i != NULL && !found; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != sa->sa_family)
			continue;
		if (sa->sa_family == AF_INET)
			found = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr ==
				((const struct sockaddr_in *)sa)->sin_addr.s_addr;
		else
			found = memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
				       &((const struct sockaddr_in6 *)sa)->sin6_addr,
				       16) == 0;
	}
	freeifaddrs(ifa);
	return found;
}

/* Whether @a and @b may not both hold the port (ports_lock held). */
static bool
port_conflict(const struct cma_id *a, const struct cma_id *b)
{
	const struct sockaddr *sa = &a->id.route.addr.src_addr;
	const struct sockaddr *sb = &b->id.route.addr.src_addr;

	if (a->id.ps != b->id.ps || a->port != b->port)
		return false;
	if (a->reuseaddr && b->reuseaddr && a->state != CMA_LISTEN &&
	    b->state != CMA_LISTEN)
		return false;
	if (a->bound_any || b->bound_any) {
		/* an IPv6 wildcard without AFONLY takes IPv4 too */
		if (sa->sa_family == sb->sa_family)
			return true;
		return (a->bound_any && sa->sa_family == AF_INET6 && !a->afonly) ||
		       (b->bound_any && sb->sa_family == AF_INET6 && !b->afonly);
	}
	if (sa->sa_family != sb->sa_family)
		return false;
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)sb)->sin_addr.s_addr;
	return memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr,
		      &((const struct sockaddr_in6 *)sb)->sin6_addr, 16) == 0;
}

static bool
port_free(struct cma_id *id, uint16_t port)
{
	struct cma_id *o;

	id->port = port;
	LIST_FOREACH(o, &bound_ids, port_link)
		if (o != id && port_conflict(id, o))
			return false;
	return true;
}

/* Take @want (0: an ephemeral port); ports_lock held. */
static int
port_take(struct cma_id *id, uint16_t want)
{
	uint32_t r = 0, range = CMA_PORT_MAX - CMA_PORT_MIN + 1, i;

	if (want != 0) {
		if (!port_free(id, want)) {
			id->port = 0;
			return -EADDRINUSE;
		}
	} else {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (uint32_t)rand();
		for (i = 0; i < range; i++)
			if (port_free(id, (uint16_t)(CMA_PORT_MIN +
						     (r + i) % range)))
				break;
		if (i == range) {
			id->port = 0;
			return -EADDRNOTAVAIL;
		}
	}
	LIST_INSERT_HEAD(&bound_ids, id, port_link);
	return 0;
}

/*
 * Bind: an address of a uroce device binds the id to that device; the
 * wildcard binds no device (a listener then hears every device); an
 * address the host has elsewhere is ENODEV, as the kernel's rdma_cm says
 * of an address on a netdev without RDMA; any other is EADDRNOTAVAIL.
 */
int
cma_bind(struct cma_id *id, const struct sockaddr *sa)
{
	struct cma_dev *dev = NULL;
	int gid = 0, ret;

	if (sa == NULL || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
		return -EAFNOSUPPORT;
	if (id->state != CMA_IDLE)
		return -EINVAL;
	if (!cma_addr_any(sa)) {
		dev = cma_dev_by_addr(sa, &gid);
		if (dev == NULL)
			return host_has_addr(sa) ? -ENODEV : -EADDRNOTAVAIL;
	} else {
		struct cma_dev *d;
		int n;

		ret = cma_devs(&d, &n);
		if (ret < 0)
			return ret;
	}
	memcpy(&id->id.route.addr.src_storage, sa, cma_addr_len(sa));
	id->bound_any = dev == NULL;
	pthread_mutex_lock(&ports_lock);
	ret = port_take(id, cma_addr_port(sa));
	pthread_mutex_unlock(&ports_lock);
	if (ret < 0) {
		memset(&id->id.route.addr.src_storage, 0,
		       sizeof(id->id.route.addr.src_storage));
		return ret;
	}
	cma_addr_set_port(&id->id.route.addr.src_addr, id->port);
	if (dev != NULL) {
		id->dev = dev;
		id->gid_index = gid;
		id->id.verbs = dev->verbs;
		id->id.port_num = 1;
		id->id.route.addr.addr.ibaddr.sgid = dev->gid[gid];
		id->id.route.addr.addr.ibaddr.pkey = htons(UROCE_DEFAULT_PKEY);
	}
	id->state = CMA_ADDR_BOUND;
	return 0;
}

int
rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	if (id == NULL || addr == NULL)
		return cma_err(-EINVAL);
	return cma_err(cma_bind(cma_id_of(id), addr));
}

struct cma_id *
cma_listener_find(struct cma_dev *d, uint16_t ps, uint16_t port,
		  const uint8_t dst[16], int ip_version)
{
	struct sockaddr_storage ss;
	struct cma_id *o, *found = NULL;
	union ibv_gid g, want;

	memset(&ss, 0, sizeof(ss));
	memcpy(want.raw, dst, 16);
	if (ip_version == 4) {
		memset(want.raw, 0, 10);
		want.raw[10] = want.raw[11] = 0xff;
	}
	pthread_mutex_lock(&ports_lock);
	LIST_FOREACH(o, &bound_ids, port_link) {
		if (o->state != CMA_LISTEN || o->id.ps != ps || o->port != port ||
		    o->destroying)
			continue;
		if (o->bound_any) {
			int fam = o->id.route.addr.src_addr.sa_family;

			if ((ip_version == 4 && fam == AF_INET) ||
			    (fam == AF_INET6 && (ip_version == 6 || !o->afonly)))
				found = o;
			continue;
		}
		if (o->dev != d)
			continue;
		cma_addr_gid(&o->id.route.addr.src_addr, &g);
		if (memcmp(g.raw, want.raw, 16) == 0) {
			found = o;
			break;		/* an exact address beats a wildcard */
		}
	}
	if (found != NULL)
		cma_id_get(found);
	pthread_mutex_unlock(&ports_lock);
	return found;
}

int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct cma_id *c = cma_id_of(id);
	struct sockaddr_in any;
	int ret;

	if (id == NULL)
		return cma_err(-EINVAL);
	if (c->state == CMA_IDLE) {
		memset(&any, 0, sizeof(any));
		any.sin_family = AF_INET;
		ret = cma_bind(c, (struct sockaddr *)&any);
		if (ret < 0)
			return cma_err(ret);
	}
	if (c->state != CMA_ADDR_BOUND)
		return cma_err(-EINVAL);
	/* as the kernel's rdma_ucm: <= 0 or above the most is the most */
	c->backlog = backlog > 0 && backlog <= CMA_MAX_BACKLOG ? backlog :
		     CMA_MAX_BACKLOG;
	pthread_mutex_lock(&ports_lock);
	c->state = CMA_LISTEN;
	if (c->reuseaddr) {
		struct cma_id *o;

		LIST_FOREACH(o, &bound_ids, port_link)
			if (o != c && port_conflict(c, o)) {
				c->state = CMA_ADDR_BOUND;
				pthread_mutex_unlock(&ports_lock);
				return cma_err(-EADDRINUSE);
			}
	}
	pthread_mutex_unlock(&ports_lock);
	ret = cma_listen_start(c);
	if (ret < 0)
		c->state = CMA_ADDR_BOUND;
	return cma_err(ret);
}

int
rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval,
		size_t optlen)
{
	struct cma_id *c = cma_id_of(id);

	if (id == NULL || optval == NULL)
		return cma_err(-EINVAL);
	if (level != RDMA_OPTION_ID)
		return cma_err(-ENOSYS);	/* RDMA_OPTION_IB_PATH: IB only */
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		if (optlen != sizeof(uint8_t))
			return cma_err(-EINVAL);
		c->tos = *(uint8_t *)optval;
		c->tos_set = true;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
		if (optlen != sizeof(int))
			return cma_err(-EINVAL);
		if (c->state != CMA_IDLE)
			return cma_err(-EINVAL);
		c->reuseaddr = *(int *)optval != 0;
		return 0;
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int))
			return cma_err(-EINVAL);
		if (c->state != CMA_IDLE)
			return cma_err(-EINVAL);
		c->afonly = *(int *)optval != 0;
		c->afonly_set = true;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen != sizeof(uint8_t))
			return cma_err(-EINVAL);
		c->ack_timeout = *(uint8_t *)optval;
		if (c->ack_timeout > 31)
			c->ack_timeout = 31;
		c->timeout_set = true;
		return 0;
	default:
		return cma_err(-ENOSYS);
	}
}

/*
 * Move @id to @channel (NULL: a channel of its own, synchronous). Its
 * unread events go along.
 */
int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct cma_id *c = cma_id_of(id);
	struct cma_channel *to, *old;
	bool was_sync;

	if (id == NULL)
		return cma_err(-EINVAL);
	to = channel ? cma_channel_of(channel) : cma_channel_new();
	if (to == NULL)
		return cma_err(-ENOMEM);
	old = cma_channel_of(id->channel);
	if (to == old)
		return 0;
	cma_channel_move(c, to);
	pthread_mutex_lock(&c->lock);
	was_sync = c->sync;
	c->id.channel = &to->ch;
	c->sync = channel == NULL;
	pthread_mutex_unlock(&c->lock);
	if (was_sync)
		cma_channel_free(old);
	return 0;
}

__be16
rdma_get_src_port(struct rdma_cm_id *id)
{
	return htons(cma_addr_port(&id->route.addr.src_addr));
}

__be16
rdma_get_dst_port(struct rdma_cm_id *id)
{
	return htons(cma_addr_port(&id->route.addr.dst_addr));
}

/*
 * Synchronous ids: the next event of the id's own channel (librdmacm's
 * ucma_complete()): the previous one is acked, this one kept in
 * id->event until the next call or the destroy. A failed event's status
 * becomes the error: REJECTED is ECONNREFUSED.
 */
int
cma_sync_wait(struct cma_id *id)
{
	struct rdma_cm_event *ev;

	if (!id->sync)
		return 0;
	if (id->id.event != NULL) {
		rdma_ack_cm_event(id->id.event);
		id->id.event = NULL;
	}
	if (rdma_get_cm_event(id->id.channel, &ev) != 0)
		return -errno;
	id->id.event = ev;
	if (ev->status == 0)
		return 0;
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		return -ECONNREFUSED;
	return ev->status < 0 ? ev->status : -ev->status;
}

int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct cma_id *l = cma_id_of(listen);
	struct rdma_cm_event *ev;
	struct cma_id *n;
	int ret;

	if (listen == NULL || id == NULL || !l->sync)
		return cma_err(-EINVAL);
	if (l->id.event != NULL) {
		rdma_ack_cm_event(l->id.event);
		l->id.event = NULL;
	}
	if (rdma_get_cm_event(listen->channel, &ev) != 0)
		return -1;
	if (ev->status != 0) {
		ret = ev->status < 0 ? ev->status : -ev->status;
		goto fail;
	}
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		ret = -EINVAL;
		goto fail;
	}
	n = cma_id_of(ev->id);
	if (l->ep_qp_attr != NULL) {
		struct ibv_qp_init_attr a = *l->ep_qp_attr;

		if (rdma_create_qp(&n->id, listen->pd, &a) != 0) {
			ret = -errno;
			rdma_ack_cm_event(ev);
			rdma_reject(&n->id, NULL, 0);
			rdma_destroy_id(&n->id);
			return cma_err(ret);
		}
	}
	n->id.event = ev;
	*id = &n->id;
	return 0;
fail:
	rdma_ack_cm_event(ev);
	return cma_err(ret);
}
