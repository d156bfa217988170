/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The agents of the process, one a device (cm_agent_get(), cm_agent_put()),
 * and the thread of each: it sleeps in poll() on the GSI's eventfd, a
 * timerfd armed for the earliest deadline and an eventfd that wakes it
 * when another thread queued events; never spins (two processes of a
 * 2-core machine share it with the engine lcores).
 *
 * The stack is reached through libibverbs.so.1's UROCE_PRIVATE_1 table
 * (uroce_verbs_cm.h), looked up at run time: under rdma-core's libibverbs
 * there is none, and every context is "not a uroce device".
 *
 * At exit the threads stop before the engine does (our atexit handler is
 * registered after the engine's, at the first cm_agent_get(), which needs
 * an open context, so it runs first): the GSI is closed while the engine
 * can still take it back.
 */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/timerfd.h>

#include "agent_priv.h"

RTE_LOG_REGISTER_SUFFIX(cm_agent_logtype, cm.agent, NOTICE);

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reg_cond = PTHREAD_COND_INITIALIZER;
static LIST_HEAD(, cm_agent) reg_agents = LIST_HEAD_INITIALIZER(reg_agents);
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static const struct uroce_verbs_cm_glue *reg_glue;

uint64_t
cm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool
cm_on_thread(const struct cm_agent *a)
{
	return a->thread_started && pthread_equal(pthread_self(), a->thread);
}

void
cm_wake(struct cm_agent *a)
{
	uint64_t one = 1;

	if (write(a->wfd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, the fd readable anyway */
	}
}

void
cm_cb_wait(struct cm_agent *a, const struct cm_conn *c,
	   const struct cm_listener *l)
{
	if (cm_on_thread(a))
		return;
	while ((c != NULL && a->cb_conn == c) ||
	       (l != NULL && a->cb_listener == l))
		pthread_cond_wait(&a->cond, &a->lock);
}

/* ------------------------------------------------------------------------
 * The thread.
 */
static void
drain_fd(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing to drain */
	}
}

/* The last put waits for the connections that still owe answers, at most
 * until its deadline. Lock held. */
static bool
agent_done(struct cm_agent *a, uint64_t now)
{
	struct cm_conn *c;

	if (a->stop)
		return true;
	if (!a->closing)
		return false;
	if (now >= a->close_deadline_ns)
		return true;
	TAILQ_FOREACH(c, &a->conns, link)
		if (cm_conn_needs_answers(c))
			return false;
	return true;
}

static void agent_free(struct cm_agent *a);

/* A put from the agent's own thread (in a callback): it ends itself. */
static void
agent_self_end(struct cm_agent *a)
{
	pthread_mutex_lock(&reg_lock);
	LIST_REMOVE(a, link);
	pthread_cond_broadcast(&reg_cond);
	pthread_mutex_unlock(&reg_lock);
	pthread_detach(pthread_self());
	agent_free(a);
}

static void *
agent_main(void *arg)
{
	struct cm_agent *a = arg;
	struct pollfd p[3] = {
		{ .fd = a->glue->gsi_fd(a->gsi), .events = POLLIN },
		{ .fd = a->tfd, .events = POLLIN },
		{ .fd = a->wfd, .events = POLLIN },
	};
	struct cm_batch b;
	bool done, detached = false;
	uint64_t now;

	do {
		if (poll(p, RTE_DIM(p), -1) < 0 && errno != EINTR) {
			AG_LOG(ERR, "%s: poll: %s\n", a->dev.name, strerror(errno));
			break;
		}
		drain_fd(a->tfd);
		drain_fd(a->wfd);
		cm_rx_all(a);
		memset(&b, 0, sizeof(b));
		now = cm_now_ns();
		pthread_mutex_lock(&a->lock);
		cm_timers(a, now, &b);
		pthread_mutex_unlock(&a->lock);
		cm_batch_send(a, &b);
		cm_deliver(a);
		pthread_mutex_lock(&a->lock);
		done = agent_done(a, cm_now_ns());
		detached = a->detached;
		pthread_mutex_unlock(&a->lock);
	} while (!done);
	if (detached)
		agent_self_end(a);
	return NULL;
}

/* ------------------------------------------------------------------------
 * Make and free.
 */
static void
agent_free(struct cm_agent *a)
{
	struct cm_listener *l;
	struct cm_conn *c;
	struct cm_evq *q;

	while ((q = STAILQ_FIRST(&a->evq)) != NULL) {
		STAILQ_REMOVE_HEAD(&a->evq, link);
		free(q);
	}
	while ((l = LIST_FIRST(&a->listeners)) != NULL) {
		LIST_REMOVE(l, link);
		free(l);
	}
	while ((c = TAILQ_FIRST(&a->conns)) != NULL) {
		c->listener = NULL;
		cm_conn_free(c);
	}
	if (a->gsi != NULL)
		a->glue->gsi_close(a->gsi);
	if (a->tfd >= 0)
		close(a->tfd);
	if (a->wfd >= 0)
		close(a->wfd);
	cm_htab_fini(&a->by_local);
	cm_htab_fini(&a->by_remote);
	cm_htab_fini(&a->by_qpn);
	cm_heap_fini(&a->heap);
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

static uint32_t
random32(void)
{
	uint32_t v = 0;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint32_t)cm_now_ns() ^ (uint32_t)getpid() * 2654435761u;
	return v;
}

/* The thread, with every signal blocked: the program's handlers run on
 * its own threads. */
static int
agent_start(struct cm_agent *a)
{
	sigset_t all, old;
	char name[16];
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&a->thread, NULL, agent_main, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret != 0)
		return -ret;
	a->thread_started = true;
	snprintf(name, sizeof(name), "uroce-cm%u", a->dev.index);
	pthread_setname_np(a->thread, name);
	return 0;
}

static int
agent_new(struct ibv_context *ctx, const struct uroce_verbs_cm_dev *dev,
	  struct cm_agent **out)
{
	struct cm_agent *a = calloc(1, sizeof(*a));
	int ret;

	if (a == NULL)
		return -ENOMEM;
	a->tfd = a->wfd = -1;
	a->dev = *dev;
	a->glue = reg_glue;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	a->timing.cm_resp_timeout = UROCE_CM_DEFAULT_RESP_TIMEOUT;
	a->timing.max_cm_retries = UROCE_CM_DEFAULT_RETRIES;
	a->timing.packet_life = UROCE_CM_DEFAULT_PACKET_LIFE;
	a->tid_hi = (uint64_t)random32() << 32;
	a->next_comm_id = random32();
	TAILQ_INIT(&a->conns);
	LIST_INIT(&a->listeners);
	STAILQ_INIT(&a->evq);
	ret = cm_htab_init(&a->by_local);
	if (ret == 0)
		ret = cm_htab_init(&a->by_remote);
	if (ret == 0)
		ret = cm_htab_init(&a->by_qpn);
	if (ret == 0)
		ret = a->glue->gsi_open(ctx, &a->gsi);
	if (ret == 0) {
		a->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		a->wfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		ret = a->tfd < 0 || a->wfd < 0 ? -errno : agent_start(a);
	}
	if (ret != 0) {
		agent_free(a);
		return ret;
	}
	*out = a;
	return 0;
}

/* ------------------------------------------------------------------------
 * The registry.
 */
static void
agents_at_exit(void)
{
	struct cm_agent *a;

	pthread_mutex_lock(&reg_lock);
	LIST_FOREACH(a, &reg_agents, link) {
		pthread_mutex_lock(&a->lock);
		a->stop = true;
		pthread_mutex_unlock(&a->lock);
		cm_wake(a);
		if (a->thread_started && !cm_on_thread(a)) {
			pthread_join(a->thread, NULL);
			a->thread_started = false;
			a->glue->gsi_close(a->gsi);
			a->gsi = NULL;
		}
	}
	pthread_mutex_unlock(&reg_lock);
}

static void
reg_init(void)
{
	reg_glue = uroce_verbs_cm_glue_find(UROCE_VERBS_CM_GLUE_V1);
	if (reg_glue == NULL)
		AG_LOG(NOTICE, "libibverbs.so.1 is not uroce's: no CM agent\n");
	cm_telemetry_register();
}

/* The agent of @idx, live or draining; registry lock held. */
static struct cm_agent *
reg_find(unsigned int idx)
{
	struct cm_agent *a;

	LIST_FOREACH(a, &reg_agents, link)
		if (a->dev.index == idx)
			return a;
	return NULL;
}

int
cm_agent_get(struct ibv_context *ctx, struct cm_agent **out)
{
	static bool exit_hook;
	struct uroce_verbs_cm_dev dev;
	struct cm_agent *a;
	int ret;

	if (ctx == NULL || out == NULL)
		return -EINVAL;
	pthread_once(&reg_once, reg_init);
	if (reg_glue == NULL)
		return -ENODEV;
	ret = reg_glue->dev(ctx, &dev);
	if (ret != 0)
		return ret;
	pthread_mutex_lock(&reg_lock);
	/* One that drains is waited for: the GSI has one consumer. */
	while ((a = reg_find(dev.index)) != NULL && a->closing) {
		if (cm_on_thread(a)) {
			pthread_mutex_unlock(&reg_lock);
			return -EBUSY;
		}
		pthread_cond_wait(&reg_cond, &reg_lock);
	}
	if (a != NULL) {
		a->refs++;
	} else {
		ret = agent_new(ctx, &dev, &a);
		if (ret == 0) {
			a->refs = 1;
			LIST_INSERT_HEAD(&reg_agents, a, link);
			if (!exit_hook)
				exit_hook = atexit(agents_at_exit) == 0;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	*out = ret == 0 ? a : NULL;
	return ret;
}

/* The longest time-wait of the agent's connections. Lock held. */
static uint64_t
longest_timewait(const struct cm_agent *a)
{
	static const struct uroce_cm_timing dflt = {
		.packet_life = UROCE_CM_DEFAULT_PACKET_LIFE,
	};
	uint64_t t = uroce_cm_timewait_ns(&dflt);
	const struct cm_conn *c;

	TAILQ_FOREACH(c, &a->conns, link)
		t = RTE_MAX(t, uroce_cm_timewait_ns(&c->fsm.timing));
	return t;
}

void
cm_agent_put(struct cm_agent *a)
{
	bool self;

	if (a == NULL)
		return;
	pthread_mutex_lock(&reg_lock);
	if (--a->refs > 0) {
		pthread_mutex_unlock(&reg_lock);
		return;
	}
	self = cm_on_thread(a);
	pthread_mutex_lock(&a->lock);
	a->closing = true;
	a->detached = self;
	a->close_deadline_ns = cm_now_ns() + longest_timewait(a);
	cm_timer_arm(a);
	pthread_mutex_unlock(&a->lock);
	pthread_mutex_unlock(&reg_lock);
	cm_wake(a);
	if (self)
		return;		/* the thread ends itself after the callback */
	if (a->thread_started)
		pthread_join(a->thread, NULL);
	a->thread_started = false;
	pthread_mutex_lock(&reg_lock);
	LIST_REMOVE(a, link);
	pthread_cond_broadcast(&reg_cond);
	pthread_mutex_unlock(&reg_lock);
	agent_free(a);
}

int
cm_agent_set_timing(struct cm_agent *a, const struct uroce_cm_timing *t)
{
	if (a == NULL || t == NULL || t->cm_resp_timeout > 31 ||
	    t->max_cm_retries > 15 || t->packet_life > 30)
		return -EINVAL;
	pthread_mutex_lock(&a->lock);
	a->timing = *t;
	pthread_mutex_unlock(&a->lock);
	return 0;
}

void
cm_registry_walk(void (*fn)(struct cm_agent *a, void *arg), void *arg)
{
	struct cm_agent *a;

	pthread_mutex_lock(&reg_lock);
	LIST_FOREACH(a, &reg_agents, link)
		fn(a, arg);
	pthread_mutex_unlock(&reg_lock);
}
