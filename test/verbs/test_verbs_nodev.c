/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The verbs that need no device, run through our libibverbs.so.1 (this
 * program links it, not the system one): strings, rates, fork, marshalling
 * and sysfs helpers checked against known answers and, value by value,
 * against the installed rdma-core library loaded in a namespace of its own
 * (dlmopen); the device list from configuration files; and the absent
 * verbs' return conventions.
 */

#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include "uroce_test.h"
#include "verbs_priv.h"

#define REAL_LIB "/usr/lib/x86_64-linux-gnu/libibverbs.so.1"

static void *real;	/* rdma-core's library, or NULL */
static char tmpdir[] = "/tmp/uroce-verbs-test.XXXXXX";

static void *
real_sym(const char *name)
{
	void *f = real != NULL ? dlsym(real, name) : NULL;

	UT_CHECK(real == NULL || f != NULL);
	return f;
}

/* ---- strings ---- */

typedef const char *(*str_fn)(int);

static void
check_str_fn(const char *name, const char *(*ours)(int), int lo, int hi)
{
	str_fn theirs = (str_fn)real_sym(name);

	for (int v = lo; v <= hi; v++) {
		const char *s = ours(v);

		UT_CHECK(s != NULL);
		if (theirs != NULL && s != NULL)
			UT_CHECK(strcmp(s, theirs(v)) == 0);
		UT_NOTE("%s(%d): ours \"%s\", rdma-core \"%s\"", name, v, s,
			theirs != NULL ? theirs(v) : "-");
	}
}

static const char *wc_str(int v) { return ibv_wc_status_str(v); }
static const char *node_str(int v) { return ibv_node_type_str(v); }
static const char *port_str(int v) { return ibv_port_state_str(v); }
static const char *event_str(int v) { return ibv_event_type_str(v); }

static void
test_strings(void)
{
	UT_CHECK(strcmp(ibv_wc_status_str(IBV_WC_SUCCESS), "success") == 0);
	UT_CHECK(strcmp(ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR),
			"transport retry counter exceeded") == 0);
	UT_CHECK(strcmp(ibv_wc_status_str(IBV_WC_TM_RNDV_INCOMPLETE),
			"TM software rendezvous") == 0);
	UT_CHECK(strcmp(ibv_wc_status_str(IBV_WC_TM_RNDV_INCOMPLETE + 1),
			"unknown") == 0);
	UT_CHECK(strcmp(ibv_node_type_str(IBV_NODE_CA),
			"InfiniBand channel adapter") == 0);
	UT_CHECK(strcmp(ibv_node_type_str(IBV_NODE_UNKNOWN), "unknown") == 0);
	UT_CHECK(strcmp(ibv_node_type_str(IBV_NODE_UNSPECIFIED),
			"unspecified") == 0);
	UT_CHECK(strcmp(ibv_port_state_str(IBV_PORT_ACTIVE), "active") == 0);
	UT_CHECK(strcmp(ibv_event_type_str(IBV_EVENT_WQ_FATAL),
			"WQ fatal") == 0);
	UT_CHECK(strcmp(ibv_event_type_str(-1), "unknown") == 0);
	check_str_fn("ibv_wc_status_str", wc_str, -3, 40);
	check_str_fn("ibv_node_type_str", node_str, -3, 12);
	check_str_fn("ibv_port_state_str", port_str, -3, 12);
	check_str_fn("ibv_event_type_str", event_str, -3, 30);
}

/* ---- rates ---- */

static void
test_rates(void)
{
	int (*r_mult)(int) = (int (*)(int))real_sym("ibv_rate_to_mult");
	int (*r_mbps)(int) = (int (*)(int))real_sym("ibv_rate_to_mbps");
	int (*m_rate)(int) = (int (*)(int))real_sym("mult_to_ibv_rate");
	int (*b_rate)(int) = (int (*)(int))real_sym("mbps_to_ibv_rate");

	UT_CHECK_EQ(ibv_rate_to_mult(IBV_RATE_10_GBPS), 4);
	UT_CHECK_EQ(ibv_rate_to_mult(IBV_RATE_56_GBPS), -1);
	UT_CHECK_EQ(ibv_rate_to_mbps(IBV_RATE_100_GBPS), 103125);
	UT_CHECK_EQ(mult_to_ibv_rate(16), IBV_RATE_40_GBPS);
	UT_CHECK_EQ(mult_to_ibv_rate(-1), IBV_RATE_MAX);
	UT_CHECK_EQ(mbps_to_ibv_rate(25781), IBV_RATE_25_GBPS);
	UT_CHECK_EQ(mbps_to_ibv_rate(25000), IBV_RATE_MAX);
	for (int v = -2; v <= 30 && r_mult != NULL; v++) {
		UT_CHECK_EQ(ibv_rate_to_mult(v), r_mult(v));
		UT_CHECK_EQ(ibv_rate_to_mbps(v), r_mbps(v));
		UT_NOTE("rate %d", v);
	}
	for (int m = -2; m <= 500 && m_rate != NULL; m++) {
		UT_CHECK_EQ(mult_to_ibv_rate(m), m_rate(m));
		UT_NOTE("mult %d", m);
	}
	for (int v = 0; v <= 30 && b_rate != NULL; v++) {
		int mbps = r_mbps(v);

		UT_CHECK_EQ(mbps_to_ibv_rate(mbps), b_rate(mbps));
		UT_CHECK_EQ(mbps_to_ibv_rate(mbps + 1), b_rate(mbps + 1));
		UT_NOTE("mbps %d", mbps);
	}
}

/* ---- fork, marshalling, sysfs ---- */

static void
test_fork(void)
{
	char buf[64];

	UT_CHECK_EQ(ibv_fork_init(), 0);
	UT_CHECK_EQ(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
	UT_CHECK_EQ(ibv_dontfork_range(buf, sizeof(buf)), 0);
	UT_CHECK_EQ(ibv_dofork_range(buf, sizeof(buf)), 0);
}

static void
fill_random(void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((uint8_t *)p)[i] = (uint8_t)ut_rand();
}

/* Same input, both libraries, byte-identical outputs (padding zeroed). */
static void
test_marshall(void)
{
	void (*r_path)(struct ibv_sa_path_rec *, struct ib_user_path_rec *) =
		(void (*)(struct ibv_sa_path_rec *, struct ib_user_path_rec *))
		real_sym("ibv_copy_path_rec_from_kern");
	void (*r_qp)(struct ibv_qp_attr *, struct ib_uverbs_qp_attr *) =
		(void (*)(struct ibv_qp_attr *, struct ib_uverbs_qp_attr *))
		real_sym("ibv_copy_qp_attr_from_kern");

	for (int i = 0; i < 100; i++) {
		struct ib_user_path_rec k, k2;
		struct ibv_sa_path_rec s, s2, s_real;
		struct ib_uverbs_qp_attr qk;
		struct ibv_qp_attr q, q_real;

		/* kernel -> verbs -> kernel -> verbs: the second trip changes
		 * nothing (mtu is 32 bits on the kernel side, 8 in verbs). */
		fill_random(&k, sizeof(k));
		memset(&s, 0, sizeof(s));
		memset(&s2, 0, sizeof(s2));
		memset(&s_real, 0, sizeof(s_real));
		memset(&k2, 0, sizeof(k2));
		ibv_copy_path_rec_from_kern(&s, &k);
		UT_CHECK_MEM(s.dgid.raw, k.dgid, 16);
		UT_CHECK_EQ(s.flow_label, k.flow_label);
		UT_CHECK_EQ(s.preference, k.preference);
		ibv_copy_path_rec_to_kern(&k2, &s);
		ibv_copy_path_rec_from_kern(&s2, &k2);
		UT_CHECK_MEM(&s2, &s, sizeof(s));
		if (r_path != NULL) {
			r_path(&s_real, &k);
			UT_CHECK_MEM(&s, &s_real, sizeof(s));
		}
		fill_random(&qk, sizeof(qk));
		memset(&q, 0, sizeof(q));
		memset(&q_real, 0, sizeof(q_real));
		ibv_copy_qp_attr_from_kern(&q, &qk);
		UT_CHECK_EQ(q.dest_qp_num, qk.dest_qp_num);
		UT_CHECK_EQ(q.qp_state, 0);	/* the caller's, untouched */
		UT_CHECK_EQ(q.alt_ah_attr.port_num, qk.alt_ah_attr.port_num);
		if (r_qp != NULL) {
			r_qp(&q_real, &qk);
			UT_CHECK_MEM(&q, &q_real, sizeof(q));
		}
		UT_NOTE("marshall round %d", i);
	}
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!UT_CHECK(f != NULL))
		return;
	fputs(text, f);
	fclose(f);
}

static void
test_sysfs(void)
{
	char path[256], buf[16];

	snprintf(path, sizeof(path), "%s/attr", tmpdir);
	write_file(path, "0x15b3\n");
	memset(buf, 'x', sizeof(buf));
	UT_CHECK_EQ(ibv_read_sysfs_file(tmpdir, "attr", buf, sizeof(buf)), 6);
	UT_CHECK(strcmp(buf, "0x15b3") == 0);
	/* Contents that fill the buffer with no newline cannot end in NUL. */
	UT_CHECK_EQ(ibv_read_sysfs_file(tmpdir, "attr", buf, 4), -1);
	errno = 0;
	UT_CHECK_EQ(ibv_read_sysfs_file(tmpdir, "none", buf, sizeof(buf)), -1);
	UT_CHECK_EQ(errno, ENOENT);
	UT_CHECK(strcmp(ibv_get_sysfs_path(), "/sys") == 0);
}

/* ---- device list ---- */

/* Run ibv_get_device_list() with stderr caught into err[]. */
static struct ibv_device **
list_catching_stderr(int *num, char *err, size_t errlen)
{
	char path[256];
	struct ibv_device **list;
	int saved = dup(2), fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	UT_CHECK(saved >= 0 && fd >= 0);
	fflush(stderr);
	dup2(fd, 2);
	list = ibv_get_device_list(num);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, err, errlen - 1, 0);
	err[n > 0 ? n : 0] = '\0';
	close(fd);
	return list;
}

static unsigned int
count_lines(const char *s)
{
	unsigned int n = 0;

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

/* A config error: an empty list, not NULL; one line naming the file. */
static void
check_empty_list(const char *what, const char *expect_in_err)
{
	char err[1024];
	int num = -1;
	struct ibv_device **list = list_catching_stderr(&num, err,
							  sizeof(err));

	UT_CHECK(list != NULL && list[0] == NULL);
	UT_CHECK_EQ(num, 0);
	UT_CHECK_EQ(count_lines(err), 1);
	UT_CHECK(strncmp(err, "uroce: ", 7) == 0);
	UT_CHECK(strstr(err, expect_in_err) != NULL);
	UT_NOTE("%s: stderr \"%s\"", what, err);
	ibv_free_device_list(list);
	/* The same error again is not repeated. */
	list = list_catching_stderr(&num, err, sizeof(err));
	UT_CHECK(list != NULL && num == 0 && err[0] == '\0');
	UT_NOTE("%s, again: stderr \"%s\"", what, err);
	ibv_free_device_list(list);
}

static void
test_config_errors(void)
{
	char path[256];

	unsetenv("UROCE_CONFIG");
	check_empty_list("no UROCE_CONFIG", "UROCE_CONFIG");
	snprintf(path, sizeof(path), "%s/missing.conf", tmpdir);
	setenv("UROCE_CONFIG", path, 1);
	check_empty_list("missing file", path);
	snprintf(path, sizeof(path), "%s/bad.conf", tmpdir);
	write_file(path, "[port]\ndev = net_ring0\nip = 10.0.0.1/24\n"
		   "mtu = 99999\n");
	setenv("UROCE_CONFIG", path, 1);
	check_empty_list("bad mtu", "mtu");
}

static void
check_device(struct ibv_device *d, unsigned int idx, uint64_t guid)
{
	char s[64];

	snprintf(s, sizeof(s), "uroce%u", idx);
	UT_CHECK(strcmp(ibv_get_device_name(d), s) == 0);
	UT_CHECK(strcmp(d->name, s) == 0);
	UT_CHECK_EQ(d->node_type, IBV_NODE_CA);
	UT_CHECK_EQ(d->transport_type, IBV_TRANSPORT_IB);
	UT_CHECK(d->dev_name[0] != '\0' && d->dev_path[0] != '\0');
	UT_CHECK(strstr(d->ibdev_path, s) != NULL);
	/* A path through which nothing can be read (no such sysfs). */
	UT_CHECK(access(d->ibdev_path, F_OK) != 0);
	UT_CHECK_EQ(ibv_get_device_index(d), idx);
	UT_CHECK_EQ(be64toh(ibv_get_device_guid(d)), guid);
	UT_NOTE("device %u (%s)", idx, d->name);
}

static void
test_device_list(void)
{
	char path[256], err[1024];
	struct ibv_device **list;
	int num = -1;

	snprintf(path, sizeof(path), "%s/three.conf", tmpdir);
	write_file(path,
		   "[port]\ndev = net_ring0\nip = 192.168.77.1/24\n"
		   "mac = 02:00:00:00:77:01\n"
		   "[port1]\ndev = net_ring1\nip = 10.1.2.3/8\n"
		   "[port2]\ndev = net_ring2\nip6 = fd00::1/64\n");
	setenv("UROCE_CONFIG", path, 1);
	list = list_catching_stderr(&num, err, sizeof(err));
	if (!UT_CHECK(list != NULL && num == 3))
		return;
	UT_CHECK(err[0] == '\0');
	UT_CHECK(list[3] == NULL);
	/* EUI-64 of 02:00:00:00:77:01: U/L bit flipped, ff:fe inserted */
	check_device(list[0], 0, 0x000000fffe007701ull);
	/* 02:75 : 10.1.2.3 : 00 : port */
	check_device(list[1], 1, 0x02750a0102030001ull);
	/* fd00::1 folded: fd000000 ^ 0 ^ 0 ^ 00000001 */
	check_device(list[2], 2, 0x0275fd0000010002ull);
	ibv_free_device_list(list);

	list = ibv_get_device_list(NULL);
	UT_CHECK(list != NULL && list[0] != NULL && list[3] == NULL);
	ibv_free_device_list(list);
	ibv_free_device_list(NULL);
}

/* ---- NULL objects and what is not built ---- */

/*
 * Verbs given NULL fail in their own convention without touching it
 * (opening a device would start the engine: test/conformance does that);
 * the absent features fail as rdma-core reports them.
 */
static void
test_null_and_absent(void)
{
	uint8_t mac[6];
	uint16_t vid;

	errno = 0;
	UT_CHECK(ibv_open_device(NULL) == NULL && errno == EINVAL);
	errno = 0;
	UT_CHECK(ibv_alloc_pd(NULL) == NULL && errno == EINVAL);
	errno = 0;
	UT_CHECK(ibv_create_comp_channel(NULL) == NULL && errno == EINVAL);
	UT_CHECK_EQ(ibv_modify_qp(NULL, NULL, 0), EINVAL);
	UT_CHECK_EQ(ibv_dealloc_pd(NULL), EINVAL);
	UT_CHECK_EQ(ibv_destroy_cq(NULL), EINVAL);
	UT_CHECK_EQ(ibv_query_gid(NULL, 1, 0, NULL), -1);
	UT_CHECK_EQ(ibv_close_device(NULL), -1);
	UT_CHECK_EQ(ibv_get_cq_event(NULL, NULL, NULL), -1);
	UT_CHECK_EQ(ibv_get_async_event(NULL, NULL), -1);
	UT_CHECK_EQ(_ibv_query_gid_table(NULL, NULL, 0, 0, 0), -EINVAL);
	UT_CHECK(ibv_qp_to_qp_ex(NULL) == NULL);
	errno = 0;
	UT_CHECK(ibv_create_srq(NULL, NULL) == NULL && errno == EINVAL);
	UT_CHECK_EQ(ibv_destroy_srq(NULL), EINVAL);
	UT_CHECK_EQ(ibv_modify_srq(NULL, NULL, 0), EINVAL);
	UT_CHECK_EQ(ibv_query_srq(NULL, NULL), EINVAL);
	UT_CHECK_EQ(ibv_resize_cq(NULL, 1), EINVAL);
	errno = 0;
	UT_CHECK_EQ(ibv_rereg_mr(NULL, 0, NULL, NULL, 0, 0),
		    IBV_REREG_MR_ERR_INPUT);
	UT_CHECK_EQ(errno, EINVAL);
	UT_CHECK_EQ(ibv_query_qp_data_in_order(NULL, IBV_WR_SEND, 0), 0);
	UT_CHECK_EQ(ibv_resolve_eth_l2_from_gid(NULL, NULL, mac, &vid),
		    EOPNOTSUPP);
	/* Providers' load-time registration is harmless. */
	verbs_register_driver_34(NULL);
	UT_CHECK(verbs_open_device(NULL, NULL) == NULL);
}

static void
remove_tmpdir(void)
{
	static const char *const files[] = {
		"attr", "stderr", "bad.conf", "three.conf",
	};
	char path[256];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, files[i]);
		unlink(path);
	}
	UT_CHECK(rmdir(tmpdir) == 0);
}

int
main(int argc, char **argv)
{
	ut_srand(44);
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	real = dlmopen(LM_ID_NEWLM, REAL_LIB, RTLD_NOW | RTLD_LOCAL);
	if (real == NULL)
		printf("rdma-core's %s not loaded (%s): known answers only\n",
		       REAL_LIB, dlerror());
	test_strings();
	test_rates();
	test_fork();
	test_marshall();
	test_sysfs();
	test_config_errors();
	test_device_list();
	test_null_and_absent();
	if (real != NULL)
		dlclose(real);
	unsetenv("UROCE_CONFIG");
	remove_tmpdir();
	return ut_summary();
}
