/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * One end of a two-process port test (af_packet_veth.sh runs one in each
 * network namespace):
 *
 *	port_peer DEV MY_IP PEER_IP a|b
 *
 * a resolves b by ARP before it sends; b resolves a lazily, keeping the
 * PSNs it could not echo yet (a frame that came while b was busy in a
 * resolve loop would be lost to the test). a sends N_FRAMES RoCEv2 frames of sizes
 * up to the MTU and expects each back, in order and intact; b checks each
 * frame it gets and sends the same PSN and payload back. Every loop is
 * bounded and sleeps when idle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "port_helpers.h"
#include "uroce_test_eal.h"

#define N_FRAMES	500
#define MAX_POLLS	100000		/* x PH_POLL_US when idle: ~20 s */
#define MAX_PLEN	(1500 - 20 - 8 - 12 - 4)

static struct uroce_config cfg;

struct peer {
	struct uroce_port *p;
	struct rte_ether_addr mac;
	bool mac_ok;
	uint32_t backlog[64];		/* b: PSNs to echo once a's MAC is known */
	unsigned int nback;
	union uroce_gid gid;
	unsigned int sent, got, bad;
};

static void
tx_psn(struct peer *pr, uint32_t psn)
{
	struct rte_mbuf *m;

	m = ph_frame(pr->p, &pr->mac, &pr->gid, psn, psn * 131 % (MAX_PLEN + 1));
	if (m != NULL && uroce_port_tx(pr->p, 0, &m, 1) == 1)
		pr->sent++;
}

/* Send psn, after the PSNs that waited for the peer's MAC, in order. */
static void
send_psn(struct peer *pr, uint32_t psn)
{
	unsigned int i;

	if (!pr->mac_ok)
		pr->mac_ok = uroce_port_resolve(pr->p, &pr->gid, &pr->mac) == 0;
	if (!pr->mac_ok || pr->nback > 0) {
		if (pr->nback < RTE_DIM(pr->backlog))
			pr->backlog[pr->nback++] = psn;
		if (!pr->mac_ok)
			return;
		for (i = 0; i < pr->nback; i++)
			tx_psn(pr, pr->backlog[i]);
		pr->nback = 0;
		return;
	}
	tx_psn(pr, psn);
}

/* Receive one burst: check PSN order and payloads; b echoes. */
static uint16_t
receive(struct peer *pr, bool echo)
{
	struct rte_mbuf *pk[32];
	uint32_t psn = 0;
	uint16_t k, i;

	k = uroce_port_rx(pr->p, 0, pk, 32);
	for (i = 0; i < k; i++) {
		if (!ph_frame_ok(pk[i], &psn) || psn != pr->got)
			pr->bad++;
		pr->got++;
		if (echo)
			send_psn(pr, psn);
	}
	rte_pktmbuf_free_bulk(pk, k);
	return k;
}

/* b: echo what waited for a's MAC once it is known. */
static void
echo_backlog(struct peer *pr)
{
	unsigned int i;

	if (pr->nback == 0)
		return;
	if (!pr->mac_ok)
		pr->mac_ok = uroce_port_resolve(pr->p, &pr->gid, &pr->mac) == 0;
	if (!pr->mac_ok)
		return;
	for (i = 0; i < pr->nback; i++)
		tx_psn(pr, pr->backlog[i]);
	pr->nback = 0;
}

static void
run(struct peer *pr, bool is_a)
{
	unsigned int polls;

	for (polls = 0; pr->got < N_FRAMES && polls < MAX_POLLS; polls++) {
		/* a keeps at most 32 frames in flight. */
		if (is_a && pr->sent < N_FRAMES && pr->sent - pr->got < 32)
			send_psn(pr, pr->sent);
		uroce_port_poll_ctrl(pr->p, 0, rte_rdtsc());
		echo_backlog(pr);
		if (receive(pr, !is_a) == 0)
			usleep(PH_POLL_US);
	}
	/* b: a late ARP retry of a's may still come; answer a while. */
	for (polls = 0; !is_a && polls < 500; polls++) {
		echo_backlog(pr);
		receive(pr, true);
		usleep(PH_POLL_US);
	}
}

int
main(int argc, char **argv)
{
	struct peer pr = { 0 };
	struct uroce_port_stats st;
	char err[256];
	bool is_a;

	if (argc != 5 || (strcmp(argv[4], "a") != 0 && strcmp(argv[4], "b") != 0)) {
		fprintf(stderr, "usage: %s DEV MY_IP PEER_IP a|b\n", argv[0]);
		return 2;
	}
	is_a = argv[4][0] == 'a';
	if (ut_eal_init(argv[0], NULL) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	ph_port_cfg(&cfg, 0, argv[1], argv[2], 1500);
	if (!UT_CHECK_EQ(uroce_port_open(&cfg, 0, 1, &pr.p, err, sizeof(err)), 0)) {
		fprintf(stderr, "     %s\n", err);
		goto out;
	}
	pr.gid = ph_gid4(argv[3]);
	if (is_a) {
		if (!UT_CHECK_EQ(ph_resolve(pr.p, NULL, &pr.gid, &pr.mac,
					    MAX_POLLS), 0))
			goto out;
		pr.mac_ok = true;
	}
	run(&pr, is_a);
	UT_CHECK_EQ(pr.got, N_FRAMES);
	UT_CHECK_EQ(pr.sent, N_FRAMES);
	UT_CHECK_EQ(pr.bad, 0);
	uroce_port_stats_get(pr.p, &st);
	UT_CHECK_EQ(st.rx_pkts, N_FRAMES);
	UT_CHECK(st.arp_rx > 0);
	UT_NOTE("%s on %s", is_a ? "a" : "b", argv[1]);
	printf("%s: %s: sent %u, got %u, arp rx %" PRIu64 " tx %" PRIu64
	       ", non-RoCE %" PRIu64 "\n", argv[4], argv[1], pr.sent, pr.got,
	       st.arp_rx, st.arp_tx, st.non_roce);
out:
	uroce_port_close(pr.p);
	rte_eal_cleanup();
	return ut_summary_named(is_a ? "port_peer a" : "port_peer b");
}
