/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The keeper (docs/architecture.md, Inline progress). With no background
 * lcore and no promise from the caller to poll (uroce_engine_init()
 * without UROCE_ENGINE_NO_LCORES, [eal] lcores = 0: the verbs library),
 * the application's calls run the stack: ibv_poll_cq() and the extended
 * CQ polling run an iteration (uroce_engine_poll()), a post serves its QP
 * on the posting thread (eng_kick_native()). What nobody polls for must
 * still happen: a responder serving READs and WRITEs of a peer while its
 * own process never polls, retransmission and ACK timers, ARP and
 * neighbour discovery, the completion events a thread asleep in
 * ibv_get_cq_event() waits for. The keeper, a control thread, runs the
 * loop then, and sleeps otherwise:
 *
 *  - while application calls run iterations (app_iters moves) and the
 *    keeper is cold, it looks once every [eal] keeper_us and does nothing
 *    else;
 *  - once they stopped for that long, it iterates for as long as an
 *    iteration finds work, and ENG_KEEPER_SPIN_NS longer while no
 *    application call runs one; after that it sleeps, from
 *    ENG_KEEPER_SLEEP_MIN_NS doubling to ENG_KEEPER_SLEEP_MAX_NS, never
 *    past the next armed timer (a QP's ACK timeout, a paced QP's batch),
 *    and iterates after each sleep. It stays on this back-off while the
 *    sleep is shorter than keeper_us even if application calls run
 *    iterations again (their trylock and its own keep them apart), and
 *    is cold again once it is as long: a program that waits for its
 *    peer's WRITEs by reading memory (perftest's ib_write_lat) calls no
 *    verb between two of them, and a keeper that had stepped back at its
 *    first call would see each WRITE only keeper_us later.
 *    A frame that arrives while it sleeps waits for the end of the sleep:
 *    at most ENG_KEEPER_SLEEP_MAX_NS, for a process nobody polls in.
 *
 * It takes the native lock with a trylock only: whoever holds it (an
 * application thread in an iteration or a control operation) is
 * progressing the engine, which is what the keeper is for.
 */
#include <sys/prctl.h>
#include <time.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_pause.h>
#include <rte_lcore.h>

#include "engine_priv.h"

#define ENG_KEEPER_SLEEP_MIN_NS		1000
/* A millisecond: an idle process wakes a thousand times a second, for
 * an iteration that finds nothing (a few microseconds: well under 1% of
 * a core), and a peer's request to a process that never polls waits at
 * most that long after a quiet spell. */
#define ENG_KEEPER_SLEEP_MAX_NS		1000000
#define ENG_KEEPER_TIMER_SLACK_NS	1000
/* After an iteration with work, the keeper iterates without sleeping
 * for this long while no application call does: a stream to a process
 * that never polls (a passive READ or WRITE target) comes in batches a
 * few microseconds apart, and a sleep between two of them costs far
 * more than the batch (a nanosleep of 1 us lasts 11 us on an idle vCPU
 * of the 2-core VM, and until the scheduler gets round to the thread on
 * a busy one). The process pays a busy thread only while frames keep
 * coming. */
#define ENG_KEEPER_SPIN_NS		50000

static void
eng_keeper_nap(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000),
		.tv_nsec = (long)(ns % 1000000000),
	};

	nanosleep(&ts, NULL);
}

/* One iteration, unless a thread holds the native lock: its work, or -1.
 * *timer_ns: how long until the wheel's next timer may be due. */
static int
eng_keeper_iterate(struct eng *e, uint64_t *timer_ns)
{
	struct eng_lcore *lc = e->lc[0];
	unsigned int work;

	if (!rte_spinlock_trylock(&e->native_lock))
		return -1;
	RTE_PER_LCORE(eng_cur) = lc;
	work = eng_iterate(lc);
	lc->st.keeper_loops++;
	*timer_ns = eng_until_timer_ns(lc);
	RTE_PER_LCORE(eng_cur) = NULL;
	uroce_spin_unlock(&e->native_lock);
	return (int)RTE_MIN(work, (unsigned int)INT32_MAX);
}

static void *
eng_keeper_main(void *arg)
{
	struct eng *e = arg;
	uint64_t seen = 0, seq, timer_ns = UINT64_MAX, last_work = 0;
	uint64_t sleep_ns = ENG_KEEPER_SLEEP_MAX_NS;	/* cold */
	uint64_t spin = ENG_KEEPER_SPIN_NS * rte_get_tsc_hz() / 1000000000;
	/* The back-off is cold once a sleep is keeper_us long, or as long
	 * as a sleep gets: with keeper_us past that it would never be. */
	uint64_t cold_ns = RTE_MIN(e->keeper_ns,
				   (uint64_t)ENG_KEEPER_SLEEP_MAX_NS);
	bool app;
	int work;

	prctl(PR_SET_TIMERSLACK, (unsigned long)ENG_KEEPER_TIMER_SLACK_NS,
	      0, 0, 0);
	/* An lcore id of its own: without one (a control thread's is
	 * LCORE_ID_ANY) the mempool has no cache for it, and every mbuf the
	 * keeper receives into or frees goes through the pool's shared ring
	 * (a compare-and-swap a burst, and a cold mbuf a frame: a fifth of a
	 * passive target's keeper went to the first write of each received
	 * frame's mbuf). Without a free lcore it runs uncached. */
	if (rte_thread_register() != 0)
		ENG_LOG(NOTICE, "keeper: no free lcore id (%s): mbufs uncached\n",
			rte_strerror(rte_errno));
	while (!__atomic_load_n(&e->keeper_stop, __ATOMIC_ACQUIRE)) {
		seq = __atomic_load_n(&e->app_iters, __ATOMIC_RELAXED);
		if (seq != seen && sleep_ns >= cold_ns) {
			/* The application progresses and the keeper is
			 * cold: look again later. */
			seen = seq;
			eng_keeper_nap(e->keeper_ns);
			continue;
		}
		app = seq != seen;
		seen = seq;
		work = eng_keeper_iterate(e, &timer_ns);
		if (work > 0) {
			sleep_ns = 0;
			last_work = rte_rdtsc();
			continue;
		}
		/* Nothing, a short while after work, and no application
		 * call progresses the stack: the peer is likely to send
		 * again at once (the next batch of a stream to a passive
		 * target); look again rather than sleep. */
		if (work == 0 && !app && rte_rdtsc() - last_work < spin) {
			rte_pause();
			continue;
		}
		/* Nothing, or a thread in an iteration: back off. */
		sleep_ns = sleep_ns == 0 ? ENG_KEEPER_SLEEP_MIN_NS :
			RTE_MIN(sleep_ns * 2, (uint64_t)ENG_KEEPER_SLEEP_MAX_NS);
		if (work == 0 && timer_ns < ENG_KEEPER_SLEEP_MIN_NS)
			continue;	/* a timer is due: iterate again */
		eng_keeper_nap(RTE_MIN(sleep_ns, timer_ns));
	}
	rte_thread_unregister();
	return NULL;
}

int
eng_keeper_start(struct eng *e)
{
	int ret;

	e->keeper_stop = 0;
	e->keeper_ns = (uint64_t)e->cfg->keeper_us * 1000;
	ret = rte_ctrl_thread_create(&e->keeper_thread, "uroce-keeper", NULL,
				     eng_keeper_main, e);
	e->keeper = ret == 0;
	return ret;
}

void
eng_keeper_stop(struct eng *e)
{
	if (!e->keeper)
		return;
	__atomic_store_n(&e->keeper_stop, 1, __ATOMIC_RELEASE);
	pthread_join(e->keeper_thread, NULL);
	e->keeper = false;
}
