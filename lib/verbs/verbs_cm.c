/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * UROCE_PRIVATE_1: the GSI of a context's device for uroce's
 * librdmacm.so.1 (uroce_verbs_cm.h), and its QP changes in one call. A
 * device's GSI has one engine handle (uroce_gsi_open() admits one
 * consumer); contexts of the same device share it through a counted
 * wrapper, found by the device.
 */

#include <endian.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_common.h>

#include "uroce_engine.h"
#include "uroce_gsi.h"
#include "uroce_verbs_cm.h"
#include "verbs_priv.h"

_Static_assert(UROCE_VERBS_MAD_SIZE == UROCE_MAD_SIZE, "MAD size");
_Static_assert(UROCE_VERBS_GID_NONE == UROCE_GSI_GID_NONE, "GID none");

struct uroce_verbs_gsi {
	struct uroce_dev *dev;
	struct uroce_gsi *g;
	unsigned int refs;		/* under gsi_lock */
	LIST_ENTRY(uroce_verbs_gsi) link;
};

static pthread_mutex_t gsi_lock = PTHREAD_MUTEX_INITIALIZER;
static LIST_HEAD(, uroce_verbs_gsi) gsi_open_list =
	LIST_HEAD_INITIALIZER(gsi_open_list);

/* A context of this library: its ops are ours (another provider's
 * context never reaches us, but the caller may hand anything). */
static struct uroce_vctx *
cm_vctx(struct ibv_context *ctx)
{
	if (ctx == NULL || ctx->ops.poll_cq != uroce_verbs_poll_cq)
		return NULL;
	return uroce_vctx_of(ctx);
}

static int
cm_dev(struct ibv_context *ctx, struct uroce_verbs_cm_dev *out)
{
	struct uroce_vctx *c;

	if (ctx == NULL || out == NULL)
		return -EINVAL;
	c = cm_vctx(ctx);
	if (c == NULL)
		return -ENODEV;
	memset(out, 0, sizeof(*out));
	out->index = uroce_dev_index(c->dev);
	out->node_guid = be64toh(c->vdev->node_guid);
	snprintf(out->name, sizeof(out->name), "%s", ctx->device->name);
	return 0;
}

static int
cm_gsi_open(struct ibv_context *ctx, struct uroce_verbs_gsi **out)
{
	struct uroce_verbs_gsi *v;
	struct uroce_vctx *c;
	int ret = 0;

	if (ctx == NULL || out == NULL)
		return -EINVAL;
	c = cm_vctx(ctx);
	if (c == NULL)
		return -ENODEV;
	pthread_mutex_lock(&gsi_lock);
	LIST_FOREACH(v, &gsi_open_list, link)
		if (v->dev == c->dev)
			break;
	if (v != NULL) {
		v->refs++;
	} else {
		v = calloc(1, sizeof(*v));
		ret = v == NULL ? -ENOMEM : uroce_gsi_open(c->dev, &v->g);
		if (ret == 0) {
			v->dev = c->dev;
			v->refs = 1;
			LIST_INSERT_HEAD(&gsi_open_list, v, link);
		} else {
			free(v);
			v = NULL;
		}
	}
	pthread_mutex_unlock(&gsi_lock);
	*out = v;
	return ret;
}

static void
cm_gsi_close(struct uroce_verbs_gsi *v)
{
	bool last;

	if (v == NULL)
		return;
	pthread_mutex_lock(&gsi_lock);
	last = --v->refs == 0;
	if (last)
		LIST_REMOVE(v, link);
	pthread_mutex_unlock(&gsi_lock);
	if (!last)
		return;
	uroce_gsi_close(v->g);
	free(v);
}

static int
cm_gsi_fd(const struct uroce_verbs_gsi *v)
{
	return v != NULL ? uroce_gsi_fd(v->g) : -EINVAL;
}

/* The engine's records are copied field by field: the two layouts are
 * free to differ. */
static void
cm_rx_copy(struct uroce_verbs_mad_rx *o, const struct uroce_mad_rx *r)
{
	memcpy(o->mad, r->mad, sizeof(o->mad));
	memcpy(o->sgid.raw, r->sgid.raw, sizeof(o->sgid.raw));
	memcpy(o->dgid.raw, r->dgid.raw, sizeof(o->dgid.raw));
	o->src_qp = r->src_qp;
	o->flow_label = r->flow_label;
	o->pkey = r->pkey;
	o->udp_sport = r->udp_sport;
	o->port_num = r->port_num;
	o->gid_index = r->gid_index;
	o->tclass = r->tclass;
	o->hop_limit = r->hop_limit;
}

#define CM_RX_BURST	16

static int
cm_gsi_recv(struct uroce_verbs_gsi *v, struct uroce_verbs_mad_rx *out,
	    unsigned int n)
{
	struct uroce_mad_rx rx[CM_RX_BURST];
	unsigned int got = 0;
	int i, r;

	if (v == NULL || (out == NULL && n > 0))
		return -EINVAL;
	do {
		r = uroce_gsi_recv(v->g, rx, RTE_MIN(n - got, (unsigned int)CM_RX_BURST));
		for (i = 0; i < r; i++)
			cm_rx_copy(&out[got + i], &rx[i]);
		got += r > 0 ? (unsigned int)r : 0;
	} while (r == CM_RX_BURST && got < n);
	return r < 0 ? r : (int)got;
}

static int
cm_gsi_send(struct uroce_verbs_gsi *v, const struct uroce_verbs_mad_tx *t)
{
	struct uroce_mad_tx tx;

	if (v == NULL || t == NULL)
		return -EINVAL;
	memset(&tx, 0, sizeof(tx));
	memcpy(tx.mad, t->mad, sizeof(tx.mad));
	memcpy(tx.dgid.raw, t->dgid.raw, sizeof(tx.dgid.raw));
	tx.sgid_index = t->sgid_index;
	tx.tclass = t->tclass;
	tx.hop_limit = t->hop_limit;
	tx.flow_label = t->flow_label;
	return uroce_gsi_send(v->g, &tx);
}

static int
cm_modify_qp_seq(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		 const int *mask, unsigned int n, unsigned int *done)
{
	if (done != NULL)
		*done = 0;
	if (qp == NULL || done == NULL)
		return -EINVAL;
	if (cm_vctx(qp->context) == NULL)
		return -ENODEV;
	return uroce_verbs_modify_qp_seq(qp, attr, mask, n, done);
}

static struct ibv_qp *
cm_create_qp_init(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr,
		  struct ibv_qp_attr *first, int first_mask)
{
	if (ctx == NULL || first == NULL)
		return uroce_verbs_null(EINVAL);
	if (cm_vctx(ctx) == NULL)
		return uroce_verbs_null(ENODEV);
	return uroce_verbs_create_qp_init(ctx, attr, first, first_mask);
}

static const struct uroce_verbs_cm_glue cm_glue = {
	.version = UROCE_VERBS_CM_GLUE_V3,
	.dev = cm_dev,
	.gsi_open = cm_gsi_open,
	.gsi_close = cm_gsi_close,
	.gsi_fd = cm_gsi_fd,
	.gsi_recv = cm_gsi_recv,
	.gsi_send = cm_gsi_send,
	.modify_qp_seq = cm_modify_qp_seq,
	.create_qp_init = cm_create_qp_init,
};

const struct uroce_verbs_cm_glue *
uroce_verbs_cm_glue(int version)
{
	return version >= UROCE_VERBS_CM_GLUE_V1 &&
	       version <= UROCE_VERBS_CM_GLUE_V3 ? &cm_glue : NULL;
}
