/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The device list: one device per [port] of the configuration file
 * (UROCE_CONFIG, set by uroce-run -c FILE), named uroce0, uroce1, ... in
 * port order. No sysfs, no /dev: the file is the whole truth.
 *
 * Each call reads the file again, as rdma-core rescans sysfs on each call.
 * A missing or invalid file is not an error of the verb: the list is empty
 * (num_devices = 0), as with no RDMA hardware, and the loader's one-line
 * message goes to stderr so that the user learns why.
 */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "uroce_config.h"
#include "verbs_priv.h"

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_report[UROCE_CONFIG_ERR_LEN];

/*
 * Print a configuration error once per distinct message: programs that
 * poll the device list would otherwise repeat it on every scan. Plain
 * stderr, not rte_log: this is the verb's diagnostic to the user (like
 * rdma-core's "libibverbs: Warning: ..."), and EAL sends its log to stdout.
 */
static void
report_config_error(const char *msg)
{
	pthread_mutex_lock(&report_lock);
	if (strcmp(msg, last_report) != 0) {
		snprintf(last_report, sizeof(last_report), "%s", msg);
		fprintf(stderr, "%s\n", msg);
	}
	pthread_mutex_unlock(&report_lock);
}

/*
 * The node GUID, known before the port starts (ibv_get_device_guid needs
 * no open device). With a configured MAC: its modified EUI-64 (RFC 4291
 * appendix A: U/L bit inverted, ff:fe in the middle), as RoCE NICs and rxe
 * derive theirs from the netdev's MAC.
 * Without one the ethdev's MAC is not known yet: a locally administered
 * GUID 02:75 ('u') : IPv4 address : 00 : port, non-zero and distinct per
 * address and port; for an IPv6-only port the address folded to 32 bits.
 */
static __be64
node_guid_of(const struct uroce_config_port *p, unsigned int port)
{
	uint32_t a = 0;
	uint64_t g;

	if (p->has_mac) {
		const uint8_t *m = p->mac.addr_bytes;

		g = (uint64_t)(m[0] ^ 0x02) << 56 | (uint64_t)m[1] << 48 |
			(uint64_t)m[2] << 40 | (uint64_t)0xfffe << 24 |
			(uint64_t)m[3] << 16 | (uint64_t)m[4] << 8 | m[5];
		return rte_cpu_to_be_64(g);
	}
	if (p->has_ip4) {
		a = rte_be_to_cpu_32(p->ip4);
	} else {
		for (unsigned int i = 0; i < 16; i += 4)
			a ^= (uint32_t)p->ip6[0].addr[i] << 24 |
				(uint32_t)p->ip6[0].addr[i + 1] << 16 |
				(uint32_t)p->ip6[0].addr[i + 2] << 8 |
				p->ip6[0].addr[i + 3];
	}
	g = (uint64_t)0x0275 << 48 | (uint64_t)a << 16 | (port & 0xff);
	return rte_cpu_to_be_64(g);
}

static struct uroce_verbs_device *
device_new(const struct uroce_config_port *p, unsigned int port)
{
	struct uroce_verbs_device *dev = calloc(1, sizeof(*dev));
	struct ibv_device *d;

	if (dev == NULL)
		return NULL;
	d = &dev->ibdev;
	d->node_type = IBV_NODE_CA;
	d->transport_type = IBV_TRANSPORT_IB;
	/* Paths that exist nowhere: tools that read sysfs through them
	 * (ibv_read_sysfs_file) find nothing instead of another device. */
	snprintf(d->name, sizeof(d->name), "uroce%u", port);
	snprintf(d->dev_name, sizeof(d->dev_name), "uroce_uverbs%u", port);
	snprintf(d->dev_path, sizeof(d->dev_path),
		 "/sys/class/infiniband_verbs/uroce_uverbs%u", port);
	snprintf(d->ibdev_path, sizeof(d->ibdev_path),
		 "/sys/class/infiniband/uroce%u", port);
	dev->port = port;
	dev->node_guid = node_guid_of(p, port);
	dev->refcnt = 1;
	return dev;
}

void
uroce_verbs_device_get(struct uroce_verbs_device *dev)
{
	__atomic_fetch_add(&dev->refcnt, 1, __ATOMIC_RELAXED);
}

void
uroce_verbs_device_put(struct uroce_verbs_device *dev)
{
	if (__atomic_sub_fetch(&dev->refcnt, 1, __ATOMIC_ACQ_REL) == 0)
		free(dev);
}

/* The devices of a loaded configuration, in a NULL-terminated array. */
static struct ibv_device **
list_of(const struct uroce_config *cfg, int *num)
{
	struct ibv_device **list = calloc(cfg->port_cnt + 1, sizeof(*list));
	unsigned int i;

	if (list == NULL)
		return NULL;
	for (i = 0; i < cfg->port_cnt; i++) {
		struct uroce_verbs_device *dev = device_new(&cfg->port[i], i);

		if (dev == NULL) {
			ibv_free_device_list(list);
			errno = ENOMEM;
			return NULL;
		}
		list[i] = &dev->ibdev;
	}
	*num = (int)i;
	return list;
}

struct ibv_device **
ibv_get_device_list(int *num_devices)
{
	struct uroce_config cfg;
	char err[UROCE_CONFIG_ERR_LEN];
	struct ibv_device **list;
	int num = 0;

	if (uroce_config_load(uroce_config_path(), &cfg, err,
			      sizeof(err)) != 0) {
		report_config_error(err);
		list = calloc(1, sizeof(*list));
		if (list == NULL)
			errno = ENOMEM;
	} else {
		list = list_of(&cfg, &num);
		uroce_config_free(&cfg);
	}
	if (num_devices != NULL)
		*num_devices = list != NULL ? num : 0;
	return list;
}

void
ibv_free_device_list(struct ibv_device **list)
{
	if (list == NULL)
		return;
	for (struct ibv_device **d = list; *d != NULL; d++)
		uroce_verbs_device_put(uroce_verbs_device_of(*d));
	free(list);
}

const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

__be64
ibv_get_device_guid(struct ibv_device *device)
{
	return uroce_verbs_device_of(device)->node_guid;
}

/* The kernel's ibdev index in rdma-core; ours: the configuration port. */
int
ibv_get_device_index(struct ibv_device *device)
{
	return (int)uroce_verbs_device_of(device)->port;
}
