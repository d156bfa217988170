/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Port links, as a NIC's: the engine's start waits for every port's link
 * up to its [port] link_wait seconds (testpmd's link check waits the same
 * way), then goes on with the links that are still down. From then on a
 * control thread, "uroce-link", polls the links every ENG_LINK_POLL_MS:
 * it retries the start of a memif client whose server was not listening,
 * restarts one whose server closed the connection (uroce_port_link_poll()),
 * and reports each change as IBV_EVENT_PORT_ACTIVE or IBV_EVENT_PORT_ERR
 * (ibv_query_port() reads the link itself, ACTIVE or DOWN). A port gone
 * for good (uroce_port_gone(): its kernel interface deleted, its ethdev
 * removed, its start failing for good) is reported once as IBV_EVENT_DEVICE_FATAL, after its
 * IBV_EVENT_PORT_ERR, and is not watched any more: nothing on the device
 * can reach the wire again (IBTA 11.6.3.3, an unaffiliated CA
 * catastrophic error), the consumer is to close it. A thread of
 * its own rather than an EAL alarm: in DPDK 22.11 rte_eal_cleanup() frees
 * the alarms' interrupt handle while the interrupt thread still watches
 * it, which crashes the exit of a process that set an alarm.
 */
#include <time.h>

#include <rte_cycles.h>
#include <rte_lcore.h>

#include "engine_priv.h"

#define ENG_LINK_STEP_MS	10
/* A tenth of a second: a peer that appears is seen about as soon as a
 * person would notice; the poll costs a few microseconds. */
#define ENG_LINK_POLL_MS	100

/* No lcore is inside a burst that began before the call (port.c's
 * client_stop()): eng_sync() waits for a quiescent point of each. */
static void
eng_link_quiesce(void *arg)
{
	(void)arg;
	eng_sync();
}

static bool
eng_link_get(struct eng *e, unsigned int i)
{
	return uroce_port_link_poll(e->dev[i]->port, eng_link_quiesce, NULL);
}

static void
eng_link_note(struct eng *e, unsigned int i, bool up)
{
	struct uroce_dev *dev = e->dev[i];

	e->link_up[i] = up;
	ENG_LOG(INFO, "%s: link %s\n", dev->name, up ? "up" : "down");
	if (dev->ev.async_event != NULL)
		dev->ev.async_event(dev->ev_arg, up ? IBV_EVENT_PORT_ACTIVE :
				    IBV_EVENT_PORT_ERR, dev);
}

void
eng_link_wait(struct eng *e)
{
	uint64_t start = rte_get_timer_cycles(), hz = rte_get_timer_hz();
	bool was_up[UROCE_CONFIG_MAX_PORTS];
	unsigned int i, waiting;

	for (i = 0; i < e->ndev; i++)
		was_up[i] = uroce_port_link_up(e->dev[i]->port);
	memset(e->link_fatal, 0, sizeof(e->link_fatal));
	do {
		waiting = 0;
		for (i = 0; i < e->ndev; i++) {
			e->link_up[i] = eng_link_get(e, i);
			if (!e->link_up[i] && rte_get_timer_cycles() - start <
			    e->cfg->port[i].link_wait * hz)
				waiting++;
		}
		if (waiting > 0)
			rte_delay_us_sleep(ENG_LINK_STEP_MS * 1000);
	} while (waiting > 0);
	for (i = 0; i < e->ndev; i++) {
		/* The open announced the ports that were up already. */
		if (e->link_up[i] && !was_up[i])
			uroce_port_announce(e->dev[i]->port);
		else if (!e->link_up[i])
			ENG_LOG(NOTICE, "%s: link down after %u s: the port "
				"is DOWN until it comes up\n", e->dev[i]->name,
				e->cfg->port[i].link_wait);
	}
}

static void
eng_link_fatal(struct eng *e, unsigned int i)
{
	struct uroce_dev *dev = e->dev[i];

	e->link_fatal[i] = true;
	ENG_LOG(ERR, "%s: the port is gone: device fatal\n", dev->name);
	if (dev->ev.async_event != NULL)
		dev->ev.async_event(dev->ev_arg, IBV_EVENT_DEVICE_FATAL, dev);
}

static void
eng_link_poll(struct eng *e)
{
	unsigned int i;
	bool up;

	for (i = 0; i < e->ndev; i++) {
		if (e->link_fatal[i])
			continue;
		up = eng_link_get(e, i);
		if (up != e->link_up[i])
			eng_link_note(e, i, up);
		if (uroce_port_gone(e->dev[i]->port))
			eng_link_fatal(e, i);
	}
}

static void *
eng_link_main(void *arg)
{
	struct timespec step = { .tv_nsec = ENG_LINK_STEP_MS * 1000000L };
	struct eng *e = arg;
	unsigned int n = 0;

	while (!__atomic_load_n(&e->link_stop, __ATOMIC_ACQUIRE)) {
		nanosleep(&step, NULL);
		if (++n % (ENG_LINK_POLL_MS / ENG_LINK_STEP_MS) == 0)
			eng_link_poll(e);
	}
	return NULL;
}

int
eng_link_watch_start(struct eng *e)
{
	int ret;

	e->link_stop = false;
	ret = rte_ctrl_thread_create(&e->link_thread, "uroce-link", NULL,
				     eng_link_main, e);
	e->link_watch = ret == 0;
	return ret;
}

void
eng_link_watch_stop(struct eng *e)
{
	if (!e->link_watch)
		return;
	__atomic_store_n(&e->link_stop, true, __ATOMIC_RELEASE);
	pthread_join(e->link_thread, NULL);
	e->link_watch = false;
}
