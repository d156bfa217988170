/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Asynchronous events (ibv_get_async_event(3)): each context has a queue
 * of events and context->async_fd, an eventfd in semaphore mode that
 * counts them. The fd is what applications poll() (or make non-blocking
 * with fcntl), as with the kernel's uverbs async fd: one read(), one
 * event; a blocking read sleeps in the kernel, it does not spin.
 *
 * Events of an object being destroyed are taken out of the queue; their
 * counts stay in the eventfd and are skipped (ev_skip) by the next
 * readers, because taking them out of the eventfd could block when a
 * reader has already consumed the count of an event it is about to find
 * gone. A skipped count can make poll() report the fd readable once for
 * nothing: ibv_get_async_event() then blocks, or fails with EAGAIN on a
 * non-blocking fd, which the man page allows.
 *
 * Acknowledgement: ibv_destroy_qp(), ibv_destroy_cq() and ibv_destroy_srq()
 * wait until every
 * event they reported was acknowledged (ibv_ack_async_event(3)), through
 * the objects' own mutex and cond, as rdma-core does.
 */

#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "uroce_engine.h"
#include "verbs_priv.h"

/* The open contexts: a port event goes to every context of its device. */
static TAILQ_HEAD(, uroce_vctx) ctx_list = TAILQ_HEAD_INITIALIZER(ctx_list);
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;

/* c->dev set. */
int
uroce_verbs_async_init(struct uroce_vctx *c)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);

	if (fd < 0)
		return errno;
	pthread_mutex_init(&c->ev_lock, NULL);
	c->ev_head = 0;
	c->ev_cnt = 0;
	c->ev_skip = 0;
	c->vctx.context.async_fd = fd;
	pthread_mutex_lock(&ctx_lock);
	TAILQ_INSERT_TAIL(&ctx_list, c, link);
	pthread_mutex_unlock(&ctx_lock);
	return 0;
}

void
uroce_verbs_async_fini(struct uroce_vctx *c)
{
	pthread_mutex_lock(&ctx_lock);
	TAILQ_REMOVE(&ctx_list, c, link);
	pthread_mutex_unlock(&ctx_lock);
	close(c->vctx.context.async_fd);
	c->vctx.context.async_fd = -1;
	pthread_mutex_destroy(&c->ev_lock);
}

/* The device of the open context whose cmd_fd is the file (fdev, fino),
 * a reference taken; NULL if none is (ibv_import_device()). */
struct uroce_verbs_device *
uroce_verbs_ctx_file_device(dev_t fdev, ino_t fino)
{
	struct uroce_verbs_device *vdev = NULL;
	struct uroce_vctx *c;

	pthread_mutex_lock(&ctx_lock);
	TAILQ_FOREACH(c, &ctx_list, link) {
		if (c->file_dev == fdev && c->file_ino == fino) {
			vdev = c->vdev;
			uroce_verbs_device_get(vdev);
			break;
		}
	}
	pthread_mutex_unlock(&ctx_lock);
	return vdev;
}

/* Add one to an eventfd; it cannot overflow at our rates. */
void
uroce_verbs_efd_signal(int fd)
{
	uint64_t one = 1;

	/* Fails only when the counter is full (2^64 - 2 events): the
	 * readers have plenty to read already. */
	if (write(fd, &one, sizeof(one)) != sizeof(one))
		return;
}

/* Take one count from an eventfd, blocking unless the fd is O_NONBLOCK. */
int
uroce_verbs_efd_wait(int fd)
{
	uint64_t v;

	for (;;) {
		if (read(fd, &v, sizeof(v)) == sizeof(v))
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

void
uroce_verbs_async_post(struct uroce_vctx *c, const struct ibv_async_event *ev)
{
	bool queued = false;

	pthread_mutex_lock(&c->ev_lock);
	if (c->ev_cnt < UROCE_VERBS_ASYNC_QUEUE) {
		c->ev_q[(c->ev_head + c->ev_cnt) % UROCE_VERBS_ASYNC_QUEUE] = *ev;
		c->ev_cnt++;
		queued = true;
	} else {
		c->ev_lost++;
	}
	pthread_mutex_unlock(&c->ev_lock);
	if (queued)
		uroce_verbs_efd_signal(c->vctx.context.async_fd);
}

void
uroce_verbs_async_forget(struct uroce_vctx *c, const void *obj)
{
	unsigned int i, kept = 0;

	pthread_mutex_lock(&c->ev_lock);
	for (i = 0; i < c->ev_cnt; i++) {
		struct ibv_async_event *e =
			&c->ev_q[(c->ev_head + i) % UROCE_VERBS_ASYNC_QUEUE];

		/* The element is a union of pointers (and a port number). */
		if (e->element.qp == obj) {
			c->ev_skip++;
			continue;
		}
		c->ev_q[(c->ev_head + kept) % UROCE_VERBS_ASYNC_QUEUE] = *e;
		kept++;
	}
	c->ev_cnt = kept;
	pthread_mutex_unlock(&c->ev_lock);
}

static bool
event_is_cq(enum ibv_event_type ev)
{
	return ev == IBV_EVENT_CQ_ERR;
}

static bool
event_is_srq(enum ibv_event_type ev)
{
	return ev == IBV_EVENT_SRQ_ERR || ev == IBV_EVENT_SRQ_LIMIT_REACHED;
}

static bool
event_is_qp(enum ibv_event_type ev)
{
	switch (ev) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return true;
	default:
		return false;
	}
}

/* Engine lcore (or an SRQ's modifier): an affiliated event of one of our
 * QPs, SRQs or CQs. */
/* The link of device dev went up or down, or the device is gone
 * (DEVICE_FATAL, unaffiliated: port_num 1 as for the port events): to
 * every context open on it, port 1 (the only one). */
static void
port_event(struct ibv_async_event *ev, const struct uroce_dev *dev)
{
	struct uroce_vctx *c;

	ev->element.port_num = 1;
	pthread_mutex_lock(&ctx_lock);
	TAILQ_FOREACH(c, &ctx_list, link) {
		if (c->dev == dev)
			uroce_verbs_async_post(c, ev);
	}
	pthread_mutex_unlock(&ctx_lock);
}

void
uroce_verbs_async_event(void *arg, enum ibv_event_type type, void *obj)
{
	struct ibv_async_event ev = { .event_type = type };
	struct ibv_context *ctx;

	(void)arg;
	if (event_is_cq(type)) {
		struct uroce_vcq *cq = uroce_dev_cq_user(obj);

		ev.element.cq = &cq->cq;
		ctx = cq->cq.context;
	} else if (event_is_qp(type)) {
		struct uroce_vqp *qp = ((struct uroce_qp *)obj)->user;

		ev.element.qp = &qp->qp;
		ctx = qp->qp.context;
	} else if (event_is_srq(type)) {
		struct uroce_vsrq *srq = ((struct uroce_srq *)obj)->user;

		ev.element.srq = &srq->srq;
		ctx = srq->srq.context;
	} else if (type == IBV_EVENT_PORT_ACTIVE || type == IBV_EVENT_PORT_ERR ||
		   type == IBV_EVENT_DEVICE_FATAL) {
		port_event(&ev, obj);
		return;
	} else {
		return;	/* no WQs come this way */
	}
	uroce_verbs_async_post(uroce_vctx_of(ctx), &ev);
}

/* The next queued event, or false when its count was one to skip. */
static bool
async_pop(struct uroce_vctx *c, struct ibv_async_event *ev)
{
	bool got = false;

	pthread_mutex_lock(&c->ev_lock);
	if (c->ev_skip > 0) {
		c->ev_skip--;
	} else if (c->ev_cnt > 0) {
		*ev = c->ev_q[c->ev_head];
		c->ev_head = (c->ev_head + 1) % UROCE_VERBS_ASYNC_QUEUE;
		c->ev_cnt--;
		got = true;
	}
	pthread_mutex_unlock(&c->ev_lock);
	return got;
}

/* Count an event handed to the application, for the destroy's wait. */
static void
async_reported(const struct ibv_async_event *ev)
{
	if (event_is_cq(ev->event_type)) {
		struct uroce_vcq *cq = (struct uroce_vcq *)ev->element.cq;

		pthread_mutex_lock(&cq->cq.mutex);
		cq->async_reported++;
		pthread_mutex_unlock(&cq->cq.mutex);
	} else if (event_is_qp(ev->event_type)) {
		struct uroce_vqp *qp = (struct uroce_vqp *)ev->element.qp;

		pthread_mutex_lock(&qp->qp.mutex);
		qp->async_reported++;
		pthread_mutex_unlock(&qp->qp.mutex);
	} else if (event_is_srq(ev->event_type)) {
		struct uroce_vsrq *srq = (struct uroce_vsrq *)ev->element.srq;

		pthread_mutex_lock(&srq->srq.mutex);
		srq->async_reported++;
		pthread_mutex_unlock(&srq->srq.mutex);
	}
}

/* "0 on success, -1 on error" (ibv_get_async_event(3)). */
int
ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct uroce_vctx *c;

	if (context == NULL || event == NULL) {
		errno = EINVAL;
		return -1;
	}
	c = uroce_vctx_of(context);
	for (;;) {
		if (uroce_verbs_efd_wait(context->async_fd) != 0)
			return -1;
		if (async_pop(c, event))
			break;
	}
	async_reported(event);
	return 0;
}

void
ibv_ack_async_event(struct ibv_async_event *event)
{
	pthread_mutex_t *m;
	pthread_cond_t *cv;
	uint32_t *done;

	if (event == NULL)
		return;
	if (event_is_cq(event->event_type)) {
		struct ibv_cq *cq = event->element.cq;

		m = &cq->mutex;
		cv = &cq->cond;
		done = &cq->async_events_completed;
	} else if (event_is_qp(event->event_type)) {
		struct ibv_qp *qp = event->element.qp;

		m = &qp->mutex;
		cv = &qp->cond;
		done = &qp->events_completed;
	} else if (event_is_srq(event->event_type)) {
		struct ibv_srq *srq = event->element.srq;

		m = &srq->mutex;
		cv = &srq->cond;
		done = &srq->events_completed;
	} else {
		return;
	}
	pthread_mutex_lock(m);
	++*done;
	pthread_cond_signal(cv);
	pthread_mutex_unlock(m);
}
