/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The devices rdma_cm works on: every device of our libibverbs (uroce0,
 * uroce1, ...: one per [port] of the configuration), opened once, with
 * what addressing needs: the GID table of port 1, and the subnets of the
 * port's addresses from the same configuration the engine reads (GIDs
 * carry the addresses but not their prefixes), and the port's local ACK
 * timeout for rdma_cm's QPs ([port] cm_ack_timeout).
 */

#include <arpa/inet.h>
#include <endian.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_config.h"
#include "rdmacm_priv.h"

RTE_LOG_REGISTER_SUFFIX(uroce_rdmacm_logtype, rdmacm, NOTICE);

static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cma_dev devs[CMA_MAX_DEVS];
static int ndevs = -1;		/* -1: not opened yet */
static int devs_err;

/* The configuration's addresses, CM timing and ACK timeout of the port
 * behind device "uroceN". */
static void
dev_config(struct cma_dev *d, const struct uroce_config *cfg,
	    const char *name)
{
	const struct uroce_config_port *p;
	unsigned int n;
	int i;

	d->timing.cm_resp_timeout = UROCE_CM_DEFAULT_RESP_TIMEOUT;
	d->timing.max_cm_retries = UROCE_CM_DEFAULT_RETRIES;
	d->timing.packet_life = UROCE_CM_DEFAULT_PACKET_LIFE;
	if (cfg == NULL || sscanf(name, "uroce%u", &n) != 1 ||
	    n >= cfg->port_cnt)
		return;
	p = &cfg->port[n];
	d->timing.cm_resp_timeout = p->cm_resp_timeout;
	d->timing.max_cm_retries = p->cm_max_retries;
	d->ack_timeout = p->cm_ack_timeout;
	d->has_ip4 = p->has_ip4;
	d->ip4 = p->ip4;
	d->ip4_prefix = p->ip4_prefix;
	for (i = 0; i < p->ip6_cnt && i < CMA_MAX_IP6; i++) {
		memcpy(d->ip6[i], p->ip6[i].addr, 16);
		d->ip6_prefix[i] = p->ip6[i].prefix_len;
	}
	d->ip6_cnt = i;
}

static int
dev_open(struct cma_dev *d, struct ibv_device *ibdev,
	 const struct uroce_config *cfg)
{
	int i;

	d->verbs = ibv_open_device(ibdev);
	if (d->verbs == NULL)
		return -(errno ? errno : ENODEV);
	if (ibv_query_device(d->verbs, &d->attr) != 0 ||
	    ibv_query_port(d->verbs, 1, &d->port) != 0)
		goto fail;
	d->pd = ibv_alloc_pd(d->verbs);
	if (d->pd == NULL)
		goto fail;
	d->guid = be64toh(d->attr.node_guid);
	for (i = 0; i < CMA_MAX_GIDS && i < d->port.gid_tbl_len; i++) {
		if (ibv_query_gid(d->verbs, 1, i, &d->gid[i]) != 0 ||
		    d->gid[i].global.interface_id == 0)
			break;
	}
	d->gid_cnt = i;
	pthread_mutex_init(&d->agent_lock, NULL);
	d->ack_timeout = CMA_DEFAULT_ACK_TIMEOUT;
	dev_config(d, cfg, ibv_get_device_name(ibdev));
	return 0;
fail:
	ibv_close_device(d->verbs);
	d->verbs = NULL;
	return -EIO;
}

static void
devs_open(void)
{
	struct uroce_config cfg, *pc = NULL;
	struct ibv_device **list;
	char err[UROCE_CONFIG_ERR_LEN];
	int n, i, ret;

	list = ibv_get_device_list(&n);
	if (list == NULL) {
		devs_err = -(errno ? errno : ENODEV);
		return;
	}
	if (uroce_config_path() != NULL &&
	    uroce_config_load(uroce_config_path(), &cfg, err, sizeof(err)) == 0)
		pc = &cfg;
	ndevs = 0;
	for (i = 0; i < n && ndevs < CMA_MAX_DEVS; i++) {
		ret = dev_open(&devs[ndevs], list[i], pc);
		if (ret == 0)
			ndevs++;
		else
			CMA_LOG(WARNING, "%s: not usable (%s)",
				ibv_get_device_name(list[i]), strerror(-ret));
	}
	if (pc != NULL)
		uroce_config_free(pc);
	ibv_free_device_list(list);
	if (ndevs == 0)
		devs_err = -ENODEV;
}

int
cma_devs(struct cma_dev **out, int *n)
{
	pthread_mutex_lock(&devs_lock);
	if (ndevs < 0)
		devs_open();
	pthread_mutex_unlock(&devs_lock);
	if (devs_err < 0)
		return devs_err;
	*out = devs;
	*n = ndevs;
	return 0;
}

struct cma_dev *
cma_dev_of(struct ibv_context *verbs)
{
	struct cma_dev *d;
	int n, i;

	if (verbs == NULL || cma_devs(&d, &n) < 0)
		return NULL;
	for (i = 0; i < n; i++)
		if (d[i].verbs == verbs)
			return &d[i];
	return NULL;
}

void
cma_addr_gid(const struct sockaddr *sa, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (sa->sa_family == AF_INET) {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12],
		       &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(gid->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr,
		       16);
	}
}

static bool
gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(g->raw, pfx, sizeof(pfx)) == 0;
}

/* The first GID of @d of @sa's family, or -1. */
static int
dev_family_gid(const struct cma_dev *d, const struct sockaddr *sa)
{
	int i;

	for (i = 0; i < d->gid_cnt; i++)
		if (gid_is_v4(&d->gid[i]) == (sa->sa_family == AF_INET))
			return i;
	return -1;
}

struct cma_dev *
cma_dev_by_addr(const struct sockaddr *sa, int *gid_index)
{
	union ibv_gid g;
	struct cma_dev *d;
	int n, i, j;

	if (cma_devs(&d, &n) < 0)
		return NULL;
	cma_addr_gid(sa, &g);
	for (i = 0; i < n; i++)
		for (j = 0; j < d[i].gid_cnt; j++)
			if (memcmp(d[i].gid[j].raw, g.raw, 16) == 0) {
				*gid_index = j;
				return &d[i];
			}
	return NULL;
}

static bool
prefix_match(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int full = bits / 8, rest = bits % 8;

	if (memcmp(a, b, full) != 0)
		return false;
	return rest == 0 ||
	       ((a[full] ^ b[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static bool
dev_on_subnet(const struct cma_dev *d, const struct sockaddr *sa)
{
	const uint8_t *a6;
	uint32_t a4;
	int i;

	if (sa->sa_family == AF_INET) {
		a4 = ((const struct sockaddr_in *)sa)->sin_addr.s_addr;
		return d->has_ip4 &&
		       prefix_match((const uint8_t *)&a4,
				    (const uint8_t *)&d->ip4, d->ip4_prefix);
	}
	a6 = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	if (a6[0] == 0xfe && (a6[1] & 0xc0) == 0x80)
		return true;		/* link-local: on every link */
	for (i = 0; i < d->ip6_cnt; i++)
		if (prefix_match(a6, d->ip6[i], d->ip6_prefix[i]))
			return true;
	return false;
}

/*
 * The device that reaches @sa: the one owning it (a loop on that device),
 * else the first whose subnet holds it, else, when no configuration says
 * the subnets, the only device with an address of the family.
 */
struct cma_dev *
cma_dev_by_subnet(const struct sockaddr *sa, int *gid_index)
{
	struct cma_dev *d, *only = NULL;
	int n, i, g, cnt = 0;

	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return NULL;
	d = cma_dev_by_addr(sa, gid_index);
	if (d != NULL)
		return d;
	if (cma_devs(&d, &n) < 0)
		return NULL;
	for (i = 0; i < n; i++) {
		g = dev_family_gid(&d[i], sa);
		if (g < 0)
			continue;
		if (dev_on_subnet(&d[i], sa)) {
			*gid_index = g;
			return &d[i];
		}
		if (!d[i].has_ip4 && d[i].ip6_cnt == 0) {
			only = &d[i];
			cnt++;
		}
	}
	if (cnt == 1) {
		*gid_index = dev_family_gid(only, sa);
		return only;
	}
	return NULL;
}

int
cma_dev_agent(struct cma_dev *d, struct cm_agent **out)
{
	int ret = 0;

	pthread_mutex_lock(&d->agent_lock);
	if (d->agent == NULL) {
		ret = cm_agent_get(d->verbs, &d->agent);
		if (ret == 0)
			ret = cm_agent_set_timing(d->agent, &d->timing);
		if (ret < 0 && d->agent != NULL) {
			cm_agent_put(d->agent);
			d->agent = NULL;
		}
	}
	*out = d->agent;
	pthread_mutex_unlock(&d->agent_lock);
	if (ret < 0)
		CMA_LOG(ERR, "%s: no CM agent: %s",
			ibv_get_device_name(d->verbs->device), strerror(-ret));
	return ret;
}

/* rdma_get_devices(3): the contexts of our devices, NULL-terminated. */
struct ibv_context **
rdma_get_devices(int *num_devices)
{
	struct ibv_context **list;
	struct cma_dev *d;
	int n = 0, i, ret;

	ret = cma_devs(&d, &n);
	if (ret < 0 && ret != -ENODEV) {
		errno = -ret;
		return NULL;
	}
	if (ret < 0)
		n = 0;
	list = calloc((size_t)n + 1, sizeof(*list));
	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < n; i++)
		list[i] = d[i].verbs;
	if (num_devices != NULL)
		*num_devices = n;
	return list;
}

void
rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

/* Give the agents back at unload: their threads stop. */
static void __attribute__((destructor))
devs_fini(void)
{
	int i;

	for (i = 0; i < ndevs; i++)
		if (devs[i].agent != NULL) {
			cm_agent_put(devs[i].agent);
			devs[i].agent = NULL;
		}
}
