/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_GLUE_H
#define UROCE_GLUE_H

/**
 * @file
 * pmd_glue: from a [port] dev string to an ethdev port id, per link kind.
 * The port layer (lib/net) configures and starts what this returns.
 *
 * Dev string grammar:
 *
 *	dev      = ringlink | af_xdp | pci | vdev
 *	ringlink = "ringlink:" NAME ",side=" ("0" | "1")
 *	af_xdp   = "af_xdp:" IFACE ["," devargs]   e.g. af_xdp:eth1
 *	pci      = [DOMAIN ":"] BUS ":" DEV "." FN ["," devargs]
 *	vdev     = DRIVER INSTANCE ["," devargs]     e.g. net_memif0,role=server
 *
 * ringlink:NAME,side=S is uroce's in-process link for tests and labs: two
 * ports of one process (side 0 and side 1 of the same NAME, NAME of 1..16
 * characters [A-Za-z0-9_]) joined by rte_rings through rte_eth_from_rings(),
 * side 0's tx queue q being side 1's rx queue q and back; one ring pair per
 * queue, both sides with the same number of queues. Frames cross by
 * pointer: each side must free what it receives. The ethdev is named
 * "net_ring_ul_NAME_S"; its MAC defaults to 02:75:72:xx:xx:0S (xx: a hash
 * of NAME).
 *
 * af_xdp:IFACE is net_af_xdp on kernel interface IFACE (the vdev
 * net_af_xdp_IFACE,iface=IFACE) with one AF_XDP socket per queue
 * (queue_count = the queue pairs asked for) and uroce's XDP program
 * (pmd_glue/xdp/uroce_xdp.bpf.c, through xdp_prog=), which redirects only
 * RoCEv2 to our addresses and passes the rest to the kernel. A raw
 * "net_af_xdp...,iface=IFACE" string gets the same (queue_count and
 * xdp_prog added unless given). Attach fails with -EBUSY and a message
 * naming the interface when someone else's XDP program (or a live uroce)
 * is on it; a stale program of ours (its process gone) is replaced. The
 * program is detached at detach. The PMD and the kernel allow as many
 * queues as the interface's combined channels (1 on a veth).
 *
 * vdev (net_memif*, net_af_packet*, net_tap*, net_ring*, any other vdev)
 * and PCI strings go to rte_dev_probe(); a device that EAL already created
 * (e.g. from --vdev) is used as it is and not removed at detach.
 *
 * Threads: attach/detach on the control thread only.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rte_ethdev.h>
#include <rte_ether.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UROCE_GLUE_MAX_QUEUES		16
#define UROCE_GLUE_RINGLINK_NAME_MAX	16
#define UROCE_GLUE_RINGLINK_MAX		16	/**< live ringlinks per process */
#define UROCE_GLUE_RINGLINK_SIZE	1024	/**< frames per ring */

enum uroce_glue_kind {
	UROCE_GLUE_RINGLINK,
	UROCE_GLUE_MEMIF,
	UROCE_GLUE_AF_PACKET,
	UROCE_GLUE_TAP,
	UROCE_GLUE_AF_XDP,
	UROCE_GLUE_RING,
	UROCE_GLUE_VDEV,		/**< any other vdev */
	UROCE_GLUE_PCI,
	UROCE_GLUE_KIND_COUNT
};

/** What the port layer needs to know about an attached link. */
struct uroce_glue_link {
	uint16_t port_id;
	enum uroce_glue_kind kind;
	/** Frames above the PMD's reported max MTU pass (memif, ring): keep
	 *  the configured MTU rather than failing. */
	bool big_frames;
	/** The link does not filter on the destination MAC (memif, ring): a
	 *  MAC the PMD refuses to set can be kept in software. */
	bool soft_mac;
	/** The link comes up only when the peer runs (memif): the port's
	 *  open does not wait for it; the engine's start waits [port]
	 *  link_wait for every link. */
	bool peer_link;
	bool has_default_mac;		/**< default_mac is set (ringlink) */
	struct rte_ether_addr default_mac;
	bool probed;			/**< we created it: remove at detach */
	char name[RTE_ETH_NAME_MAX_LEN];	/**< the ethdev's name */
	void *priv;			/**< ringlink state */
	/** The kernel interface (af_xdp, and af_packet/tap with iface=),
	 *  else "" and 0. */
	char ifname[16];
	unsigned int ifindex;
	uint32_t xdp_prog_id;		/**< af_xdp: our program, once claimed */
	uint32_t xdp_flags;		/**< the XDP_FLAGS_*_MODE it runs in */
	unsigned int side;		/**< ringlink side */
	bool memif_server;		/**< memif: role=server */
	/** memif server: its socket= path (sun_path's 108 bytes). */
	char memif_sock[108];
	/** memif client: the control socket its last start opened (fd and
	 *  inode; fd -1: closed already), when cc_watch. */
	bool cc_watch;
	int cc_fd;
	ino_t cc_ino;
};

/**
 * Create (or find) the ethdev named by dev with room for nb_queues queue
 * pairs (1..UROCE_GLUE_MAX_QUEUES). The ethdev is not configured yet.
 * @return 0 and *link; or a negative errno with one line in err (without
 *   the "[port] dev = ..." prefix, which the caller adds): -EINVAL (bad
 *   string), -ENODEV (no such driver or device), -EBUSY (ringlink side in
 *   use), -ENOSPC (too many ringlinks), -ENOMEM.
 */
int uroce_glue_attach(const char *dev, uint16_t nb_queues,
		      struct uroce_glue_link *link, char *err, size_t err_len);

/**
 * Before the caller stops the ethdev of a link it is closing: wait for the
 * peer where the PMD needs the two sides to go in turn (memif: see
 * glue.c). Returns at once for other kinds.
 */
void uroce_glue_before_stop(const struct uroce_glue_link *link);

/**
 * rte_eth_dev_start() of a memif client, noting the control socket it
 * opens to the server (pmd_glue/memif.c), for uroce_glue_memif_dropped().
 * @return what rte_eth_dev_start() returns (-EPERM: no server listening).
 */
int uroce_glue_memif_start(struct uroce_glue_link *link);

/**
 * Whether a memif client started by uroce_glue_memif_start() has lost its
 * control channel: the server refused the handshake (its port was not
 * started yet) or left. The PMD does not connect again by itself; it is
 * done with the port, which the caller may stop and start again. Reads
 * one fstat(); false when the socket could not be told.
 */
bool uroce_glue_memif_dropped(const struct uroce_glue_link *link);

/**
 * Close the ethdev (after the caller stopped it) and remove what attach
 * created: the vdev or PCI device we probed, a ringlink side (its rings go
 * with the last side). A device EAL created is only stopped, not closed.
 */
void uroce_glue_detach(struct uroce_glue_link *link);

/**
 * af_xdp ports, after the ethdev started (the PMD attaches the program when
 * its queues are set up): check the program on the interface is ours, mark
 * it as this process's (a later run can tell it stale after a crash) and
 * give it the n addresses (16 bytes each, IPv4 as ::ffff:a.b.c.d) whose
 * RoCEv2 it is to redirect. No-op on other kinds.
 * @return 0, or a negative errno with one line in err naming the interface.
 */
int uroce_glue_xdp_claim(struct uroce_glue_link *link,
			 const uint8_t (*addr)[16], unsigned int n, char *err,
			 size_t err_len);

/** "ringlink", "memif", "af_packet", "tap", "af_xdp", "ring", "vdev", "pci". */
const char *uroce_glue_kind_name(enum uroce_glue_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_GLUE_H */
