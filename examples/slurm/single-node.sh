#!/usr/bin/env bash
# Start or stop a one-node SLURM cluster on this machine, for trying the
# job-array example (and for rocekit's CI): munged, slurmctld and slurmd as
# root with every state, spool, log and pid file under DIR. Needs Debian's
# slurm-wlm and munge packages (apt-get install slurm-wlm munge); no systemd.
#
#   examples/slurm/single-node.sh start DIR   # prints: export SLURM_CONF=DIR/slurm.conf
#   examples/slurm/single-node.sh stop DIR
set -euo pipefail
cmd=${1:?usage: single-node.sh start|stop DIR}
dir=${2:?usage: single-node.sh start|stop DIR}

stop() {
  for p in slurmd slurmctld munged; do
    if [ -s "$dir/$p.pid" ]; then
      pid=$(cat "$dir/$p.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      rm -f "$dir/$p.pid"
    fi
  done
}

case $cmd in
stop)
  stop
  exit 0
  ;;
start) ;;
*)
  echo "usage: single-node.sh start|stop DIR" >&2
  exit 2
  ;;
esac

mkdir -p "$dir"/{state,spool,log,munge}
# munged runs as munge: it must reach its folder (mktemp -d gives 700).
chmod 755 "$dir"
dir=$(cd "$dir" && pwd)
host=$(hostname -s)
cpus=$(nproc)
mem_mb=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
mem_mb=$((mem_mb * 9 / 10))

# munge: one key, readable by the munge user alone; the daemon runs as munge.
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  head -c 1024 /dev/urandom > /etc/munge/munge.key
fi
chown munge:munge /etc/munge/munge.key
chmod 400 /etc/munge/munge.key
chown munge:munge "$dir/munge"
mkdir -p /run/munge
chown munge:munge /run/munge
su -s /bin/sh munge -c "munged --pid-file=$dir/munge/munged.pid --log-file=$dir/munge/munged.log --seed-file=$dir/munge/munged.seed"
cp "$dir/munge/munged.pid" "$dir/munged.pid"

cat > "$dir/slurm.conf" <<CONF
ClusterName=rocekit
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -i -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do
  if sinfo -h -o %T 2>/dev/null | grep -qx idle; then
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.2
done
echo "single-node.sh: the node did not come up idle in 20 s; logs in $dir/log" >&2
sinfo >&2 || true
exit 1
