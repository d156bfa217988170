/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Completion queues and completion channels.
 *
 * Polling is the transport's CQ ring (uroce_cq_poll()): no lock, no
 * syscall; under inline progress the poller runs the stack first
 * (uroce_verbs_poll_cq()). ibv_req_notify_cq() arms the CQ (uroce_cq_req_notify()); the
 * owner lcore then calls uroce_verbs_cq_event() for the first matching
 * completion, which queues the CQ on its channel and adds one to the
 * channel's eventfd (semaphore mode: one read, one event). The fd is
 * pollable, and a blocking ibv_get_cq_event() sleeps in read(), it does
 * not spin.
 *
 * A CQ with several events not yet read stays once on the channel's list
 * with a count, so that queueing never allocates on the engine lcore.
 *
 * ibv_destroy_cq(): events not yet read are dropped (their eventfd counts
 * skipped, see verbs_async.c for why they are not read out), and the call
 * waits until every event ibv_get_cq_event() returned was acknowledged
 * (ibv_ack_cq_events(3)).
 */

#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "uroce_engine.h"
#include "verbs_priv.h"

/* ------------------------------------------------------------------------
 * Completion channels.
 */
struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	struct uroce_vchannel *ch;

	if (context == NULL)
		return uroce_verbs_null(EINVAL);
	ch = calloc(1, sizeof(*ch));
	if (ch == NULL)
		return uroce_verbs_null(ENOMEM);
	ch->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ch->ch.fd < 0) {
		int err = errno;

		free(ch);
		return uroce_verbs_null(err);
	}
	ch->ch.context = context;
	ch->ch.refcnt = 0;
	pthread_mutex_init(&ch->lock, NULL);
	TAILQ_INIT(&ch->pending);
	return &ch->ch;
}

/* "0 on success, or the value of errno": EBUSY while CQs use it. */
int
ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct uroce_vchannel *ch = (struct uroce_vchannel *)channel;
	int busy;

	if (channel == NULL)
		return EINVAL;
	pthread_mutex_lock(&channel->context->mutex);
	busy = channel->refcnt;
	pthread_mutex_unlock(&channel->context->mutex);
	if (busy)
		return EBUSY;
	close(channel->fd);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
	return 0;
}

/* Engine lcore, or the thread running the stack under inline progress (an
 * application's poll, or the keeper): the CQ's armed completion arrived. */
void
uroce_verbs_cq_event(void *arg, struct uroce_cq *ucq)
{
	struct uroce_vcq *cq = uroce_dev_cq_user(ucq);
	struct uroce_vchannel *ch = (struct uroce_vchannel *)cq->cq.channel;

	(void)arg;
	if (ch == NULL)
		return;
	pthread_mutex_lock(&ch->lock);
	cq->ev_pending++;
	if (!cq->ev_queued) {
		TAILQ_INSERT_TAIL(&ch->pending, cq, ev_link);
		cq->ev_queued = true;
	}
	pthread_mutex_unlock(&ch->lock);
	uroce_verbs_efd_signal(ch->ch.fd);
}

/* The CQ of the next event, or NULL when its count was one to skip. */
static struct uroce_vcq *
channel_pop(struct uroce_vchannel *ch)
{
	struct uroce_vcq *cq = NULL;

	pthread_mutex_lock(&ch->lock);
	if (ch->skip > 0) {
		ch->skip--;
	} else {
		cq = TAILQ_FIRST(&ch->pending);
		if (cq != NULL && --cq->ev_pending == 0) {
			TAILQ_REMOVE(&ch->pending, cq, ev_link);
			cq->ev_queued = false;
		}
	}
	pthread_mutex_unlock(&ch->lock);
	return cq;
}

/* "0 on success, -1 on error" (ibv_get_cq_event(3)): blocks unless the
 * channel's fd was made non-blocking (then -1 with EAGAIN). */
int
ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
		 void **cq_context)
{
	struct uroce_vcq *c;

	if (channel == NULL || cq == NULL || cq_context == NULL) {
		errno = EINVAL;
		return -1;
	}
	do {
		if (uroce_verbs_efd_wait(channel->fd) != 0)
			return -1;
		c = channel_pop((struct uroce_vchannel *)channel);
	} while (c == NULL);
	pthread_mutex_lock(&c->cq.mutex);
	c->comp_reported++;
	pthread_mutex_unlock(&c->cq.mutex);
	*cq = &c->cq;
	*cq_context = c->cq.cq_context;
	return 0;
}

void
ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (cq == NULL)
		return;
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* ------------------------------------------------------------------------
 * CQs.
 */
/*
 * The CQ behind ibv_create_cq() and ibv_create_cq_ex(): the checks of
 * ibv_create_cq(3) (cqe in 1..max_cqe, comp_vector below
 * num_comp_vectors, a channel of this context), then the engine's CQ.
 * NULL with errno on failure, nothing created.
 */
struct uroce_vcq *
uroce_verbs_cq_new(struct ibv_context *context, int cqe, void *cq_context,
		   struct ibv_comp_channel *channel, int comp_vector,
		   unsigned int flags, struct ibv_pd *pd)
{
	const struct uroce_ring_alloc *alloc;
	struct uroce_vcq *cq;
	int ret;

	if (context == NULL || cqe <= 0 || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors ||
	    (channel != NULL && channel->context != context))
		return uroce_verbs_null(EINVAL);
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return uroce_verbs_null(ENOMEM);
	cq->cq.context = context;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	alloc = uroce_verbs_bufs_init(&cq->bufs, pd);
	ret = uroce_dev_cq_create_ex(uroce_vctx_of(context)->dev,
				     (uint32_t)cqe, flags, alloc, cq, &cq->ucq);
	if (ret < 0) {
		uroce_verbs_bufs_fini(&cq->bufs);
		pthread_cond_destroy(&cq->cq.cond);
		pthread_mutex_destroy(&cq->cq.mutex);
		free(cq);
		return uroce_verbs_null(-ret);
	}
	cq->cq.cqe = (int)uroce_cq_size(cq->ucq);
	/* No channel: no event can reach the application, whatever
	 * ibv_req_notify_cq() asks (the channel is fixed at creation). */
	if (channel == NULL)
		uroce_cq_set_no_events(cq->ucq);
	if (channel != NULL) {
		pthread_mutex_lock(&context->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&context->mutex);
	}
	return cq;
}

struct ibv_cq *
ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct uroce_vcq *cq;

	cq = uroce_verbs_cq_new(context, cqe, cq_context, channel,
				comp_vector, 0, NULL);
	return cq != NULL ? &cq->cq : NULL;
}

/*
 * "0 on success, or the value of errno": EINVAL for cqe below 1, above
 * max_cqe or below the completions the CQ holds. The caller is the CQ's
 * poller (one thread polls a CQ here, uroce_cq.h): it must not poll it
 * from another thread meanwhile, as a provider's CQ lock would make wait.
 */
int
ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct uroce_vcq *cq = (struct uroce_vcq *)ibcq;
	int ret;

	if (ibcq == NULL || cqe <= 0)
		return EINVAL;
	ret = uroce_dev_cq_resize(cq->ucq, (uint32_t)cqe);
	uroce_verbs_bufs_flush(&cq->bufs);	/* the old ring, if resized */
	if (ret < 0)
		return -ret;
	ibcq->cqe = (int)uroce_cq_size(cq->ucq);
	return 0;
}

/* Drop the events of cq that nobody read; their counts are skipped. */
static void
channel_forget(struct uroce_vchannel *ch, struct uroce_vcq *cq)
{
	pthread_mutex_lock(&ch->lock);
	if (cq->ev_queued) {
		TAILQ_REMOVE(&ch->pending, cq, ev_link);
		ch->skip += cq->ev_pending;
		cq->ev_pending = 0;
		cq->ev_queued = false;
	}
	pthread_mutex_unlock(&ch->lock);
}

/* "0 on success, or the value of errno": EBUSY while a QP uses it. */
int
ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct uroce_vcq *cq = (struct uroce_vcq *)ibcq;
	struct ibv_comp_channel *channel;
	int ret;

	if (ibcq == NULL)
		return EINVAL;
	ret = uroce_dev_cq_destroy(cq->ucq);
	if (ret < 0)
		return -ret;
	channel = ibcq->channel;
	if (channel != NULL) {
		channel_forget((struct uroce_vchannel *)channel, cq);
		pthread_mutex_lock(&ibcq->context->mutex);
		channel->refcnt--;
		pthread_mutex_unlock(&ibcq->context->mutex);
	}
	uroce_verbs_async_forget(uroce_vctx_of(ibcq->context), ibcq);
	pthread_mutex_lock(&ibcq->mutex);
	while (ibcq->comp_events_completed != cq->comp_reported ||
	       ibcq->async_events_completed != cq->async_reported)
		pthread_cond_wait(&ibcq->cond, &ibcq->mutex);
	pthread_mutex_unlock(&ibcq->mutex);
	pthread_cond_destroy(&ibcq->cond);
	pthread_mutex_destroy(&ibcq->mutex);
	uroce_verbs_bufs_fini(&cq->bufs);
	free(cq);
	return 0;
}

/*
 * ctx->ops.poll_cq: the count, or a negative value once the CQ overran.
 * Under inline progress ([eal] lcores = 0) the polling thread runs one
 * iteration of the stack first (uroce_engine_poll(): receive, timers,
 * transmit, completions into the CQs), unless another thread runs one now
 * (a trylock): then it only reads its CQ. With engine lcores the call
 * returns at once.
 */
int
uroce_verbs_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	uroce_engine_poll();
	return uroce_cq_poll(((struct uroce_vcq *)cq)->ucq, n, wc);
}

/* ctx->ops.req_notify_cq: "0 on success, or the value of errno". */
int
uroce_verbs_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	uroce_cq_req_notify(((struct uroce_vcq *)cq)->ucq, solicited_only != 0);
	return 0;
}
