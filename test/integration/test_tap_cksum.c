/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The IPv4 header checksum offload against a PMD that offers it: net_tap
 * (DPDK 22.11 computes the field in its tx path). A port on a tap turns
 * the offload on; frames whose headers the builder wrote with the field
 * left to the NIC (one segment, and a chain like a zero-copy frame) and a
 * frame without the flag (the builder's checksum) reach the kernel side
 * of the tap, read there with an AF_PACKET socket, each with a valid IPv4
 * checksum and ICRC. [port] csum_offload = off and a pcap capture keep
 * the offload off.
 */
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "port_helpers.h"
#include "uroce_test_eal.h"

#define PLEN		333
#define N_FRAMES	3	/* PSN 0: offloaded, 1: offloaded chain, 2: software */

static struct uroce_config cfg;
static uint8_t payload[PLEN];
static const struct rte_ether_addr peer_mac = {
	.addr_bytes = { 0x02, 0, 0, 0, 0x79, 2 } };

static void
path(struct uroce_port *p, struct uroce_l2l3 *l, struct uroce_bth_fields *bth,
     uint32_t psn)
{
	memset(l, 0, sizeof(*l));
	l->hop_limit = 64;
	memcpy(l->smac, uroce_port_mac(p), 6);
	memcpy(l->dmac, &peer_mac, 6);
	uroce_port_gids(p, &l->sgid, 1);
	l->dgid = ph_gid4("10.79.0.2");
	l->udp_sport = uroce_wire_udp_sport(17, 18);
	memset(bth, 0, sizeof(*bth));
	bth->opcode = UROCE_OPC_RC_SEND_ONLY;
	bth->pkey = 0xffff;
	bth->dqpn = 17;
	bth->psn = psn;
}

/* Headers for the offload (flags, l2_len, l3_len set), then the payload in
 * the same mbuf or (chain) in a second one with the pad and ICRC. */
static struct rte_mbuf *
ol_frame(struct uroce_port *p, uint32_t psn, bool chain)
{
	struct rte_mempool *mp = uroce_port_pool(p);
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp), *t = m;
	struct uroce_ext_fields ext = { 0 };
	struct uroce_bth_fields bth;
	struct uroce_l2l3 l;
	uint32_t hl, icrc, pad = -PLEN & 3u;
	uint16_t l3;
	uint8_t *h, *d, l2;

	path(p, &l, &bth, psn);
	hl = uroce_wire_hdrs_len(&l, bth.opcode);
	if (m == NULL || !uroce_wire_tx_ol(&l, &l2, &l3))
		goto fail;
	m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
	m->l2_len = l2;
	m->l3_len = l3;
	h = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)hl);
	if (h == NULL || uroce_wire_write_hdrs_ol(h, &l, &bth, &ext, PLEN,
						  UROCE_WIRE_IP_CKSUM_OL) != hl)
		goto fail;
	/* Left to the NIC: the tap must fill it in. */
	UT_CHECK(h[l2 + 10] == 0 && h[l2 + 11] == 0);
	icrc = uroce_wire_icrc(h, hl, payload, PLEN);
	if (chain) {
		t = rte_pktmbuf_alloc(mp);
		if (t == NULL || rte_pktmbuf_chain(m, t) != 0) {
			rte_pktmbuf_free(t);
			goto fail;
		}
	}
	d = (uint8_t *)rte_pktmbuf_append(m, PLEN + pad + UROCE_ICRC_LEN);
	if (d == NULL)
		goto fail;
	memcpy(d, payload, PLEN);
	memset(d + PLEN, 0, pad);
	icrc = rte_cpu_to_le_32(icrc);
	memcpy(d + PLEN + pad, &icrc, UROCE_ICRC_LEN);
	return m;
fail:
	rte_pktmbuf_free(m);
	return NULL;
}

/* The builder's own checksum, no flag. */
static struct rte_mbuf *
sw_frame(struct uroce_port *p, uint32_t psn)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(uroce_port_pool(p));
	struct uroce_ext_fields ext = { 0 };
	struct uroce_bth_fields bth;
	struct uroce_l2l3 l;
	uint32_t len;
	uint8_t *d;

	path(p, &l, &bth, psn);
	len = uroce_wire_hdrs_len(&l, bth.opcode) + PLEN +
	      uroce_wire_trailer_len(PLEN);
	d = m != NULL ? (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len) : NULL;
	if (d == NULL ||
	    uroce_wire_build(d, len, &l, &bth, &ext, payload, PLEN) != len) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

static int
raw_socket(const char *ifname)
{
	struct sockaddr_ll sa = { .sll_family = AF_PACKET,
				  .sll_protocol = htons(ETH_P_ALL) };
	struct timeval tv = { .tv_sec = 0, .tv_usec = 100000 };
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));

	sa.sll_ifindex = (int)if_nametoindex(ifname);
	if (fd < 0 || sa.sll_ifindex == 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
		perror("AF_PACKET socket");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Read what the kernel got until every PSN came (bounded: 50 timeouts or
 * 1000 frames); each RoCEv2 frame must parse (IPv4 checksum, ICRC). */
static unsigned int
kernel_side(int fd)
{
	static uint8_t buf[2048];
	unsigned int seen = 0, bad = 0, i, idle = 0;
	struct uroce_pkt pkt;
	ssize_t n;

	for (i = 0; i < 1000 && idle < 50 && seen != (1u << N_FRAMES) - 1; i++) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0) {
			idle++;
			continue;
		}
		/* IPv4, UDP, destination port 4791: ours. */
		if (n < 42 || buf[12] != 0x08 || buf[13] != 0x00 ||
		    buf[23] != 17 || (buf[36] << 8 | buf[37]) != UROCE_UDP_PORT)
			continue;
		if (uroce_wire_parse(buf, (uint32_t)n, 0, &pkt) != UROCE_WIRE_OK ||
		    pkt.bth.psn >= N_FRAMES || pkt.payload_len != PLEN ||
		    memcmp(uroce_pkt_payload(&pkt), payload, PLEN) != 0) {
			bad++;
			continue;
		}
		UT_NOTE("kernel got PSN %u, IPv4 checksum 0x%02x%02x",
			pkt.bth.psn, buf[24], buf[25]);
		seen |= 1u << pkt.bth.psn;
	}
	UT_CHECK_EQ(bad, 0);
	return seen;
}

/* Open port 0 as configured: whether it turned the offload on. */
static int
offload_of(bool *on)
{
	struct uroce_port *p = ut_port_open(&cfg, 0, 1);

	if (p == NULL)
		return -1;
	*on = uroce_port_tx_ip_cksum(p);
	uroce_port_close(p);
	return 0;
}

int
main(int argc, char **argv)
{
	char ifname[IF_NAMESIZE], dev[64], pcap[64];
	struct rte_mbuf *m[N_FRAMES];
	struct uroce_port *p;
	unsigned int i;
	bool on = true;
	int fd = -1;

	(void)argc;
	if (geteuid() != 0 || access("/dev/net/tun", R_OK | W_OK) != 0) {
		printf("skipped: net_tap needs root and /dev/net/tun\n");
		return 77;
	}
	if (ut_eal_init(argv[0], NULL) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	for (i = 0; i < PLEN; i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	snprintf(ifname, sizeof(ifname), "ucksum%d", (int)getpid() % 100000);
	snprintf(dev, sizeof(dev), "net_tap_cksum0,iface=%s", ifname);
	ph_port_cfg(&cfg, 0, dev, "10.79.0.1", 1500);
	p = ut_port_open(&cfg, 0, 1);
	if (p == NULL)
		goto out;
	/* net_tap offers RTE_ETH_TX_OFFLOAD_IPV4_CKSUM (22.11). */
	if (!UT_CHECK(uroce_port_tx_ip_cksum(p)))
		goto close;
	fd = raw_socket(ifname);
	if (!UT_CHECK(fd >= 0))
		goto close;
	m[0] = ol_frame(p, 0, false);
	m[1] = ol_frame(p, 1, true);
	m[2] = sw_frame(p, 2);
	if (!UT_CHECK(m[0] != NULL && m[1] != NULL && m[2] != NULL))
		goto close;
	UT_CHECK_EQ(m[1]->nb_segs, 2);
	UT_CHECK_EQ(uroce_port_tx(p, 0, m, N_FRAMES), N_FRAMES);
	UT_CHECK_EQ(kernel_side(fd), (1u << N_FRAMES) - 1);
	close(fd);
close:
	uroce_port_close(p);
	/* Off when the config says so, and with a capture (it copies frames
	 * before the PMD fills the field in). */
	cfg.port[0].csum_offload_off = true;
	if (UT_CHECK_EQ(offload_of(&on), 0))
		UT_CHECK(!on);
	cfg.port[0].csum_offload_off = false;
	snprintf(pcap, sizeof(pcap), "/tmp/uroce-cksum-%d.pcapng", (int)getpid());
	snprintf(cfg.port[0].pcap, sizeof(cfg.port[0].pcap), "%s", pcap);
	on = true;
	if (UT_CHECK_EQ(offload_of(&on), 0))
		UT_CHECK(!on);
	unlink(pcap);
out:
	rte_eal_cleanup();
	return ut_summary();
}
