/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * libFuzzer target for the CM MAD decoder (lib/cm/mad.c) and what reads a
 * decoded MAD: arbitrary bytes are decoded from an exact-size heap copy
 * (ASan sees any read past it). A MAD that decodes must encode again, and
 * that encoding must decode to the same message and differ from the input
 * only in reserved bits (re-encoding changes nothing). Its CMA header is
 * read, it is answered as an unmatched message, and it is stepped into a
 * connection in a state picked by the input's last byte: any refusal must
 * leave the connection as it was.
 */
#include <stdlib.h>
#include <string.h>

#include "uroce_cm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The RECV input of each CM attribute, REQ..SIDR_REP. */
static const enum uroce_cm_input recv_in[] = {
	UROCE_CM_IN_RECV_REQ, UROCE_CM_IN_RECV_MRA, UROCE_CM_IN_RECV_REJ,
	UROCE_CM_IN_RECV_REP, UROCE_CM_IN_RECV_RTU, UROCE_CM_IN_RECV_DREQ,
	UROCE_CM_IN_RECV_DREP, UROCE_CM_IN_RECV_SIDR_REQ, UROCE_CM_IN_RECV_SIDR_REP,
};

static void
step_into(const struct uroce_cm_msg *m, uint8_t pick)
{
	static const struct uroce_cm_timing t = { 20, 15, 16 };
	struct uroce_cm_conn c, before;
	struct uroce_cm_effects fx;
	struct uroce_cm_msg out;
	int ret;

	uroce_cm_conn_init(&c, m->rtu.remote_comm_id, &t);
	c.state = (enum uroce_cm_state)(pick % UROCE_CM_STATE_COUNT);
	c.remote_comm_id = (pick & 0x80) ? m->rtu.local_comm_id : 0;
	c.last_sent = UROCE_CM_ATTR_RTU;
	before = c;
	ret = uroce_cm_step(&c, recv_in[m->hdr.attr_id - UROCE_CM_ATTR_REQ], m, 1, &fx);
	if (ret != 0 && memcmp(&c, &before, sizeof(c)) != 0)
		abort();	/* a refusal changed the connection */
	if (ret == 0 && (fx.fx & UROCE_CM_FX_REPLY) &&
	    uroce_cm_reply(&c, m, fx.send_attr, fx.rej_reason, &out) != 0)
		abort();	/* a reply the effects ask for cannot be built */
	(void)uroce_cm_unmatched(m, pick & 1, &out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t mad[UROCE_MAD_LEN];
	struct uroce_cm_msg m, again;
	struct uroce_cma_hdr h;
	uint8_t *copy, *priv;

	if (size > 4096)
		return 0;
	copy = malloc(size ? size : 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	if (uroce_cm_decode(copy, size, &m) != 0) {
		free(copy);
		return 0;
	}
	if (uroce_cm_encode(&m, mad) != 0 ||
	    uroce_cm_decode(mad, sizeof(mad), &again) != 0 ||
	    memcmp(&m, &again, sizeof(m)) != 0)
		abort();	/* what decodes must encode back to itself */
	for (size_t i = 0; i < sizeof(mad); i++)
		if ((mad[i] & ~copy[i]) != 0)
			abort();	/* encoding sets no bit the input had clear */
	priv = uroce_cm_priv(&m);
	if (priv == NULL)
		abort();
	(void)uroce_cma_hdr_get(priv, uroce_cm_priv_len(m.hdr.attr_id), &h);
	step_into(&m, copy[size - 1]);
	free(copy);
	return 0;
}
