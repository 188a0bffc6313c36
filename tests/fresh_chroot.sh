#!/usr/bin/env bash
# tests/fresh_chroot.sh DIR - what a newcomer meets on a fresh Debian 12
# machine: debootstraps a minimal bookworm into DIR (once; it is kept),
# clones this repository's HEAD into it, installs make (the one package a
# newcomer needs to run the Makefile) and runs `make demo` then `make
# check` there, with nothing else installed by hand: each installs what
# it needs itself (make deps).  Needs root, debootstrap and Debian's
# mirror; about 15 minutes on 2 cores.  Not part of CI (CI runs on a
# developer's machine); run it before saying a fresh machine works.
# Prints both logs' tails and exits with make check's status.
set -euo pipefail
dir=${1:?usage: tests/fresh_chroot.sh DIR}
top=$(git rev-parse --show-toplevel)
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources \
	 2>/dev/null | head -n 1)
[ -x "$dir/bin/bash" ] ||
	debootstrap --variant=minbase bookworm "$dir" \
		"${mirror:-http://deb.debian.org/debian}"
cp /etc/resolv.conf "$dir/etc/resolv.conf"
for m in proc sys dev dev/pts; do
	mountpoint -q "$dir/$m" || mount --bind "/$m" "$dir/$m"
done
trap 'for m in dev/pts dev sys proc; do umount "$dir/$m" || true; done' EXIT
rm -rf "$dir/root/gearc"
git clone -q "$top" "$dir/root/gearc"
chroot "$dir" /bin/bash -c '
	export HOME=/root DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq make >/dev/null
	cd /root/gearc
	make demo > /root/demo.log 2>&1; echo "make demo: exit $?" >> /root/demo.log
	make check > /root/check.log 2>&1; echo "make check: exit $?" >> /root/check.log'
tail -n 3 "$dir/root/demo.log"
tail -n 6 "$dir/root/check.log"
tail -n 1 "$dir/root/check.log" | grep -q 'exit 0$'
