/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * A port: bring-up of the ethdev pmd_glue attached (queues, mempool, MTU,
 * MAC, start, bounded wait for the link), the rx path (linearize, classify,
 * ARP to neigh.c, RoCEv2 to the caller, the rest counted and freed) and the
 * tx path (capture, burst with retries, fault accounting).
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>
#include <rte_udp.h>

#include "net_priv.h"

RTE_LOG_REGISTER_SUFFIX(uroce_net_logtype, net, NOTICE);

#define LINK_SETTLE_STEP_MS	10
#define LINK_SETTLE_MS		1000

/* "[port] dev = X: " and the message. */
static int
open_err(char *err, size_t len, const struct uroce_config_port *pc,
	 const char *key, int ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (err == NULL || len == 0)
		return ret;
	if (strcmp(key, "dev") == 0)
		n = snprintf(err, len, "[port] dev = %s: ", pc->dev);
	else if (strcmp(key, "pcap") == 0)
		n = snprintf(err, len, "[port] pcap = %s: ", pc->pcap);
	else if (strcmp(key, "mtu") == 0)
		n = snprintf(err, len, "[port] mtu = %u (dev %s): ", pc->mtu,
			     pc->dev);
	else
		n = snprintf(err, len, "[port] %s (dev %s): ", key, pc->dev);
	if (n >= 0 && (size_t)n < len) {
		va_start(ap, fmt);
		vsnprintf(err + n, len - (size_t)n, fmt, ap);
		va_end(ap);
	}
	NET_LOG(ERR, "%s\n", err);
	return ret;
}

/* ---------------------------------------------------------------------------
 * Classification.
 */
static void
classify_ip(const uint8_t *d, uint32_t len, uint16_t et, struct net_frame *f)
{
	uint16_t off = f->l3_off;
	uint32_t l4, end;

	if (et == RTE_ETHER_TYPE_IPV4 && len >= off + sizeof(struct rte_ipv4_hdr)) {
		const struct rte_ipv4_hdr *ip = (const void *)(d + off);

		if (ip->next_proto_id != IPPROTO_UDP)
			return;
		l4 = off + rte_ipv4_hdr_len(ip);
		end = off + rte_be_to_cpu_16(ip->total_length);
	} else if (et == RTE_ETHER_TYPE_IPV6 &&
		   len >= off + sizeof(struct rte_ipv6_hdr)) {
		const struct rte_ipv6_hdr *ip = (const void *)(d + off);

		l4 = off + sizeof(*ip);
		end = l4 + rte_be_to_cpu_16(ip->payload_len);
		if (ip->proto == IPPROTO_ICMPV6 && net_ndp_is_nd(d, len, l4)) {
			f->cls = NET_CLASS_NDP;
			f->l4_off = (uint16_t)l4;
			f->l3_end = (uint16_t)RTE_MIN(end, (uint32_t)UINT16_MAX);
			return;
		}
		if (ip->proto != IPPROTO_UDP)
			return;
	} else {
		return;
	}
	if (len < l4 + sizeof(struct rte_udp_hdr))
		return;
	if (((const struct rte_udp_hdr *)(d + l4))->dst_port !=
	    RTE_BE16(UROCE_UDP_PORT))
		return;
	f->cls = NET_CLASS_ROCE;
	f->l4_off = (uint16_t)l4;
	f->l3_end = (uint16_t)RTE_MIN(end, (uint32_t)UINT16_MAX);
}

void
net_classify(const struct rte_mbuf *m, struct net_frame *f)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);
	uint16_t et;

	memset(f, 0, sizeof(*f));
	if (len < RTE_ETHER_HDR_LEN)
		return;
	et = rte_be_to_cpu_16(((const struct rte_ether_hdr *)d)->ether_type);
	f->l3_off = RTE_ETHER_HDR_LEN;
	if (et == RTE_ETHER_TYPE_VLAN) {
		const struct rte_vlan_hdr *vh = (const void *)(d + RTE_ETHER_HDR_LEN);

		if (len < RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN)
			return;
		f->vlan = true;
		f->vid = rte_be_to_cpu_16(vh->vlan_tci) & 0xfff;
		et = rte_be_to_cpu_16(vh->eth_proto);
		f->l3_off += RTE_VLAN_HLEN;
	}
	if (et == RTE_ETHER_TYPE_ARP) {
		if (len >= f->l3_off + sizeof(struct rte_arp_hdr))
			f->cls = NET_CLASS_ARP;
		return;
	}
	classify_ip(d, len, et, f);
}

/* ---------------------------------------------------------------------------
 * Bring-up.
 */

/* The largest MTU ethdev accepts: max_mtu, and max_rx_pktlen minus the
 * overhead ethdev assumes (the difference of the two when the PMD gives
 * both, else Ethernet header and CRC), as rte_eth_dev_configure checks. */
static uint32_t
max_mtu(const struct rte_eth_dev_info *info)
{
	uint32_t overhead = RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;

	if (info->max_mtu != UINT16_MAX && info->max_rx_pktlen > info->max_mtu)
		overhead = info->max_rx_pktlen - info->max_mtu;
	if (info->max_rx_pktlen <= overhead)
		return 0;
	return RTE_MIN((uint32_t)info->max_mtu, info->max_rx_pktlen - overhead);
}

/* The MTU to configure on the ethdev: the configured one when the PMD
 * allows it, 0 (the PMD's default) when frames above its limit pass. */
/*
 * A port on a kernel interface (af_xdp) sends no frame the interface
 * would not: its MTU is [port] mtu when given, else the interface's, and
 * never more than the interface's (a veth drops what exceeds its peer's
 * MTU) nor than what an AF_XDP frame holds (one page less the headroom in
 * DPDK 22.11: ~3.5 KiB, so active_mtu is 2048 at most).
 */
static void
kernel_mtu(struct uroce_port *p, uint32_t max)
{
	int kmtu = net_kernel_mtu(p->link.ifname);
	uint32_t want = p->cfg->has_mtu || kmtu <= 0 ? p->mtu : (uint32_t)kmtu;
	uint32_t cap = kmtu > 0 ? RTE_MIN(max, (uint32_t)kmtu) : max;

	if (want > cap)
		NET_LOG(WARNING, "%s: MTU %u lowered to %u (interface %s MTU "
			"%d, AF_XDP frames hold %u)\n", p->cfg->dev, want, cap,
			p->link.ifname, kmtu, max);
	p->mtu = (uint16_t)RTE_MIN(want, cap);
}

static int
pick_mtu(struct uroce_port *p, const struct rte_eth_dev_info *info,
	 uint16_t *dev_mtu, char *err, size_t len)
{
	uint32_t max = max_mtu(info);

	if (p->link.kind == UROCE_GLUE_AF_XDP)
		kernel_mtu(p, max);
	if (p->mtu >= info->min_mtu && p->mtu <= max) {
		*dev_mtu = p->mtu;
		return 0;
	}
	if (p->link.big_frames) {
		NET_LOG(DEBUG, "%s: the PMD reports MTU %u..%u; keeping MTU %u "
			"without setting it (larger frames pass on %s links)\n",
			p->cfg->dev, info->min_mtu, max, p->mtu,
			uroce_glue_kind_name(p->link.kind));
		*dev_mtu = 0;
		return 0;
	}
	return open_err(err, len, p->cfg, "mtu", -EINVAL,
			"the device allows %u..%u%s", info->min_mtu, max,
			p->link.kind == UROCE_GLUE_AF_PACKET ?
			" (af_packet: raise framesz=)" : "");
}

static int
pool_create(struct uroce_port *p, char *err, size_t len)
{
	static uint32_t pool_seq;
	char name[RTE_MEMPOOL_NAMESIZE];
	uint32_t room = RTE_MAX((uint32_t)NET_DATAROOM_MIN,
				(uint32_t)p->mtu + NET_FRAME_SLACK);
	/* The exception interface's queues take their buffers here too. */
	uint32_t n = (p->nb_hw_queues + (p->exc_on ? p->nb_queues : 0)) *
		     (NET_RX_DESC + NET_TX_DESC + 2 * NET_POOL_CACHE) + 2048;

	/* net_af_xdp puts 2048 of our buffers in each queue's fill ring. */
	if (p->link.kind == UROCE_GLUE_AF_XDP)
		n += p->nb_queues * NET_XDP_FILL;

	/* Unique: a pool whose frames are still out (a ringlink peer holds
	 * them) is left behind at close rather than freed under them. */
	snprintf(name, sizeof(name), "uroce_mb%u",
		 __atomic_fetch_add(&pool_seq, 1, __ATOMIC_RELAXED));
	p->pool = rte_pktmbuf_pool_create(name, rte_align32pow2(n) - 1,
					  NET_POOL_CACHE, 0,
					  (uint16_t)(room + RTE_PKTMBUF_HEADROOM),
					  (int)rte_socket_id());
	if (p->pool == NULL)
		return open_err(err, len, p->cfg, "dev", -ENOMEM,
				"mempool of %u frames: %s", n,
				rte_strerror(rte_errno));
	return 0;
}

static int
queues_setup(struct uroce_port *p, const struct rte_eth_dev_info *info,
	     uint16_t dev_mtu, char *err, size_t len)
{
	struct rte_eth_conf conf = { .rxmode = { .mtu = dev_mtu } };
	uint16_t q;
	int ret;

	/* Chained frames (headers and payload apart, zero-copy) need a PMD
	 * that says it sends them; vdevs do without saying. */
	if (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	else if (p->link.kind == UROCE_GLUE_PCI)
		NET_LOG(NOTICE, "%s: the NIC sends no multi-segment frames\n",
			p->cfg->dev);
	/* The IPv4 header checksum by the PMD. Not with a capture: it copies
	 * the frames before the PMD fills the field in. */
	p->tx_ip_cksum = (info->tx_offload_capa &
			  RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) &&
			 !p->cfg->csum_offload_off && p->cfg->pcap[0] == '\0';
	if (p->tx_ip_cksum)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;

	ret = rte_eth_dev_configure(p->port_id, p->nb_hw_queues,
				    p->nb_hw_queues, &conf);
	if (ret != 0)
		return open_err(err, len, p->cfg, "dev", ret,
				"configure %u queue pairs: %s", p->nb_hw_queues,
				strerror(-ret));
	ret = net_queue_pairs(p->port_id, p->nb_hw_queues, p->pool, &q);
	if (ret != 0)
		return open_err(err, len, p->cfg, "dev", ret,
				"queue %u setup: %s%s%s%s", q,
				strerror(-ret), p->link.ifname[0] ?
				" (interface " : "", p->link.ifname,
				p->link.kind == UROCE_GLUE_AF_XDP ?
				": the XDP program or the AF_XDP "
				"socket could not be attached; the "
				"libbpf and af_xdp lines above say why)" :
				p->link.ifname[0] ? ")" : "");
	return 0;
}

int
net_queue_pairs(uint16_t port_id, uint16_t n, struct rte_mempool *pool,
		uint16_t *bad)
{
	int socket = rte_eth_dev_socket_id(port_id);
	uint16_t q;
	int ret = 0;

	for (q = 0; ret == 0 && q < n; q++) {
		*bad = q;
		ret = rte_eth_rx_queue_setup(port_id, q, NET_RX_DESC, socket,
					     NULL, pool);
		if (ret == 0)
			ret = rte_eth_tx_queue_setup(port_id, q, NET_TX_DESC,
						     socket, NULL);
	}
	return ret;
}

/* cfg mac, else the link's default (ringlink), else the ethdev's own. */
static int
mac_setup(struct uroce_port *p, char *err, size_t len)
{
	const struct rte_ether_addr *want = NULL;
	int ret;

	if (p->cfg->has_mac)
		want = &p->cfg->mac;
	else if (p->link.has_default_mac)
		want = &p->link.default_mac;
	if (want == NULL)
		return rte_eth_macaddr_get(p->port_id, &p->mac);
	p->mac = *want;
	ret = rte_eth_dev_default_mac_addr_set(p->port_id, &p->mac);
	if (ret == 0)
		return 0;
	if (p->link.soft_mac) {
		NET_LOG(DEBUG, "%s: the PMD keeps its MAC (%s); this link does "
			"not filter on it, using ours in software\n",
			p->cfg->dev, strerror(-ret));
		return 0;
	}
	if (ret != -ENOTSUP)
		return open_err(err, len, p->cfg, "mac", ret,
				"the device refuses the MAC: %s",
				strerror(-ret));
	NET_LOG(NOTICE, "%s: the device cannot change its MAC: promiscuous "
		"mode on to receive frames for ours\n", p->cfg->dev);
	return 1;
}

/* Whether the link is up, after waiting up to 1 s for a link that does
 * not depend on a peer (the engine waits longer: [port] link_wait). */
static bool
link_settle(struct uroce_port *p)
{
	unsigned int ms;

	for (ms = 0; !uroce_port_link_up(p); ms += LINK_SETTLE_STEP_MS) {
		if (p->link.peer_link || ms >= LINK_SETTLE_MS)
			return false;
		rte_delay_ms(LINK_SETTLE_STEP_MS);
	}
	return true;
}

/*
 * rte_eth_dev_start() of a memif client tries to connect to its server's
 * socket once, and fails (-EPERM, with an error line from the PMD) when
 * the server does not listen yet; it does not try again by itself. The
 * port then opens with its link down and uroce_port_link_poll() tries
 * again, with the PMD's log quieted, until the server is there. A start
 * that connected can still lose its control channel: a server listens
 * from its probe on but refuses a client until its own port starts, and a
 * server may leave; the PMD then gives the connection up for good
 * (pmd_glue/memif.c), and uroce_port_link_poll() stops the port and
 * starts it again, as a NIC's link comes back when its peer does.
 */
static bool
memif_client(const struct uroce_port *p)
{
	return p->link.kind == UROCE_GLUE_MEMIF && !p->link.memif_server;
}

static int
start_quiet(struct uroce_port *p)
{
	int lt = rte_log_register("pmd.net.memif");
	int old = lt >= 0 ? rte_log_get_level((uint32_t)lt) : -1;
	int ret;

	if (old > (int)RTE_LOG_CRIT)
		rte_log_set_level((uint32_t)lt, RTE_LOG_CRIT);
	ret = uroce_glue_memif_start(&p->link);
	if (old > (int)RTE_LOG_CRIT)
		rte_log_set_level((uint32_t)lt, (uint32_t)old);
	return ret;
}

static int
ethdev_start(struct uroce_port *p, char *err, size_t len)
{
	struct rte_eth_dev_info info;
	uint16_t dev_mtu = 0;
	int ret, promisc;

	ret = rte_eth_dev_info_get(p->port_id, &info);
	if (ret != 0)
		return open_err(err, len, p->cfg, "dev", ret, "dev info: %s",
				strerror(-ret));
	if (info.max_rx_queues < p->nb_hw_queues ||
	    info.max_tx_queues < p->nb_hw_queues)
		return open_err(err, len, p->cfg, "dev", -EINVAL,
				"%u queue pairs wanted, the device has %u%s",
				p->nb_hw_queues, RTE_MIN(info.max_rx_queues,
						      info.max_tx_queues),
				p->link.kind == UROCE_GLUE_AF_PACKET ?
				" (af_packet: add qpairs=N)" : "");
	ret = pick_mtu(p, &info, &dev_mtu, err, len);
	if (ret == 0)
		ret = pool_create(p, err, len);
	if (ret == 0)
		ret = queues_setup(p, &info, dev_mtu, err, len);
	if (ret != 0)
		return ret;
	promisc = mac_setup(p, err, len);
	if (promisc < 0)
		return promisc;
	if (promisc)
		ret = rte_eth_promiscuous_enable(p->port_id);
	else
		ret = rte_eth_promiscuous_disable(p->port_id);
	if (ret != 0 && ret != -ENOTSUP)
		NET_LOG(DEBUG, "%s: promiscuous %s: %s\n", p->cfg->dev,
			promisc ? "on" : "off", strerror(-ret));
	/* IPv6 neighbour solicitations go to solicited-node multicast MACs
	 * (RFC 4861 7.2.2); a NIC without this filter setting passes them. */
	ret = rte_eth_allmulticast_enable(p->port_id);
	if (ret != 0 && ret != -ENOTSUP)
		NET_LOG(DEBUG, "%s: all-multicast on: %s\n", p->cfg->dev,
			strerror(-ret));
	ret = memif_client(p) ? start_quiet(p) : rte_eth_dev_start(p->port_id);
	if (ret != 0 && memif_client(p)) {
		NET_LOG(INFO, "%s: the memif server is not listening yet: "
			"link down until it is\n", p->cfg->dev);
		p->start_later = true;
		return 0;
	}
	if (ret != 0)
		return open_err(err, len, p->cfg, "dev", ret, "start: %s",
				strerror(-ret));
	p->started = true;
	return 0;
}

/*
 * The GID table, as RoCE NICs fill theirs from the netdev's addresses: the
 * IPv4-mapped GID of [port] ip at 0, then [port] ip6 in order, then the
 * link-local address every IPv6 interface has (RFC 4291 2.5.6, interface
 * id the modified EUI-64 of the MAC, RFC 4291 appendix A), unless ip6
 * names it already: IPv6 works with no IPv6 configured. After mac_setup.
 */
static void
gids_init(struct uroce_port *p)
{
	union uroce_gid ll = { .raw = { 0xfe, 0x80 } };
	const uint8_t *m = p->mac.addr_bytes;
	unsigned int i;

	p->gid_cnt = 0;
	if (p->has_ip4)
		uroce_gid_from_v4(&p->gid[p->gid_cnt++], p->ip4);
	for (i = 0; i < p->ip6_cnt; i++)
		memcpy(p->gid[p->gid_cnt++].raw, p->ip6[i], 16);
	ll.raw[8] = m[0] ^ 0x02;	/* the universal/local bit inverted */
	ll.raw[9] = m[1];
	ll.raw[10] = m[2];
	ll.raw[11] = 0xff;
	ll.raw[12] = 0xfe;
	memcpy(&ll.raw[13], &m[3], 3);
	if (!net_is_own_gid(p, &ll))
		p->gid[p->gid_cnt++] = ll;
}

static int
port_alloc(const struct uroce_config *cfg, unsigned int idx,
	   uint16_t nb_queues, struct uroce_port **out)
{
	const struct uroce_config_port *pc = &cfg->port[idx];
	struct uroce_port *p;

	p = rte_zmalloc("uroce_port", sizeof(*p), RTE_CACHE_LINE_SIZE);
	if (p == NULL)
		return -ENOMEM;
	p->q = rte_zmalloc("uroce_port_q", sizeof(*p->q) * nb_queues,
			   RTE_CACHE_LINE_SIZE);
	if (p->q == NULL) {
		rte_free(p);
		return -ENOMEM;
	}
	p->idx = idx;
	p->cfg = pc;
	p->nb_queues = nb_queues;
	p->nb_hw_queues = nb_queues;
	p->mtu = pc->mtu;
	p->has_vlan = pc->has_vlan;
	p->vlan = pc->vlan;
	p->has_ip4 = pc->has_ip4;
	p->ip4 = pc->ip4;
	p->ip6_cnt = pc->ip6_cnt;
	for (unsigned int i = 0; i < pc->ip6_cnt; i++)
		memcpy(p->ip6[i], pc->ip6[i].addr, 16);
	p->port_id = RTE_MAX_ETHPORTS;
	*out = p;
	return 0;
}

/*
 * Whether a frame may point into application memory (zero-copy transmit,
 * lib/transport/zcopy.c rule 1): only where tx_burst is done with the
 * bytes when it returns. DPDK 22.11: memif in copy mode copies each
 * segment into its ring (with zero-copy=yes it hands over the mbuf and
 * needs memif's own pool); af_packet copies the chain into its mmap ring;
 * tap writev()s the segments. net_ring and ringlinks pass the mbuf itself
 * to the peer, which reads it later; a NIC reads at DMA time and needs
 * IOVA-mapped buffers; other vdevs are unknown: all copy.
 */
static bool
tx_extbuf_safe(const struct uroce_port *p)
{
	switch (p->link.kind) {
	case UROCE_GLUE_MEMIF:
		return strstr(p->cfg->dev, "zero-copy=yes") == NULL;
	case UROCE_GLUE_AF_PACKET:
	case UROCE_GLUE_TAP:
		return true;
	default:
		return false;
	}
}

/* The kernel interface's own addresses when the config gives none. */
static int
kernel_addrs(struct uroce_port *p, char *err, size_t len)
{
	struct net_kernel_addrs ka;
	unsigned int i;
	int ret;

	if (p->link.ifindex == 0)
		return open_err(err, len, p->cfg, "ip", -EINVAL,
				"no ip or ip6, and no kernel interface to "
				"take them from");
	ret = net_kernel_addrs(p->link.ifindex, &ka);
	if (ret != 0)
		return open_err(err, len, p->cfg, "dev", ret,
				"the addresses of interface %s: %s",
				p->link.ifname, strerror(-ret));
	if (!ka.has_ip4 && ka.ip6_cnt == 0)
		return open_err(err, len, p->cfg, "dev", -EADDRNOTAVAIL,
				"interface %s has no IP address (give [port] "
				"ip or ip6, or add one to it)", p->link.ifname);
	p->has_ip4 = ka.has_ip4;
	p->ip4 = ka.ip4;
	p->ip6_cnt = (uint8_t)ka.ip6_cnt;
	for (i = 0; i < ka.ip6_cnt; i++)
		memcpy(p->ip6[i], ka.ip6[i], 16);
	gids_init(p);
	NET_LOG(INFO, "uroce%u: %u addresses of interface %s from the "
		"kernel\n", p->idx, p->gid_cnt, p->link.ifname);
	return 0;
}

/*
 * A port sharing its interface with the kernel: addresses from the
 * kernel when the config has none, and neighbours from the kernel's table
 * with [port] neigh = kernel (the default on af_xdp, where ARP replies go
 * to the kernel).
 */
static int
kernel_setup(struct uroce_port *p, char *err, size_t len)
{
	uint8_t src = p->cfg->neigh;
	int ret;

	if (!p->has_ip4 && p->ip6_cnt == 0) {
		ret = kernel_addrs(p, err, len);
		if (ret != 0)
			return ret;
	}
	if (src == UROCE_CONFIG_NEIGH_DEFAULT)
		src = p->link.kind == UROCE_GLUE_AF_XDP ?
		      UROCE_CONFIG_NEIGH_KERNEL : UROCE_CONFIG_NEIGH_OWN;
	if (src != UROCE_CONFIG_NEIGH_KERNEL)
		return 0;
	if (p->link.ifindex == 0)
		return open_err(err, len, p->cfg, "neigh", -EINVAL,
				"neigh = kernel needs a kernel interface "
				"(af_xdp:IFACE, or iface= in dev)");
	ret = net_kneigh_start(p);
	if (ret != 0)
		return open_err(err, len, p->cfg, "neigh", ret,
				"neighbour thread: %s", strerror(-ret));
	return 0;
}

/* af_xdp: our XDP program takes RoCEv2 to the port's addresses. */
static int
xdp_claim(struct uroce_port *p, char *err, size_t len)
{
	uint8_t addr[RTE_DIM(p->gid)][16];
	unsigned int i;
	char why[256];
	int ret;

	for (i = 0; i < p->gid_cnt; i++)
		memcpy(addr[i], p->gid[i].raw, 16);
	ret = uroce_glue_xdp_claim(&p->link, (const uint8_t (*)[16])addr,
				   p->gid_cnt, why, sizeof(why));
	if (ret != 0)
		return open_err(err, len, p->cfg, "dev", ret, "%s", why);
	return 0;
}

/* A device without a queue for the default rule (af_packet without
 * qpairs=) gets no rules: software dispatch (exc_start says why). */
static void
exc_queue_check(struct uroce_port *p)
{
	struct rte_eth_dev_info info;

	if (p->nb_hw_queues == p->nb_queues ||
	    (rte_eth_dev_info_get(p->port_id, &info) == 0 &&
	     info.max_rx_queues >= p->nb_hw_queues &&
	     info.max_tx_queues >= p->nb_hw_queues))
		return;
	p->nb_hw_queues = p->nb_queues;
}

static const char *const steer_names[] = {
	[UROCE_STEER_AUTO] = "auto",
	[UROCE_STEER_FLOW] = "flow",
	[UROCE_STEER_SOFT] = "soft",
};

/* The exception interface, then the rte_flow rules unless steer = soft;
 * rules refused: software dispatch (auto), or an error (flow). */
static int
exc_start(struct uroce_port *p, const char *dev, char *err, size_t len)
{
	char why[256];
	int ret;

	ret = net_exc_open(p, dev, err, len);
	if (ret != 0) {
		NET_LOG(ERR, "%s\n", err);
		return ret;
	}
	if (p->cfg->steer == UROCE_STEER_SOFT) {
		NET_LOG(INFO, "%s: steer = soft: software dispatch\n",
			p->cfg->dev);
		return 0;
	}
	if (p->nb_hw_queues == p->nb_queues) {
		snprintf(why, sizeof(why), "no rx queue left for the kernel's "
			 "frames");
		ret = -ENOTSUP;
	} else {
		ret = net_steer_start(p, why, sizeof(why));
	}
	if (ret == 0) {
		NET_LOG(INFO, "%s: rte_flow steering: %u rules\n", p->cfg->dev,
			p->nb_flows);
		return 0;
	}
	if (p->cfg->steer == UROCE_STEER_FLOW)
		return open_err(err, len, p->cfg, "steer", ret,
				"steer = %s: the device takes no rte_flow "
				"rules (%s)", steer_names[p->cfg->steer], why);
	NET_LOG(NOTICE, "%s: no rte_flow steering (%s): software dispatch, "
		"every frame through the stack's queues\n", p->cfg->dev, why);
	return 0;
}

int
uroce_port_open(const struct uroce_config *cfg, unsigned int idx,
		uint16_t nb_queues, struct uroce_port **out, char *err,
		size_t err_len)
{
	char why[256], exc_buf[64];
	struct uroce_port *p;
	const char *exc_dev;
	int ret;

	if (cfg == NULL || out == NULL || idx >= cfg->port_cnt ||
	    nb_queues == 0 || nb_queues > UROCE_GLUE_MAX_QUEUES) {
		if (err != NULL && err_len > 0)
			snprintf(err, err_len, "uroce_port_open: bad arguments");
		return -EINVAL;
	}
	ret = port_alloc(cfg, idx, nb_queues, &p);
	if (ret != 0)
		return open_err(err, err_len, &cfg->port[idx], "dev", ret,
				"out of memory");
	exc_dev = net_exc_dev(p, exc_buf, sizeof(exc_buf));
	p->exc_on = exc_dev[0] != '\0';
	if (p->exc_on && p->cfg->steer != UROCE_STEER_SOFT) {
		/* One queue pair more: the default rule's, to the kernel. */
		p->exc_q = nb_queues;
		p->nb_hw_queues = nb_queues + 1;
	}
	ret = uroce_glue_attach(p->cfg->dev, p->nb_hw_queues, &p->link, why,
				sizeof(why));
	if (ret != 0) {
		open_err(err, err_len, p->cfg, "dev", ret, "%s", why);
		goto fail;
	}
	p->port_id = p->link.port_id;
	net_link_watch_start(p);
	p->memif_guard = p->link.kind == UROCE_GLUE_MEMIF &&
			 net_memif_guard_install();
	exc_queue_check(p);
	p->tx_extbuf = !p->cfg->zero_copy_off && tx_extbuf_safe(p);
	ret = net_neigh_init(p, cfg);
	if (ret != 0) {
		open_err(err, err_len, p->cfg, "dev", ret, "neighbour table");
		goto fail;
	}
	ret = kernel_setup(p, err, err_len);
	if (ret == 0)
		ret = ethdev_start(p, err, err_len);
	if (ret == 0)
		gids_init(p);	/* the link-local GID needs the MAC */
	if (ret == 0)
		ret = xdp_claim(p, err, err_len);
	if (ret == 0 && exc_dev[0] != '\0')
		ret = exc_start(p, exc_dev, err, err_len);
	if (ret == 0 && p->cfg->pcap[0] != '\0')
		ret = net_pcap_open(p, p->cfg->pcap, err, err_len);
	if (ret == 0 && p->cfg->has_fault)
		ret = net_fault_start(p, &p->cfg->fault, err, err_len);
	if (ret != 0)
		goto fail;
	/* A gratuitous ARP where it can reach someone. */
	if (link_settle(p))
		net_arp_announce(p);
	NET_LOG(INFO, "uroce%u: %s (%s, ethdev %u), %u queue pairs, MTU %u\n",
		idx, p->cfg->dev, uroce_glue_kind_name(p->link.kind),
		p->port_id, nb_queues, p->mtu);
	*out = p;
	return 0;
fail:
	uroce_port_close(p);
	return ret;
}

/* A pool with frames still out (held by a ringlink peer) stays. */
static void
pool_release(struct rte_mempool *mp)
{
	unsigned int used;

	if (mp == NULL)
		return;
	used = rte_mempool_in_use_count(mp);
	if (used == 0) {
		rte_mempool_free(mp);
		return;
	}
	NET_LOG(DEBUG, "mempool %s: %u frames still out; not freed\n",
		mp->name, used);
}

/* Frames still waiting when the port closes: nobody will send them. */
static void
wait_free(struct uroce_port *p)
{
	uint16_t q;

	for (q = 0; q < p->nb_queues; q++) {
		rte_pktmbuf_free_bulk(p->q[q].wait, p->q[q].nb_wait);
		p->q[q].nb_wait = 0;
		p->q[q].dropping = false;
	}
}

void
uroce_port_close(struct uroce_port *p)
{
	int ret;

	if (p == NULL)
		return;
	if (p->started) {
		uroce_glue_before_stop(&p->link);
		ret = rte_eth_dev_stop(p->port_id);
		if (ret != 0)
			NET_LOG(WARNING, "%s: stop: %s\n", p->cfg->dev,
				strerror(-ret));
	}
	net_steer_stop(p);
	net_exc_close(p);
	net_link_watch_stop(p);
	wait_free(p);
	net_fault_stop(p);
	net_pcap_close(p);
	if (p->port_id != RTE_MAX_ETHPORTS)
		uroce_glue_detach(&p->link);
	pool_release(p->pool);
	net_kneigh_stop(p);
	net_neigh_free(p);
	rte_free(p->q);
	rte_free(p);
}

/* ---------------------------------------------------------------------------
 * Accessors.
 */
uint16_t
uroce_port_id(const struct uroce_port *p)
{
	return p->port_id;
}

const struct rte_ether_addr *
uroce_port_mac(const struct uroce_port *p)
{
	return &p->mac;
}

uint16_t
uroce_port_mtu(const struct uroce_port *p)
{
	return p->mtu;
}

struct rte_mempool *
uroce_port_pool(const struct uroce_port *p)
{
	return p->pool;
}

bool
uroce_port_vlan(const struct uroce_port *p, uint16_t *vid)
{
	if (p->has_vlan && vid != NULL)
		*vid = p->vlan;
	return p->has_vlan;
}

bool
uroce_port_tx_extbuf(const struct uroce_port *p)
{
	return p->tx_extbuf;
}

bool
uroce_port_tx_ip_cksum(const struct uroce_port *p)
{
	return p->tx_ip_cksum;
}

/*
 * A memif client whose control channel closed: out of the lcores' way
 * (port_live() false, then quiesce: no burst on the ethdev is under way),
 * stopped, and started again by the caller as one whose server was not
 * listening. The PMD's interrupt thread is done with the port already.
 */
static void
client_stop(struct uroce_port *p, void (*quiesce)(void *), void *arg)
{
	int ret;

	__atomic_store_n(&p->started, false, __ATOMIC_RELEASE);
	quiesce(arg);
	ret = rte_eth_dev_stop(p->port_id);
	if (ret != 0)
		NET_LOG(WARNING, "%s: stop: %s\n", p->cfg->dev, strerror(-ret));
	p->start_later = true;
	NET_LOG(INFO, "%s: the memif server closed the connection: "
		"connecting again\n", p->cfg->dev);
}

/*
 * Another try at starting a memif client. -EPERM is what the PMD gives
 * for a server that does not listen (yet): the next poll tries again.
 * Anything else is a port that cannot run any more (-ENODEV: the ethdev
 * is no longer there, -EIO: it was removed, a setup the PMD now refuses):
 * gone for good, which the engine reports as IBV_EVENT_DEVICE_FATAL.
 */
static void
start_again(struct uroce_port *p)
{
	int ret = start_quiet(p);

	if (ret == 0) {
		p->start_later = false;
		__atomic_store_n(&p->started, true, __ATOMIC_RELEASE);
		NET_LOG(INFO, "%s: the memif server listens: connecting\n",
			p->cfg->dev);
	} else if (ret != -EPERM) {
		p->start_later = false;
		__atomic_store_n(&p->gone, true, __ATOMIC_RELEASE);
		NET_LOG(ERR, "%s: start failed for good: %s\n", p->cfg->dev,
			strerror(-ret));
	}
}

bool
uroce_port_link_poll(struct uroce_port *p, void (*quiesce)(void *),
		     void *arg)
{
	if (p->started && memif_client(p) && !uroce_port_link_up(p) &&
	    uroce_glue_memif_dropped(&p->link))
		client_stop(p, quiesce, arg);
	if (p->start_later && !uroce_port_gone(p))
		start_again(p);
	return uroce_port_link_up(p);
}

void
uroce_port_announce(struct uroce_port *p)
{
	net_arp_announce(p);
}

unsigned int
uroce_port_gids(const struct uroce_port *p, union uroce_gid *gid,
		unsigned int max)
{
	unsigned int n = RTE_MIN(max, p->gid_cnt);

	if (n > 0)
		memcpy(gid, p->gid, n * sizeof(*gid));
	return n;
}

/* ---------------------------------------------------------------------------
 * Rx and tx.
 */

/* The frame in one segment, or NULL (freed, counted). */
static struct rte_mbuf *
linearize(struct uroce_port *p, struct rte_mbuf *m, struct net_queue *nq)
{
	struct rte_mbuf *c;
	uint32_t len = rte_pktmbuf_pkt_len(m);

	if (m->nb_segs == 1 || rte_pktmbuf_linearize(m) == 0)
		return m;
	c = rte_pktmbuf_alloc(p->pool);
	if (c != NULL && rte_pktmbuf_tailroom(c) >= len) {
		rte_pktmbuf_read(m, 0, len, rte_pktmbuf_append(c, len));
		c->port = m->port;
		rte_pktmbuf_free(m);
		return c;
	}
	rte_pktmbuf_free(c);
	rte_pktmbuf_free(m);
	net_ctr_add(&nq->st.rx_err, 1);
	return NULL;
}

/* A tag the PMD took off (a NIC's VLAN strip; af_packet, where the kernel
 * untags before the socket sees the frame, puts it back itself unless
 * asked to strip): put back, so that every frame is classified the same. */
static bool
vlan_stripped(const struct rte_mbuf *m)
{
	return (m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED) != 0;
}

/*
 * Whether a RoCEv2 frame's destination IP is one of the port's GIDs. The
 * link may carry RoCEv2 of others: several processes sharing one link
 * (af_packet sockets on one veth, each with its own address), or the
 * kernel's own RoCE (rxe) for its addresses on the same NIC; frames for
 * them must not reach our QPs, which would match them by QPN alone. A
 * port without an address takes everything.
 */
static bool
roce_ours(const struct uroce_port *p, const struct rte_mbuf *m,
	  const struct net_frame *f)
{
	const uint8_t *ip = rte_pktmbuf_mtod_offset(m, const uint8_t *,
						    f->l3_off);
	union uroce_gid dst;

	if (p->gid_cnt == 0)
		return true;
	if ((ip[0] >> 4) == 4)
		uroce_gid_from_v4(&dst, ((const struct rte_ipv4_hdr *)ip)->dst_addr);
	else
		memcpy(dst.raw, ((const struct rte_ipv6_hdr *)ip)->dst_addr, 16);
	return net_is_own_gid(p, &dst);
}

static bool
vlan_ok(const struct uroce_port *p, const struct net_frame *f)
{
	return p->has_vlan ? f->vlan && f->vid == p->vlan : !f->vlan;
}

/*
 * Whether the ethdev runs: a memif client waiting for its server is not
 * started yet (start_later), and DPDK 22.11's bursts on a port that is
 * not started log an error and a stack dump, and pass nothing. The link
 * watch starts it (release) while the lcores poll (acquire).
 */
static inline bool
port_live(const struct uroce_port *p)
{
	return __atomic_load_n(&p->started, __ATOMIC_ACQUIRE);
}

/* A burst on a memif port is inside the unmap guard (memif_guard.c). */
static inline uint16_t
eth_tx(struct uroce_port *p, uint16_t q, struct rte_mbuf **m, uint16_t n)
{
	return likely(port_live(p)) ? net_burst(p, q, m, n, true) : 0;
}

uint16_t
uroce_port_rx(struct uroce_port *p, uint16_t q, struct rte_mbuf **pkts,
	      uint16_t n)
{
	struct net_queue *nq = &p->q[q];
	struct net_frame f;
	uint16_t i, nb, out = 0;
	uint64_t bytes = 0;

	if (unlikely(!port_live(p)))
		return 0;
	if (p->exc != NULL && q == 0)
		net_exc_poll(p);
	nb = net_burst(p, q, pkts, RTE_MIN(n, (uint16_t)NET_FAULT_BURST_MAX),
		       false);
	for (i = 0; i < nb; i++) {
		struct rte_mbuf *m = linearize(p, pkts[i], nq);

		if (m == NULL)
			continue;
		if (vlan_stripped(m) && rte_vlan_insert(&m) != 0) {
			net_ctr_add(&nq->st.rx_err, 1);
			rte_pktmbuf_free(m);
			continue;
		}
		net_classify(m, &f);
		/* RoCEv2 to an address of ours (several processes, or the kernel's
		 * own RoCE, may share the link); the rest is not the stack's. */
		if (f.cls == NET_CLASS_ROCE && vlan_ok(p, &f) &&
		    (p->steer_flow || roce_ours(p, m, &f))) {
			bytes += rte_pktmbuf_pkt_len(m);
			pkts[out++] = m;
		} else if ((f.cls == NET_CLASS_ARP || f.cls == NET_CLASS_NDP) &&
			   vlan_ok(p, &f)) {
			/* Both the kernel and we may own addresses here. */
			if (p->exc != NULL)
				net_exc_copy(p, q, m);
			if (f.cls == NET_CLASS_ARP)
				net_arp_input(p, q, m, &f);
			else
				net_ndp_input(p, q, m, &f);
		} else if (p->raw_fn != NULL && p->raw_fn(p->raw_arg, q, m)) {
			continue;
		} else if (p->exc != NULL) {
			net_exc_to_kernel(p, q, m);
		} else {
			if (f.cls == NET_CLASS_ROCE && vlan_ok(p, &f))
				net_ctr_add(&nq->st.not_ours, 1);
			else
				net_ctr_add(&nq->st.non_roce, 1);
			rte_pktmbuf_free(m);
		}
	}
	if (out == 0)
		return 0;
	net_ctr_add(&nq->st.rx_pkts, out);
	net_ctr_add(&nq->st.rx_bytes, bytes);
	if (p->pcap != NULL)
		net_pcap_capture(p, q, pkts, out, RTE_PCAPNG_DIRECTION_IN);
	return out;
}

void
uroce_port_set_raw(struct uroce_port *p, uroce_port_raw_fn fn, void *arg)
{
	p->raw_arg = arg;
	p->raw_fn = fn;
}

/*
 * Back-pressure. A NIC's send queue never drops what its driver gave it:
 * it stalls. So the frames an ethdev queue does not take now wait, in
 * order, in the port queue's wait list and go before anything newer;
 * uroce_port_tx_busy() tells the engine to stop building frames meanwhile.
 * Only what does not fit in the list is freed (tx_full). The frames in the
 * list have been through the fault injector already (retries bypass it),
 * except those queued behind a stalled queue, which skip it. A queue that
 * takes nothing for NET_TX_STUCK_MS is stuck (wait_stuck()).
 *
 * A waiting frame must not point into application memory: a zero-copy
 * chain is done with when the engine pass that built it ends (the rule of
 * lib/transport/zcopy.c, on which ibv_dereg_mr relies), so it waits as a
 * copy in pool mbufs.
 */
static bool
has_extbuf(const struct rte_mbuf *m)
{
	for (; m != NULL; m = m->next)
		if (RTE_MBUF_HAS_EXTBUF(m))
			return true;
	return false;
}

/* Queue m behind the waiting frames; false: freed (full, stuck, or no
 * copy). */
static bool
wait_put(struct uroce_port *p, struct net_queue *nq, struct rte_mbuf *m)
{
	struct rte_mbuf *c;

	if (nq->nb_wait == NET_TX_HOLD || nq->dropping) {
		rte_pktmbuf_free(m);
		return false;
	}
	if (has_extbuf(m)) {
		c = rte_pktmbuf_copy(m, p->pool, 0, UINT32_MAX);
		rte_pktmbuf_free(m);
		if (c == NULL)
			return false;
		m = c;
	}
	nq->wait[nq->nb_wait++] = m;
	return true;
}

/*
 * The ethdev took nothing. A queue that stays full for NET_TX_STUCK_MS (a
 * memif peer that died or froze, a link that went away) is stuck, as a
 * NIC's transmit watchdog would find it: what waits is dropped, and so is
 * what the ethdev refuses from then on, until it takes a frame again
 * (tx_chunk()). The queue is never busy meanwhile, so every QP's frames
 * leave into the void as on a link that is down: the QPs run their timers
 * and fail with RETRY_EXC_ERR rather than wait for ever. Dropping only
 * what waited, every NET_TX_STUCK_MS, let a QP's batch or two in each
 * time, and the QPs that had sent nothing yet (their timer starts with
 * their first packet) or had no ACK owed (their expiries spend no retry
 * until their next packet leaves: lib/transport/requester.c, timeout())
 * waited for such a turn each: behind a frozen memif peer, QPs failed
 * about 20 a second.
 */
static void
wait_stuck(struct uroce_port *p, struct net_queue *nq)
{
	uint64_t now = rte_get_tsc_cycles();

	if (nq->stuck_since == 0) {
		nq->stuck_since = now;
		return;
	}
	if (now - nq->stuck_since < rte_get_tsc_hz() / 1000 * NET_TX_STUCK_MS)
		return;
	NET_LOG(WARNING, "%s: tx queue %u took no frame for %u ms: %u frames "
		"dropped, and what it refuses until it takes one\n", p->cfg->dev,
		(unsigned int)(nq - p->q), NET_TX_STUCK_MS, nq->nb_wait);
	net_ctr_add(&nq->st.tx_full, nq->nb_wait);
	net_ctr_add(&nq->st.tx_stuck, 1);
	rte_pktmbuf_free_bulk(nq->wait, nq->nb_wait);
	nq->nb_wait = 0;
	nq->stuck_since = 0;
	nq->dropping = true;
}

/* The ethdev took a frame: a stuck queue is not any more. */
static inline void
tx_took(struct uroce_port *p, struct net_queue *nq)
{
	if (likely(!nq->dropping))
		return;
	nq->dropping = false;
	NET_LOG(NOTICE, "%s: tx queue %u takes frames again\n", p->cfg->dev,
		(unsigned int)(nq - p->q));
}

/* Queue n frames; @return how many were freed, their bytes in *lost_bytes. */
static uint16_t
wait_put_all(struct uroce_port *p, struct net_queue *nq,
	     struct rte_mbuf **m, uint16_t n, uint64_t *lost_bytes)
{
	uint16_t i, lost = 0;

	for (i = 0; i < n; i++) {
		uint32_t len = rte_pktmbuf_pkt_len(m[i]);

		if (!wait_put(p, nq, m[i])) {
			*lost_bytes += len;
			lost++;
		}
	}
	return lost;
}

/* Send what waits, oldest first, bypassing the fault injector (those
 * frames met it already). @return the frames the ethdev took. */
static uint16_t
wait_flush(struct uroce_port *p, uint16_t q)
{
	struct net_fault_q *fq = net_fault_txq(p, q);
	struct net_queue *nq = &p->q[q];
	uint16_t sent;

	if (nq->nb_wait == 0)
		return 0;
	if (fq != NULL)
		fq->bypass = true;
	sent = eth_tx(p, q, nq->wait, nq->nb_wait);
	if (fq != NULL)
		fq->bypass = false;
	if (sent == 0) {
		wait_stuck(p, nq);
		return 0;
	}
	nq->stuck_since = 0;
	if (sent < nq->nb_wait)
		memmove(nq->wait, nq->wait + sent,
			(nq->nb_wait - sent) * sizeof(nq->wait[0]));
	nq->nb_wait -= sent;
	return sent;
}

/*
 * One burst of at most NET_BURST frames. arr has room for 2 * NET_BURST:
 * the fault injector may add duplicates, and leaves in fq->out how many
 * frames the array then holds; retries bypass it (no second fault). What
 * the ethdev does not take waits (see above).
 */
static uint16_t
tx_chunk(struct uroce_port *p, uint16_t q, struct rte_mbuf **arr, uint16_t k)
{
	struct net_fault_q *fq = net_fault_txq(p, q);
	struct net_queue *nq = &p->q[q];
	uint64_t bytes = 0, lost_bytes = 0;
	uint16_t i, sent, left = k, tries, lost;

	for (i = 0; i < k; i++)
		bytes += rte_pktmbuf_pkt_len(arr[i]);
	if (fq != NULL) {
		fq->cap = 2 * NET_BURST;
		fq->out = k;
	}
	sent = eth_tx(p, q, arr, k);
	if (fq != NULL) {
		left = fq->out;
		fq->cap = 0;
		fq->bypass = true;
	}
	if (sent > 0)
		tx_took(p, nq);
	for (tries = 0; sent < left && tries < NET_TX_RETRIES && !nq->dropping;
	     tries++)
		sent += eth_tx(p, q, arr + sent, left - sent);
	if (fq != NULL)
		fq->bypass = false;
	lost = wait_put_all(p, nq, arr + sent, left - sent, &lost_bytes);
	net_ctr_add(&nq->st.tx_full, lost);
	k -= RTE_MIN(k, lost);
	net_ctr_add(&nq->st.tx_pkts, k);
	net_ctr_add(&nq->st.tx_bytes, bytes - RTE_MIN(bytes, lost_bytes));
	return k;
}

/* New frames behind a queue that still stalls: they wait too. */
static uint16_t
tx_behind(struct uroce_port *p, uint16_t q, struct rte_mbuf **pkts,
	  uint16_t n)
{
	struct net_queue *nq = &p->q[q];
	uint64_t bytes = 0, lost_bytes = 0;
	uint16_t i, lost;

	for (i = 0; i < n; i++)
		bytes += rte_pktmbuf_pkt_len(pkts[i]);
	lost = wait_put_all(p, nq, pkts, n, &lost_bytes);
	net_ctr_add(&nq->st.tx_full, lost);
	net_ctr_add(&nq->st.tx_pkts, n - lost);
	net_ctr_add(&nq->st.tx_bytes, bytes - lost_bytes);
	return n - lost;
}

uint16_t
uroce_port_tx(struct uroce_port *p, uint16_t q, struct rte_mbuf **pkts,
	      uint16_t n)
{
	struct rte_mbuf *arr[2 * NET_BURST];
	uint16_t i, k, done = 0;

	if (p->pcap != NULL)
		net_pcap_capture(p, q, pkts, n, RTE_PCAPNG_DIRECTION_OUT);
	wait_flush(p, q);
	if (p->q[q].nb_wait > 0)
		return tx_behind(p, q, pkts, n);
	for (i = 0; i < n; i += k) {
		k = RTE_MIN((uint16_t)(n - i), (uint16_t)NET_BURST);
		if (p->q[q].nb_wait > 0) {
			done += tx_behind(p, q, pkts + i, n - i);
			break;
		}
		memcpy(arr, pkts + i, k * sizeof(*arr));
		done += tx_chunk(p, q, arr, k);
	}
	return done;
}

bool
uroce_port_tx_busy(const struct uroce_port *p, uint16_t q)
{
	return p->q[q].nb_wait > 0;
}

uint16_t
uroce_port_tx_flush(struct uroce_port *p, uint16_t q)
{
	return wait_flush(p, q);
}

void
uroce_port_stats_get(const struct uroce_port *p, struct uroce_port_stats *st)
{
	const uint64_t *src;
	uint64_t *dst = (uint64_t *)st;
	unsigned int q, i;

	memset(st, 0, sizeof(*st));
	for (q = 0; q < p->nb_queues; q++) {
		src = (const uint64_t *)&p->q[q].st;
		for (i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
			dst[i] += __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	}
	if (p->memif_guard)
		st->memif_unmap_waits = net_memif_unmap_waits();
}
