# bench/disk.bash — the disk tier group of bench/run (sourced by it; not
# run on its own; issue 29). Three rows, one ramjet with the disk tier on:
#
#   ws4x     a working set 4x ramjet's RAM tier: DISK_PAGES pages of 30 KB
#            asked at random (a wrk Lua script), ramjet (cache.size a quarter
#            of them, the rest hits from disk) against nginx fastcgi_cache on
#            the same pages (its cache files in the page cache)
#   upgrade  the same pages under wrk -c20 while ramjet upgrades in place
#            (SIGUSR2: the binary on disk takes over the listeners and the
#            disk tier): failed requests and socket errors, and the pages
#            the origin was asked for during the run
#   start    ramjet started on a disk tier of DISK_START_MB: seconds from
#            exec to the first hit
#
# Uses from bench/run: WORK DURATION WARMUP SKIP_RAMJET TASKSET LOAD_CPU WRK
# CONNS MEASURE_GROUP MEASURE_EXTRA WARM_FN WRK_EXTRA URL_OF EXT EXTRA_PORT
# EXTRA_ROOT EXTRA_CONFIG HIT_OK STARTED_PIDS ROOTPID P_*, and log warn
# record row config_record pick_port wait_listen start_bg start_php_fpm
# start_nginx write_configs measure wrk_result php_calls quoted stop_all.

# shellcheck disable=SC2153,SC2034 # set by bench/run, or read by it
DISK_PAGES=${BENCH_DISK_PAGES:-2000}
DISK_START_MB=${BENCH_DISK_START_MB:-1024}
DISK_ADMIN=""
DISK_PORT=""
DISK_HITS0=0

# disk_metric NAME: one sample of ramjet's admin /metrics (0 when absent)
disk_metric() {
	local v
	v=$(curl -s --max-time 5 "http://127.0.0.1:$DISK_ADMIN/metrics" | awk -v n="$1" '$1 == n {print $2}')
	echo "${v:-0}"
}

# disk_fill BASE FROM TO: asks for pages FROM..TO once (curl's URL range,
# one kept connection)
disk_fill() {
	curl -s -o /dev/null --max-time 600 "$1/page30k.php?n=[$2-$3]" || warn "disk: filling pages $2-$3 of $1 failed"
}

# disk_wait_written N: until ramjet's disk tier holds N pages
disk_wait_written() {
	local i
	for ((i = 0; i < 600; i++)); do
		(($(disk_metric ramjet_disk_objects | cut -d. -f1) >= $1)) && return 0
		sleep 0.1
	done
	warn "disk: ramjet's disk tier holds $(disk_metric ramjet_disk_objects) of $1 pages"
}

# disk_warm CONTENDER PAGE: every page is cached already (disk_fill); a
# random one must answer a hit with the page's bytes
disk_warm() {
	local c=$1 url st
	url="$(url_of "$c" "$2")page30k.php?n=$((RANDOM % DISK_PAGES))"
	curl -s -o "$WORK/body" -D "$WORK/headers" --max-time 5 "$url" || true
	st=$(hit_state "$c" "$WORK/headers")
	if [[ $st != hit ]]; then
		HIT_OK[$c.$2]="miss"
	elif ! cmp -s "$WORK/body" "$WORK/www/page30k.html"; then
		HIT_OK[$c.$2]="body differs"
	else
		HIT_OK[$c.$2]=hit
	fi
	[[ $c == ramjet_disk ]] && DISK_HITS0=$(disk_metric ramjet_disk_hits_total)
	return 0
}

# disk_extra: ramjet's hits from disk during the row
disk_extra() {
	[[ $MEASURE_CUR == ramjet_disk ]] || return 0
	printf 'disk_hits:=%s\n' "$(awk -v a="$DISK_HITS0" -v b="$(disk_metric ramjet_disk_hits_total)" 'BEGIN {print b - a}')"
}

disk_start_ramjet() {
	log "starting ramjet with the disk tier on 127.0.0.1:$DISK_PORT (admin $DISK_ADMIN)"
	start_bg ramjet-disk "$WORK/logs/ramjet-disk.log" env GOMAXPROCS=1 "$WORK/ramjet" serve --config "$WORK/ramjet-disk.yaml" \
		--listen "127.0.0.1:$DISK_PORT" --admin "127.0.0.1:$DISK_ADMIN" --origin "http://127.0.0.1:$P_ORIGIN"
	wait_listen ramjet-disk "${ROOTPID[ramjet-disk]}" "$DISK_PORT" "$WORK/logs/ramjet-disk.log"
	EXTRA_ROOT["ramjet_disk"]=${ROOTPID[ramjet-disk]}
}

# disk_ramjet_pids: the ramjets serving the disk tier's config (after an
# upgrade the new one is no child of the bench's)
disk_ramjet_pids() {
	local f
	for f in /proc/[0-9]*/cmdline; do
		{ tr '\0' ' ' <"$f"; } 2>/dev/null | grep -qF -- "--config $WORK/ramjet-disk.yaml" && basename "$(dirname "$f")"
	done
	return 0
}

disk_start() {
	local ram_mb=$((DISK_PAGES * 30 / 1024 / 4))
	((ram_mb >= 2)) || ram_mb=2
	P_STATIC=$(pick_port)
	P_FCGI=$(pick_port)
	P_ORIGIN=$(pick_port)
	P_VARNISH=$(pick_port)
	DISK_PORT=$(pick_port)
	DISK_ADMIN=$(pick_port)
	write_configs
	# nginx as its experts would set it for this working set: every cache
	# file's descriptor kept (open_file_cache max at least the pages, not
	# the cache section's 1000, which random pages would churn), and
	# max_size and keys_zone (about 8,000 keys a MiB) over the working set
	# whatever BENCH_DISK_PAGES says, so nginx evicts nothing either
	local ofc=$((DISK_PAGES + DISK_PAGES / 4)) max_mb=$((DISK_PAGES * 64 / 1024)) keys_mb=$((DISK_PAGES / 8000 + 10))
	((ofc >= 1000)) || ofc=1000
	((max_mb >= 256)) || max_mb=256
	# (and descriptors enough for the kept ones beside the connections)
	sed -i -e "s/open_file_cache max=1000 /open_file_cache max=$ofc /" \
		-e "s/keys_zone=bench:10m max_size=256m/keys_zone=bench:${keys_mb}m max_size=${max_mb}m/" \
		-e "/^worker_rlimit_nofile /d" -e "s/^worker_processes 1;/&\nworker_rlimit_nofile $((ofc + NGINX_WORKER_CONNS + 1024));/" "$WORK/nginx-fcgi.conf"
	mkdir -p "$WORK/disk-cache"
	cat >"$WORK/ramjet-disk.yaml" <<EOF
cache:
  size: ${ram_mb}MiB
  disk:
    path: $WORK/disk-cache
    size: $((DISK_START_MB + 256))MiB
EOF
	config_record ramjet-disk "$WORK/ramjet-disk.yaml" yaml "ramjet with the disk tier" \
		"\`GOMAXPROCS=1\`, \`cache.size: ${ram_mb}MiB\` (a quarter of the working set), \`cache.disk\` in the work dir" \
		"RAM holds a quarter of the pages; the rest are hits from the disk tier (and the kernel's page cache), as nginx's are"
	config_record nginx-fcgi "$WORK/nginx-fcgi.conf" nginx "nginx fastcgi_cache" \
		"as in the cache section but \`open_file_cache max=$ofc\` (and \`worker_rlimit_nofile\` for them), \`keys_zone=bench:${keys_mb}m max_size=${max_mb}m\` (the whole working set, every descriptor kept)" \
		"the cache section's, sized for this working set so nginx neither evicts a page nor reopens a cache file"
	start_php_fpm
	start_nginx fcgi "$P_FCGI"
	start_nginx origin "$P_ORIGIN"
	disk_start_ramjet
	EXT["ramjet_disk"]=php
	EXTRA_PORT["ramjet_disk"]=$DISK_PORT
	EXTRA_CONFIG["ramjet_disk"]=ramjet-disk
	URL_OF["ramjet_disk.ws4x"]="http://127.0.0.1:$DISK_PORT/"
	URL_OF["fcgi.ws4x"]="http://127.0.0.1:$P_FCGI/"
	log "disk: caching $DISK_PAGES pages of 30 KB on both"
	disk_fill "http://127.0.0.1:$DISK_PORT" 0 $((DISK_PAGES - 1))
	disk_fill "http://127.0.0.1:$P_FCGI" 0 $((DISK_PAGES - 1))
	disk_wait_written "$DISK_PAGES"
	cat >"$WORK/disk-ws.lua" <<EOF
math.randomseed(os.time())
request = function()
  return wrk.format(nil, "/page30k.php?n=" .. math.random(0, $((DISK_PAGES - 1))))
end
EOF
}

# disk_upgrade_row: wrk -c20 over the pages; SIGUSR2 a third into the run
disk_upgrade_row() {
	local out="$WORK/wrk/disk-upgrade.txt" php0 php1 old pid rps reqs p50 p99 errs cpu_us
	local -a cmd=("$TASKSET" -c "$LOAD_CPU" "$WRK" -t1 -c20 -d"$DURATION" --latency -s "$WORK/disk-ws.lua" "http://127.0.0.1:$DISK_PORT/")
	old=${ROOTPID[ramjet-disk]}
	php0=$(php_calls)
	"${cmd[@]}" >"$out" 2>&1 &
	local wrkpid=$!
	sleep "$(awk -v d="${DURATION%s}" 'BEGIN {print d / 3}')"
	log "disk: SIGUSR2 to ramjet (pid $old) under load"
	kill -USR2 "$old"
	wait "$wrkpid" || true
	php1=$(php_calls)
	wrk_result "$out" "ramjet_disk upgrade" 0
	local -a pids
	mapfile -t pids < <(disk_ramjet_pids)
	for pid in "${pids[@]}"; do
		[[ $pid == "$old" ]] || STARTED_PIDS+=("$pid")
	done
	local fetched=$((php1 - php0)) handed=no
	[[ ${#pids[@]} -eq 1 && ${pids[0]} != "$old" ]] && handed=yes
	row disk 1 upgrade ramjet_disk rps:="$rps" errors:="$errs" requests:="$reqs" origin_fetches:="$fetched" pages:="$DISK_PAGES" \
		origin_pct:="$(awk -v f="$fetched" -v n="$DISK_PAGES" 'BEGIN {printf "%.2f", 100 * f / n}')" handed_over="$handed" \
		check="$([[ $errs == 0 && $handed == yes ]] && echo ok || echo "errors $errs, handed over: $handed")" \
		cmd="$(quoted "${cmd[@]}") + kill -USR2 at $((${DURATION%s} / 3))s" config=ramjet-disk
	log "  upgrade under load: $reqs requests, $errs failed or socket errors, $fetched of $DISK_PAGES pages from the origin, new process: $handed"
	ROOTPID[ramjet-disk]=${pids[0]:-$old}
}

# disk_start_row: fills the tier to DISK_START_MB, stops ramjet (SIGTERM),
# starts it again and times its first hit
disk_start_row() {
	local pages=$((DISK_START_MB * 1024 / 30)) pid t0 t1 i url st
	log "disk: filling the tier to ${DISK_START_MB} MiB ($pages pages)"
	disk_fill "http://127.0.0.1:$DISK_PORT" "$DISK_PAGES" $((pages - 1))
	disk_wait_written "$pages"
	for pid in $(disk_ramjet_pids); do kill -TERM "$pid"; done
	for ((i = 0; i < 300; i++)); do
		[[ -z $(disk_ramjet_pids) ]] && break
		sleep 0.1
	done
	sync
	t0=$(date +%s.%N)
	disk_start_ramjet
	url="http://127.0.0.1:$DISK_PORT/page30k.php?n=$((pages - 1))"
	for ((i = 0; i < 3000; i++)); do
		curl -s -o /dev/null -D "$WORK/headers" --max-time 5 "$url" || true
		st=$(hit_state ramjet_disk "$WORK/headers")
		[[ $st == hit ]] && break
		sleep 0.01
	done
	t1=$(date +%s.%N)
	local secs loaded bytes
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
	loaded=$(disk_metric ramjet_disk_loaded_objects)
	bytes=$(disk_metric ramjet_disk_bytes)
	row disk 1 start ramjet_disk first_hit_s:="$secs" loaded_objects:="$loaded" disk_bytes:="$bytes" \
		check="$([[ $st == hit ]] && echo ok || echo "no hit")" config=ramjet-disk
	log "  start on $((${bytes%.*} / 1048576)) MiB of disk tier: first hit after $secs s ($loaded objects loaded into RAM)"
}

disk_section() {
	if [[ $SKIP_RAMJET == 1 ]]; then
		record kind=group group=disk skip="BENCH_SKIP_RAMJET=1: ramjet is not measured"
		return 0
	fi
	log "disk: a working set 4x ramjet's RAM tier ($DISK_PAGES pages of 30 KB), an upgrade under load, a start on ${DISK_START_MB} MiB"
	CONFIG_GROUP=disk
	disk_start
	record kind=group group=disk pages="$DISK_PAGES" start_mb="$DISK_START_MB"
	MEASURE_GROUP=disk
	MEASURE_EXTRA=disk_extra
	WARM_FN=disk_warm
	WRK_EXTRA=(-s "$WORK/disk-ws.lua")
	local c
	for c in ramjet_disk fcgi; do
		MEASURE_CUR=$c
		measure 1 ws4x "$c"
		sleep 1
	done
	WRK_EXTRA=()
	WARM_FN=""
	MEASURE_EXTRA=""
	MEASURE_GROUP=cache
	disk_upgrade_row
	disk_start_row
	CONFIG_GROUP=cache
	stop_all
}
