/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Value syntax of the configuration: numbers, addresses, the device string,
 * the fault spec and the EAL argument list. Every parser is strict (no sign,
 * no blanks, no trailing text): a value either means exactly one thing or
 * is refused.
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_priv.h"

/* Decimal only; max must stay below ULONG_MAX / 10 (it is at most 9000). */
int
cfg_parse_uint(const char *s, unsigned long min, unsigned long max,
	       unsigned long *out)
{
	unsigned long v = 0;

	if (*s == '\0')
		return -EINVAL;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > max)
			return -ERANGE;
	}
	if (v < min)
		return -ERANGE;
	*out = v;
	return 0;
}

/*
 * A probability as a fraction ("0.25", at most 6 decimals) or a percentage
 * ("25%", at most 4 decimals), in exact parts per million: the link model
 * compares it with an integer random draw, so no rounding is hidden here.
 */
int
cfg_parse_ppm(const char *s, uint32_t *ppm)
{
	const char *end = strchr(s, '%');
	unsigned int decimals = end != NULL ? 4 : 6;
	unsigned int frac = 0;
	bool dot = false, digit = false;
	uint64_t v = 0;

	if (end == NULL)
		end = s + strlen(s);
	else if (end[1] != '\0')
		return -EINVAL;
	for (; s < end; s++) {
		if (*s == '.' && !dot && digit) {
			dot = true;
			continue;
		}
		if (*s < '0' || *s > '9')
			return -EINVAL;
		digit = true;
		if (dot && ++frac > decimals)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > UINT32_MAX)
			return -ERANGE;
	}
	if (!digit || (dot && frac == 0))
		return -EINVAL;
	for (; frac < decimals; frac++)
		v *= 10;
	if (v > UROCE_CONFIG_PPM)
		return -ERANGE;
	*ppm = (uint32_t)v;
	return 0;
}

/* Decimal, or hexadecimal after 0x; never octal (strtoull's base 0 would
 * read "010" as 8). */
int
cfg_parse_u64(const char *s, uint64_t *out)
{
	int base = 10;
	unsigned long long v;
	char *end;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!isxdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno != 0)
		return -ERANGE;
	if (*end != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

/* inet_pton() is strict already: dotted quad, no leading zeros. */
int
cfg_parse_ip4(const char *s, rte_be32_t *ip)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		return -EINVAL;
	*ip = a.s_addr;
	return 0;
}

int
cfg_parse_ip6(const char *s, uint8_t ip6[16])
{
	return inet_pton(AF_INET6, s, ip6) == 1 ? 0 : -EINVAL;
}

/* Split "addr/len" into a copy of addr and the length; 0 or -EINVAL. */
static int
split_prefix(const char *s, char *addr, size_t addrlen, unsigned long max,
	     unsigned long *plen, char *why, size_t whylen)
{
	const char *slash = strchr(s, '/');
	size_t n;

	if (slash == NULL) {
		snprintf(why, whylen, "missing /prefix-length");
		return -EINVAL;
	}
	n = (size_t)(slash - s);
	if (n >= addrlen) {
		snprintf(why, whylen, "not an address");
		return -EINVAL;
	}
	memcpy(addr, s, n);
	addr[n] = '\0';
	if (cfg_parse_uint(slash + 1, 1, max, plen) != 0) {
		snprintf(why, whylen, "prefix length not in 1..%lu", max);
		return -EINVAL;
	}
	return 0;
}

/* An interface address: not 0/8, loopback, multicast or broadcast. */
static bool
ip4_usable(rte_be32_t ip)
{
	uint32_t h = rte_be_to_cpu_32(ip);

	return (h >> 24) != 0 && (h >> 24) != 127 && (h >> 28) != 0xe &&
	       h != UINT32_MAX;
}

int
cfg_parse_ip4_prefix(const char *s, rte_be32_t *ip, uint8_t *plen,
		     char *why, size_t whylen)
{
	char addr[INET_ADDRSTRLEN];
	unsigned long len;

	if (split_prefix(s, addr, sizeof(addr), 32, &len, why, whylen) != 0)
		return -EINVAL;
	if (cfg_parse_ip4(addr, ip) != 0) {
		snprintf(why, whylen, "not an IPv4 address/prefix-length");
		return -EINVAL;
	}
	if (!ip4_usable(*ip)) {
		snprintf(why, whylen, "not a unicast address for an interface");
		return -EINVAL;
	}
	*plen = (uint8_t)len;
	return 0;
}

/* Not ::, ::1, multicast, or IPv4-mapped (that is how IPv4 GIDs look). */
static bool
ip6_usable(const uint8_t a[16])
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t zero[15];

	if (a[0] == 0xff || memcmp(a, mapped, sizeof(mapped)) == 0)
		return false;
	return memcmp(a, zero, sizeof(zero)) != 0 || a[15] > 1;
}

int
cfg_parse_ip6_prefix(const char *s, struct uroce_config_ip6 *a,
		     char *why, size_t whylen)
{
	char addr[INET6_ADDRSTRLEN];
	unsigned long len;

	if (split_prefix(s, addr, sizeof(addr), 128, &len, why, whylen) != 0)
		return -EINVAL;
	if (cfg_parse_ip6(addr, a->addr) != 0) {
		snprintf(why, whylen, "%s: not an IPv6 address/prefix-length", s);
		return -EINVAL;
	}
	if (!ip6_usable(a->addr)) {
		snprintf(why, whylen, "%s: not a unicast address for an interface", s);
		return -EINVAL;
	}
	a->prefix_len = (uint8_t)len;
	return 0;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Exactly xx:xx:xx:xx:xx:xx, a unicast address (not zero, I/G bit clear). */
int
cfg_parse_mac(const char *s, struct rte_ether_addr *mac)
{
	unsigned int i;
	int hi, lo;

	if (strlen(s) != 3 * RTE_ETHER_ADDR_LEN - 1)
		return -EINVAL;
	for (i = 0; i < RTE_ETHER_ADDR_LEN; i++, s += 3) {
		hi = hexval(s[0]);
		lo = hexval(s[1]);
		if (hi < 0 || lo < 0 || (i < RTE_ETHER_ADDR_LEN - 1 && s[2] != ':'))
			return -EINVAL;
		mac->addr_bytes[i] = (uint8_t)(hi << 4 | lo);
	}
	if (!rte_is_valid_assigned_ether_addr(mac))
		return -EINVAL;
	return 0;
}

/* n hex digits at s, then stop; the value, or -1. */
static long
hexfield(const char *s, unsigned int n, char stop)
{
	long v = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (hexval(s[i]) < 0)
			return -1;
		v = v << 4 | hexval(s[i]);
	}
	return s[n] == stop ? v : -1;
}

/* [dddd:]bb:dd.f (hex; device <= 0x1f, function <= 7), then end or ','. */
static bool
is_pci_addr(const char *s)
{
	long dev;

	if (hexfield(s, 4, ':') >= 0 && hexfield(s + 5, 2, ':') >= 0)
		s += 5;
	if (hexfield(s, 2, ':') < 0)
		return false;
	dev = hexfield(s + 3, 2, '.');
	if (dev < 0 || dev > 0x1f)
		return false;
	return s[6] >= '0' && s[6] <= '7' && (s[7] == '\0' || s[7] == ',');
}

/* A PCI address or a vdev name ([A-Za-z][A-Za-z0-9_]*), each optionally
 * followed by ",devargs"; no blanks anywhere ("net_x, a=b" would hand DPDK
 * a key named " a"). */
int
cfg_check_dev(const char *s, bool *is_pci, char *why, size_t whylen)
{
	const char *p;

	for (p = s; *p != '\0'; p++) {
		if (isspace((unsigned char)*p)) {
			snprintf(why, whylen, "blank inside the device string");
			return -EINVAL;
		}
	}
	*is_pci = is_pci_addr(s);
	if (*is_pci)
		return 0;
	/* uroce's own in-process link (pmd_glue): ringlink:NAME,side=S. */
	if (strncmp(s, "ringlink:", 9) == 0 && isalnum((unsigned char)s[9]))
		s += 9;
	/* af_xdp:IFACE[,devargs]: a kernel interface name, 1..15 bytes. */
	if (strncmp(s, "af_xdp:", 7) == 0) {
		size_t n = strcspn(s + 7, ",");

		if (n == 0 || n >= 16 || memchr(s + 7, '/', n) != NULL) {
			snprintf(why, whylen,
				 "af_xdp:IFACE needs an interface name of 1..15 characters");
			return -EINVAL;
		}
		return 0;
	}
	for (p = s; *p != '\0' && *p != ','; p++) {
		if (!isalnum((unsigned char)*p) && *p != '_')
			break;
	}
	if (!isalpha((unsigned char)s[0]) || (*p != '\0' && *p != ',')) {
		snprintf(why, whylen,
			 "not a PCI address or a DPDK vdev name (like net_memif0,...)");
		return -EINVAL;
	}
	return 0;
}
