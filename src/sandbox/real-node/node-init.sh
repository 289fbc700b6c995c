#!/bin/sh
# PID 1 of one sandbox real node, started by the supervisor (real-node.ts) as
#   nsenter --net=<node netns> unshare --mount --pid --uts --ipc --fork --kill-child --propagation private node-init.sh
# so everything it mounts lives in the node's private mount namespace and vanishes with it. It makes
# the node's root filesystem its `/` (so hostPath: / in a Job is the node's disk, never the machine's),
# then runs containerd and the kubelet (mode `boot`), or only imports the image archives into
# containerd and exits (mode `import`, used once to make the golden root filesystem).
# A reboot(2) inside the node's PID namespace kills this process with SIGHUP; the supervisor sees
# that and boots the node again with a new boot ID. Environment (set by the supervisor):
#   NODE_DIR     host directory of the node: rootfs/, host/ (logs, api.sock), boot_id, sysctl/
#   NODE_MODE    boot | import
#   NODE_NAME, NODE_IP, KUBELET_BIN, KUBELET_ARGS   (boot)
#   IMAGES_DIR   directory of docker-archive tarballs to import (import)
set -eu

R="$NODE_DIR/rootfs"
mount --bind "$R" "$R"
mount -t proc proc "$R/proc"
mount -t sysfs sysfs "$R/sys"                  # this sysfs shows the node's network namespace
mount --rbind /sys/fs/cgroup "$R/sys/fs/cgroup" # the machine's cgroup tree; the kubelet uses its own cgroupRoot
mount --rbind /dev "$R/dev"                     # the kubelet's OOM watcher reads /dev/kmsg
mount -t tmpfs tmpfs "$R/dev/shm"               # never share the machine's /dev/shm with the node
mount -t tmpfs tmpfs "$R/run"
mount -t tmpfs tmpfs "$R/tmp"
mkdir -p "$R/run/host"
mount --bind "$NODE_DIR/host" "$R/run/host"

if [ "$NODE_MODE" = boot ]; then
  hostname "$NODE_NAME"
  touch "$R/usr/local/bin/kubelet"
  mount --bind "$KUBELET_BIN" "$R/usr/local/bin/kubelet"
  mount --bind "$NODE_DIR/boot_id" "$R/proc/sys/kernel/random/boot_id"   # a new boot ID per boot
  # The kubelet tunes these kernel settings, which are not per namespace: it gets copies.
  mkdir -p "$NODE_DIR/sysctl"
  for f in vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes; do
    copy="$NODE_DIR/sysctl/$(echo "$f" | tr / .)"
    cat "/proc/sys/$f" > "$copy"
    mount --bind "$copy" "$R/proc/sys/$f"
  done
else
  mkdir -p "$R/run/images"
  mount --bind "$IMAGES_DIR" "$R/run/images"
fi

cd "$R"
mkdir -p .oldroot
pivot_root . .oldroot
cd /
umount -l /.oldroot
rmdir /.oldroot
mount --make-rshared /   # containerd needs a shared root for mountPropagation: HostToContainer
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

if [ "$NODE_MODE" = import ]; then
  for archive in /run/images/*.tar; do
    ctr --namespace k8s.io images import "$archive" >> /run/host/logs/import.log 2>&1 \
      || { echo "importing $archive failed; see logs/import.log" >&2; exit 1; }
  done
  kill -TERM "$containerd_pid"
  wait "$containerd_pid" || true
  exit 0
fi

# The kubelet talks to https://127.0.0.1:6443; the supervisor relays that socket to the API server.
socat TCP-LISTEN:6443,bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:/run/host/api.sock &
# shellcheck disable=SC2086 # KUBELET_ARGS is a list of flags
kubelet --config=/etc/kubernetes/kubelet-config.yaml --kubeconfig=/etc/kubernetes/kubelet.kubeconfig \
  --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" $KUBELET_ARGS >> /run/host/logs/kubelet.log 2>&1 &
kubelet_pid=$!
echo "node $NODE_NAME booted: boot ID $(cat /proc/sys/kernel/random/boot_id)"
# The node lives as long as its kubelet: when the kubelet exits, PID 1 exits and the supervisor
# reports the node down (with the kubelet's exit code) instead of keeping a node that never joins.
status=0
wait "$kubelet_pid" || status=$?
echo "kubelet exited with status $status; the node goes down (see logs/kubelet.log)" >&2
exit "$status"
