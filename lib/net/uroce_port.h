/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_PORT_H
#define UROCE_PORT_H

/**
 * @file
 * A port: one ethdev brought up from a [port] section (pmd_glue picks the
 * link kind from the dev string), with its addresses, neighbours (ARP), an
 * optional pcapng capture and optional seeded fault injection.
 *
 * Threads. uroce_port_open()/uroce_port_close() run on the control thread
 * (after rte_eal_init()). Each engine lcore uses its own queue pair q
 * (0 .. nb_queues - 1) for uroce_port_rx() and uroce_port_tx(); several
 * lcores may call them at once on different queues. uroce_port_resolve()
 * may be called from any lcore. Control traffic (ARP replies, requests) is
 * sent on the queue of the lcore that handles it.
 *
 * Errors are negative errno; open also writes one line naming the key.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "uroce_config.h"
#include "uroce_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Counters of a port (telemetry /uroce/ports). */
struct uroce_port_stats {
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
	uint64_t tx_full;		/**< frames the ethdev did not take (freed) */
	uint64_t arp_rx, arp_tx;
	uint64_t non_roce;		/**< frames neither RoCEv2 nor ARP: dropped */
	uint64_t fault_drop, fault_reorder, fault_dup, fault_corrupt;
	uint64_t pcap_written, pcap_lost;
};

struct uroce_port;

/**
 * Bring up the ethdev cfg->dev names (a vdev: net_memif*, net_af_packet*,
 * net_tap*, net_ring*; or a PCI address), with nb_queues rx/tx queue pairs,
 * the MTU, the MAC (cfg->mac or the ethdev's), start it and wait for link
 * up (bounded). Installs the fault callbacks and opens the capture file if
 * the config asks.
 *
 * @param idx  the port's index in the config (device uroce<idx>)
 * @return 0 and *out, or a negative errno with err (one line: the file's
 *   dev value and what failed, e.g. "[port] dev = net_foo0: no such driver")
 */
int uroce_port_open(const struct uroce_config *cfg, unsigned int idx,
		    uint16_t nb_queues, struct uroce_port **out,
		    char *err, size_t err_len);

/** Stop and close the ethdev, flush and close the capture. NULL: no-op. */
void uroce_port_close(struct uroce_port *p);

/** The ethdev's port id, MAC, IP MTU, and the mempool for its frames. */
uint16_t uroce_port_id(const struct uroce_port *p);
const struct rte_ether_addr *uroce_port_mac(const struct uroce_port *p);
uint16_t uroce_port_mtu(const struct uroce_port *p);
struct rte_mempool *uroce_port_pool(const struct uroce_port *p);
/** VLAN of the port: true and *vid when [port] vlan is set. */
bool uroce_port_vlan(const struct uroce_port *p, uint16_t *vid);
/** Whether tx accepts mbufs with external buffers (zero-copy tx). */
bool uroce_port_tx_extbuf(const struct uroce_port *p);

/**
 * The port's GID table: index 0 the IPv4-mapped GID of [port] ip (when
 * set), then one per ip6 address. @return the number of entries written.
 */
unsigned int uroce_port_gids(const struct uroce_port *p, union uroce_gid *gid,
			     unsigned int max);

/**
 * Receive up to n frames on queue q. ARP is answered (requests for our IP)
 * and learnt (replies) inside, non-RoCEv2 frames are counted and freed; the
 * frames returned are IPv4/IPv6 UDP frames for the transport to parse (the
 * caller frees them). Each returned frame is contiguous in its first
 * segment. Captured to pcap when configured.
 */
uint16_t uroce_port_rx(struct uroce_port *p, uint16_t q,
		       struct rte_mbuf **pkts, uint16_t n);

/**
 * Transmit n frames on queue q (captured first when configured). Frames the
 * ethdev does not take after a few retries are freed and counted (tx_full).
 * @return the number sent.
 */
uint16_t uroce_port_tx(struct uroce_port *p, uint16_t q,
		       struct rte_mbuf **pkts, uint16_t n);

/**
 * The MAC of gid's next hop (the GID's own address: one subnet). 0 and mac;
 * -EAGAIN: not known yet, an ARP request went out (retried every 100 ms,
 * up to 5 times per uroce_port_poll_ctrl()); -EHOSTUNREACH after the last
 * retry (the next call starts again). Static [neigh] entries answer at once.
 * IPv6 GIDs resolve from [neigh] only (-EHOSTUNREACH otherwise) for now.
 */
int uroce_port_resolve(struct uroce_port *p, const union uroce_gid *gid,
		       struct rte_ether_addr *mac);

/** Periodic work on queue q's lcore (ARP retries); now is TSC. Cheap. */
void uroce_port_poll_ctrl(struct uroce_port *p, uint16_t q, uint64_t now);

/** A snapshot of the port's counters. */
void uroce_port_stats_get(const struct uroce_port *p,
			  struct uroce_port_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_PORT_H */
