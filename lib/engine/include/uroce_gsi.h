/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_GSI_H
#define UROCE_GSI_H

/**
 * @file
 * QP1, the General Services Interface (IBTA vol. 1 ch. 13.5), on every
 * device: the transport of 256-byte MADs, for the connection manager.
 *
 * Receive. A RoCEv2 frame whose BTH destination QP is 1 never reaches an
 * application QP (QPNs 0 and 1 are never allocated). The receiving engine
 * lcore checks it as a GSI checks what it receives, in this order, and
 * counts each drop in the device's counters (struct uroce_dev_stats, and
 * the same names in DPDK telemetry's /uroce/ports):
 *  - gsi_drop_opcode: not UD SEND_ONLY (0x64; MADs carry no immediate);
 *  - gsi_drop_pkey: a P_Key that does not match the default partition
 *    (0xFFFF or 0x7FFF, the rule the transport applies, IBTA 10.9);
 *  - gsi_drop_qkey: a DETH Q_Key other than 0x80010000, QP1's well-known
 *    Q_Key (IBTA vol. 1 ch. 13.5; IB_QP1_QKEY in Linux's ib_mad.h);
 *  - gsi_drop_len: a payload other than 256 bytes, the size of a MAD
 *    (IBTA ch. 13.4; ib_mad.h: a 24-byte header and 232 bytes of data);
 *  - gsi_drop_mad: a MAD base version other than 1, or a subnet
 *    management class (0x01, 0x81), which only QP0 takes (as Linux's
 *    mad.c, validate_mad(), filters them);
 *  - gsi_drop_noagent: valid, but nobody has the device's GSI open, and
 *    not a CM message that the device answers then: a REQ, SIDR_REQ or
 *    DREQ to one of its GIDs gets the answer of a host whose kernel CM
 *    knows no listener and no connection (REJ "invalid service ID",
 *    SIDR_REP "service ID not supported", DREP), sent back along the
 *    frame's path and counted in gsi_noagent_replied (and gsi_tx);
 *  - gsi_drop_full: valid, but the consumer's ring is full.
 * A MAD that passes is copied with its source (struct uroce_mad_rx) into
 * the device's ring and counted in gsi_rx.
 *
 * Send. uroce_gsi_send() builds a UD SEND_ONLY from QP 1 to QP 1, Q_Key
 * 0x80010000, P_Key 0xFFFF, with the 256-byte MAD as its payload, and the
 * device's engine lcore 0 puts it on the port (or loops it back to a local
 * device), counted in gsi_tx. Its UDP source port is 0xC000, as a
 * ConnectX sends (mlx5 AHs: r_roce_min_src_udp_port, 49152), unless the
 * caller gives a flow label: then the label folded into 0xC000..0xFFFF
 * (IBTA A17.5.1 lets the source port carry the flow's entropy).
 *
 * Threads. One consumer per device: uroce_gsi_open() fails with -EBUSY
 * while the device's GSI is open. The handle's functions may be called
 * from any thread that is not an engine lcore (nor an engine callback):
 * receive is lock-free; send waits for the neighbour, not for the engine
 * lcore that transmits it (a control message nobody waits for: sends leave
 * in the order they were made). uroce_gsi_close() must not run at the same
 * time as another call on the handle; uroce_engine_fini() closes a handle
 * left open (it is invalid from then on).
 */

#include <stdint.h>

#include "uroce_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

struct uroce_dev;
struct uroce_gsi;

/** A MAD's size: a 24-byte common header and 232 bytes (IBTA ch. 13.4). */
#define UROCE_MAD_SIZE		256
/** The GSI's QP number and its well-known Q_Key (IBTA ch. 13.5). */
#define UROCE_GSI_QPN		1
#define UROCE_GSI_QKEY		0x80010000u
/** The default P_Key, what the GSI sends. */
#define UROCE_GSI_PKEY		0xffff
/** The UDP source port of a MAD sent without a flow label. */
#define UROCE_GSI_UDP_SPORT	0xc000
/** MADs a device's ring holds before gsi_drop_full. */
#define UROCE_GSI_RING_SIZE	1024
/** uroce_mad_rx.gid_index when the destination is none of the port's GIDs. */
#define UROCE_GSI_GID_NONE	0xff

/** A received MAD and where it came from. */
struct uroce_mad_rx {
	uint8_t mad[UROCE_MAD_SIZE];	/**< the payload, as received */
	union uroce_gid sgid;		/**< sender: IP source (IPv4-mapped or IPv6) */
	union uroce_gid dgid;		/**< the frame's destination IP as a GID */
	uint32_t src_qp;		/**< DETH source QP */
	uint32_t flow_label;		/**< IPv6 flow label (0 over IPv4) */
	uint16_t pkey;			/**< BTH P_Key */
	uint16_t udp_sport;		/**< UDP source port */
	uint8_t port_num;		/**< receiving port: 1 (one port a device) */
	uint8_t gid_index;		/**< dgid's index in the port's GID table,
					 *   or UROCE_GSI_GID_NONE */
	uint8_t tclass;			/**< IP TOS / traffic class */
	uint8_t hop_limit;		/**< TTL / hop limit */
};

/** A MAD to send to a remote GSI (destination QP 1). */
struct uroce_mad_tx {
	uint8_t mad[UROCE_MAD_SIZE];
	union uroce_gid dgid;		/**< destination (IPv4-mapped or IPv6) */
	uint8_t sgid_index;		/**< source GID: of the same family */
	uint8_t tclass;			/**< GRH traffic class (DSCP; ECN Not-ECT) */
	uint8_t hop_limit;		/**< 0: 64 */
	uint32_t flow_label;		/**< 20 bits; 0: none */
};

/**
 * Open dev's GSI: from now on its valid MADs go to the handle's ring.
 * @return 0; -EINVAL (NULL), -ENODEV (no engine), -EBUSY (open already),
 *   -ENOMEM, or eventfd()'s error.
 */
int uroce_gsi_open(struct uroce_dev *dev, struct uroce_gsi **out);

/**
 * Close it: once this returns no engine lcore touches the handle, the
 * MADs still in its ring are dropped and new ones are answered or
 * counted as gsi_drop_noagent (above). NULL: no-op.
 */
void uroce_gsi_close(struct uroce_gsi *g);

/** The device of a handle. */
struct uroce_dev *uroce_gsi_dev(const struct uroce_gsi *g);

/**
 * An eventfd (non-blocking, close-on-exec, owned by the handle) for
 * poll/epoll: readable when MADs wait in the ring. It may be readable with
 * the ring empty (uroce_gsi_recv() then returns 0); it is never left
 * unreadable with MADs waiting after uroce_gsi_recv() returned fewer than
 * it was asked for.
 */
int uroce_gsi_fd(const struct uroce_gsi *g);

/**
 * Up to n received MADs into out[], oldest first. When the ring is found
 * empty the fd's counter is cleared (and set again if a MAD came in
 * meanwhile). @return the number taken (0: none waiting); -EINVAL.
 */
int uroce_gsi_recv(struct uroce_gsi *g, struct uroce_mad_rx *out,
		   unsigned int n);

/**
 * Send one MAD (see Send above). The next hop is resolved first (a local
 * device's GID at once; else ARP / neighbour discovery or the kernel's
 * table), waiting up to 2 s while the engine progresses, as
 * uroce_dev_ah_create() does.
 * @return 0 once the frame is queued for engine lcore 0, which puts it
 *   on the port at its next iteration (UD: no completion);
 *   -EINVAL (NULL, sgid_index out of the GID table, GID families differ);
 *   -EHOSTUNREACH (the neighbour did not answer); -ENOMEM (no mbuf);
 *   -ENOSPC (the port's neighbour table is full).
 */
int uroce_gsi_send(struct uroce_gsi *g, const struct uroce_mad_tx *tx);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_GSI_H */
