/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * QP1, the General Services Interface (uroce_gsi.h): MADs in and out of a
 * device for a consumer on its own thread.
 *
 * Receive: the lcore that parsed a frame to QP1 checks it (gsi_rules[]),
 * copies the MAD and its source into the consumer's ring (an rte_ring of
 * struct uroce_mad_rx: multi-producer, as every engine lcore receives) and
 * signals the eventfd when the ring goes non-empty: `signalled` is set by
 * the first producer that finds it clear, which writes the fd, and cleared
 * by the consumer once it found the ring empty and drained the fd; the
 * consumer then looks at the ring again, so a MAD enqueued in between
 * is never left behind an unreadable fd.
 *
 * Send: the caller builds the frame (path, neighbour, headers, ICRC) and
 * hands it to engine lcore 0 as a control message, which puts it on the
 * port's queue of that lcore (or loops it back) at once.
 *
 * No consumer: a device nobody runs a CM on still answers CM requests as
 * a host's kernel CM always does (Linux's cm.c answers what matches no
 * listener and no connection): a REQ gets REJ "invalid service ID", a
 * SIDR_REQ a SIDR_REP "service ID not supported", a DREQ a DREP
 * (uroce_cm_unmatched()), sent by the receiving lcore back along the
 * frame's own path, as the kernel's MAD layer answers from the work
 * completion; anything else is dropped (gsi_drop_noagent). So a peer
 * connecting to a process that only opened the device is refused at
 * once instead of waiting out its REQ's retries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "engine_priv.h"
#include "uroce_cm.h"

/* An rte_ring element is a multiple of 4 bytes. */
_Static_assert(sizeof(struct uroce_mad_rx) % 4 == 0, "ring element size");

/* The MAD common header's first bytes (IBTA ch. 13.4). */
#define GSI_MAD_BASE_VERSION	1
#define GSI_CLASS_SUBN_LID	0x01	/* subnet management: QP0's */
#define GSI_CLASS_SUBN_DR	0x81
#define GSI_HOP_LIMIT		64

struct uroce_gsi {
	struct uroce_dev *dev;
	struct rte_ring *ring;		/* struct uroce_mad_rx, MP/MC */
	int efd;
	uint32_t signalled;		/* the fd was written (atomic) */
	uint32_t psn;			/* next BTH PSN sent (atomic) */
};

/* ------------------------------------------------------------------------
 * Receive.
 */

/* The checks of a frame to QP1, in order: the first that fails names the
 * counter of the drop. */
struct gsi_rule {
	bool (*ok)(const struct uroce_pkt *pkt,
		   const struct uroce_ext_fields *ext);
	size_t drop;		/* its counter in struct uroce_dev_stats */
};

static bool
gsi_opcode_ok(const struct uroce_pkt *pkt, const struct uroce_ext_fields *ext)
{
	RTE_SET_USED(ext);
	return pkt->bth.opcode == UROCE_OPC_UD_SEND_ONLY;
}

/* The default partition, full or limited member (IBTA 10.9), as the
 * transport matches it (qp.c, pkey_ok()). */
static bool
gsi_pkey_ok(const struct uroce_pkt *pkt, const struct uroce_ext_fields *ext)
{
	RTE_SET_USED(ext);
	return (pkt->bth.pkey & 0x7fff) == 0x7fff;
}

static bool
gsi_qkey_ok(const struct uroce_pkt *pkt, const struct uroce_ext_fields *ext)
{
	RTE_SET_USED(pkt);
	return ext->deth.qkey == UROCE_GSI_QKEY;
}

static bool
gsi_len_ok(const struct uroce_pkt *pkt, const struct uroce_ext_fields *ext)
{
	RTE_SET_USED(ext);
	return pkt->payload_len == UROCE_MAD_SIZE;
}

/* Base version 1, and no subnet management class: those go to QP0 only
 * (Linux's mad.c filters them the same way). */
static bool
gsi_mad_ok(const struct uroce_pkt *pkt, const struct uroce_ext_fields *ext)
{
	const uint8_t *mad = uroce_pkt_payload(pkt);

	RTE_SET_USED(ext);
	return mad[0] == GSI_MAD_BASE_VERSION && mad[1] != GSI_CLASS_SUBN_LID &&
	       mad[1] != GSI_CLASS_SUBN_DR;
}

#define GSI_RULE(fn, ctr)	{ fn, offsetof(struct uroce_dev_stats, ctr) }
static const struct gsi_rule gsi_rules[] = {
	GSI_RULE(gsi_opcode_ok, gsi_drop_opcode),
	GSI_RULE(gsi_pkey_ok, gsi_drop_pkey),
	GSI_RULE(gsi_qkey_ok, gsi_drop_qkey),
	GSI_RULE(gsi_len_ok, gsi_drop_len),
	GSI_RULE(gsi_mad_ok, gsi_drop_mad),
};

static void
gsi_count(struct uroce_dev_stats *ds, size_t off)
{
	(*(uint64_t *)(void *)((char *)ds + off))++;
}

/* Make the fd readable, unless a producer did since the consumer last
 * found the ring empty. */
static void
gsi_signal(struct uroce_gsi *g)
{
	uint64_t one = 1;

	if (__atomic_exchange_n(&g->signalled, 1, __ATOMIC_SEQ_CST) != 0)
		return;
	if (write(g->efd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is at its maximum, readable anyway. */
	}
}

static uint8_t
gsi_gid_index(const struct uroce_dev *dev, const union uroce_gid *gid)
{
	unsigned int i;

	for (i = 0; i < dev->env.gid_cnt && i < UROCE_GSI_GID_NONE; i++)
		if (memcmp(&dev->env.gid[i], gid, sizeof(*gid)) == 0)
			return (uint8_t)i;
	return UROCE_GSI_GID_NONE;
}

static void
gsi_mad_rx(const struct uroce_dev *dev, const struct uroce_pkt *pkt,
	   const struct uroce_ext_fields *ext, struct uroce_mad_rx *rx)
{
	memcpy(rx->mad, uroce_pkt_payload(pkt), UROCE_MAD_SIZE);
	rx->sgid = pkt->sgid;
	rx->dgid = pkt->dgid;
	rx->src_qp = ext->deth.sqpn & UROCE_QPN_MASK;
	rx->flow_label = pkt->flow_label;
	rx->pkey = pkt->bth.pkey;
	rx->udp_sport = pkt->udp_sport;
	rx->port_num = 1;
	rx->gid_index = gsi_gid_index(dev, &pkt->dgid);
	rx->tclass = pkt->tclass;
	rx->hop_limit = pkt->hop_limit;
}

static int gsi_noagent_reply(struct eng_lcore *lc, struct uroce_dev *dev,
			     const struct uroce_pkt *pkt);

void
eng_gsi_rx(struct eng_lcore *lc, struct uroce_dev *dev,
	   const struct uroce_pkt *pkt)
{
	struct uroce_dev_stats *ds = &lc->dst[dev->idx];
	struct uroce_ext_fields ext;
	struct uroce_mad_rx rx;
	struct uroce_gsi *g;
	unsigned int i;

	uroce_wire_ext_get(pkt, &ext);
	for (i = 0; i < RTE_DIM(gsi_rules); i++) {
		if (!gsi_rules[i].ok(pkt, &ext)) {
			gsi_count(ds, gsi_rules[i].drop);
			return;
		}
	}
	g = __atomic_load_n(&dev->gsi, __ATOMIC_ACQUIRE);
	if (g == NULL) {
		if (gsi_noagent_reply(lc, dev, pkt) == 0)
			ds->gsi_noagent_replied++;
		else
			ds->gsi_drop_noagent++;
		return;
	}
	gsi_mad_rx(dev, pkt, &ext, &rx);
	if (rte_ring_enqueue_elem(g->ring, &rx, sizeof(rx)) != 0) {
		ds->gsi_drop_full++;
		return;
	}
	ds->gsi_rx++;
	gsi_signal(g);
}

/* ------------------------------------------------------------------------
 * The handle.
 */
static void
gsi_free(struct uroce_gsi *g)
{
	if (g->efd >= 0)
		close(g->efd);
	rte_ring_free(g->ring);
	free(g);
}

int
uroce_gsi_open(struct uroce_dev *dev, struct uroce_gsi **out)
{
	static uint32_t seq;
	char name[RTE_RING_NAMESIZE];
	struct uroce_gsi *g;
	int ret = 0;

	if (dev == NULL || out == NULL)
		return -EINVAL;
	if (eng_g == NULL)
		return -ENODEV;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return -ENOMEM;
	g->dev = dev;
	g->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g->efd < 0) {
		ret = -errno;
		gsi_free(g);
		return ret;
	}
	snprintf(name, sizeof(name), "uroce_gsi%u_%u", dev->idx,
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	g->ring = rte_ring_create_elem(name, sizeof(struct uroce_mad_rx),
				       UROCE_GSI_RING_SIZE, SOCKET_ID_ANY,
				       RING_F_EXACT_SZ);
	if (g->ring == NULL) {
		gsi_free(g);
		return -ENOMEM;
	}
	pthread_mutex_lock(&eng_g->lock);
	if (dev->gsi != NULL)
		ret = -EBUSY;
	else
		__atomic_store_n(&dev->gsi, g, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&eng_g->lock);
	if (ret < 0) {
		gsi_free(g);
		return ret;
	}
	*out = g;
	return 0;
}

void
uroce_gsi_close(struct uroce_gsi *g)
{
	if (g == NULL)
		return;
	pthread_mutex_lock(&eng_g->lock);
	__atomic_store_n(&g->dev->gsi, NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&eng_g->lock);
	/* No lcore may still hold g from its load in eng_gsi_rx(). */
	eng_sync();
	gsi_free(g);
}

/* Engine teardown, lcores stopped: a handle left open goes with it. */
void
eng_gsi_dev_close(struct uroce_dev *dev)
{
	if (dev->gsi != NULL)
		gsi_free(dev->gsi);
	dev->gsi = NULL;
}

struct uroce_dev *
uroce_gsi_dev(const struct uroce_gsi *g)
{
	return g->dev;
}

int
uroce_gsi_fd(const struct uroce_gsi *g)
{
	return g != NULL ? g->efd : -EINVAL;
}

int
uroce_gsi_recv(struct uroce_gsi *g, struct uroce_mad_rx *out, unsigned int n)
{
	unsigned int got;
	uint64_t cnt;

	if (g == NULL || (out == NULL && n > 0))
		return -EINVAL;
	got = rte_ring_dequeue_burst_elem(g->ring, out, sizeof(*out), n, NULL);
	if (got < n) {
		/* Found empty: clear the fd, then let producers signal again,
		 * then look again for one that enqueued before that. */
		if (read(g->efd, &cnt, sizeof(cnt)) < 0) {
			/* EAGAIN: it was not readable */
		}
		__atomic_store_n(&g->signalled, 0, __ATOMIC_SEQ_CST);
		if (rte_ring_count(g->ring) > 0)
			gsi_signal(g);
	}
	return (int)got;
}

/* ------------------------------------------------------------------------
 * Send.
 */

/* The UDP source port: fixed without a flow label (uroce_gsi.h); with
 * one, its 20 bits folded into the 14 of the port range 0xC000-0xFFFF. */
static uint16_t
gsi_udp_sport(uint32_t flow_label)
{
	uint32_t fl = flow_label & 0xfffff;

	if (fl == 0)
		return UROCE_GSI_UDP_SPORT;
	return (uint16_t)(UROCE_UDP_SPORT_MIN | ((fl ^ (fl >> 14)) & 0x3fff));
}

/* The path of a MAD to tx->dgid, its next hop resolved. */
static int
gsi_path(struct uroce_dev *dev, const struct uroce_mad_tx *tx,
	 struct uroce_l2l3 *l)
{
	struct ibv_ah_attr ah;
	int ret;

	memset(&ah, 0, sizeof(ah));
	ah.is_global = 1;
	ah.port_num = 1;
	ah.grh.sgid_index = tx->sgid_index;
	memcpy(ah.grh.dgid.raw, tx->dgid.raw, sizeof(ah.grh.dgid.raw));
	ah.grh.traffic_class = tx->tclass;
	ah.grh.hop_limit = tx->hop_limit != 0 ? tx->hop_limit : GSI_HOP_LIMIT;
	ah.grh.flow_label = tx->flow_label & 0xfffff;
	ret = uroce_l2l3_from_ah(&dev->env, &ah, l);
	if (ret < 0)
		return ret;
	l->udp_sport = gsi_udp_sport(l->flow_label);
	return eng_resolve_wait(dev, l);
}

/* The whole frame: UD SEND_ONLY, QP1 to QP1 (IBTA ch. 13.5). */
static int
gsi_frame(struct uroce_dev *dev, uint32_t *psn, const struct uroce_l2l3 *l,
	  const uint8_t *mad, struct rte_mbuf **out)
{
	struct uroce_bth_fields bth = {
		.opcode = UROCE_OPC_UD_SEND_ONLY, .pkey = UROCE_GSI_PKEY,
		.dqpn = UROCE_GSI_QPN,
	};
	struct uroce_ext_fields ext;
	uint32_t len = uroce_wire_hdrs_len(l, UROCE_OPC_UD_SEND_ONLY) +
		UROCE_MAD_SIZE + uroce_wire_trailer_len(UROCE_MAD_SIZE);
	struct rte_mbuf *m = rte_pktmbuf_alloc(dev->env.pool);
	uint8_t *p;

	p = m != NULL && len <= UINT16_MAX ?
	    (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len) : NULL;
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return -ENOMEM;
	}
	memset(&ext, 0, sizeof(ext));
	ext.deth.qkey = UROCE_GSI_QKEY;
	ext.deth.sqpn = UROCE_GSI_QPN;
	bth.psn = __atomic_fetch_add(psn, 1, __ATOMIC_RELAXED) &
		  UROCE_PSN_MASK;
	if (uroce_wire_build(p, len, l, &bth, &ext, mad, UROCE_MAD_SIZE) != len) {
		rte_pktmbuf_free(m);
		return -EINVAL;
	}
	*out = m;
	return 0;
}

struct gsi_tx_msg {
	struct uroce_dev *dev;
	struct rte_mbuf *m;
};

static int
ctrl_gsi_tx(struct eng_lcore *lc, void *arg)
{
	struct gsi_tx_msg *t = arg;

	eng_send_frame(lc, t->dev, t->m);
	lc->dst[t->dev->idx].gsi_tx++;
	free(t);
	return 0;
}

/*
 * Not waited for: the frame is built here, and lcore 0 puts it on the port
 * at its next iteration, in the order the sends were made (one ring). The
 * caller (the CM agent's thread, an application in rdma_connect() or
 * rdma_accept()) goes on instead of sleeping through a round trip to the
 * lcore for each MAD.
 */
int
uroce_gsi_send(struct uroce_gsi *g, const struct uroce_mad_tx *tx)
{
	struct gsi_tx_msg *t;
	struct uroce_l2l3 l;
	struct rte_mbuf *m = NULL;
	int ret;

	if (g == NULL || tx == NULL)
		return -EINVAL;
	ret = gsi_path(g->dev, tx, &l);
	if (ret == 0)
		ret = gsi_frame(g->dev, &g->psn, &l, tx->mad, &m);
	if (ret < 0)
		return ret;
	t = malloc(sizeof(*t));
	if (t == NULL) {
		rte_pktmbuf_free(m);
		return -ENOMEM;
	}
	t->dev = g->dev;
	t->m = m;
	ret = eng_ctrl_post(0, ctrl_gsi_tx, t);
	if (ret < 0) {
		free(t);
		rte_pktmbuf_free(m);
	}
	return ret;
}

/* ------------------------------------------------------------------------
 * The answers of a device with no consumer (see the top).
 */

/* PSNs of those answers: QP1's receivers do not check them. */
static uint32_t noagent_psn;

/* Back along the path @pkt came by: to its Ethernet source and source
 * GID, from the GID it was sent to (one of ours), in its VLAN and
 * traffic class (ECN bits cleared), with QP1's fixed UDP source port. */
static void
gsi_reply_path(const struct uroce_dev *dev, const struct uroce_pkt *pkt,
	       struct uroce_l2l3 *l)
{
	memset(l, 0, sizeof(*l));
	memcpy(l->dmac, pkt->frame + RTE_ETHER_ADDR_LEN, sizeof(l->dmac));
	memcpy(l->smac, dev->mac.addr_bytes, sizeof(l->smac));
	l->vlan = pkt->vlan;
	l->vlan_tci = pkt->vlan_tci;
	l->sgid = pkt->dgid;
	l->dgid = pkt->sgid;
	l->tclass = (uint8_t)(pkt->tclass & ~UROCE_ECN_MASK);
	l->hop_limit = GSI_HOP_LIMIT;
	l->udp_sport = UROCE_GSI_UDP_SPORT;
}

/* The answer to a CM MAD that reached a device with no GSI consumer, sent
 * from this lcore: 0, or negative when there is none to give (not a CM
 * MAD uroce decodes, one that is dropped unanswered, not to our GID). */
static int
gsi_noagent_reply(struct eng_lcore *lc, struct uroce_dev *dev,
		  const struct uroce_pkt *pkt)
{
	struct uroce_cm_msg rcv, out;
	uint8_t mad[UROCE_MAD_LEN];
	struct uroce_l2l3 l;
	struct rte_mbuf *m;
	int ret;

	if (gsi_gid_index(dev, &pkt->dgid) == UROCE_GSI_GID_NONE)
		return -EADDRNOTAVAIL;
	if (uroce_cm_decode(uroce_pkt_payload(pkt), UROCE_MAD_LEN, &rcv) != 0)
		return -EINVAL;
	if (uroce_cm_unmatched(&rcv, false, &out) != 1)
		return -ENOENT;
	ret = uroce_cm_encode(&out, mad);
	if (ret < 0)
		return ret;
	gsi_reply_path(dev, pkt, &l);
	ret = gsi_frame(dev, &noagent_psn, &l, mad, &m);
	if (ret < 0)
		return ret;
	eng_send_frame(lc, dev, m);
	lc->dst[dev->idx].gsi_tx++;
	return 0;
}
