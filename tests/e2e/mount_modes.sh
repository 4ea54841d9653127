#!/bin/sh
# mount_modes.sh: the mode and owner of directories programs create files in, world-writable
# mounts among them; run recorded and replayed (replay_mount_modes): an isolated replay's
# overlay of a mount keeps the mount's mode (replayer/gd_isolate.c).
for d in /dev/shm /tmp /var/tmp; do
	[ -d "$d" ] && stat -c 'mode %n %a %U' "$d"
done
exit 0
