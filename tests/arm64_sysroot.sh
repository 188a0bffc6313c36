#!/usr/bin/env bash
# tests/arm64_sysroot.sh SYSROOT [run] - what `make cross-arm64` (and,
# with "run", `make check-arm64`) needs on a Debian 12 x86-64 machine.
#
# Debian's libdnnl-dev:arm64 and libcriterion-dev:arm64 cannot be
# installed beside their amd64 twins (a header each differs), and
# libcriterion3:arm64 and libnanomsg5:arm64 replace theirs (apt removes
# libcriterion-dev:amd64 to install them), so those packages are
# unpacked (apt-get download, dpkg -x) into SYSROOT, never installed:
# the cross build takes headers and libraries from there, the emulated
# tests the two libraries (LD_LIBRARY_PATH).  The rest is installed with
# apt-get when run as root (else the command is printed): the cross
# compiler, and for "run" qemu-user, the arm64 C library (qemu-aarch64
# then runs without -L, which mixed two glibc builds and hung in
# pthread_create) and the arm64 libraries that do sit beside their
# twins.  apt-get is asked first (-s) and nothing is installed if it
# would remove a package.
set -euo pipefail
root=$1
mode=${2:-}
unpack="libdnnl-dev libdnnl2 libcriterion-dev libcriterion3 libnanomsg5
	libprotobuf-c-dev libprotobuf-c1 libjson-c-dev libjson-c5"
need="gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
[ "$mode" = run ] && need="$need qemu-user libc6:arm64 libdnnl2:arm64
	libprotobuf-c1:arm64 libjson-c5:arm64 libgomp1:arm64 libffi8:arm64
	libgit2-1.5:arm64 libstdc++6:arm64"

missing=""
for p in $need; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
have_arch=$(dpkg --print-foreign-architectures | grep -c '^arm64$' || true)
if [ -n "$missing" ] || [ "$have_arch" = 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "arm64: as root, run:"
		[ "$have_arch" = 0 ] && echo "  dpkg --add-architecture arm64"
		echo "  apt-get update && apt-get install -y$missing"
		echo "  $0 $root $mode"
		exit 1
	fi
	if [ "$have_arch" = 0 ]; then
		dpkg --add-architecture arm64
		apt-get update -qq
	fi
	if [ -n "$missing" ]; then
		if DEBIAN_FRONTEND=noninteractive apt-get install -s $missing |
			grep -q '^Remv'; then
			echo "arm64: installing$missing would remove packages:"
			apt-get install -s $missing | grep '^Remv'
			exit 1
		fi
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			$missing >/dev/null
	fi
fi
if [ ! -f "$root/.done" ]; then
	rm -rf "$root" && mkdir -p "$root/debs"
	# _apt downloads into a directory it may write
	chmod 777 "$root/debs"
	(cd "$root/debs" && apt-get download -qq \
		$(for p in $unpack; do echo "$p:arm64"; done))
	for d in "$root"/debs/*.deb; do
		dpkg -x "$d" "$root"
	done
	touch "$root/.done"
fi
