#!/bin/busybox sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# /init of the interop guest (guest.py puts it in the initramfs): mounts,
# loads the modules of /etc/modules.order in that order, gives eth0 the
# address of the kernel command line's uroce.ip= (and brings lo up), then
# serves the command channel on the virtio-serial port named uroce.ctl.
#
# The command channel, one request a line from the host (vm.py):
#   ID run B64        run the command (base64 of a shell command line) to
#                     completion
#   ID bg B64         start it in the background, answer at once
#   ID poll BGID      the state of a background command: done or running
#   ID kill BGID      SIGKILL a background command, then as poll (start
#                     it with exec for the signal to reach the program)
# Every answer is "@@ID RC" (RC: the exit status, or "running"), the
# base64 of the command's output (stdout and stderr) on the lines after,
# and "@@end ID". The kernel's console is on ttyS0.
#
# The channel is a virtio-serial port, not a tty: no line discipline, no
# UART FIFO and its receive interrupts between the host's bytes and this
# loop. The loop runs at nice -10 and the commands at 0, so that a guest
# CPU kept busy by the tools delays its answers by a scheduler slice at
# most.
/bin/busybox --install -s
# guest.py puts its programs in /usr/bin. Debian's busybox shell runs its
# own applets before anything on PATH: iproute2's ip and tc, which share
# applet names, are run as /usr/bin/ip and /usr/bin/tc.
export PATH=/usr/bin:/usr/sbin:/bin:/sbin
mkdir -p /proc /sys /dev /tmp /run
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
while read -r m; do
	insmod "/lib/modules/$m" || echo "init: insmod $m failed"
done </etc/modules.order

arg() {
	for w in $(cat /proc/cmdline); do
		case "$w" in "$1="*) echo "${w#*=}" ;; esac
	done
}
ip link set lo up
ip link set eth0 up
ip addr add "$(arg uroce.ip)" dev eth0
hostname uroce-guest

answer() {	# ID RC FILE
	echo "@@$1 $2"
	[ -n "$3" ] && [ -f "$3" ] && base64 "$3"
	echo "@@end $1"
}

state() {	# ID BGID
	if [ -f "/tmp/rc.$2" ]; then
		answer "$1" "$(cat "/tmp/rc.$2")" "/tmp/out.$2"
	elif [ -f "/tmp/pid.$2" ]; then
		answer "$1" running "/tmp/out.$2"
	else
		answer "$1" 127 ""
	fi
}

# /tmp/cmd.ID: the request's command line, run at nice 0 (the loop's
# -10 is inherited; busybox has no nice, so the command renices itself).
cmdfile() {	# ID B64
	{
		echo 'renice 0 $$ >/dev/null'
		echo "$2" | base64 -d
	} >"/tmp/cmd.$1"
}

serve() {
	echo "@@ready"
	while read -r id verb arg; do
		case "$verb" in
		run)
			cmdfile "$id" "$arg"
			sh "/tmp/cmd.$id" >"/tmp/out.$id" 2>&1 </dev/null 3>&-
			answer "$id" $? "/tmp/out.$id"
			rm -f "/tmp/out.$id" "/tmp/cmd.$id"
			;;
		bg)
			cmdfile "$id" "$arg"
			(
				sh "/tmp/cmd.$id" >"/tmp/out.$id" 2>&1 </dev/null 3>&- &
				echo $! >"/tmp/pid.$id"
				wait $!
				echo $? >"/tmp/rc.$id.new"
				mv "/tmp/rc.$id.new" "/tmp/rc.$id"
			) &
			while [ ! -f "/tmp/pid.$id" ]; do usleep 1000; done
			answer "$id" running ""
			;;
		poll)
			state "$id" "$arg"
			;;
		kill)
			# At most 10 s for it to go: a process stuck in the
			# kernel stays "running", and the channel answers on.
			[ -f "/tmp/rc.$arg" ] || kill -9 "$(cat "/tmp/pid.$arg")"
			n=0
			while [ -f "/tmp/pid.$arg" ] && [ ! -f "/tmp/rc.$arg" ] &&
				[ $n -lt 100 ]; do
				usleep 100000
				n=$((n + 1))
			done
			state "$id" "$arg"
			;;
		*)
			answer "$id" 127 ""
			;;
		esac
	done
}

# The port's device (vportNpM) by its name; its module probes the PCI
# device as it loads, the node may come a moment later.
port() {
	for p in /sys/class/virtio-ports/*; do
		[ "$(cat "$p/name" 2>/dev/null)" = uroce.ctl ] &&
			[ -c "/dev/${p##*/}" ] && echo "/dev/${p##*/}"
	done
}
n=0
while [ -z "$(port)" ] && [ $n -lt 100 ]; do
	usleep 100000
	n=$((n + 1))
done
chan=$(port)
[ -n "$chan" ] || echo "init: no virtio-serial port uroce.ctl"
renice -n -10 $$ >/dev/null
echo "init: guest up, command channel on $chan"
# A port is open once at a time (EBUSY): opened once, as fd 3, which the
# commands do not inherit. The loop ends when the host closes its end
# (reads see end of file): serve again, once a second.
exec 3<>"$chan"
while true; do
	serve <&3 >&3 2>&1
	sleep 1
done
