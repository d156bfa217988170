/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Two memif ports in one process, server and client on a socket under
 * /tmp: the link comes up, ARP resolves both ways, and RoCEv2 frames up to
 * the 4096-byte MTU (above memif's reported 1518-byte maximum: chained by
 * tx, reassembled by rx, linearized by the port) cross intact both ways.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "port_helpers.h"
#include "uroce_test_eal.h"

#define N_FRAMES	200
#define MTU		4096

static struct uroce_config cfg;

/* Wait for both links (bounded: 10 s of 10 ms polls). */
static bool
links_up(struct uroce_port *a, struct uroce_port *b)
{
	unsigned int i;

	for (i = 0; i < 1000; i++) {
		if (uroce_port_link_up(a) && uroce_port_link_up(b))
			return true;
		usleep(10000);
	}
	return false;
}

/* N_FRAMES from a to b, sizes cycling up to the MTU, in bursts of 8. */
static void
exchange(const char *what, struct uroce_port *a, struct uroce_port *b,
	 const struct rte_ether_addr *bmac, const union uroce_gid *bgid)
{
	struct rte_mbuf *m[8], *pk[32];
	unsigned int sent = 0, got = 0, bad = 0, polls, i;
	uint32_t psn, plen, max = MTU - 20 - 8 - 12 - 4;
	uint16_t k;

	for (polls = 0; got < N_FRAMES && polls < 20000; polls++) {
		if (sent < N_FRAMES && sent - got < 64) {
			for (i = 0; i < 8; i++) {
				plen = (sent + i) * 997 % (max + 1);
				if (sent + i == 1)
					plen = max;	/* a full 4096-byte IP packet */
				m[i] = ph_frame(a, bmac, bgid, sent + i, plen);
			}
			UT_CHECK_EQ(uroce_port_tx(a, 0, m, 8), 8);
			sent += 8;
		}
		k = uroce_port_rx(b, 0, pk, 32);
		for (i = 0; i < k; i++) {
			if (!ph_frame_ok(pk[i], &psn) || psn != got + i)
				bad++;
		}
		got += k;
		rte_pktmbuf_free_bulk(pk, k);
		k = uroce_port_rx(a, 0, pk, 32);
		rte_pktmbuf_free_bulk(pk, k);
		if (k == 0)
			usleep(PH_POLL_US);
	}
	UT_CHECK_EQ(got, N_FRAMES);
	UT_CHECK_EQ(bad, 0);
	UT_NOTE("exchange %s: sent %u", what, sent);
}

int
main(int argc, char **argv)
{
	char sock[96], dev[2][160];
	struct uroce_port *s = NULL, *c = NULL;
	struct rte_ether_addr mac_c, mac_s;
	union uroce_gid gs = ph_gid4("10.3.0.1"), gc = ph_gid4("10.3.0.2");
	char err[256];
	struct uroce_port_stats st;

	/* DPDK 22.11's memif crashes now and then in its interrupt thread
	 * when EAL runs without hugepages (seen with --no-huge): run on
	 * hugepages only. */
	if (!ut_eal_hugepages()) {
		printf("skipped: memif needs hugepages (UROCE_TEST_MEM)\n");
		return 77;
	}
	if (ut_eal_init(argv[0], NULL) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	snprintf(sock, sizeof(sock), "/tmp/uroce-ut-memif-%d.sock", (int)getpid());
	snprintf(dev[0], sizeof(dev[0]), "net_memif0,role=server,socket=%s", sock);
	snprintf(dev[1], sizeof(dev[1]), "net_memif1,role=client,socket=%s", sock);
	ph_port_cfg(&cfg, 0, dev[0], "10.3.0.1", MTU);
	ph_port_cfg(&cfg, 1, dev[1], "10.3.0.2", MTU);
	if (!UT_CHECK_EQ(uroce_port_open(&cfg, 0, 1, &s, err, sizeof(err)), 0) ||
	    !UT_CHECK_EQ(uroce_port_open(&cfg, 1, 1, &c, err, sizeof(err)), 0)) {
		fprintf(stderr, "     %s\n", err);
		goto out;
	}
	UT_CHECK_EQ(uroce_port_mtu(s), MTU);
	if (!UT_CHECK(links_up(s, c)))
		goto out;
	UT_CHECK_EQ(ph_resolve(s, c, &gc, &mac_c, 5000), 0);
	UT_CHECK(rte_is_same_ether_addr(&mac_c, uroce_port_mac(c)));
	UT_CHECK_EQ(ph_resolve(c, s, &gs, &mac_s, 5000), 0);
	UT_CHECK(rte_is_same_ether_addr(&mac_s, uroce_port_mac(s)));
	exchange("server -> client", s, c, &mac_c, &gc);
	exchange("client -> server", c, s, &mac_s, &gs);
	uroce_port_stats_get(c, &st);
	UT_CHECK_EQ(st.rx_pkts, N_FRAMES);
	UT_CHECK_EQ(st.tx_full, 0);
	UT_CHECK_EQ(st.rx_err, 0);
out:
	uroce_port_close(c);
	uroce_port_close(s);
	unlink(sock);
	rte_eal_cleanup();
	return ut_summary();
}
