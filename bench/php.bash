# bench/php.bash — the PHP section of bench/run (sourced by it; not run on
# its own): ramjet in docroot mode (its own php-cgi pool) against nginx +
# php-fpm on uncached PHP pages, and the latency of a request that has to
# resume a SIGSTOPped worker. See bench/README.md, "PHP section".
#
# Uses from bench/run: WORK ROOT TASKSET WRK NGINX PHPFPM PHPCGI SERVER_CPU
# LOAD_CPU DURATION WARMUP ROUNDS QUICK CLK_TCK SKIP_RAMJET ROOTPID
# STARTED_PIDS, and log warn die pick_port wait_listen start_bg
# all_descendants core_ticks busy_pct to_ms nginx_common stop_all.

# shellcheck disable=SC2153 # ROOT, WORK and the rest are set by bench/run
PHP_WORKERS=${BENCH_PHP_WORKERS:-4}
PHP_MAXREQ=${BENCH_PHP_MAX_REQUESTS:-0}
PHP_OPCACHE=${BENCH_PHP_OPCACHE:-1}
PHP_CONNS=${BENCH_PHP_CONNS:-50}
PHP_ALL_PAGES=(hello phpinfo sleep30k)
PHP_PAGES=()
PHP_CONTENDERS=()
PHP_RESUME_ROUNDS=""
PHP_RESUME_SUSPEND=200ms
PHP_TSV=""
PHP_RESUME_TSV=""
PHP_RESUME_STATUS=""
PHP_RESUME_DONE=""
PHP_INI_NOTE=""
PHP_OPCACHE_NOTE=""
declare -A PHP_LABEL=(
	[rjphp]="ramjet docroot (php-cgi pool)"
	[fpm]="nginx + php-fpm"
)
declare -A PHP_CHECK=()
declare -A PHP_BODY=()

php_validate_env() {
	[[ $PHP_WORKERS =~ ^[1-9][0-9]*$ ]] || die "BENCH_PHP_WORKERS must be a positive integer, got $PHP_WORKERS"
	[[ $PHP_MAXREQ =~ ^(0|[1-9][0-9]*)$ ]] || die "BENCH_PHP_MAX_REQUESTS must be a number (0: no recycling), got $PHP_MAXREQ"
	# ramjet's max_requests has no "never" (it must be >= 1): 0 becomes a
	# million there, far more than one run serves
	PHP_MAXREQ_RJ=$PHP_MAXREQ
	((PHP_MAXREQ > 0)) || PHP_MAXREQ_RJ=1000000
	[[ $PHP_OPCACHE == 0 || $PHP_OPCACHE == 1 ]] || die "BENCH_PHP_OPCACHE must be 0 or 1, got $PHP_OPCACHE"
	[[ $PHP_CONNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_PHP_CONNS must be a positive integer, got $PHP_CONNS"
	if ((QUICK)); then
		PHP_RESUME_ROUNDS=${BENCH_PHP_RESUME_ROUNDS:-20}
	else
		PHP_RESUME_ROUNDS=${BENCH_PHP_RESUME_ROUNDS:-50}
	fi
	[[ $PHP_RESUME_ROUNDS =~ ^[0-9]+$ ]] || die "BENCH_PHP_RESUME_ROUNDS must be a number, got $PHP_RESUME_ROUNDS"
	local p
	for p in ${BENCH_PHP_PAGES:-${PHP_ALL_PAGES[*]}}; do
		[[ " ${PHP_ALL_PAGES[*]} " == *" $p "* ]] || die "BENCH_PHP_PAGES: unknown page $p (${PHP_ALL_PAGES[*]})"
		PHP_PAGES+=("$p")
	done
	((${#PHP_PAGES[@]})) || die "BENCH_PHP_PAGES selects no page"
	if [[ $SKIP_RAMJET == 1 ]]; then PHP_CONTENDERS=(fpm); else PHP_CONTENDERS=(rjphp fpm); fi
}

# ---------------------------------------------------------------- content and configs
php_write_configs() {
	local dir=$WORK/phproot
	mkdir -p "$dir" "$WORK/tmp/nginx-php" "$WORK/logs" "$WORK/run" "$WORK/wrk"
	cp "$ROOT"/bench/php/{hello,phpinfo,sleep30k,check}.php "$dir/"
	chmod 755 "$dir"
	chmod 644 "$dir"/*.php
	# what sleep30k.php prints
	local line='0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.' i
	for ((i = 0; i < 480; i++)); do printf '%s\n' "$line"; done >"$WORK/expect-sleep30k"
	printf 'Hello, World!' >"$WORK/expect-hello"
	[[ $(wc -c <"$WORK/expect-sleep30k") -eq 30720 ]] || die "expected sleep30k body is not 30720 bytes"

	local user_lines=""
	[[ $EUID -eq 0 ]] && user_lines=$'user = www-data\ngroup = www-data'
	cat >"$WORK/php-fpm-php.conf" <<EOF
[global]
pid = $WORK/run/php-fpm-php.pid
error_log = $WORK/logs/php-fpm-php.log
daemonize = no

[php]
$user_lines
listen = $WORK/run/php-fpm-php.sock
listen.mode = 0666
pm = static
pm.max_children = $PHP_WORKERS
pm.max_requests = $PHP_MAXREQ
pm.status_path = /__fpm_status
EOF

	# nginx + php-fpm as Debian sets it up (snippets/fastcgi-php.conf and
	# fastcgi.conf): one FastCGI connection per request to a unix socket
	{
		nginx_common php
		cat <<EOF
    server {
        listen 127.0.0.1:$P_PHP_NGINX;
        root $WORK/phproot;
        index index.php;
        location ~ \.php\$ {
            try_files \$uri =404;
$(php_fastcgi_params)
            fastcgi_pass unix:$WORK/run/php-fpm-php.sock;
        }
        location = /__fpm_status {
            allow 127.0.0.1; deny all;
$(php_fastcgi_params)
            fastcgi_pass unix:$WORK/run/php-fpm-php.sock;
        }
    }
}
EOF
	} >"$WORK/nginx-php.conf"

	# ramjet: docroot mode, nothing cached (default_ttl 0 and PHP sends no
	# cache headers), the same worker count and recycling as php-fpm
	php_ramjet_conf 0s "$P_PHP_RJ" "$P_PHP_RJ_ADMIN" >"$WORK/ramjet-php.yaml"
}

php_ramjet_conf() { # IDLE_SUSPEND PORT ADMINPORT
	cat <<EOF
listen: 127.0.0.1:$2
admin:
  listen: 127.0.0.1:$3
defaults:
  default_ttl: 0s
  docroot:
    root: $WORK/phproot
    serve: all
    php:
      binary: $PHPCGI
      workers: $PHP_WORKERS
      min_workers: $PHP_WORKERS
      max_requests: $PHP_MAXREQ_RJ
      idle_suspend: $1
      idle_exit: 0s
      ini: ["opcache.enable=$PHP_OPCACHE"]
EOF
}

php_fastcgi_params() {
	cat <<'EOF'
            fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
            fastcgi_param QUERY_STRING $query_string;
            fastcgi_param REQUEST_METHOD $request_method;
            fastcgi_param CONTENT_TYPE $content_type;
            fastcgi_param CONTENT_LENGTH $content_length;
            fastcgi_param SCRIPT_NAME $fastcgi_script_name;
            fastcgi_param REQUEST_URI $request_uri;
            fastcgi_param DOCUMENT_URI $document_uri;
            fastcgi_param DOCUMENT_ROOT $document_root;
            fastcgi_param SERVER_PROTOCOL $server_protocol;
            fastcgi_param REQUEST_SCHEME $scheme;
            fastcgi_param HTTPS $https if_not_empty;
            fastcgi_param GATEWAY_INTERFACE CGI/1.1;
            fastcgi_param SERVER_SOFTWARE nginx/$nginx_version;
            fastcgi_param REMOTE_ADDR $remote_addr;
            fastcgi_param REMOTE_PORT $remote_port;
            fastcgi_param SERVER_ADDR $server_addr;
            fastcgi_param SERVER_PORT $server_port;
            fastcgi_param SERVER_NAME $server_name;
            fastcgi_param REDIRECT_STATUS 200;
EOF
}

# ---------------------------------------------------------------- servers
# ramjet gets a minimal environment (php-cgi inherits it and phpinfo()
# prints it; php-fpm clears its workers' environment).
php_start_ramjet() { # NAME CONFIG PORT ADMINPORT
	local name=$1 cfg=$2 port=$3 admin=$4
	log "starting ramjet docroot mode ($name) on 127.0.0.1:$port (admin $admin)"
	# setsid: its own session, so that no shell job control or orphaned
	# process group sends SIGHUP to the SIGSTOPped php-cgi workers
	start_bg "$name" "$WORK/logs/$name.log" setsid env -i PATH=/usr/local/bin:/usr/bin:/bin GOMAXPROCS=1 \
		"$WORK/ramjet" serve --config "$cfg"
	wait_listen "$name" "${ROOTPID[$name]}" "$port" "$WORK/logs/$name.log"
	wait_listen "$name admin" "${ROOTPID[$name]}" "$admin" "$WORK/logs/$name.log"
}

php_start_servers() {
	local n
	log "starting php-fpm for the PHP section ($PHP_WORKERS children, pm static)"
	local -a rflag=()
	[[ $EUID -eq 0 ]] && rflag=(-R)
	start_bg php-fpm-php "$WORK/logs/php-fpm-php.out" "$PHPFPM" "${rflag[@]}" -F -y "$WORK/php-fpm-php.conf" \
		-d "opcache.enable=$PHP_OPCACHE"
	for ((n = 0; n < 100; n++)); do
		[[ -S $WORK/run/php-fpm-php.sock ]] && break
		kill -0 "${ROOTPID[php-fpm-php]}" 2>/dev/null || { cat "$WORK/logs/php-fpm-php.log" "$WORK/logs/php-fpm-php.out" >&2 2>/dev/null || true; die "php-fpm exited"; }
		sleep 0.1
	done
	[[ -S $WORK/run/php-fpm-php.sock ]] || die "php-fpm socket did not appear"
	"$NGINX" -t -q -p "$WORK" -e "$WORK/logs/nginx-php.error.log" -c "$WORK/nginx-php.conf" >&2 || die "nginx config php invalid"
	log "starting nginx-php on 127.0.0.1:$P_PHP_NGINX"
	start_bg nginx-php "$WORK/logs/nginx-php.out" "$NGINX" -p "$WORK" -e "$WORK/logs/nginx-php.error.log" -c "$WORK/nginx-php.conf"
	wait_listen nginx-php "${ROOTPID[nginx-php]}" "$P_PHP_NGINX" "$WORK/logs/nginx-php.error.log"
	if [[ $SKIP_RAMJET != 1 ]]; then
		php_start_ramjet rjphp "$WORK/ramjet-php.yaml" "$P_PHP_RJ" "$P_PHP_RJ_ADMIN"
	fi
}

# ---------------------------------------------------------------- helpers
php_url() { # CONTENDER PAGE
	local port=$P_PHP_NGINX
	[[ $1 == rjphp ]] && port=$P_PHP_RJ
	[[ $1 == rjres ]] && port=$P_PHP_RES
	echo "http://127.0.0.1:$port/$2.php"
}


mem_kb() { # PIDS... -> "RSS PSS" summed, kB (PSS splits shared pages among their users)
	local p k v rss=0 pss=0
	for p in "$@"; do
		while read -r k v _; do
			case $k in
			Rss:) rss=$((rss + v)) ;;
			Pss:) pss=$((pss + v)) ;;
			esac
		done 2>/dev/null <"/proc/$p/smaps_rollup" || true
	done
	echo "$rss $pss"
}

php_pool_pids() { # CONTENDER -> the PHP processes: ramjet's php-cgi children; php-fpm master and children
	local root
	case $1 in
	rjphp | rjres)
		root=${ROOTPID[$1]}
		all_descendants "$root" | grep -vx "$root" || true
		;;
	fpm) all_descendants "${ROOTPID[php-fpm-php]}" ;;
	esac
}
php_front_pids() { # CONTENDER -> the web server in front: ramjet itself; nginx master and worker
	case $1 in
	rjphp | rjres) echo "${ROOTPID[$1]}" ;;
	fpm) all_descendants "${ROOTPID[nginx-php]}" ;;
	esac
}
php_cpu_roots() {
	case $1 in
	rjphp) echo "${ROOTPID[rjphp]}" ;;
	fpm) echo "${ROOTPID[nginx-php]} ${ROOTPID[php-fpm-php]}" ;;
	esac
}

php_php_roots() { # CONTENDER -> the PHP processes alone: ramjet's php-cgi workers; the php-fpm tree
	case $1 in
	rjphp) php_pool_pids rjphp | tr '\n' ' ' ;;
	fpm) echo "${ROOTPID[php-fpm-php]}" ;;
	esac
}

php_admin() { # CONTENDER PATH -> body from ramjet's admin listener
	local port=$P_PHP_RJ_ADMIN
	[[ $1 == rjres ]] && port=$P_PHP_RES_ADMIN
	curl -s --max-time 5 "http://127.0.0.1:$port$2"
}

php_served() { # CONTENDER -> PHP requests served so far (ramjet: the pool's count; php-fpm: accepted conn)
	case $1 in
	rjphp) php_admin rjphp /php/status | jq '[.pools[].counts.requests] | add // 0' 2>/dev/null || echo "" ;;
	fpm)
		# one connection per request (no fastcgi_keep_conn); the status
		# request itself counts one
		curl -s --max-time 5 "http://127.0.0.1:$P_PHP_NGINX/__fpm_status" | awk -F': *' '/^accepted conn/ {print $2}'
		;;
	esac
}

# php_check CONTENDER PAGE: status 200, the expected body, no header that
# would let a cache keep it, and not a cache hit in ramjet
php_check() {
	local c=$1 page=$2 url st=ok n
	url=$(php_url "$c" "$page")
	for n in 1 2; do # twice: the second must not be a hit either
		if ! curl -s -o "$WORK/php-body" -D "$WORK/php-headers" --max-time 10 "$url"; then
			st="curl failed"
			break
		fi
	done
	if [[ $st == ok ]]; then
		if ! head -n1 "$WORK/php-headers" | grep -q ' 200'; then
			st="status $(head -n1 "$WORK/php-headers" | tr -d '\r' | cut -d' ' -f2-)"
		elif grep -qiE '^(cache-control|expires|x-litespeed-cache-control|surrogate-control):' "$WORK/php-headers"; then
			st="cache headers: $(grep -iE '^(cache-control|expires|x-litespeed-cache-control|surrogate-control):' "$WORK/php-headers" | tr -d '\r' | tr '\n' ' ')"
		elif [[ $c == rjphp ]] && grep -i '^Cache-Status:' "$WORK/php-headers" | grep -qiE '(^|[;,[:space:]])hit([;,[:space:]]|$)'; then
			st="cache hit"
		else
			case $page in
			hello | sleep30k) cmp -s "$WORK/php-body" "$WORK/expect-$page" || st="body differs" ;;
			phpinfo) grep -q 'PHP Version' "$WORK/php-body" && grep -q '</html>' "$WORK/php-body" || st="not a phpinfo page" ;;
			esac
		fi
	fi
	PHP_BODY[$c.$page]=$(wc -c <"$WORK/php-body" 2>/dev/null || echo 0)
	PHP_CHECK[$c.$page]=$st
	if [[ $st != ok ]]; then
		warn "$c $page: check failed: $st; headers:"
		sed 's/^/    /' "$WORK/php-headers" >&2 || true
	fi
	if [[ $c == rjphp && $page == hello ]]; then
		log "  ramjet Cache-Status on $page: $(grep -i '^Cache-Status:' "$WORK/php-headers" | tr -d '\r' | cut -d: -f2- | sed 's/^ //')"
	fi
}

# php_check_ini: the same php.ini settings and opcache state for php-cgi
# (ramjet) and php-fpm, read from check.php through each server
php_check_ini() {
	local c
	for c in "${PHP_CONTENDERS[@]}"; do
		curl -s --max-time 10 -o "$WORK/check-$c.txt" "$(php_url "$c" check)" || true
	done
	local fpmf=$WORK/check-fpm.txt
	PHP_OPCACHE_NOTE="php-fpm: opcache $(awk -F= '$1 == "opcache" {print $2}' "$fpmf"), JIT $(awk -F= '$1 == "jit" {print $2}' "$fpmf"), PHP runs as $(awk -F= '$1 == "user" {print $2}' "$fpmf")"
	if [[ $SKIP_RAMJET != 1 ]]; then
		local rjf=$WORK/check-rjphp.txt
		PHP_OPCACHE_NOTE="php-cgi (ramjet): opcache $(awk -F= '$1 == "opcache" {print $2}' "$rjf"), JIT $(awk -F= '$1 == "jit" {print $2}' "$rjf"), PHP runs as $(awk -F= '$1 == "user" {print $2}' "$rjf"); $PHP_OPCACHE_NOTE"
		local diffs nset
		nset=$(grep -c '^ini:' "$fpmf" || true)
		# keys only one SAPI has (cgi.check_shebang_line; fpm.config,
		# fastcgi.error_header) are listed apart; "differ" is a key both
		# have with another value
		local only
		diffs=$(awk 'FNR == 1 {f++} /^ini:/ {sub(/^ini:/, ""); k = $0; sub(/=.*/, "", k); v[f, k] = $0; seen[k] = seen[k] f}
			END {for (k in seen) if (seen[k] == "12" && v[1, k] != v[2, k]) print k}' "$rjf" "$fpmf" | sort | tr '\n' ' ' | sed 's/ $//' || true)
		only=$(awk 'FNR == 1 {f++} /^ini:/ {sub(/^ini:/, ""); sub(/=.*/, ""); seen[$0] = seen[$0] f}
			END {for (k in seen) if (seen[k] == "1") print k " (php-cgi only)"; else if (seen[k] == "2") print k " (php-fpm only)"}' "$rjf" "$fpmf" | sort | paste -sd, - | sed 's/,/, /g' || true)
		if [[ ! -s $rjf || ! -s $fpmf || $nset -eq 0 ]]; then
			PHP_INI_NOTE="**could not read the settings** (check.php failed)"
			warn "php.ini check: check.php gave no settings"
		elif [[ -z $diffs ]]; then
			PHP_INI_NOTE="identical for php-cgi and php-fpm ($nset settings of php-fpm compared with ini_get_all(); SAPI-specific: ${only:-none})"
		else
			PHP_INI_NOTE="**differ** in: $diffs ($nset settings of php-fpm compared with ini_get_all(); SAPI-specific: ${only:-none})"
			warn "php.ini settings differ between php-cgi and php-fpm: $diffs"
		fi
		if [[ $(awk -F= '$1 == "opcache" {print $2}' "$rjf") != "$(awk -F= '$1 == "opcache" {print $2}' "$fpmf")" ]]; then
			warn "opcache state differs: $PHP_OPCACHE_NOTE"
		fi
	else
		PHP_INI_NOTE="(ramjet not measured)"
	fi
	log "  $PHP_OPCACHE_NOTE"
	log "  php.ini: $PHP_INI_NOTE"
}

# ---------------------------------------------------------------- measuring
# php_settle CONTENDER: wait (at most 15 s) until the server's PHP request
# count stays put for 0.25 s: wrk ends with up to -c requests still queued
# for a worker, and these must not spill into the next measured run
php_settle() {
	local c=$1 prev cur i slack=0
	[[ $c == fpm ]] && slack=1 # the status request itself
	prev=$(php_served "$c")
	for ((i = 0; i < 60; i++)); do
		sleep 0.25
		cur=$(php_served "$c")
		[[ $prev =~ ^[0-9]+$ && $cur =~ ^[0-9]+$ ]] || return 0
		((cur - prev <= slack)) && break
		prev=$cur
	done
	((i < 60)) || warn "$c: PHP still busy 15 s after the load stopped"
	((i < 2)) || log "  ($c: waited $(((i + 1) * 250)) ms for requests queued by the load to finish)"
}

# php_measure ROUND PAGE CONTENDER
php_measure() {
	local round=$1 page=$2 c=$3 url out
	url=$(php_url "$c" "$page")
	local x
	for x in "${PHP_CONTENDERS[@]}"; do php_settle "$x"; done
	php_check "$c" "$page"
	"$TASKSET" -c "$LOAD_CPU" "$WRK" -t1 -c"$PHP_CONNS" -d"$WARMUP" "$url" >/dev/null 2>&1 || true
	php_settle "$c"

	out="$WORK/wrk/php-r$round-$page-$c.txt"
	local -a roots phproots
	read -ra roots <<<"$(php_cpu_roots "$c")"
	read -ra phproots <<<"$(php_php_roots "$c")"
	local s0 s1 l0 l1 t0 t1 q0 q1 n0 n1
	n0=$(php_served "$c")
	s0=$(core_ticks "$SERVER_CPU")
	l0=$(core_ticks "$LOAD_CPU")
	t0=$(tree_ticks "${roots[@]}")
	q0=$(tree_ticks "${phproots[@]}")
	"$TASKSET" -c "$LOAD_CPU" timeout 600 "$WRK" -t1 -c"$PHP_CONNS" -d"$DURATION" --latency "$url" >"$out" 2>&1 || true
	q1=$(tree_ticks "${phproots[@]}")
	t1=$(tree_ticks "${roots[@]}")
	s1=$(core_ticks "$SERVER_CPU")
	l1=$(core_ticks "$LOAD_CPU")
	n1=$(php_served "$c")

	local rps reqs p50 p99 errs cpu_us calls pool front nw php_us=0
	wrk_result "$out" "$c $page" $((t1 - t0))
	((reqs > 0)) && php_us=$(awk -v d=$((q1 - q0)) -v hz="$CLK_TCK" -v n="$reqs" 'BEGIN {printf "%.2f", d * 1e6 / hz / n}')
	calls="?"
	if [[ $n0 =~ ^[0-9]+$ && $n1 =~ ^[0-9]+$ ]] && ((reqs > 0)); then
		local d=$((n1 - n0))
		[[ $c == fpm ]] && d=$((d - 1)) # the status request
		calls=$(awk -v d="$d" -v n="$reqs" 'BEGIN {printf "%.2f", d / n}')
	fi
	local -a pp fp
	mapfile -t pp < <(php_pool_pids "$c")
	mapfile -t fp < <(php_front_pids "$c")
	nw=$((${#pp[@]}))
	[[ $c == fpm ]] && nw=$((nw - 1)) # the master
	pool=$(mem_kb "${pp[@]}")
	front=$(mem_kb "${fp[@]}")
	local sbusy lbusy other
	sbusy=$(busy_pct "$s0" "$s1")
	lbusy=$(busy_pct "$l0" "$l1")
	other=$(busy_pct "$s0" "$s1" $((t1 - t0)))
	# round page contender rps p50 p99 cpu reqs errs poolrss poolpss frontrss calls check sbusy lbusy other workers body phpcpu
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$round" "$page" "$c" "$rps" "$p50" "$p99" "$cpu_us" "$reqs" "$errs" "${pool%% *}" "${pool#* }" "${front%% *}" "$calls" \
		"${PHP_CHECK[$c.$page]}" "$sbusy" "$lbusy" "$other" "$nw" "${PHP_BODY[$c.$page]}" "$php_us" >>"$PHP_TSV"
	log "  $(printf '%-30s %-8s %9s req/s  p50 %7s ms  p99 %8s ms  %7s us/req  pool %s kB (%s workers)  calls/req %s  err %s  cores %s%%/%s%% (other %s%%)  [%s]' \
		"${PHP_LABEL[$c]}" "$page" "$rps" "$p50" "$p99" "$cpu_us" "${pool%% *}" "$nw" "$calls" "$errs" "$sbusy" "$lbusy" "$other" "${PHP_CHECK[$c.$page]}")"
}

# php_all_suspended -> 0 when ramjet's resume instance lists workers and
# every one is "suspended" there and in state T in /proc/PID/stat
php_all_suspended() {
	local -a lines
	mapfile -t lines < <(php_admin rjres /php/status | jq -r '.pools[].workers[] | "\(.pid) \(.state)"' 2>/dev/null)
	((${#lines[@]})) || return 1
	local l pid st line
	for l in "${lines[@]}"; do
		pid=${l%% *}
		st=${l#* }
		[[ $st == suspended ]] || return 1
		{ read -r line <"/proc/$pid/stat"; } 2>/dev/null || return 1
		line=${line##*) }
		[[ ${line%% *} == T ]] || return 1
	done
	return 0
}

# php_resume: ramjet with idle_suspend 200ms. Each round waits until every
# worker is suspended, times one request (it must resume a worker), then
# times the same request at once again (the worker just used is idle, not
# yet suspended).
php_resume() {
	local n=$PHP_RESUME_ROUNDS r i ok=0 skipped=0 cold warm
	((n > 0)) || return 0
	[[ $SKIP_RAMJET != 1 ]] || return 0
	PHP_RESUME_TSV="$WORK/php-resume.tsv"
	: >"$PHP_RESUME_TSV"
	# ports picked only now: php-cgi workers bind ephemeral loopback ports
	# (php-cgi -b 127.0.0.1:PORT) that a port picked earlier may collide with
	P_PHP_RES=$(pick_port)
	P_PHP_RES_ADMIN=$(pick_port)
	php_ramjet_conf "$PHP_RESUME_SUSPEND" "$P_PHP_RES" "$P_PHP_RES_ADMIN" >"$WORK/ramjet-resume.yaml"
	php_start_ramjet rjres "$WORK/ramjet-resume.yaml" "$P_PHP_RES" "$P_PHP_RES_ADMIN"
	local url
	url=$(php_url rjres hello)
	# start every worker once (min_workers), then let them all suspend
	curl -s -o /dev/null --max-time 10 "$url" || true
	log "resume latency: $n rounds of hello.php on a suspended worker, then on a warm one (idle_suspend $PHP_RESUME_SUSPEND)"
	for ((r = 1; r <= n; r++)); do
		for ((i = 0; i < 100; i++)); do # at most 5 s
			php_all_suspended && break
			sleep 0.05
		done
		if ((i == 100)); then
			skipped=$((skipped + 1))
			continue
		fi
		cold=$("$TASKSET" -c "$LOAD_CPU" curl -s -o /dev/null --max-time 10 -w '%{http_code} %{time_total}' "$url" || echo "000 0")
		warm=$("$TASKSET" -c "$LOAD_CPU" curl -s -o /dev/null --max-time 10 -w '%{http_code} %{time_total}' "$url" || echo "000 0")
		if [[ ${cold%% *} != 200 || ${warm%% *} != 200 ]]; then
			warn "resume round $r: status ${cold%% *}/${warm%% *}"
			skipped=$((skipped + 1))
			continue
		fi
		printf 'cold\t%s\nwarm\t%s\n' "${cold#* }" "${warm#* }" >>"$PHP_RESUME_TSV"
		ok=$((ok + 1))
	done
	PHP_RESUME_STATUS=$(php_admin rjres /php/status | jq -c '[.pools[] | {resume_p50_ms, resume_p99_ms, resumes: .counts.resumes, crashes: .counts.crashes, spawns: .counts.spawns}][0]' 2>/dev/null || echo "")
	((skipped == 0)) || warn "resume latency: $skipped of $n rounds skipped (workers not all suspended within 5 s, or a request failed)"
	PHP_RESUME_DONE="$ok of $n rounds measured"
	log "  $PHP_RESUME_DONE; ramjet's own: $PHP_RESUME_STATUS"
	local w
	for w in cold warm; do
		log "  $w: $(php_pctl "$w" | awk '{printf "p50 %s ms  p99 %s ms  max %s ms", $2, $3, $4}')"
	done
}

php_pctl() { # cold|warm -> "n p50 p99 max" (ms, nearest rank)
	awk -F'\t' -v w="$1" '$1 == w {print $2 * 1000}' "$PHP_RESUME_TSV" | sort -g | awk '
		{ v[++n] = $1 }
		END {
			if (n == 0) { print "0 – – –"; exit }
			i50 = int(0.5 * n); if (i50 < 0.5 * n) i50++
			i99 = int(0.99 * n); if (i99 < 0.99 * n) i99++
			printf "%d %.3f %.3f %.3f\n", n, v[i50], v[i99], v[n] }'
}

# ---------------------------------------------------------------- the section
# php_section: the servers, wrk on every page (RUN_PHP), ab and siege
# (RUN_PHPTOOLS, bench/phptools.bash), the resume test (RUN_PHP)
php_section() {
	PHP_TSV="$WORK/php-results.tsv"
	: >"$PHP_TSV"
	P_PHP_NGINX=$(pick_port)
	P_PHP_RJ=$(pick_port)
	P_PHP_RJ_ADMIN=$(pick_port)
	php_write_configs
	php_start_servers
	php_check_ini

	local round page
	local -a order
	for ((round = 1; round <= ROUNDS && RUN_PHP; round++)); do
		for page in "${PHP_PAGES[@]}"; do
			mapfile -t order < <(rotated "$round" "${PHP_CONTENDERS[@]}")
			log "PHP round $round/$ROUNDS, page $page: ${order[*]}"
			for c in "${order[@]}"; do
				php_measure "$round" "$page" "$c"
				sleep 1
			done
		done
	done
	if ((RUN_PHPTOOLS)); then phptools_runs; fi
	stop_all
	if ((RUN_PHP)); then php_resume; fi
	stop_all
}

# ---------------------------------------------------------------- report
php_recycle_note() {
	if ((PHP_MAXREQ > 0)); then
		echo "both recycling a worker after $PHP_MAXREQ requests (ramjet \`max_requests\`, php-fpm \`pm.max_requests\`)"
	else
		echo "no recycling (php-fpm \`pm.max_requests = 0\`, its default; ramjet \`max_requests: $PHP_MAXREQ_RJ\`, as it has no \"never\"; \`BENCH_PHP_MAX_REQUESTS=500\` measures ramjet's default recycling on both)"
	fi
}

php_report() {
	local tsv=$PHP_TSV
	cat <<EOF
### PHP: ramjet docroot mode against nginx + php-fpm (issue 5)

Nothing cached: every request runs PHP. $PHP_WORKERS PHP workers on each side (ramjet: \`workers: $PHP_WORKERS\`,
\`min_workers: $PHP_WORKERS\`, \`idle_suspend: 0s\`; php-fpm: \`pm = static\`, \`pm.max_children = $PHP_WORKERS\`),
$(php_recycle_note), \`-d opcache.enable=$PHP_OPCACHE\` on both. Load: \`wrk -t1 -c$PHP_CONNS -d$DURATION --latency\`.

- opcache: $PHP_OPCACHE_NOTE
- php.ini: $PHP_INI_NOTE

EOF
	awk -F'\t' -v rounds="$ROUNDS" -v L_rjphp="${PHP_LABEL[rjphp]}" -v L_fpm="${PHP_LABEL[fpm]}" -v pages="${PHP_PAGES[*]}" "$AWK_STATS"'
	{
		page = $2; c = $3; key = page SUBSEP c
		k = ++n[key]
		rps[key, k] = $4; p50[key, k] = $5; p99[key, k] = $6; cpu[key, k] = $7; phpc[key, k] = $20
		prss[key] = $10; ppss[key] = $11; frss[key] = $12; nw[key] = $18; body[key] = $19
		calls[key, k] = $13
		err[key] += $9
		if ($14 != "ok") note[key] = $14
		if ($17 + 0 > other[key]) other[key] = $17 + 0
		if ($16 + 0 > wrkb[key]) wrkb[key] = $16 + 0
	}
	END {
		label["rjphp"] = L_rjphp; label["fpm"] = L_fpm
		title["hello"] = "hello.php (Hello, World!)"; title["phpinfo"] = "phpinfo.php (phpinfo())"; title["sleep30k"] = "sleep30k.php (usleep 5 ms, 30720 B)"
		np = split(pages, pl, " ")
		print "| page | server | req/s (median) | req/s (min–max) | p50 ms | p99 ms | p99 ms (worst) | server CPU µs/req | of it PHP | of it the front | PHP pool RSS MiB (PSS) after the run | front RSS MiB | PHP calls/req | errors | body B | other load on server core, max % | wrk core busy, max % | check |"
		print "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
		split("rjphp fpm", cs, " ")
		for (p = 1; p <= np; p++) for (i = 1; i <= 2; i++) {
			c = cs[i]; key = pl[p] SUBSEP c
			if (!(key in n)) continue
			m = n[key]
			for (k = 1; k <= m; k++) { a[k] = rps[key, k]; b[k] = p50[key, k]; d[k] = p99[key, k]; e[k] = cpu[key, k]; g[k] = calls[key, k]; h[k] = phpc[key, k] }
			R[key] = median(a, m); P50[key] = median(b, m); P99[key] = median(d, m); CPU[key] = median(e, m); PHPC[key] = median(h, m)
			chk = (key in note) ? "**" note[key] "**" : "ok"
			printf "| %s | %s | %.0f | %.0f–%.0f | %.3f | %.3f | %.3f | %.1f | %.1f | %.1f | %.1f (%.1f), %d workers | %.1f | %s | %d | %d | %d | %d | %s |\n", title[pl[p]], label[c], R[key], minv(a, m), maxv(a, m), P50[key], P99[key], maxv(d, m), CPU[key], PHPC[key], CPU[key] - PHPC[key], prss[key] / 1024, ppss[key] / 1024, nw[key], frss[key] / 1024, (g[1] == "?" ? "?" : sprintf("%.2f", median(g, m))), err[key], body[key], other[key], wrkb[key], chk
		}
		print ""
		print "ramjet docroot against nginx + php-fpm (medians; req/s above 1 = ramjet faster, p99 and CPU/req below 1 = ramjet better):"
		print ""
		print "| page | req/s × | p99 × | CPU µs/req × | front CPU × | PHP pool RSS × | ceiling × | target (issue 5) | met |"
		print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"
		need["hello"] = 2.5; need["phpinfo"] = 1.3; need["sleep30k"] = 1.0
		for (p = 1; p <= np; p++) {
			r = pl[p] SUBSEP "rjphp"; f = pl[p] SUBSEP "fpm"
			tgt = (pl[p] == "sleep30k") ? "≥ 1.0× req/s, p99 ≤ 1.0×" : sprintf("≥ %.1f× req/s", need[pl[p]])
			if (!(r in n) || !(f in n)) { printf "| %s | – | – | – | – | – | – | %s | not measured |\n", title[pl[p]], tgt; continue }
			rr = (R[f] > 0) ? R[r] / R[f] : 0
			pr = (P99[f] > 0) ? P99[r] / P99[f] : 0
			cr = (CPU[f] > 0) ? CPU[r] / CPU[f] : 0
			fr = (CPU[f] - PHPC[f] > 0) ? (CPU[r] - PHPC[r]) / (CPU[f] - PHPC[f]) : 0
			mr = (prss[f] > 0) ? prss[r] / prss[f] : 0
			# what ramjet would reach if its own work cost nothing: the
			# contenders CPU per request over that of php-cgi alone (for
			# pages that keep the server core busy)
			ceil = (PHPC[r] > 0) ? CPU[f] / PHPC[r] : 0
			ok = (rr >= need[pl[p]])
			if (pl[p] == "sleep30k") ok = ok && (pr <= 1.0)
			printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %s | %s |\n", title[pl[p]], rr, pr, cr, fr, mr, ceil, tgt, (ok ? "yes" : "no")
		}
		print ""
		print "\"of it PHP\" is the CPU of the PHP processes alone (ramjet: its php-cgi workers; php-fpm: master and children), \"of it the front\" the rest (ramjet itself; nginx). \"ceiling ×\" is nginx + php-fpm CPU per request over php-cgi CPU per request: the req/s ratio ramjet would reach if its own work cost nothing, on a page where the server core is the limit."
		print ""
	}' "$tsv"
	if [[ -n $PHP_RESUME_TSV && -s $PHP_RESUME_TSV ]]; then
		local cold warm p50 p99
		read -r -a cold <<<"$(php_pctl cold)"
		read -r -a warm <<<"$(php_pctl warm)"
		p50=$(jq -r '.resume_p50_ms // "?"' <<<"$PHP_RESUME_STATUS" 2>/dev/null || echo "?")
		p99=$(jq -r '.resume_p99_ms // "?"' <<<"$PHP_RESUME_STATUS" 2>/dev/null || echo "?")
		cat <<EOF
#### Resume from SIGSTOP

ramjet with \`idle_suspend: $PHP_RESUME_SUSPEND\` ($PHP_WORKERS workers), hello.php, one request at a time with curl
(\`%{time_total}\`, a new connection each time): "suspended" waits before each request until every worker is
\`suspended\` in \`/php/status\` and in state T in \`/proc/PID/stat\`; "warm" repeats the request at once, on the
worker just used (idle, not yet suspended). $PHP_RESUME_DONE. p99 is the nearest rank: with fewer than 100
samples it is the maximum. ramjet's own figures come from a histogram, so they are bucket bounds.

| request | samples | p50 ms | p99 ms | max ms |
| --- | ---: | ---: | ---: | ---: |
| on a suspended worker (SIGCONT first) | ${cold[0]} | ${cold[1]} | ${cold[2]} | ${cold[3]} |
| on a warm idle worker | ${warm[0]} | ${warm[1]} | ${warm[2]} | ${warm[3]} |

ramjet's own measure (\`/php/status\`, SIGCONT to first output): resume_p50_ms $p50, resume_p99_ms $p99
(\`$PHP_RESUME_STATUS\`).

EOF
	elif ((PHP_RESUME_ROUNDS > 0)) && [[ $SKIP_RAMJET != 1 ]]; then
		printf '#### Resume from SIGSTOP\n\n_no round measured (see the log)._\n\n'
	fi
	echo "<details><summary>All PHP runs</summary>"
	echo
	echo "| round | page | server | req/s | p50 ms | p99 ms | CPU µs/req | requests | errors | PHP pool RSS MiB | PSS MiB | PHP calls/req | server core busy % | other load on server core % | wrk core busy % | check |"
	echo "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
	awk -F'\t' -v L_rjphp="${PHP_LABEL[rjphp]}" -v L_fpm="${PHP_LABEL[fpm]}" '
		BEGIN { label["rjphp"] = L_rjphp; label["fpm"] = L_fpm }
		{ printf "| %s | %s | %s | %.0f | %.3f | %.3f | %.2f | %s | %s | %.1f | %.1f | %s | %s | %s | %s | %s |\n", $1, $2, label[$3], $4, $5, $6, $7, $8, $9, $10 / 1024, $11 / 1024, $13, $15, $17, $16, $14 }' "$tsv"
	echo
	echo "</details>"
	echo
}
