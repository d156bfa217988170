/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Event channels (rdma_create_event_channel(3), rdma_get_cm_event(3)).
 * A channel's fd is the read end of a pipe holding one byte per queued
 * event: poll and epoll see it readable while an event waits, and
 * rdma_get_cm_event() reads one byte from it, so it blocks, or fails with
 * EAGAIN when the application set O_NONBLOCK on the fd, exactly as the
 * read of the kernel's rdma_cm device does.
 *
 * The library writes and takes bytes back through an open file
 * description of its own (the pipe reopened through /proc, O_RDWR and
 * O_NONBLOCK), so that it never blocks and never touches the flags of the
 * application's fd. Under the channel's lock, with R readers that took a
 * byte and wait for the lock:
 *
 *     bytes in the pipe + R == queued events - owed + stale
 *
 * owed counts events queued while the pipe was full, paid back as readers
 * make room; stale counts bytes readers took for events removed unread (a
 * destroyed or migrated id), which the next readers to take the lock skip.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdmacm_priv.h"

/* The pipe, and the library's own non-blocking description of it (the
 * write end stands in, with no way to take a byte back, where /proc is
 * not mounted). */
static int
channel_open(struct cma_channel *c)
{
	char path[32];
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
	c->own_fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (c->own_fd >= 0) {
		close(p[1]);
		c->take_back = true;
	} else if (fcntl(p[1], F_SETFL, O_NONBLOCK) == 0) {
		c->own_fd = p[1];
	} else {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	c->ch.fd = p[0];
	return 0;
}

struct cma_channel *
cma_channel_new(void)
{
	struct cma_channel *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	if (channel_open(c) < 0) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	TAILQ_INIT(&c->queue);
	return c;
}

void
cma_channel_free(struct cma_channel *c)
{
	struct cma_event *e;

	while ((e = TAILQ_FIRST(&c->queue)) != NULL) {
		TAILQ_REMOVE(&c->queue, e, link);
		free(e);
	}
	close(c->ch.fd);
	close(c->own_fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

struct rdma_event_channel *
rdma_create_event_channel(void)
{
	struct cma_channel *c = cma_channel_new();

	if (c == NULL)
		return NULL;	/* errno from calloc or eventfd */
	return &c->ch;
}

void
rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	if (channel != NULL)
		cma_channel_free(cma_channel_of(channel));
}

/* One byte for an event just queued; none while the pipe is full (the
 * event is owed one). Under the channel's lock. */
static void
channel_signal(struct cma_channel *c)
{
	uint8_t b = 1;

	if (c->owed > 0 || write(c->own_fd, &b, 1) != 1)
		c->owed++;
}

/* A reader took a byte: pay an owed event into the room it made. Under
 * the channel's lock. */
static void
channel_repay(struct cma_channel *c)
{
	uint8_t b = 1;

	if (c->owed > 0 && write(c->own_fd, &b, 1) == 1)
		c->owed--;
}

/* Take back the byte of an event removed unread: an owed one has none; a
 * reader may hold it already (it then skips). Under the channel's lock. */
static void
channel_unsignal(struct cma_channel *c)
{
	uint8_t b;

	if (c->owed > 0)
		c->owed--;
	else if (!c->take_back || read(c->own_fd, &b, 1) != 1)
		c->stale++;
}

struct cma_event *
cma_event_new(struct cma_id *id, struct cma_id *listen,
	      enum rdma_cm_event_type type, int status, const void *priv,
	      size_t len)
{
	struct cma_event *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return NULL;
	if (len > sizeof(e->priv))
		len = sizeof(e->priv);
	e->id = id;
	e->listen = listen;
	e->ev.id = &id->id;
	e->ev.listen_id = listen ? &listen->id : NULL;
	e->ev.event = type;
	e->ev.status = status;
	if (priv != NULL && len > 0) {
		memcpy(e->priv, priv, len);
		if (id->id.qp_type == IBV_QPT_UD) {
			e->ev.param.ud.private_data = e->priv;
			e->ev.param.ud.private_data_len = (uint8_t)len;
		} else {
			e->ev.param.conn.private_data = e->priv;
			e->ev.param.conn.private_data_len = (uint8_t)len;
		}
	}
	return e;
}

/* Queue @e (complete: the application may read and free it at once),
 * taking a reference on its id; a request goes to its listener's
 * channel. */
void
cma_event_queue(struct cma_event *e)
{
	struct cma_id *owner = e->listen ? e->listen : e->id;
	struct cma_channel *c;

	cma_id_get(e->id);
	CMA_LOG(DEBUG, "id %p: %s, status %d", (void *)e->id,
		rdma_event_str(e->ev.event), e->ev.status);
	pthread_mutex_lock(&owner->lock);
	c = cma_channel_of(owner->id.channel);
	pthread_mutex_lock(&c->lock);
	TAILQ_INSERT_TAIL(&c->queue, e, link);
	channel_signal(c);
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&owner->lock);
}

/* Atomics, no lock: the count is given back under the channel's lock,
 * which nests inside the id's. */
bool
cma_backlog_take(struct cma_id *l)
{
	int n = __atomic_load_n(&l->req_queued, __ATOMIC_RELAXED);

	do {
		if (n >= l->backlog)
			return false;
	} while (!__atomic_compare_exchange_n(&l->req_queued, &n, n + 1, false,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	return true;
}

void
cma_backlog_give(struct cma_id *l)
{
	__atomic_fetch_sub(&l->req_queued, 1, __ATOMIC_ACQ_REL);
}

int
cma_post(struct cma_id *id, struct cma_id *listen,
	 enum rdma_cm_event_type type, int status, const void *priv,
	 size_t len)
{
	struct cma_event *e = cma_event_new(id, listen, type, status, priv,
					    len);

	if (e == NULL)
		return -ENOMEM;
	cma_event_queue(e);
	return 0;
}

/*
 * A reader blocked on a channel another thread destroys: the pipe's last
 * writer is gone, and its read ends with nothing. The read of the kernel's
 * device goes on waiting for an event that never comes (the file lives on
 * while the read runs), and programs count on it: cmtime's event thread is
 * still blocked in it when main() destroys the channel and returns. So
 * does this one, without touching the freed channel; signal handlers still
 * run.
 */
static void __attribute__((noreturn))
channel_gone(void)
{
	for (;;)
		pause();
}

int
rdma_get_cm_event(struct rdma_event_channel *channel,
		  struct rdma_cm_event **event)
{
	struct cma_channel *c;
	struct cma_event *e = NULL;
	uint8_t b;

	if (channel == NULL || event == NULL)
		return cma_err(-EINVAL);
	c = cma_channel_of(channel);
	for (;;) {
		ssize_t n = read(c->ch.fd, &b, 1);

		if (n == 0)
			channel_gone();
		if (n != 1)
			return -1;	/* errno: EAGAIN, EINTR */
		pthread_mutex_lock(&c->lock);
		channel_repay(c);
		if (c->stale > 0)
			c->stale--;	/* the byte of an event taken back */
		else
			e = TAILQ_FIRST(&c->queue);
		if (e != NULL) {
			TAILQ_REMOVE(&c->queue, e, link);
			/* read: out of its listener's backlog (under the
			 * channel's lock, which a destroy of the listener
			 * takes to drop its queued requests) */
			if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST &&
			    e->listen != NULL)
				cma_backlog_give(e->listen);
		}
		pthread_mutex_unlock(&c->lock);
		if (e != NULL)
			break;
	}
	*event = &e->ev;
	return 0;
}

int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cma_event *e = (struct cma_event *)event;

	if (event == NULL)
		return cma_err(-EINVAL);
	cma_id_put(e->id);
	free(e);
	return 0;
}

void
cma_channel_move(struct cma_id *id, struct cma_channel *to)
{
	struct cma_channel *from = cma_channel_of(id->id.channel);
	struct cma_event *e, *next;

	pthread_mutex_lock(&from->lock);
	for (e = TAILQ_FIRST(&from->queue); e != NULL; e = next) {
		next = TAILQ_NEXT(e, link);
		if (e->id != id && e->listen != id)
			continue;
		TAILQ_REMOVE(&from->queue, e, link);
		channel_unsignal(from);
		pthread_mutex_lock(&to->lock);
		TAILQ_INSERT_TAIL(&to->queue, e, link);
		channel_signal(to);
		pthread_mutex_unlock(&to->lock);
	}
	pthread_mutex_unlock(&from->lock);
}

/*
 * Drop the unread events of @id, as the kernel drops those of a destroyed
 * id. A CONNECT_REQUEST of a listener carries a new id nobody has seen: it
 * is destroyed too (its connection rejected by the agent).
 */
void
cma_channel_drop(struct cma_id *id)
{
	struct cma_channel *c = cma_channel_of(id->id.channel);
	struct cma_event *e, *next;
	TAILQ_HEAD(, cma_event) dropped = TAILQ_HEAD_INITIALIZER(dropped);

	pthread_mutex_lock(&c->lock);
	for (e = TAILQ_FIRST(&c->queue); e != NULL; e = next) {
		next = TAILQ_NEXT(e, link);
		if (e->id != id && e->listen != id)
			continue;
		TAILQ_REMOVE(&c->queue, e, link);
		channel_unsignal(c);
		if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST &&
		    e->listen != NULL && e->listen != id)
			cma_backlog_give(e->listen);
		TAILQ_INSERT_TAIL(&dropped, e, link);
	}
	pthread_mutex_unlock(&c->lock);
	while ((e = TAILQ_FIRST(&dropped)) != NULL) {
		TAILQ_REMOVE(&dropped, e, link);
		if (e->listen == id && e->id != id) {
			cma_id_put(e->id);
			cma_id_destroy_now(e->id);
		} else {
			cma_id_put(e->id);
		}
		free(e);
	}
}

static const char *const event_names[] = {
	[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
	[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
	[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
	[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
	[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
	[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
	[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
	[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
	[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
	[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
	[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
	[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
	[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
	[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
	[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
	[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
};

const char *
rdma_event_str(enum rdma_cm_event_type event)
{
	if ((unsigned int)event < sizeof(event_names) / sizeof(event_names[0]))
		return event_names[event];
	return "UNKNOWN EVENT";
}
