/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * ringlink:NAME,side=S: two ethdevs of one process joined by crossed
 * rte_rings (rte_eth_from_rings). The first side to attach creates the
 * rings, the last to detach frees them. rings[d][q] carries frames from
 * side d to side 1 - d on queue q.
 */

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rte_dev.h>
#include <rte_eth_ring.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "glue_priv.h"

struct ringlink {
	char name[UROCE_GLUE_RINGLINK_NAME_MAX + 1];
	uint16_t nb_queues;
	unsigned int sides;		/* bit s: side s attached */
	struct rte_ring *rings[2][UROCE_GLUE_MAX_QUEUES];
};

static struct ringlink ringlinks[UROCE_GLUE_RINGLINK_MAX];
static pthread_mutex_t ringlinks_lock = PTHREAD_MUTEX_INITIALIZER;

/* "NAME,side=S" after the prefix. */
static int
parse(const char *dev, char *name, unsigned int *side, char *err, size_t len)
{
	const char *s = dev + strlen(RINGLINK_PREFIX);
	size_t n = strcspn(s, ",");
	size_t i;

	if (n == 0 || n > UROCE_GLUE_RINGLINK_NAME_MAX) {
		snprintf(err, len, "ringlink NAME must have 1..%u characters",
			 UROCE_GLUE_RINGLINK_NAME_MAX);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (!isalnum((unsigned char)s[i]) && s[i] != '_') {
			snprintf(err, len,
				 "ringlink NAME: only letters, digits and _");
			return -EINVAL;
		}
	}
	memcpy(name, s, n);
	name[n] = '\0';
	if (strcmp(s + n, ",side=0") == 0 || strcmp(s + n, ",side=1") == 0) {
		*side = (unsigned int)(s[n + 6] - '0');
		return 0;
	}
	snprintf(err, len, "expected ringlink:NAME,side=0 or side=1");
	return -EINVAL;
}

static void
rings_free(struct ringlink *rl)
{
	unsigned int d, q;

	for (d = 0; d < 2; d++) {
		for (q = 0; q < UROCE_GLUE_MAX_QUEUES; q++) {
			rte_ring_free(rl->rings[d][q]);
			rl->rings[d][q] = NULL;
		}
	}
	memset(rl, 0, sizeof(*rl));
}

/* Single producer, single consumer: one lcore per queue (uroce_port.h). */
static int
rings_create(struct ringlink *rl, uint16_t nb_queues, char *err, size_t len)
{
	char rname[RTE_RING_NAMESIZE];
	unsigned int d, q;

	for (d = 0; d < 2; d++) {
		for (q = 0; q < nb_queues; q++) {
			snprintf(rname, sizeof(rname), "ul_%s_%u_%u", rl->name,
				 d, q);
			rl->rings[d][q] = rte_ring_create(rname,
				UROCE_GLUE_RINGLINK_SIZE, (int)rte_socket_id(),
				RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (rl->rings[d][q] == NULL) {
				snprintf(err, len, "ring %s: %s", rname,
					 rte_strerror(rte_errno));
				rings_free(rl);
				return -ENOMEM;
			}
		}
	}
	rl->nb_queues = nb_queues;
	return 0;
}

/* The link named name, or a new one (rings created), or NULL with err. */
static struct ringlink *
link_get(const char *name, uint16_t nb_queues, unsigned int side, char *err,
	 size_t len)
{
	struct ringlink *free_rl = NULL;
	unsigned int i;

	for (i = 0; i < UROCE_GLUE_RINGLINK_MAX; i++) {
		struct ringlink *rl = &ringlinks[i];

		if (rl->sides == 0) {
			if (free_rl == NULL)
				free_rl = rl;
			continue;
		}
		if (strcmp(rl->name, name) != 0)
			continue;
		if (rl->sides & (1u << side)) {
			snprintf(err, len, "ringlink %s side %u is open already",
				 name, side);
			return NULL;
		}
		if (rl->nb_queues != nb_queues) {
			snprintf(err, len,
				 "ringlink %s: side %u has %u queues, not %u",
				 name, 1 - side, rl->nb_queues, nb_queues);
			return NULL;
		}
		return rl;
	}
	if (free_rl == NULL) {
		snprintf(err, len, "more than %u ringlinks",
			 UROCE_GLUE_RINGLINK_MAX);
		return NULL;
	}
	snprintf(free_rl->name, sizeof(free_rl->name), "%s", name);
	if (rings_create(free_rl, nb_queues, err, len) != 0)
		return NULL;
	return free_rl;
}

/* 02:75:72 ("ur"), two bytes of a hash of the name, the side. */
static void
default_mac(const char *name, unsigned int side, struct rte_ether_addr *mac)
{
	uint32_t h = 2166136261u;	/* FNV-1a */
	const char *c;

	for (c = name; *c != '\0'; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	mac->addr_bytes[0] = 0x02;
	mac->addr_bytes[1] = 0x75;
	mac->addr_bytes[2] = 0x72;
	mac->addr_bytes[3] = (uint8_t)(h >> 8);
	mac->addr_bytes[4] = (uint8_t)h;
	mac->addr_bytes[5] = (uint8_t)side;
}

static int
ethdev_create(struct ringlink *rl, unsigned int side,
	      struct uroce_glue_link *link, char *err, size_t len)
{
	int pid;

	snprintf(link->name, sizeof(link->name), "net_ring_ul_%s_%u",
		 rl->name, side);
	pid = rte_eth_from_rings(link->name, rl->rings[1 - side],
				 rl->nb_queues, rl->rings[side], rl->nb_queues,
				 rte_socket_id());
	if (pid < 0) {
		snprintf(err, len, "rte_eth_from_rings(%s): %s", link->name,
			 rte_strerror(rte_errno));
		return -ENODEV;
	}
	link->port_id = (uint16_t)pid;
	return 0;
}

int
glue_ringlink_attach(const char *dev, uint16_t nb_queues,
		     struct uroce_glue_link *link, char *err, size_t err_len)
{
	char name[UROCE_GLUE_RINGLINK_NAME_MAX + 1];
	struct ringlink *rl;
	unsigned int side;
	int ret;

	ret = parse(dev, name, &side, err, err_len);
	if (ret != 0)
		return ret;
	pthread_mutex_lock(&ringlinks_lock);
	rl = link_get(name, nb_queues, side, err, err_len);
	if (rl == NULL) {
		pthread_mutex_unlock(&ringlinks_lock);
		return strstr(err, "open already") ? -EBUSY :
		       strstr(err, "ringlinks") ? -ENOSPC :
		       strstr(err, "queues") ? -EINVAL : -ENOMEM;
	}
	ret = ethdev_create(rl, side, link, err, err_len);
	if (ret == 0) {
		rl->sides |= 1u << side;
		link->priv = rl;
		link->side = side;
		link->probed = true;
		link->has_default_mac = true;
		default_mac(name, side, &link->default_mac);
	} else if (rl->sides == 0) {
		rings_free(rl);
	}
	pthread_mutex_unlock(&ringlinks_lock);
	return ret;
}

/*
 * Frames still in the rings of a closing side are freed now, while both
 * pools live: the ones it sent (its own pool, freed after detach) and the
 * ones sent to it (the peer's pool; nobody else will read them).
 */
static void
rings_drain(struct ringlink *rl)
{
	struct rte_mbuf *m;
	unsigned int d, q;

	for (d = 0; d < 2; d++) {
		for (q = 0; q < rl->nb_queues; q++) {
			while (rte_ring_dequeue(rl->rings[d][q],
						(void **)&m) == 0)
				rte_pktmbuf_free(m);
		}
	}
}

void
glue_ringlink_detach(struct uroce_glue_link *link)
{
	struct ringlink *rl = link->priv;
	struct rte_eth_dev_info info;
	struct rte_device *dev = NULL;
	int ret;

	if (rte_eth_dev_info_get(link->port_id, &info) == 0)
		dev = info.device;
	ret = rte_eth_dev_close(link->port_id);
	if (ret != 0)
		GLUE_LOG(WARNING, "%s: close: %s\n", link->name,
			 strerror(-ret));
	/* The vdev rte_eth_from_rings() made goes too: the name is free. */
	ret = dev != NULL ? rte_dev_remove(dev) : -ENODEV;
	if (ret != 0)
		GLUE_LOG(WARNING, "%s: remove: %s\n", link->name,
			 strerror(-ret));
	pthread_mutex_lock(&ringlinks_lock);
	rings_drain(rl);
	rl->sides &= ~(1u << link->side);
	if (rl->sides == 0)
		rings_free(rl);
	pthread_mutex_unlock(&ringlinks_lock);
	link->priv = NULL;
}
