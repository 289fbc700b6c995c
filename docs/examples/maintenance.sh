#!/bin/sh
# A node maintenance script in Kustodian's protocol (docs/maintenance.md). It runs as root on the node
# itself (cron, a systemd unit, a DaemonSet that nsenters into the host, by hand), unchanged under
# Kustodian or skyhook-ts's `skyhook maintenance` daemon: both only look at these two files.
#
#   1. touch /var/maintenance-required       ask for a maintenance slot
#   2. wait for /var/maintenance-in-progress the node is cordoned and drained: it is ours now
#   3. do the work
#   4. rm /var/maintenance-required           only on success: the daemon then removes the
#                                             in-progress file, the node is uncordoned and the slot freed
# A failure (set -e) leaves /var/maintenance-required: the node stays cordoned and keeps its slot, so
# nothing is scheduled onto a half-maintained node and nobody else starts until a person looks.
set -eu

REQUIRED=/var/maintenance-required
IN_PROGRESS=/var/maintenance-in-progress
LOG=/var/log/maintenance-example.log

touch "$REQUIRED"
echo "$(date -u +%FT%TZ) asked for maintenance; waiting for $IN_PROGRESS" >> "$LOG"
while [ ! -e "$IN_PROGRESS" ]; do sleep 1; done
echo "$(date -u +%FT%TZ) start (cordoned and drained)" >> "$LOG"

# The work. Here a stand-in that takes a few seconds; e.g. instead:
#   apt-get update && DEBIAN_FRONTEND=noninteractive apt-get upgrade -y
sleep "${MAINTENANCE_WORK_SECONDS:-5}"

echo "$(date -u +%FT%TZ) done" >> "$LOG"
rm -f "$REQUIRED"
