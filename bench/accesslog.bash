# bench/accesslog.bash — the access log group of bench/run (sourced by it;
# not run on its own; issue 15): ramjet's hit path, the 725 B page as in the
# cache section, with the access log off, in the combined format and as
# JSON, side by side in one run. Three ramjets in front of the same origin,
# started together and pinned to the server core like the cache section's;
# only the one measured is loaded. The logs go to files in the work dir, on
# the same disk as everything else. See bench/README.md, "Access log group".
#
# Uses from bench/run: WORK ROOT ROUNDS SKIP_RAMJET ROOTPID CONFIG_GROUP
# MEASURE_GROUP MEASURE_EXTRA EXT EXTRA_PORT EXTRA_ROOT EXTRA_CONFIG P_*, and
# log warn record config_record pick_port wait_listen start_bg start_php_fpm
# start_nginx write_configs measure rotated stop_all.

# shellcheck disable=SC2153,SC2034 # ROOT, WORK and the rest are set by bench/run; what this file sets, bench/run and its other parts read
AL_FORMATS=(off combined json)
AL_CUR="" # the format being measured, for al_extra

# al_yaml FORMAT: ramjet's config for one variant (no file for off)
al_yaml() {
	if [[ $1 == off ]]; then
		printf '# the access log off (the default)\n'
		return 0
	fi
	printf 'access_log:\n  path: %s\n  format: %s\n' "$WORK/logs/access-$1.log" "$1"
}

# al_extra OUT: the row's log fields: lines in the variant's file so far and
# ramjet_access_log_dropped_total (both 0 with the log off)
al_extra() {
	local lines=0 dropped
	[[ -f $WORK/logs/access-$AL_CUR.log ]] && lines=$(wc -l <"$WORK/logs/access-$AL_CUR.log")
	dropped=$(curl -s --max-time 5 "http://127.0.0.1:${AL_ADMIN[$AL_CUR]}/metrics" |
		awk '$1 == "ramjet_access_log_dropped_total" {print $2}')
	printf 'log_format=%s\nlog_lines:=%s\ndropped:=%s\n' "$AL_CUR" "$lines" "${dropped:-0}"
}

declare -A AL_ADMIN=()

al_start() {
	local f c port admin
	P_STATIC=$(pick_port)
	P_FCGI=$(pick_port)
	P_ORIGIN=$(pick_port)
	P_VARNISH=$(pick_port)
	write_configs
	start_php_fpm
	start_nginx origin "$P_ORIGIN"
	for f in "${AL_FORMATS[@]}"; do
		c=ramjet_log_$f
		port=$(pick_port)
		admin=$(pick_port)
		al_yaml "$f" >"$WORK/ramjet-log-$f.yaml"
		config_record "ramjet-log-$f" "$WORK/ramjet-log-$f.yaml" yaml "ramjet, access log $f" \
			"\`GOMAXPROCS=1\`, $(if [[ $f == off ]]; then echo "no access log"; else echo "\`access_log: {path: WORK/logs/access-$f.log, format: $f}\`"; fi)" \
			"the cache section's ramjet with only the access log changed"
		log "starting ramjet (access log $f) on 127.0.0.1:$port"
		start_bg "ramjet-log-$f" "$WORK/logs/ramjet-log-$f.out" env GOMAXPROCS=1 "$WORK/ramjet" serve \
			--config "$WORK/ramjet-log-$f.yaml" --listen "127.0.0.1:$port" --admin "127.0.0.1:$admin" --origin "http://127.0.0.1:$P_ORIGIN"
		wait_listen "ramjet-log-$f" "${ROOTPID[ramjet-log-$f]}" "$port" "$WORK/logs/ramjet-log-$f.out"
		EXT["$c"]=php
		EXTRA_PORT["$c"]=$port
		EXTRA_ROOT["$c"]=${ROOTPID[ramjet-log-$f]}
		EXTRA_CONFIG["$c"]=ramjet-log-$f
		AL_ADMIN[$f]=$admin
	done
}

accesslog_section() {
	if [[ $SKIP_RAMJET == 1 ]]; then
		record kind=group group=accesslog skip="BENCH_SKIP_RAMJET=1: ramjet is not measured"
		return 0
	fi
	log "accesslog: ramjet's hit path (725 B) with the access log ${AL_FORMATS[*]}"
	CONFIG_GROUP=accesslog
	al_start
	record kind=group group=accesslog formats="${AL_FORMATS[*]}" page=725
	local round f
	local -a order
	MEASURE_GROUP=accesslog
	MEASURE_EXTRA=al_extra
	for ((round = 1; round <= ROUNDS; round++)); do
		mapfile -t order < <(rotated "$round" "${AL_FORMATS[@]}")
		log "accesslog round $round/$ROUNDS: ${order[*]}"
		for f in "${order[@]}"; do
			AL_CUR=$f
			measure "$round" 725 "ramjet_log_$f"
			sleep 1
		done
	done
	MEASURE_GROUP=cache
	MEASURE_EXTRA=""
	CONFIG_GROUP=cache
	stop_all
}
