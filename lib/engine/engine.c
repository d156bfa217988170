/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Engine start and stop: EAL (started from the config, or joined when the
 * host process runs it already), the lcore contexts, the devices, the
 * background lcores; and the public native API of <uroce/uroce.h>.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include <uroce/uroce.h>

#include "engine_priv.h"

RTE_LOG_REGISTER_SUFFIX(uroce_engine_logtype, engine, NOTICE);

struct eng *eng_g;

/* EAL was started and cleaned up by us: DPDK cannot start again in this
 * process, and rte_lcore_count() would still say it runs. */
static bool eng_eal_gone;

/* ------------------------------------------------------------------------
 * EAL.
 */
#define ENG_EAL_ARGS	(UROCE_CONFIG_MAX_EAL_ARGS + 12)

/* Whether the [eal] args choose the lcores themselves. */
static bool
eng_args_pin(const struct uroce_config *cfg)
{
	const char *a;
	int i;

	for (i = 0; i < cfg->eal_argc; i++) {
		a = cfg->eal_argv[i];
		if (strncmp(a, "--lcores", 8) == 0 ||
		    (a[0] == '-' && (a[1] == 'l' || a[1] == 'c')))
			return true;
	}
	return false;
}

/* "(0-1,4)": the CPUs this process may run on, as an EAL cpu set. */
static int
eng_cpuset(char *buf, size_t len)
{
	cpu_set_t set;
	size_t off;
	int c, first = -1, n;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -errno;
	off = (size_t)snprintf(buf, len, "(");
	for (c = 0; c <= CPU_SETSIZE && off < len; c++) {
		bool in = c < CPU_SETSIZE && CPU_ISSET(c, &set);

		if (in && first < 0)
			first = c;
		if (in || first < 0)
			continue;
		n = c - 1 == first ?
			snprintf(buf + off, len - off, "%s%d", off > 1 ? "," : "", first) :
			snprintf(buf + off, len - off, "%s%d-%d", off > 1 ? "," : "",
				 first, c - 1);
		off += (size_t)n;
		first = -1;
	}
	if (off + 2 > len)
		return -ENAMETOOLONG;
	snprintf(buf + off, len - off, ")");
	return 0;
}

/* Our own log types: "uroce.engine", "uroce.net" ... */
#define ENG_LOG_OURS	RTE_STR(RTE_LOG_DEFAULT_LOGTYPE) ".*"

/*
 * The arguments that go before [eal] args (which may override them):
 * DPDK's log level for every log type, ours kept at notice at least so
 * that their warnings and notices still show; the file prefix. Telemetry
 * warns at every start that it makes no legacy socket, which nobody can
 * act on: at the warning level it logs errors only. Its log type is
 * registered during rte_eal_init(), where the first --log-level pattern
 * that matches wins (EAL keeps them newest first): it goes first.
 */
static int
eng_eal_pre(struct eng *e, const struct uroce_config *cfg, char **argv)
{
	static char all[32], ours[64], tel[48];
	static char prefix[UROCE_CONFIG_PREFIX_LEN + 32];
	int argc = 0;

	if (cfg->log_level == RTE_LOG_WARNING) {
		snprintf(tel, sizeof(tel), "--log-level=lib.telemetry:%u",
			 RTE_LOG_ERR);
		argv[argc++] = tel;
	}
	snprintf(all, sizeof(all), "--log-level=*:%u", cfg->log_level);
	snprintf(ours, sizeof(ours), "--log-level=" ENG_LOG_OURS ":%u",
		 RTE_MAX(cfg->log_level, (unsigned int)RTE_LOG_NOTICE));
	argv[argc++] = all;
	argv[argc++] = ours;
	if (cfg->file_prefix[0] == '\0' && !uroce_config_args_prefix(cfg))
		eng_prefix_make(e->prefix, sizeof(e->prefix));
	if (cfg->file_prefix[0] != '\0' || e->prefix[0] != '\0') {
		snprintf(prefix, sizeof(prefix), "--file-prefix=%s",
			 cfg->file_prefix[0] != '\0' ? cfg->file_prefix :
							e->prefix);
		argv[argc++] = prefix;
	}
	return argc;
}

/*
 * Start EAL: log levels and file prefix, [eal] args, --no-pci unless a
 * port is PCI, and unless args pin lcores, lcore 0 (the calling thread)
 * plus one worker per engine lcore, all floating over the process's CPUs.
 */
static int
eng_eal_start(struct eng *e, const struct uroce_config *cfg,
	      unsigned int nb_workers, char *err, size_t err_len)
{
	static char cpus[1024], lcores[1100];
	char *argv[ENG_EAL_ARGS];
	int argc = 0, i, ret;
	bool pci = false;
	unsigned int p;

	argv[argc++] = (char *)(uintptr_t)"uroce";
	argc += eng_eal_pre(e, cfg, &argv[argc]);
	for (i = 0; i < cfg->eal_argc && argc < ENG_EAL_ARGS - 4; i++)
		argv[argc++] = cfg->eal_argv[i];
	for (p = 0; p < cfg->port_cnt; p++)
		pci |= cfg->port[p].is_pci;
	if (!pci)
		argv[argc++] = (char *)(uintptr_t)"--no-pci";
	if (!eng_args_pin(cfg)) {
		ret = eng_cpuset(cpus, sizeof(cpus));
		if (ret < 0) {
			snprintf(err, err_len, "uroce: cannot read the CPU affinity: %s",
				 strerror(-ret));
			return ret;
		}
		if (nb_workers == 0)
			snprintf(lcores, sizeof(lcores), "0@%s", cpus);
		else
			snprintf(lcores, sizeof(lcores), "(0-%u)@%s", nb_workers,
				 cpus);
		argv[argc++] = (char *)(uintptr_t)"--lcores";
		argv[argc++] = lcores;
	}
	argv[argc] = NULL;
	if (rte_eal_init(argc, argv) < 0) {
		ret = rte_errno ? -rte_errno : -EINVAL;
		snprintf(err, err_len, "uroce: %s: [eal] args: rte_eal_init failed: %s",
			 cfg->path ? cfg->path : "config", rte_strerror(-ret));
		/* EAL may have made the runtime dir before it failed. */
		if (e->prefix[0] != '\0' &&
		    strstr(rte_eal_get_runtime_dir(), e->prefix) != NULL)
			eng_prefix_remove(e->prefix, rte_eal_get_runtime_dir());
		e->prefix[0] = '\0';
		return ret;
	}
	if (e->prefix[0] != '\0') {
		snprintf(e->rundir, sizeof(e->rundir), "%s",
			 rte_eal_get_runtime_dir());
		eng_prefix_sweep(e->rundir);
	}
	return 0;
}

/* Idle worker lcores for the engine, up to want. */
static unsigned int
eng_pick_workers(unsigned int want, unsigned int *ids)
{
	unsigned int id, n = 0;

	RTE_LCORE_FOREACH_WORKER(id) {
		if (n == want || n == UROCE_ENGINE_MAX_LCORES)
			break;
		if (rte_eal_get_lcore_state(id) == WAIT)
			ids[n++] = id;
	}
	return n;
}

/* ------------------------------------------------------------------------
 * Start and stop.
 */
static void
eng_stop_lcores(struct eng *e)
{
	unsigned int i;

	for (i = 0; i < e->nb_bg; i++)
		if (e->lc[i] != NULL)
			__atomic_store_n(&e->lc[i]->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < e->nb_bg; i++)
		if (e->lc[i] != NULL)
			rte_eal_wait_lcore(e->lc[i]->lcore_id);
}

static void
eng_teardown(struct eng *e, bool launched)
{
	unsigned int i;

	eng_telemetry_detach();		/* no telemetry reader from here */
	eng_link_watch_stop(e);
	eng_keeper_stop(e);
	if (launched)
		eng_stop_lcores(e);
	/* Queued frames go back to the ports' pools before the ports close. */
	for (i = 0; i < e->nb_ctx; i++)
		if (e->lc[i] != NULL)
			eng_lcore_drain(e->lc[i]);
	for (i = 0; i < e->ndev; i++)
		eng_dev_close(e->dev[i]);
	e->ndev = 0;
	for (i = 0; i < e->nb_ctx; i++) {
		if (e->lc[i] == NULL)
			continue;
		eng_lcore_free(e->lc[i]);
		rte_free(e->lc[i]);
	}
	rte_free(e->qsv);
	for (i = 0; i < ENG_QPN_PAGES; i++)
		free(e->qpn_page[i]);
	eng_tmo_fini(e);
	eng_srq_fini(e);
	pthread_mutex_destroy(&e->lock);
	eng_g = NULL;
	if (e->eal_ours) {
		rte_eal_cleanup();
		eng_eal_gone = true;
		if (e->prefix[0] != '\0')
			eng_prefix_remove(e->prefix, e->rundir);
	}
	free(e);
}

static int
eng_setup_lcores(struct eng *e, const unsigned int *ids, char *err,
		 size_t err_len)
{
	unsigned int i;
	size_t sz;
	int ret;

	if (e->nb_bg > 0) {
		sz = rte_rcu_qsbr_get_memsize(e->nb_bg);
		e->qsv = rte_zmalloc("uroce_qsbr", sz, RTE_CACHE_LINE_SIZE);
		if (e->qsv == NULL || rte_rcu_qsbr_init(e->qsv, e->nb_bg) != 0)
			goto nomem;
	}
	for (i = 0; i < e->nb_ctx; i++) {
		e->lc[i] = rte_zmalloc("uroce_lcore", sizeof(*e->lc[i]),
				       RTE_CACHE_LINE_SIZE);
		if (e->lc[i] == NULL)
			goto nomem;
		ret = eng_lcore_setup(e->lc[i], i,
				      e->nb_bg > 0 ? ids[i] : LCORE_ID_ANY);
		if (ret < 0) {
			rte_free(e->lc[i]);
			e->lc[i] = NULL;
			snprintf(err, err_len, "uroce: engine lcore %u: %s", i,
				 strerror(-ret));
			return ret;
		}
		if (e->nb_bg > 0)
			rte_rcu_qsbr_thread_register(e->qsv, i);
	}
	return 0;
nomem:
	snprintf(err, err_len, "uroce: out of DPDK memory for the engine");
	return -ENOMEM;
}

static int
eng_launch(struct eng *e, char *err, size_t err_len)
{
	unsigned int i;
	int ret;

	for (i = 0; i < e->nb_bg; i++) {
		ret = rte_eal_remote_launch(eng_lcore_main, e->lc[i],
					    e->lc[i]->lcore_id);
		if (ret != 0) {
			snprintf(err, err_len, "uroce: cannot launch lcore %u: %s",
				 e->lc[i]->lcore_id, strerror(-ret));
			/* Stop those already running. */
			e->nb_bg = i;
			return ret < 0 ? ret : -EBUSY;
		}
	}
	return 0;
}

/* Runs after rte_eal_init(): the TSC rate and the random QPN start need
 * EAL, so they are set here rather than at calloc time. */
static void
eng_late_init(struct eng *e)
{
	e->tsc_hz = rte_get_tsc_hz();
	e->ms_cycles = e->tsc_hz / 1000;
	e->qpn_next = 2 + (uint32_t)(rte_rand() % (UROCE_QPN_MASK - 1));
}

static int
eng_start(struct eng *e, const struct uroce_config *cfg, unsigned int flags,
	  char *err, size_t err_len)
{
	unsigned int ids[UROCE_ENGINE_MAX_LCORES], want, i;
	int ret;

	want = flags & UROCE_ENGINE_NO_LCORES ? 0 :
		RTE_MIN(cfg->lcores, (unsigned int)UROCE_ENGINE_MAX_LCORES);
	if (rte_lcore_count() == 0) {
		ret = eng_eal_start(e, cfg, want, err, err_len);
		if (ret < 0)
			return ret;
		e->eal_ours = true;
	}
	eng_late_init(e);
	e->nb_bg = eng_pick_workers(want, ids);
	if (e->nb_bg < want)
		ENG_LOG(NOTICE, "%u engine lcores wanted, %u idle EAL workers%s\n",
			want, e->nb_bg, e->nb_bg ? "" : ": native progress only");
	e->nb_ctx = RTE_MAX(e->nb_bg, 1u);
	ret = eng_setup_lcores(e, ids, err, err_len);
	if (ret < 0)
		return ret;
	for (i = 0; i < cfg->port_cnt; i++) {
		ret = eng_dev_open(i, &e->dev[i], err, err_len);
		if (ret < 0)
			return ret;
		e->ndev++;
	}
	eng_link_wait(e);
	ret = eng_launch(e, err, err_len);
	/* Inline progress ([eal] lcores = 0): nobody promised to poll. */
	if (ret == 0 && want == 0 && !(flags & UROCE_ENGINE_NO_LCORES)) {
		ret = eng_keeper_start(e);
		if (ret != 0)
			snprintf(err, err_len, "uroce: cannot start the keeper "
				 "thread: %s", strerror(ret < 0 ? -ret : ret));
		ret = ret != 0 ? -EAGAIN : 0;
	}
	if (ret == 0 && eng_link_watch_start(e) != 0)
		ENG_LOG(WARNING, "cannot watch the links: no port events, and "
			"a memif client whose server was absent stays down\n");
	return ret;
}

/* eng_start() with every signal blocked in the calling thread, so that
 * each thread it creates (EAL's lcores, interrupt, multi-process and
 * telemetry threads, the PMDs', the keeper, the link and neighbour
 * watchers) starts with them all blocked: a signal sent to the process
 * then goes to one of the program's own threads, which chose their masks
 * (a program that blocks a signal in its threads and reads it from a
 * signalfd would otherwise see it delivered to ours and the process end
 * with the default action). The caller's mask is back on return.
 * SIGSEGV and SIGBUS stay open: a fault is the faulting thread's own, and
 * a blocked one kills the process before any handler runs, where an
 * access to registered memory that is gone must fail alone
 * (uroce_memguard.h). */
static int
eng_start_masked(struct eng *e, const struct uroce_config *cfg,
		 unsigned int flags, char *err, size_t err_len)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = eng_start(e, cfg, flags, err, err_len);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

int
uroce_engine_init(const struct uroce_config *cfg, unsigned int flags,
		  char *err, size_t err_len)
{
	char msg[512] = "";
	struct eng *e;
	int ret;

	if (eng_g != NULL) {
		snprintf(msg, sizeof(msg), "uroce: the engine runs already");
		ret = -EALREADY;
	} else if (eng_eal_gone) {
		snprintf(msg, sizeof(msg),
			 "uroce: DPDK was shut down in this process and cannot start again");
		ret = -ENOTSUP;
	} else if (cfg == NULL || cfg->port_cnt == 0 ||
		   cfg->port_cnt > UROCE_CONFIG_MAX_PORTS) {
		snprintf(msg, sizeof(msg), "uroce: no configuration, or no [port]");
		ret = -EINVAL;
	} else if ((e = calloc(1, sizeof(*e))) == NULL) {
		snprintf(msg, sizeof(msg), "uroce: out of memory");
		ret = -ENOMEM;
	} else {
		e->cfg = cfg;
		e->flags = flags;
		rte_spinlock_init(&e->native_lock);
		pthread_mutex_init(&e->lock, NULL);
		eng_g = e;
		ret = eng_start_masked(e, cfg, flags, msg, sizeof(msg));
		if (ret < 0)
			eng_teardown(e, true);
	}
	if (ret < 0) {
		/* The caller prints err; without one, the log is all there is. */
		rte_log(err != NULL ? RTE_LOG_DEBUG : RTE_LOG_ERR,
			uroce_engine_logtype, "%s\n", msg);
		if (err != NULL && err_len > 0)
			snprintf(err, err_len, "%s", msg);
		return ret;
	}
	eng_telemetry_attach();
	ENG_LOG(INFO, "%u devices, %u engine lcores%s\n", e->ndev, e->nb_bg,
		e->nb_bg ? "" : e->keeper ? " (inline progress, keeper)" :
		" (native progress)");
	return 0;
}

void
uroce_engine_fini(void)
{
	if (eng_g == NULL)
		return;
	eng_teardown(eng_g, true);
}

bool
uroce_engine_running(void)
{
	return eng_g != NULL;
}

unsigned int
uroce_engine_lcores(void)
{
	return eng_g != NULL ? eng_g->nb_bg : 0;
}

/* ------------------------------------------------------------------------
 * <uroce/uroce.h>
 */
static struct uroce_config *uroce_cfg;

int
uroce_init(const char *path, unsigned int flags, char *err, size_t err_len)
{
	struct uroce_config *cfg;
	int ret;

	if (path == NULL)
		path = uroce_config_path();
	if (path == NULL) {
		if (err != NULL && err_len > 0)
			snprintf(err, err_len,
				 "uroce: no configuration file: set UROCE_CONFIG");
		return -EINVAL;
	}
	if (uroce_cfg != NULL) {
		if (err != NULL && err_len > 0)
			snprintf(err, err_len, "uroce: already initialised");
		return -EALREADY;
	}
	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return -ENOMEM;
	ret = uroce_config_load(path, cfg, err, err_len);
	if (ret == 0)
		ret = uroce_engine_init(cfg, flags & UROCE_INIT_NATIVE ?
					UROCE_ENGINE_NO_LCORES : 0, err, err_len);
	if (ret < 0) {
		uroce_config_free(cfg);
		free(cfg);
		return ret;
	}
	uroce_cfg = cfg;
	return 0;
}

int
uroce_poll(void)
{
	return uroce_engine_poll();
}

void
uroce_fini(void)
{
	uroce_engine_fini();
	if (uroce_cfg != NULL) {
		uroce_config_free(uroce_cfg);
		free(uroce_cfg);
		uroce_cfg = NULL;
	}
}
