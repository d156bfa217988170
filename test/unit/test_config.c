/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The configuration loader: every key of the DESIGN example and the sample
 * files in config/ reads back right; every bad value, key, section and line
 * fails with one line naming the file and the key (or line, or variable)
 * and leaves a zeroed configuration; environment overrides apply; garbage
 * files never crash, leak or make rte_cfgfile print anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "uroce_test.h"
#include "uroce_config.h"

static char tmpdir[] = "/tmp/uroce-test-config-XXXXXX";
static char conf_path[PATH_MAX];	/* the file the current case loads */
static char err[UROCE_CONFIG_ERR_LEN];

static const char *
write_file(const char *name, const char *text, size_t len)
{
	FILE *f;

	snprintf(conf_path, sizeof(conf_path), "%s/%s", tmpdir, name);
	f = fopen(conf_path, "w");
	if (!UT_CHECK(f != NULL))
		return conf_path;
	UT_CHECK_EQ(fwrite(text, 1, len, f), len);
	fclose(f);
	return conf_path;
}

static const char *
write_conf(const char *text)
{
	return write_file("test.conf", text, strlen(text));
}

static bool
is_zero(const struct uroce_config *cfg)
{
	static const struct uroce_config zero;

	return memcmp(cfg, &zero, sizeof(zero)) == 0;
}

static bool
one_line(const char *s)
{
	return strncmp(s, "uroce: ", 7) == 0 && strchr(s, '\n') == NULL &&
	       strchr(s, '\r') == NULL;
}

static void
clear_env(void)
{
	static const char *const prefixes[] = { "UROCE_PORT", "UROCE_EAL_", "UROCE_NEIGH_" };
	char name[256];
	unsigned int i;
	bool again = true;

	/* unsetenv() changes environ: start over after each removal. */
	while (again) {
		again = false;
		for (char **e = environ; *e != NULL && !again; e++) {
			for (i = 0; i < RTE_DIM(prefixes); i++) {
				if (strncmp(*e, prefixes[i], strlen(prefixes[i])) != 0)
					continue;
				snprintf(name, sizeof(name), "%.*s",
					 (int)strcspn(*e, "="), *e);
				unsetenv(name);
				again = true;
				break;
			}
		}
	}
}

static rte_be32_t
ip4(const char *s)
{
	struct in_addr a;

	UT_CHECK(inet_pton(AF_INET, s, &a) == 1);
	return a.s_addr;
}

static bool
mac_is(const struct rte_ether_addr *m, const char *s)
{
	char buf[RTE_ETHER_ADDR_FMT_SIZE];

	rte_ether_format_addr(buf, sizeof(buf), m);
	return strcasecmp(buf, s) == 0;
}

/* --- good files ---------------------------------------------------------- */

static void
test_design_example(void)
{
	struct uroce_config cfg;
	const char *path = write_conf(
		"[port]\n"
		"dev  = net_memif0,role=server,socket=/run/uroce/ab.sock   ; any DPDK vdev string or PCI address\n"
		"ip   = 192.168.77.1/24                                      ; and/or ip6 = ...\n"
		"mtu  = 4096\n"
		"[eal]\n"
		"lcores = 1            ; engine lcores\n"
		"args   = --no-huge -m 256                                     ; extra EAL arguments, optional\n"
		"[neigh]\n"
		"192.168.77.2 = 02:00:00:00:00:02                            ; optional static neighbours\n");
	int ret = uroce_config_load(path, &cfg, err, sizeof(err));

	if (!UT_CHECK_EQ(ret, 0)) {
		fprintf(stderr, "     %s\n", err);
		return;
	}
	UT_CHECK(strcmp(cfg.path, path) == 0);
	UT_CHECK_EQ(cfg.port_cnt, 1);
	UT_CHECK(strcmp(cfg.port[0].dev, "net_memif0,role=server,socket=/run/uroce/ab.sock") == 0);
	UT_CHECK(!cfg.port[0].is_pci);
	UT_CHECK(cfg.port[0].has_ip4);
	UT_CHECK_EQ(cfg.port[0].ip4, ip4("192.168.77.1"));
	UT_CHECK_EQ(cfg.port[0].ip4_prefix, 24);
	UT_CHECK_EQ(cfg.port[0].ip6_cnt, 0);
	UT_CHECK_EQ(cfg.port[0].mtu, 4096);
	UT_CHECK(!cfg.port[0].has_mac && !cfg.port[0].has_vlan && !cfg.port[0].has_fault);
	UT_CHECK_EQ(cfg.port[0].pcap[0], '\0');
	UT_CHECK_EQ(cfg.lcores, 1);
	UT_CHECK_EQ(cfg.eal_argc, 3);
	if (cfg.eal_argc == 3) {
		UT_CHECK(strcmp(cfg.eal_argv[0], "--no-huge") == 0);
		UT_CHECK(strcmp(cfg.eal_argv[1], "-m") == 0);
		UT_CHECK(strcmp(cfg.eal_argv[2], "256") == 0);
		UT_CHECK(cfg.eal_argv[3] == NULL);
	}
	UT_CHECK_EQ(cfg.neigh_cnt, 1);
	UT_CHECK(!cfg.neigh[0].is_ip6);
	UT_CHECK_EQ(cfg.neigh[0].ip4, ip4("192.168.77.2"));
	UT_CHECK(mac_is(&cfg.neigh[0].mac, "02:00:00:00:00:02"));
	uroce_config_free(&cfg);
	UT_CHECK(is_zero(&cfg));
}

static void
check_port1(const struct uroce_config_port *p)
{
	static const uint8_t fd01[16] = { 0xfd, [7] = 0x01, [15] = 0x22 };

	UT_CHECK(strcmp(p->dev, "0000:00:04.0,txq_inline=128") == 0);
	UT_CHECK(p->is_pci);
	UT_CHECK(!p->has_ip4);
	UT_CHECK_EQ(p->ip6_cnt, 1);
	UT_CHECK_MEM(p->ip6[0].addr, fd01, 16);
	UT_CHECK_EQ(p->ip6[0].prefix_len, 48);
	UT_CHECK_EQ(p->mtu, UROCE_CONFIG_MTU_DEFAULT);
	UT_CHECK(p->has_vlan);
	UT_CHECK_EQ(p->vlan, 0);
	UT_CHECK(p->has_fault);
	UT_CHECK_EQ(p->fault.drop_ppm, 1);
	UT_CHECK_EQ(p->fault.reorder_ppm, 0);
	UT_CHECK_EQ(p->fault.dup_ppm, 0);
	UT_CHECK_EQ(p->fault.corrupt_ppm, UROCE_CONFIG_PPM);
	UT_CHECK_EQ(p->fault.seed, UROCE_CONFIG_FAULT_SEED_DEFAULT);
}

static void
check_port0(const struct uroce_config_port *p)
{
	static const uint8_t fd00_1[16] = { 0xfd, 0, [15] = 1 };

	UT_CHECK(strcmp(p->dev, "net_tap0,iface=ut0") == 0);
	UT_CHECK_EQ(p->ip4, ip4("10.1.2.3"));
	UT_CHECK_EQ(p->ip4_prefix, 8);
	UT_CHECK_EQ(p->ip6_cnt, 3);
	UT_CHECK_MEM(p->ip6[0].addr, fd00_1, 16);
	UT_CHECK_EQ(p->ip6[0].prefix_len, 64);
	UT_CHECK_EQ(p->ip6[1].addr[0], 0xfe);
	UT_CHECK_EQ(p->ip6[1].prefix_len, 10);
	UT_CHECK_EQ(p->ip6[2].addr[15], 5);
	UT_CHECK_EQ(p->ip6[2].prefix_len, 128);
	UT_CHECK_EQ(p->mtu, 9000);
	UT_CHECK(p->has_mac && mac_is(&p->mac, "02:ab:cd:00:00:01"));
	UT_CHECK(p->has_vlan);
	UT_CHECK_EQ(p->vlan, 4094);
	UT_CHECK(strcmp(p->pcap, "/tmp/x y.pcap") == 0);
	UT_CHECK(p->has_fault);
	UT_CHECK_EQ(p->fault.drop_ppm, 500000);
	UT_CHECK_EQ(p->fault.reorder_ppm, 10000);
	UT_CHECK_EQ(p->fault.dup_ppm, 1);
	UT_CHECK_EQ(p->fault.corrupt_ppm, 1);
	UT_CHECK_EQ(p->fault.seed, UINT64_MAX);
}

/* Every key, two ports, quotes in args, IPv6 neighbours, CRLF endings. */
static void
test_all_keys(void)
{
	struct uroce_config cfg;
	const char *path = write_conf(
		"; every key\r\n"
		"[port0]\r\n"
		"dev=net_tap0,iface=ut0\r\n"
		"ip = 10.1.2.3/8\n"
		"ip6 = fd00::1/64,  fe80::1/10 fd00:0:0:1::5/128\n"
		"mtu = 9000\n"
		"mac = 02:AB:cd:00:00:01\n"
		"vlan = 4094\n"
		"pcap = /tmp/x y.pcap\n"
		"fault = drop=0.5, reorder=1%,dup=0.000001,corrupt=0.0001%,seed=0xFFFFFFFFFFFFFFFF\n"
		"exception = net_tap_x0,iface=uexc0\n"
		"steer = soft\n"
		"\n"
		"  [ port1 ]  \n"
		"  dev = 0000:00:04.0,txq_inline=128\n"
		"ip6 = fd00:0:0:1::22/48\n"
		"vlan = 0\n"
		"fault = drop=0.000001,corrupt=100%\n"
		"exception = off\n"
		"steer = flow\n"
		"csum_offload = off\n"
		"[eal]\n"
		"lcores = 127\n"
		"keeper_us = 250\n"
		"args = --vdev=\"a b\" \"\"x --x=\"1 2\"3  -l\t0\n"
		"[neigh]\n"
		"fd00::2 = 02:00:00:00:00:03\n"
		"10.1.2.4 = 02:00:00:00:00:04\n");
	int ret = uroce_config_load(path, &cfg, err, sizeof(err));

	if (!UT_CHECK_EQ(ret, 0)) {
		fprintf(stderr, "     %s\n", err);
		return;
	}
	UT_CHECK_EQ(cfg.port_cnt, 2);
	check_port0(&cfg.port[0]);
	check_port1(&cfg.port[1]);
	UT_CHECK(cfg.port[0].exception_set);
	UT_CHECK(strcmp(cfg.port[0].exception, "net_tap_x0,iface=uexc0") == 0);
	UT_CHECK_EQ(cfg.port[0].steer, UROCE_STEER_SOFT);
	UT_CHECK(cfg.port[1].exception_set);
	UT_CHECK_EQ(cfg.port[1].exception[0], '\0');
	UT_CHECK_EQ(cfg.port[1].steer, UROCE_STEER_FLOW);
	UT_CHECK(!cfg.port[0].csum_offload_off);	/* on by default */
	UT_CHECK(cfg.port[1].csum_offload_off);
	UT_CHECK_EQ(cfg.lcores, 127);
	UT_CHECK_EQ(cfg.keeper_us, 250);
	UT_CHECK_EQ(cfg.eal_argc, 5);
	if (cfg.eal_argc == 5) {
		UT_CHECK(strcmp(cfg.eal_argv[0], "--vdev=a b") == 0);
		UT_CHECK(strcmp(cfg.eal_argv[1], "x") == 0);
		UT_CHECK(strcmp(cfg.eal_argv[2], "--x=1 23") == 0);
		UT_CHECK(strcmp(cfg.eal_argv[3], "-l") == 0);
		UT_CHECK(strcmp(cfg.eal_argv[4], "0") == 0);
		UT_CHECK(cfg.eal_argv[5] == NULL);
	}
	UT_CHECK_EQ(cfg.neigh_cnt, 2);
	UT_CHECK(cfg.neigh[0].is_ip6 && cfg.neigh[0].ip6[15] == 2);
	UT_CHECK(!cfg.neigh[1].is_ip6 && cfg.neigh[1].ip4 == ip4("10.1.2.4"));
	UT_CHECK(mac_is(&cfg.neigh[1].mac, "02:00:00:00:00:04"));
	uroce_config_free(&cfg);
}

/* Defaults: no [eal], no [neigh], a file without a final newline. */
/* cc and the DCQCN keys: the defaults, every key set, an override. */
static void
test_cc(void)
{
	const struct uroce_config_dcqcn *d;
	struct uroce_config cfg;
	int ret;

	ret = uroce_config_load(write_conf("[port]\ndev = net_null0\nip = 10.0.0.1/32"),
				&cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, 0);
	d = &cfg.port[0].dcqcn;
	UT_CHECK_EQ(cfg.port[0].cc, UROCE_CC_OFF);
	UT_CHECK_EQ(d->rpg_time_reset, 300);
	UT_CHECK_EQ(d->rpg_byte_reset, 32767);
	UT_CHECK_EQ(d->rpg_threshold, 5);
	UT_CHECK_EQ(d->rpg_ai_rate, 5);
	UT_CHECK_EQ(d->rpg_hai_rate, 50);
	UT_CHECK_EQ(d->rpg_min_rate, 1);
	UT_CHECK_EQ(d->rpg_max_rate, 0);
	UT_CHECK_EQ(d->rpg_min_dec_fac, 50);
	UT_CHECK_EQ(d->rate_reduce_monitor_period, 4);
	UT_CHECK_EQ(d->rate_to_set_on_first_cnp, 0);
	UT_CHECK_EQ(d->dce_tcp_g, 1019);
	UT_CHECK_EQ(d->dce_tcp_rtt, 55);
	UT_CHECK_EQ(d->initial_alpha_value, 1023);
	UT_CHECK_EQ(d->np_min_time_between_cnps, 50);
	UT_CHECK_EQ(cfg.port[0].fault.ce_ppm, 0);
	uroce_config_free(&cfg);

	setenv("UROCE_PORT1_RPG_HAI_RATE", "77", 1);
	ret = uroce_config_load(write_conf(
		"[port]\ndev = net_null0\nip = 10.0.0.1/32\ncc = dcqcn\n"
		"rpg_time_reset = 55\nrpg_byte_reset = 0\nrpg_threshold = 31\n"
		"rpg_ai_rate = 40\nrpg_hai_rate = 100\nrpg_min_rate = 10\n"
		"rpg_max_rate = 25000\nrpg_min_dec_fac = 100\n"
		"rate_reduce_monitor_period = 0\nrate_to_set_on_first_cnp = 1000\n"
		"dce_tcp_g = 0\ndce_tcp_rtt = 55\ninitial_alpha_value = 0\n"
		"np_min_time_between_cnps = 0\nfault = ce=2%,seed=3\n"
		"[port1]\ndev = net_null1\nip = 10.0.1.1/32\ncc = off\n"),
		&cfg, err, sizeof(err));
	unsetenv("UROCE_PORT1_RPG_HAI_RATE");
	UT_CHECK_EQ(ret, 0);
	d = &cfg.port[0].dcqcn;
	UT_CHECK_EQ(cfg.port[0].cc, UROCE_CC_DCQCN);
	UT_CHECK_EQ(d->rpg_time_reset, 55);
	UT_CHECK_EQ(d->rpg_byte_reset, 0);
	UT_CHECK_EQ(d->rpg_threshold, 31);
	UT_CHECK_EQ(d->rpg_ai_rate, 40);
	UT_CHECK_EQ(d->rpg_hai_rate, 100);
	UT_CHECK_EQ(d->rpg_min_rate, 10);
	UT_CHECK_EQ(d->rpg_max_rate, 25000);
	UT_CHECK_EQ(d->rpg_min_dec_fac, 100);
	UT_CHECK_EQ(d->rate_reduce_monitor_period, 0);
	UT_CHECK_EQ(d->rate_to_set_on_first_cnp, 1000);
	UT_CHECK_EQ(d->dce_tcp_g, 0);
	UT_CHECK_EQ(d->dce_tcp_rtt, 55);
	UT_CHECK_EQ(d->initial_alpha_value, 0);
	UT_CHECK_EQ(d->np_min_time_between_cnps, 0);
	UT_CHECK_EQ(cfg.port[0].fault.ce_ppm, 20000);
	UT_CHECK_EQ(cfg.port[0].fault.seed, 3);
	UT_CHECK_EQ(cfg.port[1].cc, UROCE_CC_OFF);
	UT_CHECK_EQ(cfg.port[1].dcqcn.rpg_hai_rate, 77);	/* the override */
	UT_CHECK_EQ(cfg.port[1].dcqcn.rpg_ai_rate, 5);
	uroce_config_free(&cfg);
}

static void
test_defaults(void)
{
	struct uroce_config cfg;
	int ret;

	ret = uroce_config_load(write_conf("[port]\ndev = net_null0\nip = 10.0.0.1/32"),
				&cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, 0);
	UT_CHECK_EQ(cfg.port[0].mtu, 1500);
	UT_CHECK_EQ(cfg.port[0].ip4_prefix, 32);
	UT_CHECK(!cfg.port[0].exception_set);
	UT_CHECK_EQ(cfg.port[0].steer, UROCE_STEER_AUTO);
	UT_CHECK_EQ(cfg.lcores, 1);
	UT_CHECK_EQ(cfg.keeper_us, 1000);
	UT_CHECK_EQ(cfg.eal_argc, 0);
	UT_CHECK(cfg.eal_argv == NULL);
	UT_CHECK_EQ(cfg.neigh_cnt, 0);
	UT_CHECK_EQ(cfg.port[0].link_wait, 10);
	UT_CHECK_EQ(cfg.port[0].cm_resp_timeout, 20);
	UT_CHECK_EQ(cfg.port[0].cm_max_retries, 15);
	UT_CHECK_EQ(cfg.port[0].cm_ack_timeout, 17);
	UT_CHECK_EQ(cfg.log_level, 5);		/* warning */
	UT_CHECK_EQ(cfg.file_prefix[0], '\0');
	UT_CHECK(!uroce_config_args_prefix(&cfg));	/* the engine picks one */
	uroce_config_free(&cfg);
	uroce_config_free(&cfg);	/* twice is harmless */

	/* uroce's in-process link kind (pmd_glue) is a dev string too. */
	ret = uroce_config_load(write_conf("[port]\ndev = ringlink:ab,side=1\n"
					   "ip = 10.0.0.1/32"),
				&cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, 0);
	UT_CHECK(strcmp(cfg.port[0].dev, "ringlink:ab,side=1") == 0);
	UT_CHECK(!cfg.port[0].is_pci);
	uroce_config_free(&cfg);
	/* Its two sides are two ports of one process. */
	ret = uroce_config_load(write_conf("[port0]\ndev = ringlink:ab,side=0\n"
					   "ip = 10.0.0.1/24\n"
					   "[port1]\ndev = ringlink:ab,side=1\n"
					   "ip = 10.0.0.2/24"),
				&cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, 0);
	UT_CHECK_EQ(cfg.port_cnt, 2);
	uroce_config_free(&cfg);
	UT_CHECK(is_zero(&cfg));

	/* Both sides of one ringlink in one file: two ports; one side twice
	 * is still one device given twice. */
	ret = uroce_config_load(write_conf("[port0]\ndev = ringlink:ab,side=0\n"
					   "ip = 10.0.0.1/24\n[port1]\n"
					   "dev = ringlink:ab,side=1\n"
					   "ip = 10.0.0.2/24"),
				&cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, 0);
	UT_CHECK_EQ(cfg.port_cnt, 2);
	uroce_config_free(&cfg);
	ret = uroce_config_load(write_conf("[port0]\ndev = ringlink:ab,side=0\n"
					   "ip = 10.0.0.1/24\n[port1]\n"
					   "dev = ringlink:ab,side=0\n"
					   "ip = 10.0.0.2/24"),
				&cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, -EINVAL);
	UT_CHECK(strstr(err, "is also") != NULL);
}

/* --- the samples in config/ ---------------------------------------------- */

static bool
has_samples(const char *dir)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/config/memif-a.conf", dir);
	return access(p, R_OK) == 0;
}

/*
 * The source tree: $UROCE_SRCDIR, else from __FILE__, which meson gives
 * relative to the build root (or absolute). The test may run in the build
 * root or elsewhere, so try the current directory and the build root found
 * from the executable (<build>/test/unit/unit_config).
 */
static bool
find_srcdir(char *dir, size_t len)
{
	static const char tail[] = "test/unit/test_config.c";
	const char *env = getenv("UROCE_SRCDIR");
	size_t flen = strlen(__FILE__) - (sizeof(tail) - 1);
	char exe[PATH_MAX] = "";
	ssize_t n;

	if (env != NULL) {
		snprintf(dir, len, "%s", env);
		return has_samples(dir);
	}
	snprintf(dir, len, "%.*s.", (int)flen, __FILE__);
	if (has_samples(dir))
		return true;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(dir, len, "%s/../../%.*s.", exe, (int)flen, __FILE__);
	return has_samples(dir);
}

/* Ports on a kernel interface may leave ip out; neigh = kernel|own. */
static void
test_kernel_iface(void)
{
	static const struct {
		const char *text;
		uint8_t neigh;
	} cases[] = {
		{ "[port]\ndev = af_xdp:veth-x.1\n", UROCE_CONFIG_NEIGH_DEFAULT },
		{ "[port]\ndev = af_xdp:eth0,busy_budget=0\nneigh = own\n",
		  UROCE_CONFIG_NEIGH_OWN },
		{ "[port]\ndev = net_af_xdp0,iface=eth1\nneigh = kernel\n",
		  UROCE_CONFIG_NEIGH_KERNEL },
		{ "[port]\ndev = net_af_packet0,iface=v,qdisc_bypass=1\n"
		  "neigh = kernel\n", UROCE_CONFIG_NEIGH_KERNEL },
	};
	struct uroce_config cfg;
	unsigned int i;

	for (i = 0; i < RTE_DIM(cases); i++) {
		int ret = uroce_config_load(write_conf(cases[i].text), &cfg, err,
					    sizeof(err));

		UT_CHECK_EQ(ret, 0);
		UT_NOTE("case %u: %s", i, err);
		UT_CHECK(uroce_config_kernel_iface(&cfg.port[0]));
		UT_CHECK(!cfg.port[0].has_ip4 && cfg.port[0].ip6_cnt == 0);
		UT_CHECK_EQ(cfg.port[0].neigh, cases[i].neigh);
		UT_CHECK(!cfg.port[0].has_mtu);
		UT_CHECK_EQ(cfg.port[0].mtu, UROCE_CONFIG_MTU_DEFAULT);
		uroce_config_free(&cfg);
	}
	UT_CHECK_EQ(uroce_config_load(write_conf("[port]\ndev = net_tap0\n"
		"ip = 10.0.0.1/24\nmtu = 1500\n"), &cfg, err, sizeof(err)), 0);
	UT_CHECK(!uroce_config_kernel_iface(&cfg.port[0]));
	UT_CHECK(cfg.port[0].has_mtu);
	uroce_config_free(&cfg);
}

static void
test_samples(void)
{
	static const char *const names[] = {
		"memif-a.conf", "memif-b.conf", "af_packet-a.conf", "af_packet-b.conf",
	};
	struct uroce_config cfg;
	char dir[PATH_MAX], path[PATH_MAX + 32];
	unsigned int i;
	int ret;

	if (!UT_CHECK(find_srcdir(dir, sizeof(dir)))) {
		fprintf(stderr, "     set UROCE_SRCDIR to the source tree\n");
		return;
	}
	for (i = 0; i < RTE_DIM(names); i++) {
		snprintf(path, sizeof(path), "%s/config/%s", dir, names[i]);
		ret = uroce_config_load(path, &cfg, err, sizeof(err));
		UT_CHECK_EQ(ret, 0);
		UT_NOTE("%s: %s", names[i], err);
		UT_CHECK_EQ(cfg.port_cnt, 1);
		UT_CHECK(cfg.port[0].has_ip4);
		UT_CHECK_EQ(cfg.neigh_cnt, 1);
		UT_CHECK(cfg.eal_argc > 0);
		UT_NOTE("%s", names[i]);
		uroce_config_free(&cfg);
	}
	/* The AF_XDP samples take addresses and neighbours from the kernel. */
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/config/af_xdp-%c.conf", dir,
			 'a' + i);
		ret = uroce_config_load(path, &cfg, err, sizeof(err));
		UT_CHECK_EQ(ret, 0);
		UT_NOTE("af_xdp-%c.conf: %s", 'a' + i, err);
		UT_CHECK(!cfg.port[0].has_ip4 && cfg.neigh_cnt == 0);
		UT_CHECK(uroce_config_kernel_iface(&cfg.port[0]));
		uroce_config_free(&cfg);
	}
	/* The PCI sample: a PCI dev, the exception interface by default. */
	snprintf(path, sizeof(path), "%s/config/pci.conf", dir);
	ret = uroce_config_load(path, &cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, 0);
	UT_CHECK(cfg.port[0].is_pci);
	UT_CHECK(!cfg.port[0].exception_set);
	UT_CHECK_EQ(cfg.port[0].steer, UROCE_STEER_AUTO);
	uroce_config_free(&cfg);
	snprintf(path, sizeof(path), "%s/config/memif-b.conf", dir);
	ret = uroce_config_load(path, &cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, 0);
	UT_CHECK_EQ(cfg.port[0].ip4, ip4("192.168.77.2"));
	UT_CHECK_EQ(cfg.port[0].mtu, 4096);
	UT_CHECK(strstr(cfg.port[0].dev, "role=client") != NULL);
	UT_CHECK_EQ(cfg.neigh[0].ip4, ip4("192.168.77.1"));
	uroce_config_free(&cfg);
}

/* --- bad input ----------------------------------------------------------- */

/* Loading text fails with -EINVAL, one line naming the file and holding
 * each needle, and a zeroed cfg. */
static void
expect_fail(const char *text, const char *needle1, const char *needle2)
{
	struct uroce_config cfg;
	const char *path = write_conf(text);
	int ret;

	memset(&cfg, 0xa5, sizeof(cfg));
	ret = uroce_config_load(path, &cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, -EINVAL);
	UT_CHECK(is_zero(&cfg));
	UT_CHECK(one_line(err));
	UT_CHECK(strstr(err, path) != NULL);
	UT_CHECK(strstr(err, needle1) != NULL);
	UT_CHECK(needle2 == NULL || strstr(err, needle2) != NULL);
	UT_NOTE("case \"%s\" gave: %s", text, err);
	if (ret == 0)
		uroce_config_free(&cfg);
}

#define BASE	"[port]\ndev = net_null0\nip = 10.0.0.1/24\n"
#define NOIP	"[port]\ndev = net_null0\n"

static const struct bad_case {
	const char *text, *needle1, *needle2;
} bad_values[] = {
	{ BASE "mtu = 0", "[port] mtu = \"0\"", "not a number in 68..9000" },
	{ BASE "neigh = both", "[port] neigh = \"both\"", "not kernel or own" },
	{ BASE "csum_offload = yes", "[port] csum_offload = \"yes\"", "on or off" },
	{ BASE "neigh = Kernel", "[port] neigh", "not kernel or own" },
	{ "[port]\ndev = af_xdp:", "[port] dev", "1..15" },
	{ "[port]\ndev = af_xdp:,x=1", "[port] dev", "1..15" },
	{ "[port]\ndev = af_xdp:0123456789abcdef", "[port] dev", "1..15" },
	{ "[port]\ndev = af_xdp:a/b", "[port] dev", "1..15" },
	{ "[port]\ndev = net_af_xdp0", "[port] ip", "missing" },
	{ "[port]\ndev = net_af_packet0,qdisc_bypass=1", "[port] ip", "missing" },
	{ BASE "mtu = 67", "[port] mtu = \"67\"", "68..9000" },
	{ BASE "mtu = 9001", "[port] mtu = \"9001\"", "68..9000" },
	{ BASE "mtu = abc", "[port] mtu = \"abc\"", "68..9000" },
	{ BASE "mtu = +1500", "[port] mtu", "68..9000" },
	{ BASE "mtu = 1500x", "[port] mtu", NULL },
	{ BASE "mtu = 0x5dc", "[port] mtu", NULL },
	{ BASE "mtu = 99999999999999999999999", "[port] mtu", NULL },
	{ BASE "mtu =", "[port] mtu = \"\"", "empty value" },
	{ NOIP "ip = 10.0.0.1", "[port] ip = \"10.0.0.1\"", "prefix" },
	{ NOIP "ip = 10.0.0.256/24", "[port] ip", "IPv4" },
	{ NOIP "ip = 10.0.0/24", "[port] ip", NULL },
	{ NOIP "ip = 010.0.0.1/24", "[port] ip", NULL },
	{ NOIP "ip = 10.0.0.1/33", "[port] ip", "1..32" },
	{ NOIP "ip = 10.0.0.1/0", "[port] ip", "1..32" },
	{ NOIP "ip = 10.0.0.1/24/1", "[port] ip", NULL },
	{ NOIP "ip = 10.0.0.1/", "[port] ip", NULL },
	{ NOIP "ip = 224.0.0.1/24", "[port] ip", "unicast" },
	{ NOIP "ip = 0.0.0.0/8", "[port] ip", "unicast" },
	{ NOIP "ip = 127.0.0.1/8", "[port] ip", "unicast" },
	{ NOIP "ip = 255.255.255.255/32", "[port] ip", "unicast" },
	{ NOIP "ip = fd00::1/64", "[port] ip", NULL },
	{ BASE "ip6 = fd00::1", "[port] ip6", "prefix" },
	{ BASE "ip6 = fd00::g/64", "[port] ip6", NULL },
	{ BASE "ip6 = fd00::1/129", "[port] ip6", "1..128" },
	{ BASE "ip6 = ::1/128", "[port] ip6", "unicast" },
	{ BASE "ip6 = ::/0", "[port] ip6", NULL },
	{ BASE "ip6 = ff02::1/64", "[port] ip6", "unicast" },
	{ BASE "ip6 = ::ffff:10.0.0.1/96", "[port] ip6", "unicast" },
	{ BASE "ip6 = fd00::1/64,,fd00::2/64x", "[port] ip6", NULL },
	{ BASE "ip6 = ,", "[port] ip6", "no address" },
	{ BASE "ip6 = fd00::1/64 fd00::2/64 fd00::3/64 fd00::4/64 fd00::5/64 "
	  "fd00::6/64 fd00::7/64 fd00::8/64 fd00::9/64", "[port] ip6", "more than 8" },
	{ BASE "mac = 02:00:00:00:00", "[port] mac", "MAC" },
	{ BASE "mac = 02:00:00:00:00:0g", "[port] mac", "MAC" },
	{ BASE "mac = 02-00-00-00-00-01", "[port] mac", "MAC" },
	{ BASE "mac = 02:00:00:00:00:001", "[port] mac", "MAC" },
	{ BASE "mac = 01:00:5e:00:00:01", "[port] mac", "unicast" },
	{ BASE "mac = ff:ff:ff:ff:ff:ff", "[port] mac", "unicast" },
	{ BASE "mac = 00:00:00:00:00:00", "[port] mac", "unicast" },
	{ BASE "vlan = 4095", "[port] vlan = \"4095\"", "0..4094" },
	{ BASE "vlan = -1", "[port] vlan", "0..4094" },
	{ BASE "pcap =", "[port] pcap", "empty value" },
	{ BASE "fault = drop=1.5", "[port] fault", "drop=1.5" },
	{ BASE "fault = drop=2", "[port] fault", "probability" },
	{ BASE "fault = drop=101%", "[port] fault", "probability" },
	{ BASE "fault = drop=0.0000001", "[port] fault", "probability" },
	{ BASE "fault = drop=0.00001%", "[port] fault", "probability" },
	{ BASE "fault = drop=.5", "[port] fault", "probability" },
	{ BASE "fault = drop=1.", "[port] fault", "probability" },
	{ BASE "fault = drop=-0", "[port] fault", "probability" },
	{ BASE "fault = drop=5%%", "[port] fault", "probability" },
	{ BASE "fault = drop=0.5,drop=0.1", "[port] fault", "twice" },
	{ BASE "fault = loss=0.1", "[port] fault", "loss" },
	{ BASE "fault = drop", "[port] fault", "drop" },
	{ BASE "fault = drop=0.1,", "[port] fault", "expected" },
	{ BASE "fault = ,drop=0.1", "[port] fault", "expected" },
	{ BASE "fault = seed=abc", "[port] fault", "seed" },
	{ BASE "fault = seed=-1", "[port] fault", "seed" },
	{ BASE "fault = seed=18446744073709551616", "[port] fault", "seed" },
	{ BASE "fault = seed=0x", "[port] fault", "seed" },
	{ BASE "fault = none,drop=0.1", "[port] fault", NULL },
	{ BASE "exception = 0000:00:04.0", "[port] exception", "not a PCI" },
	{ BASE "exception = net tap0", "[port] exception", "blank" },
	{ BASE "steer = fast", "[port] steer = \"fast\"", "auto, flow or soft" },
	{ "[port]\nip = 10.0.0.1/24\ndev = net memif0", "[port] dev", "blank" },
	{ "[port]\nip = 10.0.0.1/24\ndev = net_memif0, role=server", "[port] dev", "blank" },
	{ "[port]\nip = 10.0.0.1/24\ndev = 0000:00:04.9", "[port] dev", "PCI" },
	{ "[port]\nip = 10.0.0.1/24\ndev = 00:20.0", "[port] dev", "PCI" },
	{ "[port]\nip = 10.0.0.1/24\ndev = ,x=1", "[port] dev", "PCI" },
	{ "[port]\nip = 10.0.0.1/24\ndev = net-memif0", "[port] dev", "PCI" },
	{ "[port]\nip = 10.0.0.1/24\ndev = ringlink:,side=0", "[port] dev", "PCI" },
	{ "[port]\nip = 10.0.0.1/24\ndev = ringlink:a-b,side=0", "[port] dev", "PCI" },
	{ BASE "[eal]\nlcores = -1", "[eal] lcores = \"-1\"", "not a number in 0..127" },
	{ BASE "[eal]\nlcores = 128", "[eal] lcores", "0..127" },
	{ BASE "[eal]\nlcores = two", "[eal] lcores", "0..127" },
	{ BASE "[eal]\nkeeper_us = 0", "[eal] keeper_us", "1..1000000" },
	{ BASE "[eal]\nkeeper_us = 1000001", "[eal] keeper_us", "1..1000000" },
	{ BASE "[eal]\nkeeper_us = 1ms", "[eal] keeper_us", "1..1000000" },
	{ BASE "[eal]\nargs = --a \"b", "[eal] args", "unterminated" },
	{ BASE "[eal]\nargs = --a \"\"", "[eal] args", "empty argument" },
	{ BASE "[eal]\nargs = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 "
	  "22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 "
	  "47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65", "[eal] args",
	  "more than 64" },
	{ BASE "link_wait = 601", "[port] link_wait = \"601\"", "0..600" },
	{ BASE "link_wait = -1", "[port] link_wait", "0..600" },
	{ BASE "link_wait = 1s", "[port] link_wait", "0..600" },
	{ BASE "cm_response_timeout = 32", "[port] cm_response_timeout = \"32\"",
	  "0..31" },
	{ BASE "cm_max_retries = 16", "[port] cm_max_retries = \"16\"",
	  "0..15" },
	{ BASE "cm_ack_timeout = 0", "[port] cm_ack_timeout = \"0\"", "1..31" },
	{ BASE "cm_ack_timeout = 32", "[port] cm_ack_timeout", "1..31" },
	{ BASE "cm_ack_timeout = 0.5s", "[port] cm_ack_timeout", "1..31" },
	{ BASE "cc = ecn", "[port] cc = \"ecn\"", "dcqcn or off" },
	{ BASE "cc = DCQCN", "[port] cc", "dcqcn or off" },
	{ BASE "rpg_time_reset = 0", "[port] rpg_time_reset = \"0\"", "1..1000000" },
	{ BASE "rpg_threshold = 32", "[port] rpg_threshold", "1..31" },
	{ BASE "rpg_ai_rate = 5M", "[port] rpg_ai_rate", "1..100000" },
	{ BASE "rpg_max_rate = 100001", "[port] rpg_max_rate", "0..100000" },
	{ BASE "rpg_min_dec_fac = 0", "[port] rpg_min_dec_fac", "1..100" },
	{ BASE "dce_tcp_g = 1024", "[port] dce_tcp_g", "0..1023" },
	{ BASE "initial_alpha_value = -1", "[port] initial_alpha_value", "0..1023" },
	{ BASE "np_min_time_between_cnps = 1000001",
	  "[port] np_min_time_between_cnps", "0..1000000" },
	{ BASE "fault = ce=1.5", "[port] fault", "ce=1.5" },
	{ BASE "fault = ce=0.1,ce=0.2", "[port] fault", "twice" },
	{ BASE "[eal]\nlog_level = verbose", "[eal] log_level = \"verbose\"",
	  "emergency, alert, critical, error, warning, notice, info, debug or 1..8" },
	{ BASE "[eal]\nlog_level = 0", "[eal] log_level", "1..8" },
	{ BASE "[eal]\nlog_level = 9", "[eal] log_level", "1..8" },
	{ BASE "[eal]\nlog_level = warn", "[eal] log_level", "1..8" },
	{ BASE "[eal]\nlog_level = WARNING", "[eal] log_level", "1..8" },
	{ BASE "[eal]\nfile_prefix = a/b", "[eal] file_prefix = \"a/b\"", "letters" },
	{ BASE "[eal]\nfile_prefix = .x", "[eal] file_prefix", "'.'" },
	{ BASE "[eal]\nfile_prefix = a b", "[eal] file_prefix", "letters" },
	{ BASE "[eal]\nfile_prefix = "
	  "a123456789b123456789c123456789d123456789e123456789f123456789g1234",
	  "[eal] file_prefix", "at most 64" },
	{ BASE "[eal]\nfile_prefix = x\nargs = --file-prefix=y",
	  "[eal] file_prefix = \"x\"", "--file-prefix too" },
	{ BASE "[eal]\nfile_prefix = x\nargs = --file-prefix y",
	  "[eal] file_prefix", "--file-prefix too" },
	{ BASE "[neigh]\n10.0.0.300 = 02:00:00:00:00:02", "[neigh] 10.0.0.300", "IPv4 or IPv6" },
	{ BASE "[neigh]\n10.0.0.2/32 = 02:00:00:00:00:02", "[neigh] 10.0.0.2/32", "IPv4" },
	{ BASE "[neigh]\n10.0.0.2 = 02:00:00:00:00", "[neigh] 10.0.0.2", "MAC" },
	{ BASE "[neigh]\n10.0.0.2 =", "[neigh] 10.0.0.2", "MAC" },
	{ BASE "[neigh]\nfd00::1 = 02:00:00:00:00:02\nfd00:0::1 = 02:00:00:00:00:03",
	  "[neigh] fd00:0::1", "twice" },
	{ BASE "[neigh]\n10.0.0.2 = 02:00:00:00:00:02\n10.0.0.2 = 02:00:00:00:00:02",
	  "[neigh] 10.0.0.2", "twice" },
};

static const struct bad_case bad_structure[] = {
	{ BASE "mtuu = 1500", "[port] mtuu", "unknown key" },
	{ BASE "MTU = 1500", "[port] MTU", "unknown key" },
	{ BASE "[eal]\ncores = 2", "[eal] cores", "unknown key" },
	{ BASE "[ports]\nmtu = 1", "[ports]", "unknown section" },
	{ BASE "[Port1]\nmtu = 1", "[Port1]", "unknown section" },
	{ BASE "[port16]\nmtu = 1", "[port16]", "unknown section" },
	{ BASE "[port01]\nmtu = 1", "[port01]", "unknown section" },
	{ BASE "[port.1]\nmtu = 1", "[port.1]", "unknown section" },
	{ BASE "[port-1]\nmtu = 1", "[port-1]", "unknown section" },
	{ "[port]\nip = 10.0.0.1/24\nmtu = 1500", "[port] dev", "missing" },
	{ "[port]\ndev = net_null0\nmtu = 1500", "[port] ip", "missing" },
	{ "[port]", "[port] dev", "missing" },
	{ "[eal]\nlcores = 1", "[port]", "missing" },
	{ "; nothing\n", "[port]", "missing" },
	{ BASE "[port2]\ndev = net_null2\nip = 10.0.0.3/24", "[port2]", "port 1 is missing" },
	{ "[port1]\ndev = net_null2\nip = 10.0.0.3/24", "[port1]", "port 0 is missing" },
	{ BASE "[port1]\ndev = net_null0,x=1\nip = 10.0.0.3/24", "[port1] dev", "[port]" },
	{ "[port]\ndev = ringlink:ab,side=0\nip = 10.0.0.1/24\n"
	  "[port1]\ndev = ringlink:ab,side=0\nip = 10.0.0.3/24", "[port1] dev", "[port]" },
	{ BASE "[port0]\ndev = net_null1\nip = 10.0.0.3/24", "[port0]", "already [port]" },
	{ BASE "[port]\nmtu = 1500", "[port]", "already" },
	{ BASE "[eal]\nlcores = 1\n[eal]\nargs = -x", "[eal]", "twice" },
	{ BASE "[neigh]\n[neigh]", "[neigh]", "twice" },
	{ BASE "mtu = 1500\nmtu = 9000", "[port] mtu", "twice" },
	{ BASE "rpg_ai_rate = 5\nrpg_ai_rate = 6", "[port] rpg_ai_rate", "twice" },
	{ BASE "rpg_ai = 5", "[port] rpg_ai", "np_min_time_between_cnps" },
	{ BASE "dev = net_null1", "[port] dev", "twice" },
	/* syntax, reported by line */
	{ BASE "mtu 9000", "line 4", "key = value" },
	{ "# comment\n" BASE, "line 1", "';'" },
	{ BASE "  # mtu = 9000", "line 4", "';'" },
	{ "mtu = 1500\n" BASE, "line 1", "before the first [section]" },
	{ "[port\n", "line 1", "[section]" },
	{ "[port] x\n", "line 1", "[section]" },
	{ "[port]]\n", "line 1", "[section]" },
	{ "[[port]\n", "line 1", "[section]" },
	{ "[]\n", "line 1", "section name" },
	{ "[  ]\n", "line 1", "section name" },
	{ BASE "= 5", "line 4", "key" },
	{ BASE "dev\\;x = 1", "line 4", "\\;" },
	{ BASE "pcap = a\\; b", "line 4", "\\;" },
};

static void
test_bad(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(bad_values); i++)
		expect_fail(bad_values[i].text, bad_values[i].needle1, bad_values[i].needle2);
	for (i = 0; i < RTE_DIM(bad_structure); i++)
		expect_fail(bad_structure[i].text, bad_structure[i].needle1,
			    bad_structure[i].needle2);
}

/* rte_cfgfile's limits: 63-byte keys and section names, 255-byte values. */
static void
test_limits(void)
{
	struct uroce_config cfg;
	char text[1024], val[400];
	int ret;

	/* A 255-byte value is kept whole. */
	memset(val, 'a', 255);
	val[255] = '\0';
	snprintf(text, sizeof(text), BASE "pcap = %s\n", val);
	ret = uroce_config_load(write_conf(text), &cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, 0);
	UT_CHECK_EQ(strlen(cfg.port[0].pcap), 255);
	uroce_config_free(&cfg);
	/* 256 bytes would be cut by rte_cfgfile: refused by line. */
	val[255] = 'a';
	val[256] = '\0';
	snprintf(text, sizeof(text), BASE "pcap = %s\n", val);
	expect_fail(text, "line 4", "value longer than 255");
	/* A 64-byte key would be cut. */
	memset(val, 'k', 64);
	val[64] = '\0';
	snprintf(text, sizeof(text), BASE "%s = 1\n", val);
	expect_fail(text, "line 4", "key empty or longer than 63");
	snprintf(text, sizeof(text), BASE "[%s]\n", val);
	expect_fail(text, "line 4", "section name");
}

/* rte_cfgfile's 322-byte lines; NUL bytes. */
static void
test_line_limits(void)
{
	struct uroce_config cfg;
	char text[1024], val[400];
	int ret;

	/* 322 bytes of line are fine (the comment makes it long), 323 not. */
	memset(val, ' ', 322);
	memcpy(val, "mtu = 1500 ;", 12);
	val[322] = '\0';
	snprintf(text, sizeof(text), BASE "%s\n", val);
	ret = uroce_config_load(write_conf(text), &cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, 0);
	UT_NOTE("%s", err);
	uroce_config_free(&cfg);
	val[322] = 'x';
	val[323] = '\0';
	snprintf(text, sizeof(text), BASE "%s\n", val);
	expect_fail(text, "line 4", "longer than 322");
	/* A NUL byte would hide the rest of its line from rte_cfgfile. */
	ret = uroce_config_load(write_file("nul.conf", BASE "mtu = 15\0" "00\n",
					   sizeof(BASE) + 11), &cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, -EINVAL);
	UT_CHECK(strstr(err, "line 4: NUL byte") != NULL);
	UT_CHECK(is_zero(&cfg));
}

static void
test_files(void)
{
	struct uroce_config cfg;
	char path[PATH_MAX];
	int ret;

	snprintf(path, sizeof(path), "%s/missing.conf", tmpdir);
	ret = uroce_config_load(path, &cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, -ENOENT);
	UT_CHECK(is_zero(&cfg));
	UT_CHECK(strstr(err, path) != NULL);
	UT_CHECK(strstr(err, ": cannot open: No such file or directory") != NULL);
	UT_CHECK(one_line(err));

	ret = uroce_config_load(tmpdir, &cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, -EINVAL);
	UT_CHECK(strstr(err, "not a regular file") != NULL);

	ret = uroce_config_load(NULL, &cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, -EINVAL);
	UT_CHECK(strstr(err, "UROCE_CONFIG") != NULL);
	UT_CHECK(one_line(err));

	/* A small err buffer gets a cut message; a NULL one is allowed. */
	ret = uroce_config_load(path, &cfg, err, 10);
	UT_CHECK_EQ(ret, -ENOENT);
	UT_CHECK_EQ(strlen(err), 9);
	ret = uroce_config_load(path, &cfg, NULL, 0);
	UT_CHECK_EQ(ret, -ENOENT);

	/* Even a newline in the path does not break the one line. */
	write_file("new\nline.conf", "[port]\n", 7);
	ret = uroce_config_load(conf_path, &cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, -EINVAL);
	UT_CHECK(one_line(err));
	UT_CHECK(strstr(err, "new?line.conf") != NULL);
	unlink(conf_path);

	unsetenv("UROCE_CONFIG");
	UT_CHECK(uroce_config_path() == NULL);
	setenv("UROCE_CONFIG", "", 1);
	UT_CHECK(uroce_config_path() == NULL);
	setenv("UROCE_CONFIG", "/etc/x.conf", 1);
	UT_CHECK(uroce_config_path() != NULL && strcmp(uroce_config_path(), "/etc/x.conf") == 0);
	unsetenv("UROCE_CONFIG");
}

/* --- environment overrides ----------------------------------------------- */

#define ENV_FILE BASE "mtu = 1500\nfault = drop=0.5\n[port1]\ndev = net_null1\nip = 10.0.0.2/24\n"

static void
test_env_good(void)
{
	struct uroce_config cfg;
	int ret;

	clear_env();
	setenv("UROCE_PORT_MTU", "9000", 1);
	setenv("UROCE_PORT0_VLAN", "7", 1);
	setenv("UROCE_PORT_FAULT", "none", 1);
	setenv("UROCE_PORT_PCAP", "/tmp/p.pcap", 1);
	setenv("UROCE_PORT1_IP", "10.9.9.9/16", 1);
	setenv("UROCE_EAL_ARGS", "--in-memory \"--file-prefix=a b\"", 1);
	setenv("UROCE_EAL_LCORES", "0", 1);
	setenv("UROCE_EAL_KEEPER_US", "500", 1);
	setenv("UROCE_CONFIG", "/not/used", 1);
	setenv("UROCE_SOMETHING_ELSE", "x", 1);
	ret = uroce_config_load(write_conf(ENV_FILE), &cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, 0);
	UT_NOTE("%s", err);
	UT_CHECK_EQ(cfg.port[0].mtu, 9000);
	UT_CHECK(cfg.port[0].has_vlan && cfg.port[0].vlan == 7);
	UT_CHECK(!cfg.port[0].has_fault);
	UT_CHECK_EQ(cfg.port[0].fault.drop_ppm, 0);
	UT_CHECK(strcmp(cfg.port[0].pcap, "/tmp/p.pcap") == 0);
	UT_CHECK_EQ(cfg.port[1].ip4, ip4("10.9.9.9"));
	UT_CHECK_EQ(cfg.port[1].ip4_prefix, 16);
	UT_CHECK_EQ(cfg.lcores, 0);		/* inline progress */
	UT_CHECK_EQ(cfg.keeper_us, 500);
	UT_CHECK_EQ(cfg.eal_argc, 2);
	if (cfg.eal_argc == 2)
		UT_CHECK(strcmp(cfg.eal_argv[1], "--file-prefix=a b") == 0);
	uroce_config_free(&cfg);
	unsetenv("UROCE_CONFIG");
	unsetenv("UROCE_SOMETHING_ELSE");
	clear_env();
}

static void
expect_env_fail(const char *var, const char *val, const char *needle1,
		const char *needle2)
{
	struct uroce_config cfg;
	const char *path;
	int ret;

	clear_env();
	setenv(var, val, 1);
	path = write_conf(ENV_FILE);
	ret = uroce_config_load(path, &cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, -EINVAL);
	UT_CHECK(is_zero(&cfg));
	UT_CHECK(one_line(err));
	UT_CHECK(strstr(err, path) != NULL);
	UT_CHECK(strstr(err, var) != NULL);
	UT_CHECK(strstr(err, needle1) != NULL);
	UT_CHECK(needle2 == NULL || strstr(err, needle2) != NULL);
	UT_NOTE("%s=%s gave: %s", var, val, err);
	if (ret == 0)
		uroce_config_free(&cfg);
	clear_env();
}

/* [port] link_wait and cm_ack_timeout, [eal] file_prefix and log_level. */
static void
test_link_eal_keys(void)
{
	static const struct {
		const char *args;
		bool has_prefix;
	} args[] = {
		{ "--no-huge -m 256", false },
		{ "--in-memory", true },
		{ "--no-shconf", true },
		{ "--file-prefix=x", true },
		{ "--file-prefix x", true },
		{ "--file-prefixes=x", false },
		{ "--in-memory-not", false },
	};
	static const char *const levels[] = {
		"emergency", "alert", "critical", "error",
		"warning", "notice", "info", "debug",
	};
	struct uroce_config cfg;
	char text[256];
	unsigned int i;
	int ret;

	ret = uroce_config_load(write_conf(BASE "link_wait = 0\n"
					   "cm_ack_timeout = 1\n[port1]\n"
					   "dev = net_null1\nip = 10.0.0.3/24\n"
					   "link_wait = 600\ncm_ack_timeout = 31\n"
					   "[eal]\nfile_prefix = "
					   "job-7.a_b\nlog_level = 8"),
				&cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, 0);
	UT_CHECK_EQ(cfg.port[0].link_wait, 0);
	UT_CHECK_EQ(cfg.port[1].link_wait, 600);
	UT_CHECK_EQ(cfg.port[0].cm_ack_timeout, 1);
	UT_CHECK_EQ(cfg.port[1].cm_ack_timeout, 31);
	UT_CHECK(strcmp(cfg.file_prefix, "job-7.a_b") == 0);
	UT_CHECK_EQ(cfg.log_level, 8);
	uroce_config_free(&cfg);
	for (i = 0; i < RTE_DIM(levels); i++) {
		snprintf(text, sizeof(text), BASE "[eal]\nlog_level = %s",
			 levels[i]);
		ret = uroce_config_load(write_conf(text), &cfg, err, sizeof(err));
		UT_CHECK_EQ(ret, 0);
		UT_CHECK_EQ(cfg.log_level, i + 1);
		uroce_config_free(&cfg);
	}
	for (i = 0; i < RTE_DIM(args); i++) {
		snprintf(text, sizeof(text), BASE "[eal]\nargs = %s", args[i].args);
		ret = uroce_config_load(write_conf(text), &cfg, err, sizeof(err));
		UT_CHECK_EQ(ret, 0);
		UT_CHECK_EQ(uroce_config_args_prefix(&cfg), args[i].has_prefix);
		uroce_config_free(&cfg);
	}
	/* Overrides of keys with '_' in their names. */
	setenv("UROCE_EAL_LOG_LEVEL", "info", 1);
	setenv("UROCE_EAL_FILE_PREFIX", "over", 1);
	setenv("UROCE_PORT_LINK_WAIT", "3", 1);
	setenv("UROCE_PORT_ZERO_COPY", "off", 1);
	setenv("UROCE_PORT_CM_RESPONSE_TIMEOUT", "14", 1);
	setenv("UROCE_PORT_CM_MAX_RETRIES", "0", 1);
	setenv("UROCE_PORT_CM_ACK_TIMEOUT", "14", 1);
	ret = uroce_config_load(write_conf(BASE "[eal]\nlog_level = debug"),
				&cfg, err, sizeof(err));
	UT_CHECK_EQ(cfg.port[0].cm_resp_timeout, 14);
	UT_CHECK_EQ(cfg.port[0].cm_max_retries, 0);
	UT_CHECK_EQ(ret, 0);
	UT_CHECK_EQ(cfg.port[0].cm_ack_timeout, 14);
	UT_CHECK_EQ(cfg.log_level, 7);
	UT_CHECK(strcmp(cfg.file_prefix, "over") == 0);
	UT_CHECK_EQ(cfg.port[0].link_wait, 3);
	UT_CHECK(cfg.port[0].zero_copy_off);
	uroce_config_free(&cfg);
	clear_env();
}

static void
test_env_bad(void)
{
	char longval[400];
	struct uroce_config cfg;
	int ret;

	expect_env_fail("UROCE_PORT_MTU", "abc", "[port] mtu = \"abc\" (from UROCE_PORT_MTU)",
			"68..9000");
	expect_env_fail("UROCE_PORT_MTU", "", "[port] mtu", "empty value");
	expect_env_fail("UROCE_PORT_MTU", "9000\n", "[port] mtu = \"9000?\"", "68..9000");
	expect_env_fail("UROCE_PORT1_MAC", "zz", "[port1] mac", "MAC");
	expect_env_fail("UROCE_EAL_LCORES", "128", "[eal] lcores", "0..127");
	expect_env_fail("UROCE_EAL_KEEPER_US", "0", "[eal] keeper_us", "1..1000000");
	expect_env_fail("UROCE_EAL_ARGS", "\"", "[eal] args", "unterminated");
	expect_env_fail("UROCE_EAL_LOG_LEVEL", "loud",
			"[eal] log_level = \"loud\" (from UROCE_EAL_LOG_LEVEL)", "1..8");
	expect_env_fail("UROCE_PORT_LINK_WAIT", "700", "[port] link_wait", "0..600");
	expect_env_fail("UROCE_EAL_FILE_PREFIX", "a/b", "[eal] file_prefix", "letters");
	expect_env_fail("UROCE_PORT_MTUU", "1500", "unknown key", "mtu");
	expect_env_fail("UROCE_PORT_mtu", "1500", "unknown key", NULL);
	expect_env_fail("UROCE_PORT_MTU_X", "1500", "unknown key", NULL);
	expect_env_fail("UROCE_EAL_MTU", "1500", "unknown key", "lcores, keeper_us, args");
	expect_env_fail("UROCE_PORT2_MTU", "1500", "no section for port 2", NULL);
	expect_env_fail("UROCE_PORT16_MTU", "1500", "no such section", NULL);
	expect_env_fail("UROCE_PORT01_MTU", "1500", "no such section", NULL);
	expect_env_fail("UROCE_PORTS", "1", "not an override", NULL);
	expect_env_fail("UROCE_NEIGH_10", "02:00:00:00:00:01", "not an override", NULL);
	memset(longval, 'a', sizeof(longval) - 1);
	longval[sizeof(longval) - 1] = '\0';
	expect_env_fail("UROCE_PORT_PCAP", longval, "[port] pcap", "longer than 255");

	/* Port 0 is both PORT and PORT0: two variables for one key clash. */
	setenv("UROCE_PORT_MTU", "1500", 1);
	setenv("UROCE_PORT0_MTU", "9000", 1);
	ret = uroce_config_load(write_conf(ENV_FILE), &cfg, err, sizeof(err));
	UT_CHECK_EQ(ret, -EINVAL);
	UT_CHECK(strstr(err, "another variable sets [port] mtu") != NULL);
	UT_NOTE("%s", err);
	clear_env();
}

/* --- garbage ------------------------------------------------------------- */

static uint32_t
rnd(uint32_t n)
{
	return (uint32_t)(ut_rand() % n);
}

static const char *const fragments[] = {
	"[port]", "[port1]", "[eal]", "[neigh]", "[", "]", "=", ";", "\\", "#",
	"dev = net_null0", "ip = 10.0.0.1/24", "mtu = 9000", "args = \"a b\"",
	"fault = drop=0.1", "10.0.0.2 = 02:00:00:00:00:02", "\r", "\t", " ", "\xff",
	"\xc3\xa9", "lcores = 1", "\"", "%s%n", ",",
};

/* Text of fragments, random bytes, NULs and long runs. */
static size_t
garbage(char *buf, size_t cap)
{
	size_t len = 0, n;
	const char *f;
	unsigned int i, parts = rnd(40);

	for (i = 0; i < parts && len + 400 < cap; i++) {
		switch (rnd(8)) {
		case 0:
			buf[len++] = (char)rnd(256);
			break;
		case 1:
			n = rnd(400);
			memset(buf + len, "a =[;"[rnd(5)], n);
			len += n;
			break;
		case 2:
		case 3:
			buf[len++] = '\n';
			break;
		default:
			f = fragments[rnd(RTE_DIM(fragments))];
			memcpy(buf + len, f, strlen(f));
			len += strlen(f);
		}
	}
	return len;
}

/* Flip, drop or insert a few bytes of a good file. */
static size_t
mutate(char *buf, size_t cap)
{
	static const char good[] = BASE "mtu = 4096\nvlan = 5\nfault = drop=0.1,seed=3\n"
		"[port1]\ndev = net_null1\nip6 = fd00::1/64\n[eal]\nlcores = 2\n"
		"args = --no-huge -m 256 \"--x=a b\"\n[neigh]\n10.0.0.2 = 02:00:00:00:00:02\n";
	size_t len = sizeof(good) - 1, pos;
	unsigned int i, edits = 1 + rnd(4);

	memcpy(buf, good, len);
	for (i = 0; i < edits && len > 0 && len + 1 < cap; i++) {
		pos = rnd((uint32_t)len);
		switch (rnd(3)) {
		case 0:
			buf[pos] = (char)rnd(256);
			break;
		case 1:
			memmove(buf + pos, buf + pos + 1, len - pos - 1);
			len--;
			break;
		default:
			memmove(buf + pos + 1, buf + pos, len - pos);
			buf[pos] = "=[];\\\n\" ,/:."[rnd(12)];
			len++;
		}
	}
	return len;
}

#define GARBAGE_FILES 10000

/* Nothing crashes or leaks; each result is a full config or a zeroed one
 * with one line of error; and nothing is printed on stderr (rte_cfgfile
 * logs there when it meets what the scan should have refused). */
static void
test_garbage(void)
{
	static char buf[32768];
	char log_path[PATH_MAX];
	struct uroce_config cfg;
	unsigned int i, ok = 0, bad_err = 0, bad_cfg = 0;
	int saved, fd, ret;
	size_t len;
	struct stat st;

	snprintf(log_path, sizeof(log_path), "%s/stderr.txt", tmpdir);
	printf("garbage: stderr goes to %s meanwhile\n", log_path);
	fflush(stdout);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, STDERR_FILENO);
	close(fd);
	for (i = 0; i < GARBAGE_FILES; i++) {
		len = i % 2 ? garbage(buf, sizeof(buf)) : mutate(buf, sizeof(buf));
		ret = uroce_config_load(write_file("garbage.conf", buf, len), &cfg,
					err, sizeof(err));
		if (ret == 0) {
			ok++;
			bad_cfg += cfg.port_cnt == 0 || cfg.port[0].dev[0] == '\0';
			uroce_config_free(&cfg);
		} else {
			bad_cfg += !is_zero(&cfg);
			bad_err += !one_line(err) || strstr(err, conf_path) == NULL;
		}
	}
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	UT_CHECK_EQ(bad_cfg, 0);
	UT_CHECK_EQ(bad_err, 0);
	UT_CHECK(ok > 0);
	UT_CHECK(stat(log_path, &st) == 0 && st.st_size == 0);
	printf("garbage: %u of %d files loaded\n", ok, GARBAGE_FILES);
	unlink(log_path);
}

int
main(void)
{
	char path[PATH_MAX];

	ut_srand(0x9e3779b97f4a7c15ull);

	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	clear_env();
	test_design_example();
	test_all_keys();
	test_defaults();
	test_cc();
	test_samples();
	test_kernel_iface();
	test_bad();
	test_limits();
	test_line_limits();
	test_files();
	test_env_good();
	test_link_eal_keys();
	test_env_bad();
	test_garbage();

	snprintf(path, sizeof(path), "%s/test.conf", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/garbage.conf", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/nul.conf", tmpdir);
	unlink(path);
	UT_CHECK(rmdir(tmpdir) == 0);
	return ut_summary();
}
