/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_CONFIG_H
#define UROCE_CONFIG_H

/**
 * @file
 * The configuration file: an INI file read with DPDK's rte_cfgfile, chosen
 * by `uroce-run -c FILE` or the UROCE_CONFIG environment variable.
 *
 *	[port]                ; port 0, device uroce0 (also spelled [port0])
 *	dev    = net_memif0,role=server,socket=/run/uroce/ab.sock
 *	ip     = 192.168.77.1/24
 *	ip6    = fd00:77::1/64, fd00:78::1/64   ; optional, up to 8
 *	mtu    = 4096         ; 68..9000, default 1500
 *	mac    = 02:00:00:00:00:01              ; optional override
 *	vlan   = 77           ; optional, 0..4094
 *	pcap   = /tmp/port0.pcap                ; optional capture file
 *	fault  = drop=0.01,reorder=1%,dup=0,corrupt=0.001,seed=7
 *	zero_copy = on        ; on|off: large RC sends straight from the MR
 *	csum_offload = on     ; on|off: IPv4 header checksum by the NIC
 *	neigh  = kernel       ; kernel|own: neighbours from the kernel's table
 *	                      ; (rtnetlink) or from our own ARP; default
 *	                      ; kernel on af_xdp, own elsewhere
 *	exception = net_tap_x0,iface=uexc0  ; the kernel's interface for what
 *	                      ; is not RoCEv2 (a vdev, or off); PCI default:
 *	                      ; net_tap_uroce<n>,iface=uroce<n>
 *	steer  = auto         ; auto|flow|soft: rte_flow rules, or software
 *	                      ; dispatch (docs/plain-nics.md)
 *	cc     = dcqcn        ; dcqcn|off: ECN and DCQCN (docs/congestion.md);
 *	                      ; default off. The DCQCN parameters are keys
 *	                      ; of their own, named as mlx5 names them:
 *	rpg_time_reset = 300  ; and the others of struct uroce_config_dcqcn
 *	link_wait = 10        ; 0..600 s: how long the open waits for the
 *	                      ; link to come up before it goes on with the
 *	                      ; link down (it comes up later, as a cable
 *	                      ; plugged in); default 10
 *	cm_response_timeout = 20 ; 0..31: the CM's response timeout of the
 *	                      ; port's rdma_cm connections, 4.096 us x 2^n
 *	cm_max_retries = 15   ; 0..15: the CM's resends before it gives up
 *	cm_ack_timeout = 17   ; 1..31: the local ACK timeout (4.096 us x
 *	                      ; 2^N) rdma_cm gives the RC QPs of active ids
 *	                      ; that do not set RDMA_OPTION_ID_ACK_TIMEOUT
 *	                      ; (passive ones take the REQ's); default 17
 *	                      ; (0.54 s), as the kernel's
 *	[port1]               ; port 1, device uroce1; ports are numbered 0..15
 *	...                   ; without gaps
 *	[eal]
 *	lcores = 1            ; engine lcores, default 1; 0: none, the
 *	                      ; application's calls run the stack (inline
 *	                      ; progress) and a keeper thread when none does
 *	keeper_us = 1000      ; 1..1000000: with lcores = 0, how long no
 *	                      ; call runs the stack before the keeper does
 *	args   = --no-huge -m 256 "--file-prefix=a b"
 *	file_prefix = job7    ; DPDK's --file-prefix; default: uroce-<pid>,
 *	                      ; unless args give --file-prefix, --in-memory
 *	                      ; or --no-shconf
 *	log_level = warning   ; DPDK's log level (emergency, alert, critical,
 *	                      ; error, warning, notice, info, debug or 1..8),
 *	                      ; default warning; uroce's own messages keep
 *	                      ; notice unless this is more verbose
 *	[neigh]               ; static neighbours, IPv4 or IPv6 = MAC
 *	192.168.77.2 = 02:00:00:00:00:02
 *
 * Syntax (rte_cfgfile's, with its traps turned into errors): comments start
 * with ';' anywhere on a line ('#' is not a comment character); a line is
 * blank, a "[section]" or a "key = value"; keys and sections are lower case;
 * a line holds at most 322 bytes, a key 63 and a value 255. Unknown sections
 * and keys, a key given twice and a section given twice are errors.
 *
 * Environment overrides, applied after the file, one per key:
 *	UROCE_<SECTION>_<KEY>=value
 * with SECTION and KEY in upper case: UROCE_PORT_MTU=9000 (port 0, also
 * UROCE_PORT0_MTU), UROCE_PORT1_FAULT=drop=0.1, UROCE_EAL_ARGS="--no-huge".
 * A port override needs that port's section in the file; [eal] always
 * exists. [neigh] cannot be overridden. Every variable whose name starts
 * with UROCE_PORT, UROCE_EAL_ or UROCE_NEIGH_ is an override, so that a
 * typo in one is an error rather than silently ignored.
 *
 * dev = af_xdp:IFACE[,devargs] is an AF_XDP port on kernel interface IFACE
 * (pmd_glue/include/uroce_glue.h). On ports whose dev names a kernel interface
 * (af_xdp:, net_af_xdp..,iface=, net_af_packet..,iface=) ip and ip6 may be
 * left out: the interface's own kernel addresses are used.
 *
 * Probabilities in `fault` are a fraction (0.25) or a percentage (25%), at
 * most 1, kept in parts per million; the seed is a decimal or 0x number
 * (default 1). `fault = none` turns injection off (for an override).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_ether.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UROCE_CONFIG_MAX_PORTS		16
#define UROCE_CONFIG_MAX_IP6		8	/**< IPv6 addresses per port */
#define UROCE_CONFIG_MAX_NEIGH		64
#define UROCE_CONFIG_MAX_EAL_ARGS	64
/** dev and pcap: the longest value rte_cfgfile keeps, with the NUL. */
#define UROCE_CONFIG_STR_LEN		256
/** A size for the err buffer of uroce_config_load() that fits any error. */
#define UROCE_CONFIG_ERR_LEN		1024
#define UROCE_CONFIG_MTU_MIN		68
#define UROCE_CONFIG_MTU_MAX		9000
#define UROCE_CONFIG_MTU_DEFAULT	1500
#define UROCE_CONFIG_VLAN_MAX		4094
/** A fault probability of 1 in parts per million. */
#define UROCE_CONFIG_PPM		1000000u
#define UROCE_CONFIG_FAULT_SEED_DEFAULT	1
/** [port] link_wait, seconds: testpmd's link check waits 9 s; a round 10. */
#define UROCE_CONFIG_LINK_WAIT_MAX	600
#define UROCE_CONFIG_LINK_WAIT_DEFAULT	10
/** [port] cm_response_timeout and cm_max_retries: rdma_cm's
 *  (CMA_CM_RESPONSE_TIMEOUT, CMA_MAX_CM_RETRIES). */
#define UROCE_CONFIG_CM_RESP_TIMEOUT_MAX	31
#define UROCE_CONFIG_CM_RESP_TIMEOUT_DEFAULT	20
#define UROCE_CONFIG_CM_RETRIES_MAX		15
#define UROCE_CONFIG_CM_RETRIES_DEFAULT		15
/** [port] cm_ack_timeout: the kernel's rdma_cm over RoCE gives its QPs a
 *  packet life time of 16 and a local ACK timeout one more, 17: 0.54 s. */
#define UROCE_CONFIG_CM_ACK_TIMEOUT_MIN		1
#define UROCE_CONFIG_CM_ACK_TIMEOUT_MAX		31
#define UROCE_CONFIG_CM_ACK_TIMEOUT_DEFAULT	17
/** [eal] file_prefix: it names a directory and hugepage files. */
#define UROCE_CONFIG_PREFIX_LEN		64
/** [eal] log_level: RTE_LOG_WARNING, quiet start-up, warnings shown. */
#define UROCE_CONFIG_LOG_LEVEL_DEFAULT	5
/** [eal] keeper_us: default and largest value. */
#define UROCE_CONFIG_KEEPER_US_DEFAULT	1000
#define UROCE_CONFIG_KEEPER_US_MAX	1000000

/** [port] cc: the port's congestion control (docs/congestion.md). */
enum uroce_config_cc {
	UROCE_CC_OFF,			/**< Not-ECT frames, CE and CNPs ignored */
	UROCE_CC_DCQCN,			/**< ECN, CNPs and DCQCN */
};

/**
 * [port] DCQCN parameters, the keys named as mlx5 names them
 * (docs/congestion.md has what each does). Rates in Mbit/s, times in
 * microseconds, alpha and its gain in 1/1024.
 */
struct uroce_config_dcqcn {
	uint32_t rpg_time_reset;	/**< us between rate-increase timer events */
	uint32_t rpg_byte_reset;	/**< bytes between byte-counter events; 0 off */
	uint32_t rpg_threshold;		/**< F: fast recovery steps */
	uint32_t rpg_ai_rate;		/**< additive increase, Mbit/s */
	uint32_t rpg_hai_rate;		/**< hyper increase, Mbit/s */
	uint32_t rpg_min_rate;		/**< floor of a cut, Mbit/s */
	uint32_t rpg_max_rate;		/**< line rate, Mbit/s; 0: 100 Gbit/s */
	uint32_t rpg_min_dec_fac;	/**< a cut keeps at least this %, 1..100 */
	uint32_t rate_reduce_monitor_period; /**< us: one cut per period */
	uint32_t rate_to_set_on_first_cnp; /**< Mbit/s; 0: cut from line rate */
	uint32_t dce_tcp_g;		/**< alpha kept per period, 1/1024 */
	uint32_t dce_tcp_rtt;		/**< us: the alpha update period */
	uint32_t initial_alpha_value;	/**< alpha at the first CNP, 1/1024 */
	uint32_t np_min_time_between_cnps; /**< us between CNPs of one QP */
};

/** How a port tells RoCEv2 from the kernel's frames (with an exception
 *  interface): rte_flow rules when the PMD takes them, else software. */
enum uroce_config_steer {
	UROCE_STEER_AUTO,		/**< flow, falling back to soft */
	UROCE_STEER_FLOW,		/**< flow or fail to open */
	UROCE_STEER_SOFT,		/**< software dispatch only */
};

struct uroce_config_ip6 {
	uint8_t addr[16];		/**< network order */
	uint8_t prefix_len;		/**< 1..128 */
};

/** Seeded fault injection on a port's link (test links). */
struct uroce_config_fault {
	uint32_t drop_ppm;		/**< 0..UROCE_CONFIG_PPM */
	uint32_t reorder_ppm;
	uint32_t dup_ppm;
	uint32_t corrupt_ppm;
	uint32_t ce_ppm;		/**< CE marked on received ECT frames */
	uint64_t seed;
};

/** Where a port's neighbours (IP -> MAC) come from. */
enum uroce_config_neigh_src {
	UROCE_CONFIG_NEIGH_DEFAULT,	/**< kernel on af_xdp, own elsewhere */
	UROCE_CONFIG_NEIGH_KERNEL,	/**< the kernel's table (rtnetlink) */
	UROCE_CONFIG_NEIGH_OWN,		/**< our ARP and [neigh] */
};

struct uroce_config_port {
	/** DPDK vdev string ("net_memif0,role=...") or PCI address with
	 *  optional devargs ("0000:00:04.0,x=y"). Never empty once loaded. */
	char dev[UROCE_CONFIG_STR_LEN];
	bool is_pci;			/**< dev starts with a PCI address */
	bool has_ip4;
	rte_be32_t ip4;
	uint8_t ip4_prefix;		/**< 1..32 */
	uint8_t ip6_cnt;		/**< has_ip4 || ip6_cnt > 0 */
	struct uroce_config_ip6 ip6[UROCE_CONFIG_MAX_IP6];
	uint16_t mtu;
	bool has_mtu;			/**< mtu was given (else the default) */
	bool has_mac;			/**< else the ethdev's own MAC */
	struct rte_ether_addr mac;
	char pcap[UROCE_CONFIG_STR_LEN];	/**< "" = no capture */
	bool has_vlan;
	uint16_t vlan;			/**< 0..4094 (0: priority tagged) */
	bool has_fault;
	struct uroce_config_fault fault;
	bool zero_copy_off;		/**< zero_copy = off (default on) */
	bool csum_offload_off;		/**< csum_offload = off (default on) */
	uint8_t neigh;			/**< enum uroce_config_neigh_src */
	/** exception = DEV ("": off); exception_set: the key was given (a
	 *  PCI port without it gets net_tap_uroce<n>,iface=uroce<n>). */
	char exception[UROCE_CONFIG_STR_LEN];
	bool exception_set;
	enum uroce_config_steer steer;	/**< default UROCE_STEER_AUTO */
	/** Seconds the open waits for the link (0..600, default 10). */
	uint16_t link_wait;
	/** The RDMA CM's timing on this port (IBTA 12.6.1.3 exponents and
	 *  MaxCMRetries): what REQs say and how long the CM waits. */
	uint8_t cm_resp_timeout;
	uint8_t cm_max_retries;
	/** Local ACK timeout of rdma_cm's RC QPs, 4.096 us x 2^N (1..31,
	 *  default 17) unless the id sets RDMA_OPTION_ID_ACK_TIMEOUT. */
	uint8_t cm_ack_timeout;
	enum uroce_config_cc cc;	/**< default UROCE_CC_OFF */
	struct uroce_config_dcqcn dcqcn; /**< defaults: uroce_config_dcqcn_defaults() */
};

struct uroce_config_neigh {
	bool is_ip6;
	rte_be32_t ip4;			/**< when !is_ip6 */
	uint8_t ip6[16];		/**< when is_ip6, network order */
	struct rte_ether_addr mac;
};

struct uroce_config {
	char *path;			/**< the file it came from */
	unsigned int port_cnt;		/**< ports 0..port_cnt-1, >= 1 */
	struct uroce_config_port port[UROCE_CONFIG_MAX_PORTS];
	unsigned int lcores;		/**< engine lcores; 0: inline progress */
	/** [eal] keeper_us: with lcores = 0, the microseconds without an
	 *  application call into the stack after which the keeper runs it. */
	unsigned int keeper_us;
	/** Extra EAL arguments, without a program name, NULL-terminated
	 *  (NULL when there are none). rte_eal_init() permutes its argv:
	 *  give it a copy of the pointer array. */
	int eal_argc;
	char **eal_argv;
	/** [eal] file_prefix; "" when not given (see uroce_config_args_prefix()). */
	char file_prefix[UROCE_CONFIG_PREFIX_LEN + 1];
	/** [eal] log_level, RTE_LOG_EMERG (1) .. RTE_LOG_DEBUG (8). */
	uint8_t log_level;
	unsigned int neigh_cnt;
	struct uroce_config_neigh neigh[UROCE_CONFIG_MAX_NEIGH];
};

/**
 * Read and validate a configuration file, then apply the environment
 * overrides. Works before rte_eal_init().
 *
 * @param path    the file; NULL gives -EINVAL with a hint in err
 * @param cfg     filled on success; zeroed on failure (nothing to free)
 * @param err     on failure, one line without a newline, naming the file
 *                and the section and key (or the line, or the variable):
 *                uroce: /etc/x.conf: [port] mtu = "abc": not a number in 68..9000
 *                May be NULL.
 * @param errlen  size of err (UROCE_CONFIG_ERR_LEN fits every message)
 * @return 0; -ENOENT, -EACCES ... (the file cannot be read); -EINVAL (bad
 *   syntax, section, key or value); -EFBIG (file over 1 MiB); -ENOMEM.
 */
int uroce_config_load(const char *path, struct uroce_config *cfg,
		      char *err, size_t errlen);

/**
 * Parse a fault spec, the value of [port] fault ("drop=1%,reorder=0.001,
 * seed=7", or "none"), into *f; *on is false for "none". -EINVAL with the
 * reason in why (the item at fault) and *f, *on unchanged otherwise.
 */
int uroce_config_parse_fault(const char *spec, struct uroce_config_fault *f,
			     bool *on, char *why, size_t whylen);

/** The DCQCN parameters' defaults (docs/congestion.md). */
void uroce_config_dcqcn_defaults(struct uroce_config_dcqcn *d);

/** Free what a successful uroce_config_load() allocated and zero cfg.
 *  Safe on a zeroed cfg. */
void uroce_config_free(struct uroce_config *cfg);

/**
 * Whether the port's dev names a kernel interface whose addresses and
 * neighbours the kernel keeps: af_xdp:IFACE, or a net_af_xdp or
 * net_af_packet vdev with iface=. Such a port may omit ip and ip6.
 */
bool uroce_config_kernel_iface(const struct uroce_config_port *p);

/**
 * Whether [eal] args give DPDK a file prefix of their own or need none:
 * --file-prefix, --in-memory or --no-shconf. Without one (and without
 * [eal] file_prefix) the engine picks a prefix unique to the process.
 */
bool uroce_config_args_prefix(const struct uroce_config *cfg);

/** The UROCE_CONFIG environment variable, or NULL if unset or empty. */
const char *uroce_config_path(void);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_CONFIG_H */
