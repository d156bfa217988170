/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Control messages: a QP's control verbs run on its owner lcore
 * (docs/architecture.md, Threads and ownership: one owner per QP), so the
 * transport's owner-side state never needs a lock. A caller on another
 * thread puts a message (a function and its argument, on the caller's
 * stack) on the owner's MPSC ring and waits for the answer; the owner runs
 * it at the start of its next iteration, waking the lcore if it sleeps,
 * and the caller waits on a futex the owner wakes (wake.c): neither side's
 * timed sleep is in the round trip. A message nobody waits for
 * (eng_ctrl_post(): a new QP for the owned list, a MAD to send) is on the
 * heap and freed by the owner. The call runs inline when the caller is
 * the owner, or in native mode, where it takes the native lock
 * that uroce_engine_poll() (and the keeper, keeper.c) holds for an
 * iteration.
 *
 * eng_sync() waits until no lcore can still hold a pointer it found before
 * the call: the readers are the background lcores (rte_rcu_qsbr, one
 * quiescent report per iteration), or in native mode the poller, which
 * holds the native lock for a whole iteration.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_pause.h>

#include "engine_priv.h"

/* A message's progress (eng_ctrl.done, a futex word). */
enum {
	CTRL_PENDING,
	CTRL_WAITING,			/* the caller sleeps on the word */
	CTRL_DONE,			/* the owner's last touch of it */
};

/* Pauses before the caller sleeps: the owner, awake on another core,
 * answers within a few microseconds. */
#define ENG_CTRL_SPIN	256

struct eng_ctrl {
	eng_ctrl_fn fn;
	void *arg;
	int ret;
	bool posted;			/* eng_ctrl_post(): nobody waits */
	uint32_t done;			/* CTRL_*, atomic */
};

/* Wait politely: spin a little, then yield, then sleep (2-core machines). */
static void
eng_wait_step(unsigned int *spins)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 20000 };

	if (++*spins < 64)
		rte_pause();
	else if (*spins < 128)
		sched_yield();
	else
		nanosleep(&ts, NULL);
}

/* Native mode: take the progress lock the way a control message waits,
 * never a bare spin: its holder (an application thread in an iteration,
 * the keeper) may be preempted on a machine with fewer cores than busy
 * threads. */
static void
eng_native_lock(void)
{
	unsigned int spins = 0;

	while (!rte_spinlock_trylock(&eng_g->native_lock))
		eng_wait_step(&spins);
}

/* The caller: until the owner has answered @msg. */
static void
ctrl_wait(struct eng_ctrl *msg)
{
	uint32_t v = CTRL_PENDING;
	unsigned int spins;

	for (spins = 0; spins < ENG_CTRL_SPIN; spins++) {
		if (__atomic_load_n(&msg->done, __ATOMIC_ACQUIRE) == CTRL_DONE)
			return;
		rte_pause();
	}
	if (!__atomic_compare_exchange_n(&msg->done, &v, CTRL_WAITING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;			/* v is CTRL_DONE */
	while (__atomic_load_n(&msg->done, __ATOMIC_ACQUIRE) != CTRL_DONE)
		eng_futex_wait(&msg->done, CTRL_WAITING, 0);
}

int
eng_ctrl_run(unsigned int owner, eng_ctrl_fn fn, void *arg)
{
	struct eng_lcore *lc = eng_g->lc[owner];
	struct eng_ctrl msg = { .fn = fn, .arg = arg };
	unsigned int spins = 0;
	int ret;

	if (RTE_PER_LCORE(eng_cur) == lc)
		return fn(lc, arg);
	if (eng_g->nb_bg == 0) {
		eng_native_lock();
		RTE_PER_LCORE(eng_cur) = lc;
		ret = fn(lc, arg);
		RTE_PER_LCORE(eng_cur) = NULL;
		uroce_spin_unlock(&eng_g->native_lock);
		return ret;
	}
	while (rte_ring_mp_enqueue(lc->ctrl, &msg) != 0)
		eng_wait_step(&spins);
	eng_lcore_wake(lc);
	ctrl_wait(&msg);
	return msg.ret;
}

/*
 * A control message nobody waits for: @fn owns @arg, and the owner frees
 * the message. 0 once queued; -ENOMEM, @fn not run.
 * Inline, as eng_ctrl_run(), on the owner and in native mode.
 */
int
eng_ctrl_post(unsigned int owner, eng_ctrl_fn fn, void *arg)
{
	struct eng_lcore *lc = eng_g->lc[owner];
	struct eng_ctrl *msg;
	unsigned int spins = 0;

	if (RTE_PER_LCORE(eng_cur) == lc || eng_g->nb_bg == 0)
		return eng_ctrl_run(owner, fn, arg);
	msg = calloc(1, sizeof(*msg));
	if (msg == NULL)
		return -ENOMEM;
	msg->fn = fn;
	msg->arg = arg;
	msg->posted = true;
	while (rte_ring_mp_enqueue(lc->ctrl, msg) != 0)
		eng_wait_step(&spins);
	eng_lcore_wake(lc);
	return 0;
}

unsigned int
eng_ctrl_drain(struct eng_lcore *lc)
{
	void *objs[16];
	struct eng_ctrl *msg;
	unsigned int i, n;

	n = rte_ring_sc_dequeue_burst(lc->ctrl, objs, RTE_DIM(objs), NULL);
	for (i = 0; i < n; i++) {
		msg = objs[i];
		msg->ret = msg->fn(lc, msg->arg);
		if (msg->posted) {
			free(msg);
			continue;
		}
		/* After the exchange msg may be gone: only its address is
		 * used, for the wake (eng_futex_wake()). */
		if (__atomic_exchange_n(&msg->done, CTRL_DONE,
					__ATOMIC_ACQ_REL) == CTRL_WAITING)
			eng_futex_wake(&msg->done);
	}
	lc->st.ctrl_msgs += n;
	return n;
}

void
eng_sync(void)
{
	struct eng_lcore *cur = RTE_PER_LCORE(eng_cur);

	if (eng_g->nb_bg == 0) {
		if (cur == NULL) {
			eng_native_lock();
			uroce_spin_unlock(&eng_g->native_lock);
		}
		return;
	}
	rte_rcu_qsbr_synchronize(eng_g->qsv,
				 cur != NULL ? cur->idx : RTE_QSBR_THRID_INVALID);
}

/* uroce_engine_run_on(): the caller's function as a control message. */
struct eng_run {
	int (*fn)(void *arg);
	void *arg;
};

static int
ctrl_run(struct eng_lcore *lc, void *arg)
{
	struct eng_run *r = arg;

	return r->fn(r->arg);
}

int
uroce_engine_run_on(unsigned int idx, int (*fn)(void *arg), void *arg)
{
	struct eng_run r = { .fn = fn, .arg = arg };

	if (eng_g == NULL)
		return -ENODEV;
	if (fn == NULL || idx >= eng_g->nb_ctx)
		return -EINVAL;
	return eng_ctrl_run(idx, ctrl_run, &r);
}

/* ------------------------------------------------------------------------
 * The QP's control operations, run on the owner.
 */
static int
ctrl_attach(struct eng_lcore *lc, void *arg)
{
	struct eng_qp *eq = arg;

	TAILQ_INSERT_TAIL(&lc->owned, eq, owned_link);
	return 0;
}

/*
 * Not waited for: every later control call on the QP (its first modify,
 * the detach) comes after it on the same ring, and nothing else looks at
 * the owned list for a QP it has not been told of.
 */
int
eng_qp_attach(struct eng_qp *eq)
{
	if (eng_ctrl_post(eq->qp->lcore, ctrl_attach, eq) == 0)
		return 0;
	return eng_ctrl_run(eq->qp->lcore, ctrl_attach, eq);
}

/*
 * The QP is unpublished and eng_sync() has run: no new frame or hand-off
 * finds it. Doorbells rung before the destroy may still be queued: take
 * them all first, so that none names the QP once it is freed.
 */
static int
ctrl_detach(struct eng_lcore *lc, void *arg)
{
	struct eng_qp *eq = arg;
	void *objs[ENG_RX_BURST];
	struct eng_qp *o;
	unsigned int i, n;

	do {
		n = rte_ring_sc_dequeue_burst(lc->db, objs, RTE_DIM(objs), NULL);
		for (i = 0; i < n; i++) {
			o = objs[i];
			__atomic_exchange_n(&o->db_pending, 0, __ATOMIC_ACQ_REL);
			eng_qp_activate(lc, o);
		}
	} while (n == RTE_DIM(objs));
	uroce_sched_del(&lc->ready, &eq->ready);
	if (uroce_wheel_armed(&eq->tmo->e))
		uroce_wheel_del(&lc->wheel, &eq->tmo->e);
	TAILQ_REMOVE(&lc->owned, eq, owned_link);
	eng_stats_retire(eq);
	uroce_qp_destroy(eq->qp);
	eq->qp = NULL;
	return 0;
}

int
eng_qp_detach(struct eng_qp *eq)
{
	return eng_ctrl_run(eq->qp->lcore, ctrl_detach, eq);
}

struct modify_args {
	struct eng_qp *eq;
	struct ibv_qp_attr *attr;
	int mask;
};

static int
ctrl_modify(struct eng_lcore *lc, void *arg)
{
	struct modify_args *a = arg;
	int ret;

	ret = uroce_qp_modify(a->eq->qp, a->attr, a->mask, rte_get_tsc_cycles());
	eng_qp_rearm(lc, a->eq);
	/* A QP that just reached RTS may have WQEs posted before. */
	if (ret == 0)
		eng_qp_activate(lc, a->eq);
	return ret;
}

int
eng_qp_modify(struct eng_qp *eq, struct ibv_qp_attr *attr, int mask)
{
	struct modify_args a = { .eq = eq, .attr = attr, .mask = mask };

	return eng_ctrl_run(eq->qp->lcore, ctrl_modify, &a);
}

struct modify_seq_args {
	struct eng_qp *eq;
	struct ibv_qp_attr *attr;
	const int *mask;
	unsigned int n;
	unsigned int done;
};

/* Each change as its own ctrl_modify(), one after the other: no frame of
 * the QP is handled in between. */
static int
ctrl_modify_seq(struct eng_lcore *lc, void *arg)
{
	struct modify_seq_args *s = arg;
	struct modify_args a = { .eq = s->eq };
	int ret;

	for (s->done = 0; s->done < s->n; s->done++) {
		a.attr = &s->attr[s->done];
		a.mask = s->mask[s->done];
		ret = ctrl_modify(lc, &a);
		if (ret != 0)
			return ret;
	}
	return 0;
}

int
eng_qp_modify_seq(struct eng_qp *eq, struct ibv_qp_attr *attr,
		  const int *mask, unsigned int n, unsigned int *done)
{
	struct modify_seq_args s = {
		.eq = eq, .attr = attr, .mask = mask, .n = n,
	};
	int ret;

	ret = eng_ctrl_run(eq->qp->lcore, ctrl_modify_seq, &s);
	*done = s.done;
	return ret;
}

struct rate_args {
	struct eng_qp *eq;
	const struct ibv_qp_rate_limit_attr *attr;
};

static int
ctrl_rate_limit(struct eng_lcore *lc, void *arg)
{
	struct rate_args *a = arg;
	int ret;

	ret = uroce_qp_set_rate_limit(a->eq->qp, a->attr, rte_get_tsc_cycles());
	eng_qp_rearm(lc, a->eq);
	return ret;
}

int
eng_qp_rate_limit(struct eng_qp *eq, const struct ibv_qp_rate_limit_attr *attr)
{
	struct rate_args a = { .eq = eq, .attr = attr };

	return eng_ctrl_run(eq->qp->lcore, ctrl_rate_limit, &a);
}

struct query_args {
	struct eng_qp *eq;
	struct ibv_qp_attr *attr;
	struct ibv_qp_init_attr *init;
};

static int
ctrl_query(struct eng_lcore *lc, void *arg)
{
	struct query_args *a = arg;

	RTE_SET_USED(lc);
	uroce_qp_query(a->eq->qp, a->attr, a->init);
	return 0;
}

int
eng_qp_query(struct eng_qp *eq, struct ibv_qp_attr *attr,
	     struct ibv_qp_init_attr *init)
{
	struct query_args a = { .eq = eq, .attr = attr, .init = init };

	return eng_ctrl_run(eq->qp->lcore, ctrl_query, &a);
}

struct stats_args {
	struct eng_qp *eq;
	struct uroce_qp_stats *st;
};

static int
ctrl_stats(struct eng_lcore *lc, void *arg)
{
	struct stats_args *a = arg;

	RTE_SET_USED(lc);
	*a->st = a->eq->qp->stats;
	return 0;
}

int
eng_qp_stats(struct eng_qp *eq, struct uroce_qp_stats *st)
{
	struct stats_args a = { .eq = eq, .st = st };

	return eng_ctrl_run(eq->qp->lcore, ctrl_stats, &a);
}
