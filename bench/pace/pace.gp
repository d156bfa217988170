# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# gnuplot -e "datafile='plot.dat'; outfile='pace.png'" pace.gp
# Target versus achieved rate (frame bytes), log-log, from plot_data.py.
set terminal pngcairo size 800,600 font ",10"
set output outfile
set title "uroce pacing over memif: achieved vs target rate"
set logscale xy
set xlabel "target (Mbit/s)"
set ylabel "achieved (Mbit/s)"
set grid
set key bottom right
stats datafile index 1 using 1 nooutput name "C"
set arrow from graph 0, first C_max to graph 1, first C_max nohead dt 2 lc "gray"
set label sprintf("unpaced ceiling %.0f Mbit/s", C_max) at graph 0.02, first C_max * 1.15
plot x title "achieved = target" lc "gray", \
     datafile index 0 using 1:(strcol(3) eq "single" ? $2 : 1/0) with points pt 7 ps 1.3 title "one QP", \
     datafile index 0 using 1:(strcol(3) eq "multi" ? $2 : 1/0):4 with labels offset 0,1 notitle, \
     datafile index 0 using 1:(strcol(3) eq "multi" ? $2 : 1/0) with points pt 5 ps 1.3 title "1..10,000 QPs, sum", \
     datafile index 0 using 1:(strcol(3) eq "above" ? $2 : 1/0) with points pt 6 ps 1.5 title "target above the ceiling"
