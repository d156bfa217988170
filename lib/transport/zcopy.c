/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Zero-copy transmit. An RC request packet whose payload is at
 * least env->tx_zc_min bytes is built as a chain instead of a copy:
 *
 *   [headers: direct mbuf] -> [piece: external buffer = registered memory]
 *   ... one segment per SGE piece ... -> [pad + ICRC: direct mbuf]
 *
 * The ICRC is computed over the pieces where they lie
 * (uroce_wire_icrc_begin/end). Inline data, payloads below the threshold,
 * UC and UD stay copied (wqe.c).
 *
 * When application memory may be read. A frame that points into an MR
 * must not be read once the application may reuse or free that memory.
 * The rules that guarantee it, each kept by the named code:
 *
 *  1. Only ports whose tx_burst is done with a frame's bytes when it
 *     returns get a non-zero tx_zc_min (uroce_port_zero_copy(),
 *     lib/net/port.c: memif in copy mode, af_packet and tap copy the frame
 *     or writev() it; net_ring/ringlink hand the mbuf itself to the peer,
 *     a NIC reads at DMA time: no zero-copy there). Whatever keeps a frame
 *     past the tx_burst call inside uroce copies it first: loopback between
 *     local devices (eng_linear_copy), the fault injector's held, corrupted
 *     and duplicated frames (lib/net/fault.c). The engine flushes its
 *     batches before each iteration ends. So a zero-copy frame references
 *     application memory only from its build to the end of the engine
 *     iteration that built it.
 *  2. RC only. An RC WQE completes after the ACK that covers it, and the
 *     ACK exists because the peer received a copy of the frame: the
 *     application cannot see the completion while the first transmission
 *     is unsent. A retransmission of the same PSN still in the batch when
 *     a late ACK completes the WQE (same iteration) may carry bytes the
 *     application changed meanwhile: its ICRC then fails, or it is a
 *     duplicate the responder does not write (IBTA 9.9.2): harmless. UC and
 *     UD complete when the frame is built, before tx_burst, so they copy.
 *  3. ibv_dereg_mr() returns after eng_sync() (lib/engine/dev.c): every
 *     lcore has ended the iteration in which it built a frame from the
 *     region, so by rule 1 no frame points into it any more. Frames built
 *     afterwards go through the key table and fail (IBV_WC_LOC_PROT_ERR).
 *  4. QP destroy. The segments reference a struct uroce_zc allocated apart
 *     from the QP: its rte_mbuf_ext_shared_info counts 1 for the QP plus 1
 *     per attached segment. Destroy drops the QP's count; the last segment
 *     freed calls zc_free_cb(), which frees the struct. A frame that
 *     outlives its QP (a frame a test kept, a batch flushed after a
 *     destroy) thus never points at freed metadata, and the memory rule is
 *     rule 3's: the application's buffers stay valid until it deregisters.
 *
 * Threads: the count is changed on the QP's owner lcore only (build, and
 * the free inside tx_burst or the loopback copy on that lcore), which the
 * non-atomic fast path of rte_mbuf_ext_refcnt_update() (taken at count 1)
 * requires.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "qp_priv.h"
#include "zcopy_priv.h"
#include "uroce_memguard.h"

/* The count is 16 bits: beyond this many segments in flight, copy. */
#define ZC_INFLIGHT_MAX	(UINT16_MAX - 1)

struct uroce_zc {
	struct rte_mbuf_ext_shared_info shinfo;
};

/* The last reference went: the QP is gone and no segment is attached. */
static void
zc_free_cb(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	free(opaque);
}

int
uroce_zc_qp_init(struct uroce_qp *qp)
{
	struct uroce_zc *zc;

	if (qp->type != IBV_QPT_RC || qp->env->tx_zc_min == 0)
		return 0;
	zc = calloc(1, sizeof(*zc));
	if (zc == NULL)
		return -ENOMEM;
	zc->shinfo.free_cb = zc_free_cb;
	zc->shinfo.fcb_opaque = zc;
	rte_mbuf_ext_refcnt_set(&zc->shinfo, 1);	/* the QP's */
	qp->zc = zc;
	return 0;
}

void
uroce_zc_qp_fini(struct uroce_qp *qp)
{
	struct uroce_zc *zc = qp->zc;

	if (zc == NULL)
		return;
	qp->zc = NULL;
	if (rte_mbuf_ext_refcnt_update(&zc->shinfo, -1) == 0)
		free(zc);
	else
		QP_LOG(DEBUG, qp, "destroyed with %u zero-copy segments in flight",
		       rte_mbuf_ext_refcnt_read(&zc->shinfo));
}

uint32_t
uroce_qp_zc_inflight(const struct uroce_qp *qp)
{
	if (qp->zc == NULL)
		return 0;
	return rte_mbuf_ext_refcnt_read(&qp->zc->shinfo) - 1u;
}

/* Append host[0, n) to the chain at tail as an external-buffer segment. */
static int
zc_attach(struct uroce_qp *qp, struct rte_mbuf *h, struct rte_mbuf **tail,
	  void *host, uint32_t n)
{
	struct rte_mbuf_ext_shared_info *shinfo = &qp->zc->shinfo;
	struct rte_mbuf *m;

	if (rte_mbuf_ext_refcnt_read(shinfo) >= ZC_INFLIGHT_MAX)
		return -ENOMEM;
	m = rte_pktmbuf_alloc(qp->env->pool);
	if (m == NULL)
		return -ENOMEM;
	rte_mbuf_ext_refcnt_update(shinfo, 1);
	/* Software links only (rule 1): no IOVA is needed. n <= path MTU. */
	rte_pktmbuf_attach_extbuf(m, host, RTE_BAD_IOVA, (uint16_t)n, shinfo);
	m->data_len = (uint16_t)n;
	(*tail)->next = m;
	*tail = m;
	h->nb_segs++;
	h->pkt_len += n;
	return 0;
}

/* The payload's pieces, [off, off + len) of the gather list, onto the
 * chain; the same walk and checks as the copy (wqe.c sge_copy()). */
static int
zc_payload(struct uroce_qp *qp, const struct uroce_send_wqe *w, uint32_t off,
	   uint32_t len, struct rte_mbuf *h, struct rte_mbuf **tail,
	   uint32_t *crc)
{
	const struct ibv_sge *sge = (const struct ibv_sge *)w->data;
	unsigned int i;
	void *host;
	uint32_t n;
	int ret;

	for (i = 0; i < w->num_sge && len > 0; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		n = RTE_MIN(sge[i].length - off, len);
		ret = uroce_mr_check_local(qp->env->mrs, qp->pd, sge[i].lkey,
					   sge[i].addr + off, n, 0, &host);
		/* The CRC reads the piece first: memory unmapped since the
		 * registration fails here, before a frame points at it. */
		if (ret == 0)
			ret = uroce_memguard_crc(crc, host, n);
		if (ret == 0)
			ret = zc_attach(qp, h, tail, host, n);
		if (ret < 0)
			return ret;
		len -= n;
		off = 0;
	}
	return len == 0 ? 0 : -EMSGSIZE;
}

/* Pad and ICRC (least significant byte first, IBTA A17.3.3) in a last
 * direct segment: the application's memory is never written. */
static int
zc_trailer(struct uroce_qp *qp, struct rte_mbuf *h, struct rte_mbuf *tail,
	   uint32_t crc, uint32_t plen)
{
	uint32_t pad = -plen & 3u;
	struct rte_mbuf *t = rte_pktmbuf_alloc(qp->env->pool);
	uint32_t icrc = uroce_wire_icrc_end(crc, plen);
	uint8_t *b;

	if (t == NULL)
		return -ENOMEM;
	b = (uint8_t *)rte_pktmbuf_append(t, (uint16_t)(pad + UROCE_ICRC_LEN));
	memset(b, 0, pad);
	b[pad + 0] = (uint8_t)icrc;
	b[pad + 1] = (uint8_t)(icrc >> 8);
	b[pad + 2] = (uint8_t)(icrc >> 16);
	b[pad + 3] = (uint8_t)(icrc >> 24);
	tail->next = t;
	h->nb_segs++;
	h->pkt_len += t->data_len;
	return 0;
}

int
uroce_zc_send(struct uroce_qp *qp, const struct uroce_send_wqe *w,
	      const struct uroce_bth_fields *bth,
	      const struct uroce_ext_fields *ext, uint32_t off, uint32_t plen,
	      struct uroce_txb *txb)
{
	const struct uroce_l2l3 *l2l3 = &qp->path;
	uint32_t hl = uroce_wire_hdrs_len(l2l3, bth->opcode);
	struct rte_mbuf *h, *tail;
	uint8_t *buf;
	uint32_t crc;
	int ret;

	h = rte_pktmbuf_alloc(qp->env->pool);
	if (h == NULL)
		return -ENOMEM;
	buf = (uint8_t *)rte_pktmbuf_append(h, (uint16_t)hl);
	if (buf == NULL ||
	    uroce_wire_write_hdrs_ol(buf, l2l3, bth, ext, plen,
				     uroce_frame_tx_ol(qp, h, l2l3)) != hl) {
		rte_pktmbuf_free(h);
		return -ENOMEM;
	}
	crc = uroce_wire_icrc_begin(buf, hl);
	tail = h;
	ret = zc_payload(qp, w, off, plen, h, &tail, &crc);
	if (ret == 0)
		ret = zc_trailer(qp, h, tail, crc, plen);
	if (ret < 0) {
		rte_pktmbuf_free(h);	/* detaches what was attached */
		return ret;
	}
	qp->stats.tx_pkts++;
	qp->stats.tx_bytes += h->pkt_len;
	uroce_txb_add(txb, h);
	return 0;
}
