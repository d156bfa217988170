/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * --plot FILE.png through gnuplot (a pipe; the data inline as gnuplot 5
 * datablocks): the size sweep's goodput, uroce and raw, with the ratio on
 * the second axis; the latency CDFs, uroce and raw. Both, one above the
 * other, when the run had both.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "perf_priv.h"

static unsigned int
count(const struct perf_row *rows, unsigned int n, bool lat)
{
	unsigned int i, c = 0;

	for (i = 0; i < n; i++)
		c += (rows[i].mode == PERF_MODE_LAT) == lat;
	return c;
}

static void
plot_bw(FILE *g, const struct perf_row *rows, unsigned int n)
{
	unsigned int i;

	fprintf(g, "$bw << EOD\n");
	for (i = 0; i < n; i++)
		if (rows[i].mode != PERF_MODE_LAT)
			fprintf(g, "%u %.4f %.4f %.4f\n", rows[i].size,
				rows[i].has_tp ? perf_gbps(&rows[i].tp) : 0,
				rows[i].has_raw ? perf_gbps(&rows[i].raw) : 0,
				rows[i].has_tp && rows[i].has_raw &&
				perf_gbps(&rows[i].raw) > 0 ?
				perf_gbps(&rows[i].tp) / perf_gbps(&rows[i].raw) : 0);
	fprintf(g, "EOD\n"
		"set title 'goodput by message size'\n"
		"set logscale x 2\nset format x '%%.0b%%B'\n"
		"set xlabel 'message size'\nset ylabel 'Gbit/s'\n"
		"set y2label 'uroce / raw'\nset y2range [0:1.2]\n"
		"set ytics nomirror\nset y2tics\nset key top left\n"
		"plot $bw using 1:2 with linespoints title 'uroce', "
		"$bw using 1:3 with linespoints title 'raw', "
		"$bw using 1:4 axes x1y2 with lines dt 2 title 'ratio'\n"
		"unset logscale x\nunset y2tics\nunset y2label\n"
		"set format x '%%g'\n");
}

static void
plot_lat(FILE *g, const struct perf_row *rows, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (rows[i].mode != PERF_MODE_LAT)
			continue;
		fprintf(g, "$tp << EOD\n");
		if (rows[i].tlat != NULL)
			perf_hist_cdf(&rows[i].tlat->h, g);
		fprintf(g, "EOD\n$raw << EOD\n");
		if (rows[i].rlat != NULL)
			perf_hist_cdf(&rows[i].rlat->h, g);
		fprintf(g, "EOD\n"
			"set title 'latency CDF, %u B'\n"
			"set logscale x 10\nset xlabel 'ns'\n"
			"set ylabel 'fraction'\nset yrange [0:1]\n"
			"set key bottom right\n"
			"plot $tp using 1:2 with steps title 'uroce', "
			"$raw using 1:2 with steps title 'raw'\n", rows[i].size);
		break;
	}
}

int
perf_plot(const struct perf *p, const struct perf_row *rows, unsigned int n,
	  const char *path)
{
	unsigned int nbw = count(rows, n, false), nlat = count(rows, n, true);
	FILE *g;
	int st;

	(void)p;
	g = popen("gnuplot", "w");
	if (g == NULL) {
		fprintf(stderr, "uroce-perf: --plot: cannot run gnuplot: %s\n",
			strerror(errno));
		return -errno;
	}
	fprintf(g, "set terminal pngcairo size 900,%u\nset output '%s'\n",
		nbw && nlat ? 1000u : 500u, path);
	if (nbw && nlat)
		fprintf(g, "set multiplot layout 2,1\n");
	if (nbw)
		plot_bw(g, rows, n);
	if (nlat)
		plot_lat(g, rows, n);
	if (nbw && nlat)
		fprintf(g, "unset multiplot\n");
	st = pclose(g);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "uroce-perf: --plot %s: gnuplot failed (is the "
			"gnuplot package installed?)\n", path);
		return -EIO;
	}
	return 0;
}
