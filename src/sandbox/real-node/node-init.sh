#!/bin/sh
# PID 1 of one sandbox real node until it becomes systemd, started by the supervisor (real-node.ts) as
#   setpriv --bounding-set -sys_module,-sys_time nsenter --net=<node netns> \
#     unshare --mount --pid --uts --ipc --cgroup --fork --kill-child --propagation private node-init.sh
# after joining the node's cgroups, so the node's cgroups are the root of its cgroup namespace and
# everything it mounts lives in its private mount namespace. Mode `boot` builds the node's view of
# the kernel (its own /dev, read-only /proc/sys except the per-namespace net/, fresh cgroup mounts),
# makes the node's root filesystem its `/` and execs systemd, which starts containerd, the API relay
# and the kubelet as units. Mode `import` only runs containerd to import image archives and exits
# (used once to make the golden root filesystem).
# Inside the node's PID namespace, reboot(2) kills PID 1 with SIGHUP (a reboot: the supervisor boots
# the node again with a new boot ID) and poweroff/halt with SIGINT (the node is stopped).
# Environment (set by the supervisor):
#   NODE_DIR     host directory of the node: rootfs/, host/ (logs, api.sock), boot_id, sysctl/
#   NODE_MODE    boot | import
#   NODE_NAME, KUBELET_BIN   (boot)
#   IMAGES_DIR   directory of docker-archive tarballs to import (import)
set -eu

R="$NODE_DIR/rootfs"
mount --bind "$R" "$R"
mount -t proc -o nosuid,nodev,noexec proc "$R/proc"

ro_bind() { # a read-only view of $1 at $2
  mount --bind "$1" "$2"
  mount -o remount,bind,ro,nosuid,nodev,noexec "$2"
}
ro_dev_bind() { # a read-only view of the device node $1 at $2 (nodev would make it unopenable)
  mount --bind "$1" "$2"
  mount -o remount,bind,ro,nosuid,noexec "$2"
}

if [ "$NODE_MODE" = import ]; then
  mount -t sysfs sysfs "$R/sys"
  mount --rbind /sys/fs/cgroup "$R/sys/fs/cgroup"
  mount --rbind /dev "$R/dev"
  mount -t tmpfs tmpfs "$R/dev/shm"
  mount -t tmpfs tmpfs "$R/run"
  mount -t tmpfs tmpfs "$R/tmp"
  mkdir -p "$R/run/host" "$R/run/images"
  mount --bind "$NODE_DIR/host" "$R/run/host"
  mount --bind "$IMAGES_DIR" "$R/run/images"
  cd "$R"; mkdir -p .oldroot; pivot_root . .oldroot; cd /; umount -l /.oldroot; rmdir /.oldroot
  export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  mkdir -p /run/host/logs
  containerd --config /etc/containerd/config.toml >> /run/host/logs/containerd.log 2>&1 &
  containerd_pid=$!
  i=0
  until [ -S /run/containerd/containerd.sock ]; do
    i=$((i + 1))
    [ "$i" -le 300 ] || { echo "containerd did not open its socket within 30 s; see logs/containerd.log" >&2; exit 1; }
    sleep 0.1
  done
  for archive in /run/images/*.tar; do
    [ -e "$archive" ] || continue
    ctr --namespace k8s.io images import "$archive" >> /run/host/logs/import.log 2>&1 \
      || { echo "importing $archive failed; see logs/import.log" >&2; exit 1; }
  done
  kill -TERM "$containerd_pid"
  wait "$containerd_pid" || true
  exit 0
fi

# /proc/sys is the machine's except net/ (per network namespace): read-only, so systemd-sysctl and
# packages cannot change the machine's kernel settings ("Read-only file system").
mount --bind "$R/proc/sys" "$R/proc/sys"
mount --bind "$R/proc/sys/net" "$R/proc/sys/net"
mount -o remount,bind,ro,nosuid,nodev,noexec "$R/proc/sys"
for p in sysrq-trigger irq bus; do [ ! -e "$R/proc/$p" ] || ro_bind "$R/proc/$p" "$R/proc/$p"; done
mount --bind "$NODE_DIR/boot_id" "$R/proc/sys/kernel/random/boot_id"   # a new boot ID per boot
# The kubelet tunes these kernel settings, which are not per namespace: it gets copies.
mkdir -p "$NODE_DIR/sysctl"
for f in vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes; do
  copy="$NODE_DIR/sysctl/$(echo "$f" | tr / .)"
  cat "/proc/sys/$f" > "$copy"
  mount --bind "$copy" "$R/proc/sys/$f"
done

# sysfs read-only (no udev in the node); cgroup hierarchies mounted fresh: inside the node's cgroup
# namespace each one's root is the node's own cgroup, so systemd manages only the node's tree.
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$R/sys"
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 "$R/sys/fs/cgroup"
else
  mount -t tmpfs -o mode=755,nosuid,nodev,noexec tmpfs "$R/sys/fs/cgroup"
  awk '$3 == "cgroup" || $3 == "cgroup2" { print $3, $2, $4 }' /proc/self/mounts | while read -r type dir opts; do
    case "$dir" in /sys/fs/cgroup/*) ;; *) continue ;; esac
    mkdir -p "$R$dir"
    mount -t "$type" -o "$opts,nosuid,nodev,noexec" "$type" "$R$dir"
  done
  mount -o remount,ro,nosuid,nodev,noexec,mode=755 tmpfs "$R/sys/fs/cgroup"
fi

# /dev: a tmpfs with the basic nodes, its own devpts, read-only kmsg (the kubelet's OOM watcher) and
# disks (cadvisor), never the machine's devtmpfs, where systemd would create nodes.
mount -t tmpfs -o mode=755,nosuid,size=64m tmpfs "$R/dev"
for n in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
  IFS=: read -r name major minor <<NODE
$n
NODE
  mknod -m 666 "$R/dev/$name" c "$major" "$minor"
done
mkdir -p "$R/dev/pts" "$R/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5 devpts "$R/dev/pts"
ln -s pts/ptmx "$R/dev/ptmx"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$R/dev/shm"
ln -s /proc/self/fd "$R/dev/fd"
ln -s /proc/self/fd/0 "$R/dev/stdin"; ln -s /proc/self/fd/1 "$R/dev/stdout"; ln -s /proc/self/fd/2 "$R/dev/stderr"
# No terminal: the console is /dev/null (journald keeps every message; getty units are masked).
touch "$R/dev/console"; mount --bind /dev/null "$R/dev/console"
touch "$R/dev/kmsg"; ro_dev_bind /dev/kmsg "$R/dev/kmsg"
for d in $(lsblk -dnro NAME 2>/dev/null || true); do
  [ -b "/dev/$d" ] || continue
  touch "$R/dev/$d"; ro_dev_bind "/dev/$d" "$R/dev/$d"
done

mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$R/run"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$R/tmp"
mkdir -p "$R/run/host"
mount --bind "$NODE_DIR/host" "$R/run/host"
touch "$R/usr/local/bin/kubelet"
mount --bind "$KUBELET_BIN" "$R/usr/local/bin/kubelet"
hostname "$NODE_NAME"

cd "$R"
mkdir -p .oldroot
pivot_root . .oldroot
cd /
umount -l /.oldroot
rmdir /.oldroot
mount --make-rshared /   # containerd needs a shared root for mountPropagation: HostToContainer
echo "node $NODE_NAME: starting systemd, boot ID $(cat /proc/sys/kernel/random/boot_id)"
exec env -i container=other TERM=dumb PATH=/usr/sbin:/usr/bin:/sbin:/bin /lib/systemd/systemd --show-status=0
