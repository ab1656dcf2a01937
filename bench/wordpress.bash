# bench/wordpress.bash — the WordPress group of bench/run (sourced by it; not
# run on its own): a real WordPress (Debian's package, MariaDB, the
# ramjet-cache plugin) brought up by the end-to-end harness
# (plugins/wordpress/e2e, TestWordPressBench with RAMJET_WP_BENCH=1), then
# measured: the home page and a post uncached through nginx + php-fpm against
# cached through ramjet in front of that nginx; uncached under the same load,
# ramjet's docroot mode (php-cgi pool) against nginx + php-fpm, both with a
# cookie that bypasses the cache; and the latency of a miss through each path.
# See bench/README.md, "WordPress section".
#
# Uses from bench/run: WORK ROOT TASKSET WRK PHPCGI SERVER_CPU LOAD_CPU
# DURATION WARMUP ROUNDS QUICK CLK_TCK SKIP_RAMJET ROOTPID STARTED_PIDS, and
# log warn die record row quoted start_bg all_descendants core_ticks busy_pct
# to_ms.

# shellcheck disable=SC2153,SC2034 # ROOT, WORK and the rest are set by bench/run; what this file sets, bench/run and its other parts read
WP_CONNS=${BENCH_WP_CONNS:-50}
WP_DOCROOT_LOAD=${BENCH_WP_DOCROOT:-1} # 0: no docroot-under-load rows
WP_MISS_N=${BENCH_WP_MISS_N:-30}
WP_TIMEOUT=30s # wrk --timeout: an uncached request waits behind up to 49 others
WP_BYPASS_COOKIE="wordpress_logged_in_rjbench=1"
WP_ALL_PAGES=(home post)
WP_PAGES=()
WP_SKIP=""
WP_PID=""
WP_SETUP_NOTE=""
WP_MEM_NOTE=""
declare -A WPI=()
declare -A WP_CHECK=()
declare -A WP_BODY=()

wp_validate_env() {
	[[ $WP_CONNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_WP_CONNS must be a positive integer, got $WP_CONNS"
	[[ $WP_DOCROOT_LOAD == 0 || $WP_DOCROOT_LOAD == 1 ]] || die "BENCH_WP_DOCROOT must be 0 or 1, got $WP_DOCROOT_LOAD"
	if ! [[ $WP_MISS_N =~ ^[0-9]+$ ]] || ((WP_MISS_N > 1000)); then
		die "BENCH_WP_MISS_N must be a number up to 1000, got $WP_MISS_N"
	fi
	local p
	for p in ${BENCH_WP_PAGES:-${WP_ALL_PAGES[*]}}; do
		[[ " ${WP_ALL_PAGES[*]} " == *" $p "* ]] || die "BENCH_WP_PAGES: unknown page $p (${WP_ALL_PAGES[*]})"
		WP_PAGES+=("$p")
	done
	((${#WP_PAGES[@]})) || die "BENCH_WP_PAGES selects no page"
}

# wp_missing -> the reason the group cannot run here, or nothing
wp_missing() {
	local -a m=()
	[[ -f /usr/share/wordpress/wp-load.php ]] || m+=(wordpress)
	[[ -x /usr/sbin/mariadbd && -x /usr/bin/mariadb-install-db ]] || m+=(mariadb-server)
	if [[ -x /usr/bin/php ]]; then
		/usr/bin/php -r 'exit(function_exists("mysqli_connect") ? 0 : 1);' 2>/dev/null || m+=(php-mysql)
	else
		m+=(php-cli php-mysql)
	fi
	[[ -x /usr/sbin/php-fpm8.2 ]] || m+=(php8.2-fpm) # the harness's php-fpm
	[[ -x /usr/sbin/nginx ]] || m+=(nginx-light)
	[[ -n ${PHPCGI:-} ]] || m+=(php-cgi)
	if ((${#m[@]})); then
		echo "missing Debian packages: ${m[*]} (install: apt-get install --no-install-recommends ${m[*]})"
		return 0
	fi
	[[ $EUID -eq 0 ]] || { echo "needs root: the e2e harness runs nginx and php-fpm as root"; return 0; }
	[[ $SKIP_RAMJET != 1 ]] || { echo "BENCH_SKIP_RAMJET=1: this group compares ramjet with nginx + php-fpm"; return 0; }
	command -v go >/dev/null 2>&1 || { echo "go not found: it builds the e2e harness that sets WordPress up"; return 0; }
	return 0
}

dur_s() { # 15s / 2m / 1h / 15 -> seconds
	local v=${1%[smh]}
	case $1 in *m) echo $((v * 60)) ;; *h) echo $((v * 3600)) ;; *) echo "$v" ;; esac
}

# ---------------------------------------------------------------- the stack
wp_start() {
	local hold i
	mkdir -p "$WORK/logs" "$WORK/wrk"
	log "WordPress: building the e2e harness (go test -c ./plugins/wordpress/e2e/)"
	if ! (cd "$ROOT" && go test -c -o "$WORK/wpbench.test" ./plugins/wordpress/e2e/) >"$WORK/logs/wpbench-build.log" 2>&1; then
		sed 's/^/    /' "$WORK/logs/wpbench-build.log" >&2
		WP_SKIP="go test -c ./plugins/wordpress/e2e/ failed"
		return 1
	fi
	mkdir -p "$WORK/wp-tmp"
	chmod 755 "$WORK/wp-tmp" # PHP runs as www-data in docroot mode and walks down to the docroot
	# how long the stack may stay up: every run of the group with room to spare
	hold=$((600 + ROUNDS * ${#WP_PAGES[@]} * 2 * ($(dur_s "$DURATION") + $(dur_s "$WARMUP") + 60) + WP_MISS_N * 10))
	log "WordPress: starting the stack (MariaDB, WordPress install, nginx + php-fpm, 2 ramjets), pinned to core $SERVER_CPU"
	# the whole harness on the server core: MariaDB, nginx, php-fpm and both
	# ramjets inherit the pinning (and ramjet's GOMAXPROCS is 1)
	start_bg wpstack "$WORK/logs/wpstack.log" env -C "$ROOT/plugins/wordpress/e2e" TMPDIR="$WORK/wp-tmp" \
		RAMJET_WP_BENCH=1 RAMJET_WP_BENCH_RAMJET="$WORK/ramjet" RAMJET_WP_BENCH_PHP_CGI="$PHPCGI" \
		RAMJET_WP_BENCH_HOLD="${hold}s" \
		"$WORK/wpbench.test" -test.run '^TestWordPressBench$' -test.v -test.count=1 -test.timeout "$((hold + 300))s"
	WP_PID=${ROOTPID[wpstack]}
	for ((i = 0; i < 1200; i++)); do # at most 300 s
		grep -q '^WPBENCH ready=1' "$WORK/logs/wpstack.log" && break
		if grep -q '^WPBENCH skip=' "$WORK/logs/wpstack.log"; then
			WP_SKIP="the harness skipped: $(sed -n 's/^WPBENCH skip=//p' "$WORK/logs/wpstack.log" | head -n1)"
			return 1
		fi
		if ! kill -0 "$WP_PID" 2>/dev/null; then
			tail -n 40 "$WORK/logs/wpstack.log" | sed 's/^/    /' >&2
			WP_SKIP="the harness exited before the stack was up (log above)"
			return 1
		fi
		sleep 0.25
	done
	if ((i == 1200)); then
		tail -n 40 "$WORK/logs/wpstack.log" | sed 's/^/    /' >&2
		WP_SKIP="the stack was not up within 300 s"
		return 1
	fi
	local k v
	while IFS='=' read -r k v; do
		WPI[$k]=$v
	done < <(sed -n 's/^WPBENCH //p' "$WORK/logs/wpstack.log")
	for k in origin proxy docroot host home post pid_proxy pid_docroot pid_mariadbd pid_nginx pid_php-fpm8.2; do
		[[ -n ${WPI[$k]:-} ]] || { WP_SKIP="the harness did not report $k"; return 1; }
	done
	WP_SETUP_NOTE="set up in ${WPI[setup_seconds]:-?} s"
	log "WordPress: up ($WP_SETUP_NOTE): origin ${WPI[origin]}, ramjet ${WPI[proxy]}, ramjet docroot ${WPI[docroot]}"
}

# wp_stop: SIGTERM to the harness, which stops its processes and removes its
# temporary directories (at most 60 s; stop_all kills what is left)
wp_stop() {
	[[ -n $WP_PID ]] || return 0
	local i
	if kill -0 "$WP_PID" 2>/dev/null; then
		kill -TERM "$WP_PID" 2>/dev/null || true
		for ((i = 0; i < 300; i++)); do
			kill -0 "$WP_PID" 2>/dev/null || break
			sleep 0.2
		done
		((i < 300)) || warn "the WordPress harness did not stop within 60 s; killing it"
	fi
	WP_PID=""
}

# ---------------------------------------------------------------- helpers
wp_path() { # PAGE -> URL path
	if [[ $1 == home ]]; then echo "${WPI[home]}"; else echo "${WPI[post]}"; fi
}
wp_url() { # CONTENDER PAGE
	local base
	case $1 in
	fpm | fpmck) base=${WPI[origin]} ;;
	cached | rjproxy) base=${WPI[proxy]} ;;
	rjdoc | rjdocld) base=${WPI[docroot]} ;;
	esac
	echo "$base$(wp_path "$2")"
}
wp_origin_roots() { echo "${WPI[pid_nginx]} ${WPI[pid_php-fpm8.2]} ${WPI[pid_mariadbd]}"; }
wp_cpu_roots() { # CONTENDER -> processes whose CPU counts for it
	case $1 in
	fpm | fpmck) wp_origin_roots ;;
	cached) echo "${WPI[pid_proxy]}" ;;
	rjdocld) echo "${WPI[pid_docroot]} ${WPI[pid_mariadbd]}" ;; # ramjet, its php-cgi workers, MariaDB
	esac
}

# wp_settle: wait (at most 20 s) until the origin (nginx, php-fpm, MariaDB)
# and both ramjets use no CPU for 0.5 s: wrk ends with up to -c requests
# queued for a php-fpm child, which must not spill into the next run
wp_settle() {
	local -a roots
	read -ra roots <<<"$(wp_origin_roots) ${WPI[pid_proxy]} ${WPI[pid_docroot]}"
	local prev cur i
	prev=$(tree_ticks "${roots[@]}")
	for ((i = 0; i < 40; i++)); do
		sleep 0.5
		cur=$(tree_ticks "${roots[@]}")
		((cur - prev <= 1)) && break
		prev=$cur
	done
	((i < 40)) || warn "WordPress: PHP still busy 20 s after the load stopped"
	((i < 2)) || log "  (waited $(((i + 1) * 500)) ms for requests queued by the load to finish)"
}

wp_curl() { # URL BODY HEADERS [ARGS...] -> "code seconds"
	local url=$1 body=$2 hdr=$3
	shift 3
	"$TASKSET" -c "$LOAD_CPU" curl -s -o "$body" -D "$hdr" --max-time 30 -H "Host: ${WPI[host]}" "$@" \
		-w '%{http_code} %{time_total}' "$url" || echo "000 0"
}

wp_cache_status() { grep -i '^Cache-Status:' "$1" | tr -d '\r' | cut -d: -f2- | sed 's/^ //'; }
wp_is_hit() { wp_cache_status "$1" | grep -qiE '(^|[;,[:space:]])hit([;,[:space:]]|$)'; }

wp_cookie_args() { # CONTENDER -> curl/wrk arguments: the bypass cookie for the uncached docroot rows
	case $1 in fpmck | rjdocld) printf '%s\n' -H "Cookie: $WP_BYPASS_COOKIE" ;; esac
	return 0
}

# wp_check CONTENDER PAGE: 200, a WordPress page of ours (RJ-PAGE; the post
# title on the post), for "cached" a confirmed hit with the origin's bytes,
# for the bypass-cookie rows no hit
wp_check() {
	local c=$1 page=$2 url st=ok r i
	local -a ck
	url=$(wp_url "$c" "$page")
	mapfile -t ck < <(wp_cookie_args "$c")
	r=$(wp_curl "$(wp_url fpm "$page")" "$WORK/wp-ref" "$WORK/wp-ref-h")
	if [[ ${r%% *} != 200 ]]; then
		st="origin status ${r%% *}"
	elif ((${#ck[@]})); then
		r=$(wp_curl "$url" "$WORK/wp-body" "$WORK/wp-h" "${ck[@]}")
		r=$(wp_curl "$url" "$WORK/wp-body" "$WORK/wp-h" "${ck[@]}") # twice: the second must not be a hit
		if [[ ${r%% *} != 200 ]]; then
			st="status ${r%% *}"
		elif wp_is_hit "$WORK/wp-h"; then
			st="served from the cache ($(wp_cache_status "$WORK/wp-h"))"
		fi
	elif [[ $c == cached ]]; then
		for ((i = 1; i <= 20; i++)); do
			r=$(wp_curl "$url" "$WORK/wp-body" "$WORK/wp-h")
			wp_is_hit "$WORK/wp-h" && break
			sleep 0.2
		done
		if ! wp_is_hit "$WORK/wp-h"; then
			st="HIT NOT CONFIRMED ($(wp_cache_status "$WORK/wp-h"))"
		elif ! cmp -s "$WORK/wp-body" "$WORK/wp-ref"; then
			st="body differs from the origin's"
		fi
	else
		cp "$WORK/wp-ref" "$WORK/wp-body"
		cp "$WORK/wp-ref-h" "$WORK/wp-h"
	fi
	if [[ $st == ok ]]; then
		if ! head -n1 "$WORK/wp-h" | grep -q ' 200'; then
			st="status $(head -n1 "$WORK/wp-h" | tr -d '\r' | cut -d' ' -f2-)"
		elif ! grep -q 'RJ-PAGE' "$WORK/wp-body"; then
			st="not a page of the bench site"
		elif [[ $page == post ]] && ! grep -qF "${WPI[post_title]}" "$WORK/wp-body"; then
			st="post title missing"
		elif grep -q '<esi:' "$WORK/wp-body"; then
			st="ESI markup left"
		fi
	fi
	WP_BODY[$c.$page]=$(wc -c <"$WORK/wp-body" 2>/dev/null || echo 0)
	[[ $c == cached && $st == ok ]] && st=hit
	WP_CHECK[$c.$page]=$st
	if [[ $st != ok && $st != hit ]]; then
		warn "WordPress $c $page: check failed: $st; headers:"
		sed 's/^/    /' "$WORK/wp-h" >&2 || true
	fi
}

# ---------------------------------------------------------------- load
# wp_load ROUND PAGE CONTENDER: wrk -c$WP_CONNS for $DURATION
wp_load() {
	local round=$1 page=$2 c=$3 url out
	local -a ck
	url=$(wp_url "$c" "$page")
	mapfile -t ck < <(wp_cookie_args "$c")
	wp_settle
	wp_check "$c" "$page"
	"$TASKSET" -c "$LOAD_CPU" timeout 300 "$WRK" -t1 -c"$WP_CONNS" -d"$WARMUP" --timeout "$WP_TIMEOUT" \
		-H "Host: ${WPI[host]}" "${ck[@]}" "$url" >/dev/null 2>&1 || true
	wp_settle

	out="$WORK/wrk/wp-r$round-$page-$c.txt"
	local -a roots oroots
	read -ra roots <<<"$(wp_cpu_roots "$c")"
	read -ra oroots <<<"$(wp_origin_roots)"
	local s0 s1 l0 l1 t0 t1 o0 o1
	s0=$(core_ticks "$SERVER_CPU")
	l0=$(core_ticks "$LOAD_CPU")
	t0=$(tree_ticks "${roots[@]}")
	o0=$(tree_ticks "${oroots[@]}")
	local -a cmd=("$TASKSET" -c "$LOAD_CPU" timeout 900 "$WRK" -t1 -c"$WP_CONNS" -d"$DURATION" --timeout "$WP_TIMEOUT"
		--latency -H "Host: ${WPI[host]}" "${ck[@]}" "$url")
	"${cmd[@]}" >"$out" 2>&1 || true
	t1=$(tree_ticks "${roots[@]}")
	o1=$(tree_ticks "${oroots[@]}")
	s1=$(core_ticks "$SERVER_CPU")
	l1=$(core_ticks "$LOAD_CPU")

	local rps reqs p50 p99 errs tmo cpu_us origin_ms
	wrk_result "$out" "WordPress $c $page" $((t1 - t0))
	tmo=$(awk '/Socket errors:/ {gsub(/,/, ""); print $10 + 0}' "$out")
	origin_ms=$(awk -v d=$((o1 - o0)) -v hz="$CLK_TCK" 'BEGIN {printf "%.0f", d * 1000 / hz}')
	local sbusy lbusy other
	sbusy=$(busy_pct "$s0" "$s1")
	lbusy=$(busy_pct "$l0" "$l1")
	other=$(busy_pct "$s0" "$s1" $((t1 - t0)))
	[[ $c == cached ]] && other=$(busy_pct "$s0" "$s1" $((t1 - t0 + o1 - o0)))
	row wp "$round" "$page" "$c" rps:="$rps" p50_ms:="$p50" p99_ms:="$p99" cpu_us:="$cpu_us" requests:="$reqs" \
		errors:="$errs" timeouts:="${tmo:-0}" origin_cpu_ms:="$origin_ms" server_busy_pct:="$sbusy" load_busy_pct:="$lbusy" \
		other_pct:="$other" check="${WP_CHECK[$c.$page]}" bytes:="${WP_BODY[$c.$page]}" cmd="$(quoted "${cmd[@]}")"
	log "  $(printf '%-8s %-4s %9s req/s  p50 %8s ms  p99 %8s ms  %8s us/req  %s req  err %s (timeouts %s)  origin CPU %s ms  cores %s%%/%s%% (other %s%%)  [%s]' \
		"$c" "$page" "$rps" "$p50" "$p99" "$cpu_us" "$reqs" "$errs" "${tmo:-0}" "$origin_ms" "$sbusy" "$lbusy" "$other" "${WP_CHECK[$c.$page]}")"
}

# ---------------------------------------------------------------- miss latency
# wp_miss PAGE: WP_MISS_N rounds of one request at a time (curl, a new
# connection each), with a cookie that bypasses ramjet's cache
# (bypass_cookies: wordpress_logged_in_*; WordPress finds it invalid and
# renders the anonymous page), through each path in turn
wp_miss() {
	local page=$1 i k c r st
	local -a cs=(rjdoc fpm rjproxy) order
	# warm every PHP worker (php-cgi workers each have their own opcache)
	for c in "${cs[@]}"; do
		"$TASKSET" -c "$LOAD_CPU" timeout 60 "$WRK" -t1 -c8 -d"$WARMUP" --timeout "$WP_TIMEOUT" -H "Host: ${WPI[host]}" \
			-H "Cookie: $WP_BYPASS_COOKIE" "$(wp_url "$c" "$page")" >/dev/null 2>&1 || true
		wp_settle
	done
	declare -A bad=()
	for ((i = 0; i < WP_MISS_N; i++)); do
		order=()
		for ((k = 0; k < ${#cs[@]}; k++)); do order+=("${cs[$(((k + i) % ${#cs[@]}))]}"); done
		for c in "${order[@]}"; do
			r=$(wp_curl "$(wp_url "$c" "$page")" "$WORK/wp-mbody" "$WORK/wp-mh" -H "Cookie: $WP_BYPASS_COOKIE")
			st=ok
			if [[ ${r%% *} != 200 ]]; then
				st="status ${r%% *}"
			elif ! grep -q 'RJ-PAGE' "$WORK/wp-mbody"; then
				st="not a page of the bench site"
			elif [[ $c != fpm ]] && wp_is_hit "$WORK/wp-mh"; then
				st="served from the cache"
			fi
			if ((i == 0)) && [[ $c != fpm ]]; then
				log "  $page $c: Cache-Status: $(wp_cache_status "$WORK/wp-mh")"
			fi
			if [[ $st == ok ]]; then
				row wpmiss "$((i + 1))" "$page" "$c" time_ms:="$(awk -v s="${r#* }" 'BEGIN {printf "%.3f", s * 1000}')"
			else
				bad[$c]=$st
			fi
		done
	done
	for c in "${cs[@]}"; do
		WP_CHECK[miss.$page.$c]=${bad[$c]:-ok}
		[[ -z ${bad[$c]:-} ]] || warn "WordPress miss $page $c: ${bad[$c]}"
	done
}

# ---------------------------------------------------------------- pool memory
# wp_memory: after the load rounds, what each PHP server's processes hold:
# ramjet docroot's php-cgi master and children, php-fpm's master and
# children (RSS counts shared pages in every process, PSS splits them)
wp_memory() {
	local -a rj fp
	mapfile -t rj < <(all_descendants "${WPI[pid_docroot]}" | grep -vx "${WPI[pid_docroot]}")
	mapfile -t fp < <(all_descendants "${WPI[pid_php-fpm8.2]}")
	local r f
	r=$(mem_kb "${rj[@]}")
	f=$(mem_kb "${fp[@]}")
	WP_MEM_NOTE="ramjet docroot's PHP processes (${#rj[@]}: php-cgi master and children) $(kb_mib "${r#* }") MiB PSS ($(kb_mib "${r%% *}") MiB RSS); php-fpm's (${#fp[@]}: master and children) $(kb_mib "${f#* }") MiB PSS ($(kb_mib "${f%% *}") MiB RSS)"
	log "  pool memory after the load: $WP_MEM_NOTE"
}

kb_mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }

# ---------------------------------------------------------------- the section
wp_section() {
	WP_SKIP=$(wp_missing)
	if [[ -n $WP_SKIP ]]; then
		warn "WordPress group skipped: $WP_SKIP"
		record kind=group group=wp skip="$WP_SKIP"
		return 0
	fi
	if ! wp_start; then
		warn "WordPress group skipped: $WP_SKIP"
		record kind=group group=wp skip="$WP_SKIP"
		wp_stop
		stop_all
		return 0
	fi
	local round page c
	local -a cs=(fpm cached) order
	if ((WP_DOCROOT_LOAD)); then cs+=(rjdocld fpmck); fi
	for ((round = 1; round <= ROUNDS; round++)); do
		for page in "${WP_PAGES[@]}"; do
			mapfile -t order < <(rotated "$round" "${cs[@]}")
			log "WordPress round $round/$ROUNDS, page $page: ${order[*]}"
			for c in "${order[@]}"; do
				wp_load "$round" "$page" "$c"
				sleep 1
			done
		done
	done
	wp_memory
	if ((WP_MISS_N > 0)); then
		for page in "${WP_PAGES[@]}"; do
			log "WordPress miss latency, page $page: $WP_MISS_N sequential requests per path"
			wp_miss "$page"
		done
	fi
	wp_stop
	stop_all
	wp_group_record
}

# wp_group_record: the group's settings and what the harness reported
wp_group_record() {
	local -a miss=()
	local k
	for k in "${!WP_CHECK[@]}"; do
		[[ $k == miss.* ]] && miss+=("miss_$(tr . _ <<<"${k#miss.}")=${WP_CHECK[$k]}")
	done
	record kind=group group=wp pages="${WP_PAGES[*]}" conns="$WP_CONNS" conns_less_one="$((WP_CONNS - 1))" \
		timeout="$WP_TIMEOUT" docroot_load="$WP_DOCROOT_LOAD" miss_n="$WP_MISS_N" bypass_cookie="$WP_BYPASS_COOKIE" \
		wp_version="$(dpkg-query -W -f='${Version}' wordpress 2>/dev/null || echo "?")" \
		db_version="$(/usr/sbin/mariadbd --version 2>/dev/null | awk '{print $3}' || echo "?")" \
		setup_note="$WP_SETUP_NOTE" posts="${WPI[posts]:-?}" home="${WPI[home]}" post="${WPI[post]}" host="${WPI[host]}" \
		home_bytes="${WP_BODY[fpm.home]:-?}" post_bytes="${WP_BODY[fpm.post]:-?}" php_workers="${WPI[php_workers]:-4}" \
		mem_note="$WP_MEM_NOTE" php_ini="${WPI[php_ini]:-}" \
		"${miss[@]}"
}
