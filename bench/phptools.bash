# bench/phptools.bash — the phptools group of bench/run (sourced by it; not
# run on its own): the PHP section's servers (ramjet docroot mode against
# nginx + php-fpm, nothing cached) on hello.php and phpinfo.php under the
# seeds' other load tools, ApacheBench (ab -c10 -n1000) and siege (-c25
# -r50). See bench/README.md, "ab and siege".
#
# Uses from bench/run and bench/php.bash: WORK TASKSET SERVER_CPU LOAD_CPU
# ROUNDS CLK_TCK SKIP_RAMJET PHP_PAGES PHP_CONTENDERS PHP_CHECK PHP_WORKERS,
# and log warn record row quoted find_tool tree_ticks php_url php_check
# php_settle php_cpu_roots.

# shellcheck disable=SC2153,SC2034 # WORK and the rest are set by bench/run; what this file sets, bench/run and its other parts read
PT_TOOLS=(ab siege)
PT_PAGES=()
PT_SKIP=""
AB=""
SIEGE=""
declare -A PT_CMD=([ab]="ab -l -c10 -n1000" [siege]="siege -b -c25 -r50")

phptools_validate_env() {
	local p
	for p in "${PHP_PAGES[@]}"; do
		[[ $p == hello || $p == phpinfo ]] && PT_PAGES+=("$p")
	done
	((${#PT_PAGES[@]})) || PT_SKIP="BENCH_PHP_PAGES selects neither hello nor phpinfo"
}

# phptools_siegerc: siege's settings, in the work dir (siege -R), with a
# HOME of its own there so it writes nothing into the real one: no log, no
# HTML parsing (no follow-up requests for a page's images), JSON results.
# The rest is siege 4's default, as the seeds ran it: HTTP/1.1, a new
# connection per transaction (connection = close).
phptools_siegerc() {
	mkdir -p "$WORK/siege-home/.siege"
	cat >"$WORK/siegerc" <<'EOF'
verbose = false
color = off
quiet = false
json_output = true
show-logfile = false
logging = false
parser = false
protocol = HTTP/1.1
connection = close
accept-encoding = gzip, deflate
limit = 255
internet = false
EOF
	# siege writes a template there (and says so on stdout) when it finds none
	cp "$WORK/siegerc" "$WORK/siege-home/.siege/siege.conf"
}

# ---------------------------------------------------------------- measuring
# phptools_result TOOL OUT -> "rps mean p50 p99 max reqs failed" (ms; "–"
# where the tool does not say)
phptools_result() {
	case $1 in
	ab)
		awk '/^Requests per second:/ {rps = $4}
			/^Time per request:/ && !mean {mean = $4}
			/^Complete requests:/ {n = $3}
			/^Failed requests:/ {f += $3}
			/^Non-2xx responses:/ {f += $3}
			$1 == "50%" {p50 = $2}
			$1 == "99%" {p99 = $2}
			$1 == "100%" {mx = $2}
			END {if (n == "") print "0 0 – – 0 0 0"; else printf "%s %s %s %s %s %s %d\n", rps, mean, p50, p99, mx, n, f}' "$2"
		;;
	siege)
		# the JSON object, from its first line; the mean from the average
		# concurrency ÷ the rate (Little's law): response_time has 10 ms steps
		sed -n '/^{/,$p' "$2" | jq -r '"\(.transaction_rate) \(if .transaction_rate > 0 then .concurrency / .transaction_rate * 1000 else 0 end) – – \(.longest_transaction * 1000) \(.transactions) \(.failed_transactions)"' 2>/dev/null ||
			echo "0 0 – – 0 0 0"
		;;
	esac
}

# phptools_measure ROUND PAGE TOOL CONTENDER
phptools_measure() {
	local round=$1 page=$2 tool=$3 c=$4 url out t0 t1 chk
	local -a roots cmd
	url=$(php_url "$c" "$page")
	out="$WORK/phptools/r$round-$page-$tool-$c.txt"
	read -ra roots <<<"$(php_cpu_roots "$c")"
	if [[ $tool == ab ]]; then
		cmd=("$AB" -l -c10 -n1000 "$url")
	else
		cmd=(env HOME="$WORK/siege-home" "$SIEGE" -R "$WORK/siegerc" -b -c25 -r50 "$url")
	fi
	php_settle "$c"
	php_check "$c" "$page"
	t0=$(tree_ticks "${roots[@]}")
	"$TASKSET" -c "$LOAD_CPU" timeout 120 "${cmd[@]}" >"$out" 2>"$out.err" || warn "$tool $c $page: exit status $? ($(tail -n2 "$out.err" | tr '\n' ' '))"
	t1=$(tree_ticks "${roots[@]}")
	local rps mean p50 p99 mx n f cpu_us
	read -r rps mean p50 p99 mx n f <<<"$(phptools_result "$tool" "$out")"
	[[ ${n:-} =~ ^[0-9]+$ && ${f:-} =~ ^[0-9]+$ ]] || { rps=0 mean=0 p50=– p99=– mx=0 n=0 f=0; }
	mean=$(awk -v v="$mean" 'BEGIN {printf "%.3f", v}')
	if ((n == 0)); then
		warn "$tool produced no result for $c $page:"
		sed 's/^/    /' "$out" "$out.err" >&2
	fi
	cpu_us=$(awk -v d=$((t1 - t0)) -v hz="$CLK_TCK" -v n="$n" 'BEGIN {printf "%.2f", (n > 0) ? d * 1e6 / hz / n : 0}')
	chk=${PHP_CHECK[$c.$page]}
	# siege gives no percentiles: its rows have no p50_ms or p99_ms
	local -a pct=()
	[[ $p50 == – ]] || pct=(p50_ms:="$p50" p99_ms:="$p99")
	row phptools "$round" "$page" "$c" tool="$tool" rps:="$rps" mean_ms:="$mean" "${pct[@]}" max_ms:="$mx" \
		cpu_us:="$cpu_us" requests:="$n" failed:="$f" check="$chk" cmd="$(quoted "${cmd[@]}")" \
		config="$([[ $c == rjphp ]] && echo ramjet-php || echo nginx-php)"
	log "  $(printf '%-6s %-8s %-5s %9s req/s  mean %7s ms  p50 %4s ms  p99 %4s ms  max %6s ms  %7s us/req  %s requests  %s failed  [%s]' \
		"$c" "$page" "$tool" "$rps" "$mean" "$p50" "$p99" "$mx" "$cpu_us" "$n" "$f" "$chk")"
}

# phptools_runs: on the PHP section's running servers; each contender and
# page gets an unmeasured ab run first (the PHP section's wrk warm-up may
# not have run)
phptools_runs() {
	record kind=group group=phptools pages="${PT_PAGES[*]}" workers="$PHP_WORKERS" ab_cmd="${PT_CMD[ab]}" \
		siege_cmd="${PT_CMD[siege]}" skip="$PT_SKIP"
	[[ -z $PT_SKIP ]] || { warn "phptools group skipped: $PT_SKIP"; return 0; }
	AB=$(find_tool ab)
	SIEGE=$(find_tool siege)
	mkdir -p "$WORK/phptools"
	phptools_siegerc
	local round page tool c
	local -a order
	for page in "${PT_PAGES[@]}"; do
		for c in "${PHP_CONTENDERS[@]}"; do
			"$TASKSET" -c "$LOAD_CPU" timeout 60 "$AB" -l -c10 -n200 "$(php_url "$c" "$page")" >/dev/null 2>&1 || true
		done
	done
	for ((round = 1; round <= ROUNDS; round++)); do
		for page in "${PT_PAGES[@]}"; do
			for tool in "${PT_TOOLS[@]}"; do
				mapfile -t order < <(rotated "$round" "${PHP_CONTENDERS[@]}")
				log "phptools round $round/$ROUNDS, $page, ${PT_CMD[$tool]}: ${order[*]}"
				for c in "${order[@]}"; do
					phptools_measure "$round" "$page" "$tool" "$c"
					sleep 1
				done
			done
		done
	done
}
