/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * A memif peer killed while a transmit burst of ours is inside the PMD.
 *
 * The peer is a child process, the memif server; this process is the
 * client, whose regions DPDK 22.11's memif unmaps from its interrupt
 * thread when the server's control socket hangs up (lib/net/memif_guard.c
 * says why that raced the pollers). The window is made wide on purpose:
 * the frames of one burst come from a mempool without a cache whose
 * enqueue op (called by eth_memif_tx() when it frees the first frame it
 * copied, before it goes on to the second) kills the peer, waits until
 * the link is down and then until either the region is gone from
 * /proc/self/maps (nothing held the unmapping back: the burst then writes
 * the next descriptor into unmapped memory, SIGSEGV) or the port's
 * memif_unmap_waits counter says the unmapping waits for the burst. With
 * the guard the burst ends normally, the region goes only afterwards, and
 * the counter moved.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <libgen.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_mempool.h>

#include "port_helpers.h"
#include "uroce_test_eal.h"

#define BURST		8
#define FRAME_LEN	1000
#define BOUND_POLLS	20000		/* of 1 ms: a guard against a hang */

static struct uroce_config cfg;
static struct uroce_port *client;
static pid_t peer = -1;
static const struct rte_mempool_ops *ring_ops;
static __thread bool in_burst;
static bool armed, fired, unmapped_first, waited_first;
static unsigned int inside_frees;

/* ---------------------------------------------------------------------------
 * The slow pool: ring_mp_mc's ops, with a hook in enqueue.
 */

static bool
region_mapped(void)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, "memif_region_0") != NULL)
			found = true;
	}
	if (f != NULL)
		fclose(f);
	return found;
}

static uint64_t
unmap_waits(void)
{
	struct uroce_port_stats st;

	uroce_port_stats_get(client, &st);
	return st.memif_unmap_waits;
}

/* Inside eth_memif_tx(): the peer dies; back once its regions are gone or
 * their unmapping waits for this burst. */
static void
kill_peer_inside(void)
{
	uint64_t waits0 = unmap_waits();
	unsigned int i;

	armed = false;
	fired = true;
	kill(peer, SIGKILL);
	waitpid(peer, NULL, 0);
	peer = -1;
	for (i = 0; i < BOUND_POLLS && uroce_port_link_up(client); i++)
		usleep(1000);
	for (; i < BOUND_POLLS; i++) {
		if (unmap_waits() != waits0) {
			waited_first = true;
			break;
		}
		if (!region_mapped()) {
			unmapped_first = true;
			break;
		}
		usleep(1000);
	}
	printf("# in the burst: link %s, %s\n",
	       uroce_port_link_up(client) ? "up" : "down",
	       waited_first ? "the unmapping waits" :
	       unmapped_first ? "the region is unmapped" : "neither");
	fflush(stdout);
}

static int
slow_alloc(struct rte_mempool *mp)
{
	return ring_ops->alloc(mp);
}

static void
slow_free(struct rte_mempool *mp)
{
	ring_ops->free(mp);
}

static int
slow_enqueue(struct rte_mempool *mp, void * const *obj, unsigned int n)
{
	int ret = ring_ops->enqueue(mp, obj, n);

	if (in_burst)
		inside_frees += n;

	if (armed && in_burst)
		kill_peer_inside();
	return ret;
}

static int
slow_dequeue(struct rte_mempool *mp, void **obj, unsigned int n)
{
	return ring_ops->dequeue(mp, obj, n);
}

static unsigned int
slow_count(const struct rte_mempool *mp)
{
	return ring_ops->get_count(mp);
}

static const struct rte_mempool_ops slow_ops = {
	.name = "ut_slow",
	.alloc = slow_alloc,
	.free = slow_free,
	.enqueue = slow_enqueue,
	.dequeue = slow_dequeue,
	.get_count = slow_count,
};

RTE_MEMPOOL_REGISTER_OPS(slow_ops);

static bool
ring_ops_find(void)
{
	unsigned int i;

	for (i = 0; i < rte_mempool_ops_table.num_ops; i++) {
		if (strcmp(rte_mempool_ops_table.ops[i].name, "ring_mp_mc") == 0)
			ring_ops = &rte_mempool_ops_table.ops[i];
	}
	return ring_ops != NULL;
}

/* ---------------------------------------------------------------------------
 * The two processes.
 */

static void
eal_start(const char *prog)
{
	/* Two memif processes run without hugepages (test/integration/
	 * pair.sh: a server --in-memory crashes its client). */
	setenv("UROCE_TEST_MEM", "--no-huge -m 256", 1);
	if (ut_eal_init(prog, NULL) < 0) {
		fprintf(stderr, "EAL init failed\n");
		exit(1);
	}
}

/* The child: the memif server, draining what comes until it is killed. */
static void
run_peer(const char *prog, const char *dev, int ready)
{
	struct uroce_port *s = NULL;
	struct rte_mbuf *pk[32];
	char err[256];
	uint16_t k;

	eal_start(prog);
	ph_port_cfg(&cfg, 0, dev, "10.4.0.1", 1500);
	if (uroce_port_open(&cfg, 0, 1, &s, err, sizeof(err)) != 0) {
		fprintf(stderr, "peer: open: %s\n", err);
		exit(1);
	}
	if (write(ready, "R", 1) != 1)
		exit(1);
	for (;;) {
		k = uroce_port_rx(s, 0, pk, 32);
		rte_pktmbuf_free_bulk(pk, k);
		usleep(1000);
	}
}

static struct rte_mbuf *
frame(struct rte_mempool *mp)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	char *d;

	if (m == NULL)
		return NULL;
	d = rte_pktmbuf_append(m, FRAME_LEN);
	if (d == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(d, 0xa5, FRAME_LEN);	/* not RoCEv2: the peer drops it */
	return m;
}

/* A burst of BURST frames of mp; how many the port took. */
static uint16_t
burst(struct rte_mempool *mp)
{
	struct rte_mbuf *m[BURST];
	uint16_t i, sent;

	for (i = 0; i < BURST; i++) {
		m[i] = frame(mp);
		if (m[i] == NULL) {
			rte_pktmbuf_free_bulk(m, i);
			return 0;
		}
	}
	in_burst = true;
	sent = uroce_port_tx(client, 0, m, BURST);
	in_burst = false;
	return sent;
}

static bool
link_up_wait(void)
{
	unsigned int i;

	for (i = 0; i < BOUND_POLLS && !uroce_port_link_up(client); i++)
		usleep(1000);
	return uroce_port_link_up(client);
}

static void
run_client(const char *prog, const char *dev)
{
	struct rte_mempool *mp;
	struct uroce_port_stats st;
	char err[256];
	unsigned int i, sent;

	eal_start(prog);
	if (!UT_CHECK(ring_ops_find()))
		return;
	mp = rte_pktmbuf_pool_create_by_ops("ut_slow_pool", 255, 0, 0,
					    RTE_MBUF_DEFAULT_BUF_SIZE,
					    SOCKET_ID_ANY, "ut_slow");
	if (!UT_CHECK(mp != NULL))
		return;
	ph_port_cfg(&cfg, 0, dev, "10.4.0.2", 1500);
	if (!UT_CHECK_EQ(uroce_port_open(&cfg, 0, 1, &client, err,
					 sizeof(err)), 0)) {
		fprintf(stderr, "     %s\n", err);
		return;
	}
	if (!UT_CHECK(link_up_wait()) || !UT_CHECK(region_mapped()))
		return;
	for (i = 0; i < 4; i++)
		UT_CHECK_EQ(burst(mp), BURST);	/* the link carries frames */
	UT_CHECK_EQ(inside_frees, 4 * BURST);	/* freed inside the PMD */
	UT_CHECK_EQ(unmap_waits(), 0);
	armed = true;
	sent = burst(mp);
	printf("# burst with the peer killed inside: %u sent\n", sent);
	UT_CHECK(fired);
	UT_CHECK_EQ(sent, BURST);
	UT_CHECK_EQ(inside_frees, 5 * BURST);	/* all copied to the peer's ring */
	UT_CHECK(waited_first);
	UT_CHECK(!unmapped_first);
	/* The unmapping went on once the burst left. */
	for (i = 0; i < BOUND_POLLS && region_mapped(); i++)
		usleep(1000);
	UT_CHECK(!region_mapped());
	UT_CHECK(!uroce_port_link_up(client));
	uroce_port_stats_get(client, &st);
	UT_CHECK(st.memif_unmap_waits >= 1);
	printf("# memif_unmap_waits %" PRIu64 "\n", st.memif_unmap_waits);
	/* The link is down: the ethdev takes nothing, the frames wait. */
	UT_CHECK_EQ(burst(mp), BURST);
	UT_CHECK(uroce_port_tx_busy(client, 0));
	UT_CHECK_EQ(inside_frees, 5 * BURST);
	uroce_port_close(client);
	rte_mempool_free(mp);
}

/* The killed peer's EAL runtime directory (a sibling of ours), removed. */
static void
peer_rundir_rm(pid_t pid)
{
	char ours[256], dir[512], f[800];
	struct dirent *e;
	DIR *d;

	snprintf(ours, sizeof(ours), "%s", rte_eal_get_runtime_dir());
	snprintf(dir, sizeof(dir), "%s/ut%d", dirname(ours), (int)pid);
	d = opendir(dir);
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "%s/%s", dir, e->d_name);
		unlink(f);
	}
	if (d != NULL)
		closedir(d);
	rmdir(dir);
}

int
main(int argc, char **argv)
{
	char sock[96], dev[2][160];
	int pfd[2];
	pid_t child;
	char c;

	(void)argc;
	snprintf(sock, sizeof(sock), "/tmp/uroce-ut-mdeath-%d.sock",
		 (int)getpid());
	snprintf(dev[0], sizeof(dev[0]), "net_memif0,role=server,id=0,"
		 "socket=%s,socket-abstract=no", sock);
	snprintf(dev[1], sizeof(dev[1]), "net_memif0,role=client,id=0,"
		 "socket=%s,socket-abstract=no", sock);
	if (pipe(pfd) != 0)
		return 1;
	peer = fork();
	if (peer < 0)
		return 1;
	child = peer;
	if (peer == 0) {
		close(pfd[0]);
		run_peer(argv[0], dev[0], pfd[1]);
		_exit(1);
	}
	close(pfd[1]);
	if (UT_CHECK_EQ(read(pfd[0], &c, 1), 1))
		run_client(argv[0], dev[1]);
	if (peer > 0) {
		kill(peer, SIGKILL);
		waitpid(peer, NULL, 0);
	}
	unlink(sock);
	peer_rundir_rm(child);
	rte_eal_cleanup();
	return ut_summary();
}
