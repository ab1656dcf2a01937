# bench/warm.bash — the warm-up group of bench/run (sourced by it; not run on
# its own; issue 30): a 2,000-page PHP site behind ramjet under a Zipf visitor
# load (wrk with a Lua URL picker), a purge of everything, and the visitors'
# hit ratio second by second over the next BENCH_WARM_WINDOW seconds, with
# ramjet's warm-up after purges on and off, plus the most requests the
# origin's PHP had at once over the window. See bench/README.md, "Warm-up
# group".
#
# Uses from bench/run: ROOT WORK ROUNDS QUICK SKIP_RAMJET ROOTPID LOAD_CPU TASKSET WRK
# P_* and log warn record row config_record pick_port wait_listen start_bg
# start_php_fpm start_nginx write_configs rotated stop_all.

# shellcheck disable=SC2153,SC2034 # ROOT, WORK and the rest are set by bench/run
WARM_VARIANTS=(on off)
WARM_PAGES=${BENCH_WARM_PAGES:-2000}
WARM_WINDOW=${BENCH_WARM_WINDOW:-60}
WARM_FILL=${BENCH_WARM_FILL:-20}
WARM_CONNS=${BENCH_WARM_CONNS:-32}
WARM_PAGE_MS=${BENCH_WARM_PAGE_MS:-20}
# A visitor's pause between requests: without one, wrk's connections ask
# for thousands of pages a second and fetch every purged page again within
# a second or two themselves; with it, 32 connections are about 1,500
# requests a second, and the rarer pages wait seconds for a visitor.
WARM_DELAY_MS=${BENCH_WARM_DELAY_MS:-20}
WARM_PHP=16 # php-fpm children: the origin can take what ramjet sends it

# warm_php: the site's page: the e2e tests' cmd/ramjet/testdata/www/warm.php
# (warm.php?p=N&sleep_ms=WARM_PAGE_MS, cacheable for 600 s, counting the
# requests PHP has at once in $RAMJET_MARK_DIR/warm.conc, "now top";
# warm.php?conc=reset starts again, warm.php?conc=1 reads it)
warm_php() {
	cp "$ROOT/cmd/ramjet/testdata/www/warm.php" "$WORK/www/warm.php"
}

# warm_lua: wrk's URL picker: page i of WARM_PAGES with probability
# proportional to 1/i (Zipf, s = 1), from a cumulative table and a binary
# search per request
warm_lua() {
	cat >"$WORK/warm-zipf.lua" <<EOF
local n = $WARM_PAGES
local cdf, sum = {}, 0
for i = 1, n do sum = sum + 1 / i; cdf[i] = sum end
for i = 1, n do cdf[i] = cdf[i] / sum end
local counter = 0
function setup(thread) counter = counter + 1; thread:set("seed", counter) end
function init(args) math.randomseed(os.time() * 1000 + (seed or 0)) end
function delay() return $WARM_DELAY_MS end
function request()
  local u, lo, hi = math.random(), 1, n
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if cdf[mid] < u then lo = mid + 1 else hi = mid end
  end
  return wrk.format("GET", "/warm.php?p=" .. lo .. "&sleep_ms=$WARM_PAGE_MS")
end
EOF
}

# warm_yaml VARIANT: ramjet's config for the warm-up on or off
warm_yaml() {
	printf 'origin:\n  max_conns: %s\n' "$WARM_PHP"
	if [[ $1 == on ]]; then
		printf 'defaults:\n  warm:\n    enabled: true\n    concurrency: 4\n    rate: 500\n    max_entries: 1000\n    max_busy: 50\n'
	else
		printf '# warm-up off (the default)\n'
	fi
}

# warm_counts ADMIN: "hits total warm_fetches" from ramjet's metrics (hits:
# fresh, stale and private hits of visitors)
warm_counts() {
	curl -s --max-time 5 "http://127.0.0.1:$1/metrics" | awk '
		/^ramjet_requests_total\{cache="(hit|hit_private|stale)"\}/ { h += $2 }
		/^ramjet_requests_total\{/ { t += $2 }
		/^ramjet_warm_fetches_total / { w = $2 }
		END { printf "%d %d %d\n", h, t, w }'
}

# warm_variant ROUND VARIANT: one measured window
warm_variant() {
	local round=$1 v=$2 port admin origin
	port=$(pick_port)
	admin=$(pick_port)
	warm_yaml "$v" >"$WORK/ramjet-warm-$v.yaml"
	rm -f "$WORK/run/warm.conc"
	log "warm $v: starting ramjet on 127.0.0.1:$port"
	start_bg "ramjet-warm-$v" "$WORK/logs/ramjet-warm-$v.out" "$WORK/ramjet" serve --config "$WORK/ramjet-warm-$v.yaml" \
		--listen "127.0.0.1:$port" --admin "127.0.0.1:$admin" --origin "http://127.0.0.1:$P_ORIGIN"
	wait_listen "ramjet-warm-$v" "${ROOTPID[ramjet-warm-$v]}" "$port" "$WORK/logs/ramjet-warm-$v.out"
	origin="http://127.0.0.1:$P_ORIGIN"

	log "warm $v: ${WARM_FILL}s of Zipf visitors fill the cache"
	"$TASKSET" -c "$LOAD_CPU" "$WRK" -t2 -c"$WARM_CONNS" -d"${WARM_FILL}s" -s "$WORK/warm-zipf.lua" "http://127.0.0.1:$port" \
		>"$WORK/wrk/warm-fill-r$round-$v.txt" 2>&1 || true
	local out="$WORK/wrk/warm-r$round-$v.txt" wrk_pid before after s h0 t0 h t w0 w ratios="" first10=0 hits=0 total=0
	"$TASKSET" -c "$LOAD_CPU" "$WRK" -t2 -c"$WARM_CONNS" -d"$((WARM_WINDOW + 20))s" -s "$WORK/warm-zipf.lua" "http://127.0.0.1:$port" \
		>"$out" 2>&1 &
	wrk_pid=$!
	sleep 3
	read -r h0 t0 w0 < <(warm_counts "$admin")
	sleep 2
	read -r h t w < <(warm_counts "$admin")
	before=$(awk -v h=$((h - h0)) -v t=$((t - t0)) 'BEGIN { printf "%.4f", t ? h / t : 0 }')
	curl -s --max-time 5 "$origin/warm.php?conc=reset" >/dev/null
	log "warm $v: purge of everything, then ${WARM_WINDOW}s of the visitors' hit ratio"
	w0=$w # before the purge: the warm-up starts at once
	curl -s --max-time 10 -X POST "http://127.0.0.1:$admin/purge?all=1" >"$WORK/logs/warm-purge-$v.json"
	read -r h0 t0 _ < <(warm_counts "$admin")
	local t_purge left
	t_purge=$(date +%s%N)
	for ((s = 1; s <= WARM_WINDOW; s++)); do
		# by the clock: a loaded machine must not stretch the window
		left=$((t_purge + s * 1000000000 - $(date +%s%N)))
		((left <= 0)) || sleep "$(awk -v n="$left" 'BEGIN { printf "%.3f", n / 1e9 }')"
		read -r h t w < <(warm_counts "$admin")
		ratios+="$(awk -v h=$((h - h0)) -v t=$((t - t0)) 'BEGIN { printf "%.4f", t ? h / t : 0 }') "
		hits=$((hits + h - h0))
		total=$((total + t - t0))
		((s == 10)) && first10=$(awk -v h=$hits -v t=$total 'BEGIN { printf "%.4f", t ? h / t : 0 }')
		h0=$h t0=$t
	done
	after=$(awk -v h=$hits -v t=$total 'BEGIN { printf "%.4f", t ? h / t : 0 }')
	local peak
	peak=$(curl -s --max-time 5 "$origin/warm.php?conc=1" | awk '{print $2}')
	wait "$wrk_pid" 2>/dev/null || true
	local runs
	runs=$(grep -c 'msg="warm run"' "$WORK/logs/ramjet-warm-$v.out" || true)
	row warm "$round" "zipf$WARM_PAGES" "ramjet_warm_$v" variant="$v" ratios="${ratios% }" \
		ratio_before:="$before" ratio_10s:="$first10" ratio_window:="$after" origin_peak:="${peak:-0}" \
		warm_fetches:=$((w - w0)) requests:="$total" warm_runs:="$runs" check=ok
	log "warm $v: hit ratio before $before, first 10 s $first10, ${WARM_WINDOW} s $after; origin peak ${peak:-?}; warm fetches $((w - w0))"
	kill -TERM "${ROOTPID[ramjet-warm-$v]}" 2>/dev/null || true
	wait "${ROOTPID[ramjet-warm-$v]}" 2>/dev/null || true
}

warm_section() {
	if [[ $SKIP_RAMJET == 1 ]]; then
		record kind=group group=warm skip="BENCH_SKIP_RAMJET=1: ramjet is not measured"
		return 0
	fi
	log "warm: a ${WARM_PAGES}-page site, Zipf visitors, a purge of everything; warm-up ${WARM_VARIANTS[*]}"
	CONFIG_GROUP=warm
	((WARM_FILL + WARM_WINDOW + 5 < 600)) || warn "warm: fill and window ($((WARM_FILL + WARM_WINDOW + 5)) s) outlast the page's max-age=600: expiries will show as misses"
	P_STATIC=$(pick_port)
	P_FCGI=$(pick_port)
	P_ORIGIN=$(pick_port)
	P_VARNISH=$(pick_port)
	write_configs
	sed -i "s/^pm.max_children = .*/pm.max_children = $WARM_PHP/; s/^access.log = .*/; no access log/; s/^access.format = .*//" "$WORK/php-fpm.conf"
	printf 'env[RAMJET_MARK_DIR] = %s\n' "$WORK/run" >>"$WORK/php-fpm.conf"
	warm_php
	warm_lua
	start_php_fpm
	start_nginx origin "$P_ORIGIN"
	local v
	for v in "${WARM_VARIANTS[@]}"; do
		warm_yaml "$v" >"$WORK/ramjet-warm-$v.yaml"
		config_record "ramjet-warm-$v" "$WORK/ramjet-warm-$v.yaml" yaml "ramjet, warm-up $v" \
			"$(if [[ $v == on ]]; then echo "\`warm: {enabled: true, concurrency: 4, rate: 500, max_entries: 1000, max_busy: 50}\`"; else echo "warm-up off (the default)"; fi), \`origin.max_conns: $WARM_PHP\`" \
			"the same ramjet but for the warm-up"
	done
	record kind=group group=warm pages="$WARM_PAGES" window="$WARM_WINDOW" fill="$WARM_FILL" conns="$WARM_CONNS" \
		page_ms="$WARM_PAGE_MS" delay_ms="$WARM_DELAY_MS" php="$WARM_PHP"
	local round
	local -a order
	for ((round = 1; round <= ROUNDS; round++)); do
		mapfile -t order < <(rotated "$round" "${WARM_VARIANTS[@]}")
		for v in "${order[@]}"; do
			warm_variant "$round" "$v"
		done
	done
	CONFIG_GROUP=cache
	stop_all
}
