# bench/capped.bash — the capped group of bench/run (sourced by it; not run
# on its own; issue 29): the cache section's 30 KB hit, ramjet against nginx
# fastcgi_cache, with each server held to the same share of its core by a
# cgroup CPU quota (BENCH_CAP_PCT, default 50 %). On this row wrk, alone on
# the other core, needs about as much CPU per 30 KB answer as the servers
# do, so in the cache section the faster server runs into what wrk can
# read (about 80k answers a second on the 2-core machine) and req/s shows
# the load generator as much as the server. Under the quota each server
# runs out of CPU well before wrk does: req/s is what that much CPU serves,
# the server's capacity, the same for both. See bench/README.md, "Capped
# group".
#
# Uses from bench/run: WORK ROUNDS SKIP_RAMJET SERVER_CPU ROOTPID
# STARTED_PIDS CONFIG_GROUP MEASURE_GROUP MEASURE_EXTRA P_*, and log warn
# record start_servers_anew measure rotated
# all_descendants stop_all.

# shellcheck disable=SC2153,SC2034 # set by bench/run, or read by it
CAP_PCT=${BENCH_CAP_PCT:-50}
CAP_PERIOD_US=10000 # short periods: a 100 ms default would hold a server still for tens of milliseconds at a time
CAP_DIR=""
CAP_KIND=""
CAP_WHY=""
CAP_STAT0=""

# cap_make: a cgroup whose CPU quota is CAP_PCT % of one core, under
# cgroup v2 or v1's cpu controller; CAP_WHY says why not (not root, no
# cpu controller, a read-only /sys/fs/cgroup)
cap_make() {
	local quota=$((CAP_PERIOD_US * CAP_PCT / 100))
	((CAP_PCT > 0 && CAP_PCT <= 100)) || {
		CAP_WHY="BENCH_CAP_PCT=$CAP_PCT is not a percentage in 1-100"
		return 1
	}
	if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
		grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ||
			echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
		CAP_DIR=/sys/fs/cgroup/ramjet-bench-$$
		CAP_KIND=v2
		mkdir -p "$CAP_DIR" 2>/dev/null && echo "$quota $CAP_PERIOD_US" >"$CAP_DIR/cpu.max" 2>/dev/null && return 0
	elif [[ -d /sys/fs/cgroup/cpu ]]; then
		CAP_DIR=/sys/fs/cgroup/cpu/ramjet-bench-$$
		CAP_KIND=v1
		mkdir -p "$CAP_DIR" 2>/dev/null && echo "$CAP_PERIOD_US" >"$CAP_DIR/cpu.cfs_period_us" 2>/dev/null &&
			echo "$quota" >"$CAP_DIR/cpu.cfs_quota_us" 2>/dev/null && return 0
	fi
	CAP_WHY="no cgroup with a CPU quota could be made here ($(if [[ $EUID -ne 0 ]]; then echo "needs root"; else echo "no writable cpu controller under /sys/fs/cgroup"; fi))"
	rmdir "$CAP_DIR" 2>/dev/null || true
	CAP_DIR=""
	return 1
}

# cap_join PIDS: every one of them (and so all its threads) into the cgroup
cap_join() {
	local p
	for p in "$@"; do
		echo "$p" >"$CAP_DIR/cgroup.procs" 2>/dev/null || warn "capped: could not move pid $p into $CAP_DIR"
	done
}

# cap_stat: "periods throttled" of the cgroup so far
cap_stat() {
	awk '$1 == "nr_periods" {p = $2} $1 == "nr_throttled" {t = $2} END {print p + 0, t + 0}' "$CAP_DIR/cpu.stat"
}

# cap_warm CONTENDER PAGE: the cache section's hit check, then the
# quota's count from here (the row's warm-up and run)
cap_warm() {
	WARM_FN="" warm "$1" "$2"
	CAP_STAT0=$(cap_stat)
}

# cap_extra OUT: the row's share of quota periods in which the server was
# throttled (it asked for more CPU than the quota gave): near 100 % when
# the quota, not wrk, is what held it
cap_extra() {
	local p0 t0 p1 t1
	read -r p0 t0 <<<"$CAP_STAT0"
	read -r p1 t1 <<<"$(cap_stat)"
	printf 'cap_pct:=%s\nthrottled_pct:=%s\n' "$CAP_PCT" \
		"$(awk -v p=$((p1 - p0)) -v t=$((t1 - t0)) 'BEGIN {printf "%.1f", (p > 0 ? 100 * t / p : 0)}')"
}

# cap_remove: the cgroup, once its processes are gone (bench/run's cleanup
# calls it too)
cap_remove() {
	[[ -n $CAP_DIR ]] || return 0
	local i
	for ((i = 0; i < 50; i++)); do
		rmdir "$CAP_DIR" 2>/dev/null && break
		sleep 0.1
	done
	[[ -d $CAP_DIR ]] && warn "capped: could not remove $CAP_DIR"
	CAP_DIR=""
}

capped_section() {
	if [[ $SKIP_RAMJET == 1 ]]; then
		record kind=group group=capped cap_pct="$CAP_PCT" skip="BENCH_SKIP_RAMJET=1: ramjet is not measured"
		return 0
	fi
	if ! cap_make; then
		warn "capped: skipped: $CAP_WHY"
		record kind=group group=capped cap_pct="$CAP_PCT" skip="$CAP_WHY"
		return 0
	fi
	log "capped: the 30 KB hit, ramjet and nginx fastcgi_cache each held to $CAP_PCT % of core $SERVER_CPU (cgroup $CAP_KIND CPU quota)"
	CONFIG_GROUP=capped
	start_servers_anew
	# shellcheck disable=SC2046
	cap_join $(all_descendants "${ROOTPID[ramjet]}" "${ROOTPID[nginx-fcgi]}")
	record kind=group group=capped cap_pct="$CAP_PCT" period_us="$CAP_PERIOD_US" cgroup="$CAP_KIND" page=30k
	local round c
	local -a order
	MEASURE_GROUP=capped
	MEASURE_TAG=capped-
	MEASURE_EXTRA=cap_extra
	WARM_FN=cap_warm
	for ((round = 1; round <= ROUNDS; round++)); do
		mapfile -t order < <(rotated "$round" ramjet fcgi)
		log "capped round $round/$ROUNDS: ${order[*]}"
		for c in "${order[@]}"; do
			measure "$round" 30k "$c"
			sleep 1
		done
	done
	WARM_FN=""
	MEASURE_EXTRA=""
	MEASURE_TAG=""
	MEASURE_GROUP=cache
	CONFIG_GROUP=cache
	stop_all
	cap_remove
}
