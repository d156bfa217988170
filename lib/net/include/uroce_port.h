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
 * lcores may call them at once on different queues, never two on one
 * queue (ringlink rings are single-producer, single-consumer; PMD queues
 * are not thread-safe either). uroce_port_resolve()
 * may be called from any lcore. Control traffic (ARP replies, requests) is
 * sent on the queue of the lcore that handles it.
 *
 * Errors are negative errno; open also writes one line naming the key.
 *
 * The dev string (pmd_glue/include/uroce_glue.h has the grammar): a vdev
 * ("net_memif0,role=server,socket=/tmp/a.sock", "net_af_packet0,iface=veth0",
 * "net_tap0", "net_ring0", any other vdev), a PCI address with devargs, or
 * uroce's in-process link "ringlink:NAME,side=0|1" (two ports of one
 * process joined by rte_rings; tests and labs).
 *
 * Kernel exception path ([port] exception; a tap by default on a PCI
 * dev): a second ethdev whose other side is a kernel interface with the
 * port's MAC. Frames that are not the stack's go there (ARP and neighbour
 * discovery as a copy), the kernel's frames leave on queue 0. rte_flow
 * rules sort the frames in the NIC when the PMD takes them ([port] steer;
 * the ethdev then has one rx/tx queue pair more, drained by queue 0's
 * lcore); otherwise the port dispatches in software (RoCEv2 to its own
 * GIDs stays, the rest goes to the kernel) and logs why.
 *
 * Counters: each queue keeps its own (written by that queue's lcore only);
 * uroce_port_stats_get() sums them.
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
	/** RoCEv2 frames uroce_port_rx() returned. */
	uint64_t rx_pkts, rx_bytes;
	/** Frames of uroce_port_tx() callers that were not freed as tx_full
	 *  (fault drops included: they were lost "on the wire"; frames that
	 *  wait for the ethdev included). */
	uint64_t tx_pkts, tx_bytes;
	uint64_t tx_full;		/**< frames the ethdev did not take and
				     *   that could not wait (freed) */
	uint64_t tx_stuck;		/**< times a queue took no frame for
				     *   100 ms and was found stuck */
	uint64_t arp_rx, arp_tx;	/**< ARP frames handled, ARP sent */
	/** IPv6 neighbour solicitations and advertisements received (valid
	 *  or not), sent, and received but dropped as invalid (RFC 4861
	 *  7.1: hop limit, checksum, lengths, options). */
	uint64_t nd_rx, nd_tx, nd_bad;
	/** Frames neither RoCEv2 (UDP port 4791) nor ARP, or on another
	 *  VLAN than the port's, that the raw hook did not take: dropped. */
	uint64_t non_roce;
	/** RoCEv2 frames to an IP address that is none of the port's GIDs
	 *  (another process's or host's on a shared link): dropped. */
	uint64_t not_ours;
	/** Fault injection (RoCEv2 frames only), rx and tx together: frames
	 *  freed, held back for one frame, copied, and given a bad byte;
	 *  received ECN-capable frames marked CE (fault ce=P). */
	uint64_t fault_drop, fault_reorder, fault_dup, fault_corrupt;
	uint64_t fault_ce;
	uint64_t pcap_written, pcap_lost;
	/** The kernel exception path ([port] exception): frames of the wire
	 *  given to the kernel (copies of ARP and neighbour discovery
	 *  included), the kernel's frames sent on the wire, and frames of
	 *  either way a full queue or a failed copy lost. */
	uint64_t exc_in, exc_out, exc_drop;
	/** Received chains that could not be made one segment, or whose
	 *  stripped VLAN tag could not be put back (freed). */
	uint64_t rx_err;
	/** memif ports: times the PMD's unmapping of a peer's shared memory
	 *  (a peer that left or died) waited for bursts in flight on memif
	 *  ports; process-wide, the same on every memif port. */
	uint64_t memif_unmap_waits;
};

struct uroce_port;

/**
 * Bring up the ethdev cfg->dev names (a vdev: net_memif*, net_af_packet*,
 * net_tap*, net_ring*; a PCI address; or ringlink:NAME,side=S), with
 * nb_queues (1..16) rx/tx queue pairs, a mempool sized for them whose
 * buffers hold a whole frame of the MTU, the MTU (set on the ethdev when
 * the PMD allows it; kept unset on memif/ring links, where larger frames
 * pass anyway), the MAC (cfg->mac, else the ethdev's own; ringlink:
 * 02:75:72:..), promiscuous mode off, start it and wait up to 1 s for the
 * link (memif: not at all; its link comes up when the peer connects: not an
 * error; see uroce_port_link_poll()); a memif client whose server does not
 * listen yet opens with its link down and connects later. On a kernel interface (af_xdp:IFACE, iface=) without ip/ip6 the
 * interface's kernel addresses are the port's; af_xdp ports take the
 * interface's MTU (mtu, when given, lowered to it and to what an AF_XDP
 * frame holds) and hand their addresses to the XDP program after the
 * start (pmd_glue/include/uroce_glue.h). Installs the fault callbacks and opens the capture file if the
 * config asks, then sends a gratuitous ARP when the port has an IPv4
 * address and its link is up. cfg must outlive the port.
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
/** Whether frames may point into application memory (zero-copy tx):
 *  links whose tx_burst is done with the bytes when it returns (memif in
 *  copy mode, af_packet, tap), unless [port] zero_copy = off. */
bool uroce_port_tx_extbuf(const struct uroce_port *p);
/* Whether frames may leave the IPv4 header checksum to the PMD
 * (RTE_MBUF_F_TX_IP_CKSUM): it offers RTE_ETH_TX_OFFLOAD_IPV4_CKSUM,
 * [port] csum_offload is on and no pcap capture (which sees the bytes
 * before the PMD) is configured. */
bool uroce_port_tx_ip_cksum(const struct uroce_port *p);
/** Whether the ethdev reports its link up now (memif: the peer is there)
 *  and, on a kernel interface (af_xdp, iface=), the interface is up and
 *  running (IFF_UP, IFF_RUNNING: its carrier is on). Control path: a few
 *  syscalls on a kernel interface. */
bool uroce_port_link_up(const struct uroce_port *p);

/** Whether the port is gone for good: its kernel interface no longer
 *  exists, or the ethdev was removed (RTE_ETH_EVENT_INTR_RMV). Its link
 *  is down from then on. */
bool uroce_port_gone(const struct uroce_port *p);

/**
 * uroce_port_link_up(), after trying again the start of a memif client
 * whose server did not listen yet, and first stopping a memif client whose
 * server closed the connection (refused it before its own port started, or
 * left; port.c): quiesce(arg) is called between taking the port out of
 * the lcores' bursts and the stop, and returns once no thread is inside
 * uroce_port_rx() or uroce_port_tx() of the port. A port whose link is up
 * is not touched. One thread at a time (the engine's start, then its link
 * watch).
 */
bool uroce_port_link_poll(struct uroce_port *p, void (*quiesce)(void *),
			  void *arg);

/**
 * A gratuitous ARP for the port's IPv4 address (own neighbours only): it
 * uses the tx queue of lcore 0, so call it before the lcores run.
 */
void uroce_port_announce(struct uroce_port *p);

/**
 * The port's GID table: index 0 the IPv4-mapped GID of [port] ip (when
 * set), then one per ip6 address, then the IPv6 link-local address of the
 * port's MAC (fe80::, modified EUI-64 interface id) unless ip6 lists it.
 * @return the number of entries written.
 */
unsigned int uroce_port_gids(const struct uroce_port *p, union uroce_gid *gid,
			     unsigned int max);

/**
 * Receive up to n frames on queue q (at most 512 per call); pkts must
 * have room for n. ARP is answered (requests for our IP, the reply on queue
 * q) and learnt (requests and replies addressed to us; known entries are
 * refreshed by any ARP) inside, and so are IPv6 neighbour solicitations
 * and advertisements; frames that are not RoCEv2 or are not on the
 * port's VLAN (untagged when it has none) go to the raw hook
 * (uroce_port_set_raw()), else are counted (non_roce) and freed. The
 * frames returned are IPv4/IPv6 UDP frames to port 4791 for the transport
 * to parse (the caller frees them); each is one segment (chains are
 * linearized or copied). Captured to pcap when configured.
 */
uint16_t uroce_port_rx(struct uroce_port *p, uint16_t q,
		       struct rte_mbuf **pkts, uint16_t n);

/**
 * Where the frames go that the stack does not take (not RoCEv2, not ARP,
 * or not on the port's VLAN): fn(arg, q, m) runs inside uroce_port_rx()
 * for each, on queue q's lcore, with m one segment; it returns true when
 * it took m (it frees it), false to have the port count it (non_roce) and
 * free it. The engine steers them to RAW_PACKET QPs (ibv_create_flow(3)).
 * Set it before the queues are polled; NULL restores the default (drop).
 */
typedef bool (*uroce_port_raw_fn)(void *arg, uint16_t q, struct rte_mbuf *m);
void uroce_port_set_raw(struct uroce_port *p, uroce_port_raw_fn fn, void *arg);

/**
 * Transmit n frames on queue q (RoCEv2 ones captured first when
 * configured); the port owns all n afterwards. Frames the ethdev does not
 * take now wait in order on the queue (up to 256) and go first at the next
 * call or uroce_port_tx_flush(): a full ethdev queue stalls, as a NIC's
 * send queue does, and the caller should stop producing while
 * uroce_port_tx_busy(). Only frames beyond what can wait are freed and
 * counted (tx_full). A queue that takes nothing for 100 ms (a dead or
 * frozen memif peer: a NIC's transmit watchdog) is stuck (tx_stuck): what
 * waits is freed (tx_full, though counted in tx_pkts already), and so is
 * what the ethdev refuses until it takes a frame again; it is never busy
 * meanwhile. Fault injection (when configured) acts inside the ethdev tx
 * callback, once per frame (frames queued behind a stalled queue skip
 * it).
 * @return the number of the caller's frames sent or waiting: n minus those
 *   freed as tx_full (a duplicate the fault injector added counts as one of
 *   them).
 */
uint16_t uroce_port_tx(struct uroce_port *p, uint16_t q,
		       struct rte_mbuf **pkts, uint16_t n);

/** Whether frames wait on queue q for the ethdev (back-pressure). */
bool uroce_port_tx_busy(const struct uroce_port *p, uint16_t q);

/** Offer the waiting frames of queue q to the ethdev again.
 *  @return the frames it took. */
uint16_t uroce_port_tx_flush(struct uroce_port *p, uint16_t q);

/**
 * The MAC of gid's next hop (the GID's own address: one subnet). 0 and mac;
 * -EAGAIN: not known yet, an ARP request went out (retried every 100 ms,
 * up to 5 times per uroce_port_poll_ctrl()); -EHOSTUNREACH after the last
 * retry (the call that reports it resets the entry: the next call starts
 * again). Static [neigh] entries answer at once, and so do the port's own
 * GIDs (its own MAC). IPv6 GIDs resolve by neighbour discovery the same
 * way (a neighbour solicitation to the solicited-node multicast address,
 * RFC 4861), IPv4 ones from [neigh] only when the port has no IPv4
 * address. -ENOSPC: the table (512 entries, never expiring) is full.
 * With neigh = kernel (the default on af_xdp) the same calls are answered
 * from the kernel's neighbour table, IPv4 and IPv6, which a control thread
 * of the port reads (rtnetlink) and asks to resolve; -EAGAIN meanwhile,
 * -EHOSTUNREACH after 5 tries 100 ms apart.
 * Lock-free for known entries; safe on any lcore, concurrently with rx.
 */
int uroce_port_resolve(struct uroce_port *p, const union uroce_gid *gid,
		       struct rte_ether_addr *mac);

/**
 * Periodic work on queue q's lcore: sends the pending ARP requests (the
 * first at once, then one every 100 ms of now, 5 in all; an entry still
 * unanswered 100 ms after the fifth fails). now is TSC (rte_rdtsc(), or a
 * fake clock in tests). Cheap when nothing is pending; one lcore at a time
 * does the work (the others return).
 */
void uroce_port_poll_ctrl(struct uroce_port *p, uint16_t q, uint64_t now);
/** Whether uroce_port_poll_ctrl() has anything to do (a resolution under
 *  way): the engine reads its clock for it only then. Any thread. */
bool uroce_port_ctrl_pending(const struct uroce_port *p);

/**
 * Fault injection from now on (uroce-perf's `set fault`): the rates and
 * seed of f (a config's [port] fault, uroce_config_parse_fault()), all 0
 * for none. Safe while lcores poll the port: each queue takes the setting
 * up at its next burst, reseeded as at start, so that a seed repeats; the
 * callbacks are added if the port started without faults. One caller at a
 * time, not during uroce_port_close(). -EINVAL (a probability above 1, in
 * err) changes nothing; an ethdev error leaves no fault injected.
 */
int uroce_port_set_fault(struct uroce_port *p,
			 const struct uroce_config_fault *f, char *err,
			 size_t err_len);

/** A snapshot of the port's counters. */
void uroce_port_stats_get(const struct uroce_port *p,
			  struct uroce_port_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_PORT_H */
