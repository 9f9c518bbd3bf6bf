#!/usr/bin/env bash
# Prepares real remote hosts for the remote-target tests on this machine: an sshd on a loopback port,
# a Docker container and a Podman container, both from a busybox root filesystem built locally (no
# image registry is reachable). Runs as root on Debian 12 without a service manager, on a fresh CI
# machine or again on a developer's machine: `up` reuses whatever is already running.
#
# Usage:
#   .ci/hosts.sh up       install what is missing, start what is not running, write hosts.env
#   .ci/hosts.sh down     remove the containers, stop the daemons this script started
#   .ci/hosts.sh status   say what is running (exit 1 when something is down)
#
# State (keys, configs, logs, pid files, hosts.env) lives in ${SHELLGATE_HOSTS_DIR:-$PWD/target/ci-hosts}.
# Tests read the hosts from `<state>/hosts.env`:  . target/ci-hosts/hosts.env
#
# Why these choices:
# - ssh is always given `-F <state>/ssh_config`: OpenSSH reads ~/.ssh/config from the passwd home
#   directory, not from $HOME, so a config file can only be chosen with -F.
# - dockerd runs without a bridge and without iptables rules and both containers use `--network none`:
#   the tests need no network, and no container address in a private range is ever created.
# - Podman uses runc: crun refuses this machine's hybrid cgroup v1/v2 layout ("cgroups in hybrid mode
#   not supported"). Root here lacks CAP_SYS_RESOURCE, so the rlimits Podman would set by default
#   (nofile and nproc above the current hard limits) fail with "operation not permitted"; the container
#   gets explicit limits no higher than what Podman itself runs with. `podman exec` needs no flags and
#   no special environment afterwards: the runtime and limits are part of the container.
# - Both containers run with `--init` so an init reaps the processes orphaned by killed commands.
set -euo pipefail

SSH_ALIAS=sg-test
SSH_USER=sgtest
DOCKER_CONTAINER=sg-test-docker
PODMAN_CONTAINER=sg-test-podman
# Bump ROOTFS_REV whenever the root filesystem layout below changes: the image tag carries it, so a
# re-run replaces an older image and the containers made from it.
ROOTFS_REV=1
IMAGE_NAME=shellgate-busybox
IMAGE="$IMAGE_NAME:r$ROOTFS_REV"
PODMAN_IMAGE="localhost/$IMAGE"
FIRST_SSH_PORT=${SHELLGATE_SSH_PORT:-2222}
PACKAGES=(openssh-server openssh-client docker.io podman runc catatonit busybox-static)

log() { printf '[hosts] %s\n' "$*" >&2; }
die() {
    printf '[hosts] error: %s\n' "$*" >&2
    exit 1
}

# wait_for SECONDS WHAT COMMAND...: polls COMMAND every 0.2 s until it succeeds; fails after SECONDS.
wait_for() {
    local seconds=$1 what=$2
    shift 2
    local tries=$((seconds * 5))
    while ! "$@" >/dev/null 2>&1; do
        tries=$((tries - 1))
        if [ "$tries" -le 0 ]; then
            log "timed out after ${seconds}s waiting for $what"
            return 1
        fi
        sleep 0.2
    done
}

# pid_alive FILE: true when FILE holds the pid of a running process started from the program named
# by the pid file (sshd.pid -> sshd, dockerd.pid -> dockerd). The name check keeps a stale pid file
# (after a reboot, say) from pointing this script at an unrelated process that reuses the pid.
pid_alive() {
    local pid program
    [ -s "$1" ] || return 1
    pid=$(cat "$1")
    program=$(basename "$1" .pid)
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$program"
}

# stop_pidfile FILE NAME: SIGTERM the process in FILE, SIGKILL it after 20 s, remove FILE.
stop_pidfile() {
    local file=$1 name=$2 pid
    if pid_alive "$file"; then
        pid=$(cat "$file")
        log "stopping $name (pid $pid)"
        kill -TERM "$pid" 2>/dev/null || true
        if ! wait_for 20 "$name to exit" sh -c "! kill -0 $pid"; then
            log "$name did not exit on SIGTERM; sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
            wait_for 5 "$name to exit after SIGKILL" sh -c "! kill -0 $pid" || die "cannot stop $name (pid $pid)"
        fi
    fi
    rm -f "$file"
}

state_dir() {
    local dir=${SHELLGATE_HOSTS_DIR:-$PWD/target/ci-hosts}
    mkdir -p "$dir" || die "cannot create the state directory $dir"
    # Absolute, because the path ends up in ssh_config and hosts.env.
    (cd "$dir" && pwd)
}

# --- packages ---------------------------------------------------------------------------------------

install_packages() {
    local missing=() p
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing ${missing[*]}"
    apt-get update -qq || die "apt-get update failed"
    # No service manager here: the packages' postinst scripts cannot start daemons, this script does.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
        die "apt-get install ${missing[*]} failed"
}

# --- sshd -------------------------------------------------------------------------------------------

ssh_works() { ssh -F "$STATE/ssh_config" -o ConnectTimeout=5 "$SSH_ALIAS" true </dev/null; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
    local port
    for ((port = FIRST_SSH_PORT; port < FIRST_SSH_PORT + 100; port++)); do
        port_in_use "$port" || {
            echo "$port"
            return 0
        }
    done
    die "no free loopback port in $FIRST_SSH_PORT..$((FIRST_SSH_PORT + 99)) for sshd"
}

sshd_up() {
    local keys="$STATE/ssh" port
    mkdir -p "$keys"
    chmod 700 "$keys"
    # Throwaway keys, made once per state directory.
    [ -f "$keys/host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C sg-test-host -f "$keys/host_ed25519_key"
    [ -f "$keys/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C sg-test-user -f "$keys/id_ed25519"
    cp "$keys/id_ed25519.pub" "$keys/authorized_keys"
    chmod 755 "$STATE" "$keys"
    chmod 644 "$keys/authorized_keys"
    # An ordinary login on the "remote" host: its own user with a plain shell start-up, as a build
    # host has (root's start-up files here load a language toolchain manager on every command).
    if ! id "$SSH_USER" >/dev/null 2>&1; then
        useradd --create-home --shell /bin/bash "$SSH_USER" || die "cannot create the user $SSH_USER"
    fi
    # No password, but not locked either (sshd refuses locked accounts even for keys).
    usermod -p '*' "$SSH_USER"
    : >"$(getent passwd "$SSH_USER" | cut -d: -f6)/.bashrc"

    if pid_alive "$STATE/sshd.pid" && [ -f "$STATE/ssh_config" ] && ssh_works; then
        log "sshd already up (pid $(cat "$STATE/sshd.pid"), port $(cat "$STATE/sshd.port"))"
        return 0
    fi
    stop_pidfile "$STATE/sshd.pid" "stale sshd"

    port=$(free_port)
    echo "$port" >"$STATE/sshd.port"
    cat >"$STATE/sshd_config" <<EOF
# Loopback-only sshd for the remote-target tests (written by .ci/hosts.sh).
ListenAddress 127.0.0.1
Port $port
HostKey $keys/host_ed25519_key
PidFile $STATE/sshd.pid
AuthorizedKeysFile $keys/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
# The key files live in a work tree whose modes sshd would otherwise reject.
StrictModes no
# Tests open many channels through one multiplexed connection and many connections at once.
MaxSessions 100
MaxStartups 100:30:200
AcceptEnv LANG LC_*
Subsystem sftp /usr/lib/openssh/sftp-server
LogLevel INFO
EOF
    cat >"$STATE/ssh_config" <<EOF
# Client config for the test sshd (written by .ci/hosts.sh). Use: ssh -F $STATE/ssh_config $SSH_ALIAS
Host $SSH_ALIAS
    HostName 127.0.0.1
    Port $port
    User $SSH_USER
    IdentityFile $keys/id_ed25519
    IdentitiesOnly yes
    StrictHostKeyChecking no
    UserKnownHostsFile $keys/known_hosts
    GlobalKnownHostsFile /dev/null
    BatchMode yes
    ConnectTimeout 10
    LogLevel ERROR
EOF
    # Known in advance, so no first-connection warning reaches a test's stderr.
    echo "[127.0.0.1]:$port $(cut -d' ' -f1-2 "$keys/host_ed25519_key.pub")" >"$keys/known_hosts"

    mkdir -p /run/sshd # privilege separation directory, normally made by the service unit
    /usr/sbin/sshd -t -f "$STATE/sshd_config" || die "sshd rejects $STATE/sshd_config"
    log "starting sshd on 127.0.0.1:$port (log: $STATE/sshd.log)"
    setsid /usr/sbin/sshd -D -e -f "$STATE/sshd_config" </dev/null >>"$STATE/sshd.log" 2>&1 &
    wait_for 10 "sshd to write its pid file" test -s "$STATE/sshd.pid" ||
        die "sshd did not start; see $STATE/sshd.log: $(tail -n 5 "$STATE/sshd.log")"
    wait_for 10 "ssh -F $STATE/ssh_config $SSH_ALIAS true" ssh_works ||
        die "ssh to $SSH_ALIAS fails: $(ssh -F "$STATE/ssh_config" "$SSH_ALIAS" true 2>&1 </dev/null | tail -n 3)"
}

# --- root filesystem --------------------------------------------------------------------------------

# A busybox root filesystem: /bin/busybox with a symlink for every applet at its usual path, /tmp,
# /work, and a passwd entry for root. Rebuilt only when its revision changes.
build_rootfs() {
    local rootfs="$STATE/rootfs" tarball="$STATE/rootfs-r$ROOTFS_REV.tar" applet
    [ -s "$tarball" ] && return 0
    log "building the busybox root filesystem"
    rm -rf "$rootfs"
    mkdir -p "$rootfs"/{bin,sbin,usr/bin,usr/sbin,tmp,work,root,etc,proc,sys,dev}
    chmod 1777 "$rootfs/tmp"
    cp /bin/busybox "$rootfs/bin/busybox"
    # --list-full names each applet's path (bin/sh, usr/bin/env, ...) relative to /.
    while read -r applet; do
        [ "$applet" = bin/busybox ] || ln -sf /bin/busybox "$rootfs/$applet"
    done < <(/bin/busybox --list-full)
    echo 'root:x:0:0:root:/root:/bin/sh' >"$rootfs/etc/passwd"
    echo 'root:x:0:' >"$rootfs/etc/group"
    tar --numeric-owner -C "$rootfs" -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
}

# --- Docker -----------------------------------------------------------------------------------------

docker_up() {
    # A dockerd of ours that is still starting gets its time before it counts as stale.
    if pid_alive "$STATE/dockerd.pid"; then
        wait_for 60 "docker info" docker info || true
    fi
    if docker info >/dev/null 2>&1; then
        log "docker daemon reachable"
    else
        stop_pidfile "$STATE/dockerd.pid" "stale dockerd"
        log "starting dockerd (log: $STATE/dockerd.log)"
        setsid dockerd --bridge=none --iptables=false --ip6tables=false </dev/null >>"$STATE/dockerd.log" 2>&1 &
        # Our pid file marks a dockerd this script owns: `down` stops only that one.
        echo $! >"$STATE/dockerd.pid"
        wait_for 60 "docker info" docker info ||
            die "dockerd did not come up; see $STATE/dockerd.log: $(tail -n 5 "$STATE/dockerd.log")"
    fi
    docker image inspect "$IMAGE" >/dev/null 2>&1 ||
        docker import -c 'CMD ["/bin/sh"]' -c 'ENV PATH=/usr/sbin:/usr/bin:/sbin:/bin' \
            "$STATE/rootfs-r$ROOTFS_REV.tar" "$IMAGE" >/dev/null || die "docker import of the busybox rootfs failed"
    if [ "$(docker inspect -f '{{.State.Running}} {{.Config.Image}}' "$DOCKER_CONTAINER" 2>/dev/null)" = "true $IMAGE" ]; then
        log "container $DOCKER_CONTAINER already running"
        return 0
    fi
    docker rm -f "$DOCKER_CONTAINER" >/dev/null 2>&1 || true
    log "starting container $DOCKER_CONTAINER"
    docker run -d --name "$DOCKER_CONTAINER" --hostname "$DOCKER_CONTAINER" --init --network none \
        "$IMAGE" sleep infinity >/dev/null || die "docker run $DOCKER_CONTAINER failed"
    docker exec "$DOCKER_CONTAINER" true || die "docker exec $DOCKER_CONTAINER true failed"
}

# --- Podman -----------------------------------------------------------------------------------------

min() {
    local m=$1 v
    for v in "$@"; do [ "$v" -lt "$m" ] && m=$v; done
    echo "$m"
}

podman_up() {
    local nofile nproc
    podman image exists "$PODMAN_IMAGE" ||
        podman import -q --change 'CMD ["/bin/sh"]' --change 'ENV PATH=/usr/sbin:/usr/bin:/sbin:/bin' \
            "$STATE/rootfs-r$ROOTFS_REV.tar" "$PODMAN_IMAGE" >/dev/null || die "podman import of the busybox rootfs failed"
    if [ "$(podman inspect -f '{{.State.Running}} {{.ImageName}}' "$PODMAN_CONTAINER" 2>/dev/null)" = "true $PODMAN_IMAGE" ]; then
        log "container $PODMAN_CONTAINER already running"
        return 0
    fi
    podman rm -f -t 0 "$PODMAN_CONTAINER" >/dev/null 2>&1 || true
    # Without CAP_SYS_RESOURCE no limit may exceed the current hard one; Podman caps its own nproc at
    # 32768 (and the pid space can be smaller still), and conmon inherits that.
    nofile=$(ulimit -Hn)
    [ "$nofile" = unlimited ] && nofile=1048576
    nproc=$(ulimit -Hu)
    [ "$nproc" = unlimited ] && nproc=4194304
    nproc=$(min "$nproc" 32768 "$(cat /proc/sys/kernel/pid_max)")
    log "starting container $PODMAN_CONTAINER (runc, nofile=$nofile, nproc=$nproc)"
    podman run -d --name "$PODMAN_CONTAINER" --hostname "$PODMAN_CONTAINER" --init --network none \
        --runtime runc --ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc" \
        "$PODMAN_IMAGE" sleep infinity >/dev/null || die "podman run $PODMAN_CONTAINER failed"
    podman exec "$PODMAN_CONTAINER" true || die "podman exec $PODMAN_CONTAINER true failed"
}

# --- subcommands ------------------------------------------------------------------------------------

write_env() {
    cat >"$STATE/hosts.env.part" <<EOF
# Remote hosts for the tests (written by .ci/hosts.sh up).
export SHELLGATE_TEST_SSH_CONFIG='$STATE/ssh_config'
export SHELLGATE_TEST_SSH_DEST='$SSH_ALIAS'
export SHELLGATE_TEST_DOCKER='$DOCKER_CONTAINER'
export SHELLGATE_TEST_PODMAN='$PODMAN_CONTAINER'
EOF
    mv "$STATE/hosts.env.part" "$STATE/hosts.env"
}

cmd_up() {
    [ "$(id -u)" -eq 0 ] || die "must run as root (installs packages, starts sshd and dockerd)"
    install_packages
    sshd_up
    build_rootfs
    docker_up
    podman_up
    write_env
    log "up; hosts: $STATE/hosts.env"
}

cmd_down() {
    if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
        if docker rm -f "$DOCKER_CONTAINER" >/dev/null 2>&1; then log "removed container $DOCKER_CONTAINER"; fi
    fi
    if command -v podman >/dev/null; then
        if podman rm -f -t 0 "$PODMAN_CONTAINER" >/dev/null 2>&1; then log "removed container $PODMAN_CONTAINER"; fi
    fi
    stop_pidfile "$STATE/dockerd.pid" dockerd
    stop_pidfile "$STATE/sshd.pid" sshd
    rm -f "$STATE/hosts.env"
    log "down"
}

cmd_status() {
    local ok=0
    if pid_alive "$STATE/sshd.pid" && ssh_works 2>/dev/null; then
        log "sshd: up (pid $(cat "$STATE/sshd.pid"), port $(cat "$STATE/sshd.port"))"
    else
        log "sshd: down"
        ok=1
    fi
    if [ "$(docker inspect -f '{{.State.Running}}' "$DOCKER_CONTAINER" 2>/dev/null)" = true ]; then
        log "docker: $DOCKER_CONTAINER running"
    else
        log "docker: $DOCKER_CONTAINER not running"
        ok=1
    fi
    if [ "$(podman inspect -f '{{.State.Running}}' "$PODMAN_CONTAINER" 2>/dev/null)" = true ]; then
        log "podman: $PODMAN_CONTAINER running"
    else
        log "podman: $PODMAN_CONTAINER not running"
        ok=1
    fi
    return "$ok"
}

case "${1:-}" in
up | down | status)
    STATE=$(state_dir)
    "cmd_$1"
    ;;
*)
    cat >&2 <<EOF
usage: $0 up|down|status
  up      install what is missing, start sshd, dockerd and the test containers, write hosts.env
  down    remove the test containers, stop the dockerd and sshd this script started
  status  say what is running (exit 1 when something is down)
state directory: \${SHELLGATE_HOSTS_DIR:-\$PWD/target/ci-hosts}, here ${SHELLGATE_HOSTS_DIR:-$PWD/target/ci-hosts}
EOF
    exit 2
    ;;
esac
