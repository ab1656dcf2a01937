# bench/php.bash — the PHP section of bench/run (sourced by it; not run on
# its own): ramjet in docroot mode (its own php-cgi pool) against nginx +
# php-fpm on uncached PHP pages, and the latency of a request that has to
# resume a SIGSTOPped worker. See bench/README.md, "PHP section".
#
# Uses from bench/run: WORK ROOT TASKSET WRK NGINX PHPFPM PHPCGI SERVER_CPU
# LOAD_CPU DURATION WARMUP ROUNDS QUICK CLK_TCK SKIP_RAMJET ROOTPID
# STARTED_PIDS CONFIG_GROUP, and log warn die record row quoted config_record
# pick_port wait_listen start_bg all_descendants core_ticks busy_pct to_ms
# nginx_common nginx_sendfile stop_all.

# shellcheck disable=SC2153,SC2034 # ROOT, WORK and the rest are set by bench/run; what this file sets, bench/run and its other parts read
PHP_WORKERS=${BENCH_PHP_WORKERS:-4}
PHP_MAXREQ=${BENCH_PHP_MAX_REQUESTS:-0}
PHP_OPCACHE=${BENCH_PHP_OPCACHE:-1}
PHP_CONNS=${BENCH_PHP_CONNS:-50}
PHP_ALL_PAGES=(hello phpinfo sleep30k)
PHP_PAGES=()
PHP_CONTENDERS=()
PHP_RESUME_ROUNDS=""
PHP_RESUME_SUSPEND=200ms
PHP_RESUME_STATUS=""
PHP_RESUME_DONE=""
PHP_INI_NOTE=""
PHP_OPCACHE_NOTE=""
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

	# One php.ini for both: Debian's php-fpm php.ini (php-cgi's own is the
	# same file today, but each SAPI reads its own); php-fpm gets it with
	# -c, ramjet with php.ini_file. Outside the docroot, which would serve it.
	mkdir -p "$WORK/phpini"
	cp "$(php_fpm_ini)" "$WORK/phpini/php.ini"
	chmod 755 "$WORK/phpini"
	chmod 644 "$WORK/phpini/php.ini"

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
	CONFIG_GROUP=php
	config_record nginx-php "$WORK/nginx-php.conf" nginx "nginx + php-fpm (front)" \
		"\`worker_processes 1\`, Debian's \`snippets/fastcgi-php.conf\` parameters, one FastCGI connection per request to a unix socket, \`access_log off\`" \
		"as Debian sets nginx up for PHP: a php-fpm child serves one connection at a time, so kept FastCGI connections would hold children idle while requests wait"
	config_record php-fpm-php "$WORK/php-fpm-php.conf" ini "nginx + php-fpm (PHP)" \
		"\`pm = static\`, \`pm.max_children = $PHP_WORKERS\`, \`pm.max_requests = $PHP_MAXREQ\`, opcache $( ((PHP_OPCACHE)) && echo on || echo off), no access log" \
		"a fixed pool (pm = static) of as many children as ramjet's workers: no spawning or reaping under load, the usual choice for a dedicated PHP server"
	config_record ramjet-php "$WORK/ramjet-php.yaml" yaml "ramjet docroot (php-cgi pool)" \
		"\`workers: $PHP_WORKERS\`, \`min_workers: $PHP_WORKERS\`, \`idle_suspend: 0s\`, \`max_requests: $PHP_MAXREQ_RJ\`, \`default_ttl: 0s\`, \`ini_file\` = php-fpm's php.ini, the shared engine (one php-cgi master, one opcache)" \
		"the same worker count, recycling and php.ini as php-fpm, nothing cached"
	CONFIG_GROUP=cache
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
      ini_file: $WORK/phpini/php.ini
      workers: $PHP_WORKERS
      min_workers: $PHP_WORKERS
      max_requests: $PHP_MAXREQ_RJ
      idle_suspend: $1
      idle_exit: 0s
      ini: ["opcache.enable=$PHP_OPCACHE"]
EOF
}

php_fpm_ini() { # the php.ini Debian's php-fpm reads
	local f
	for f in /etc/php/*/fpm/php.ini; do :; done
	[[ -f $f ]] || die "no /etc/php/*/fpm/php.ini (install php-fpm)"
	echo "$f"
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
		-c "$WORK/phpini/php.ini" -d "opcache.enable=$PHP_OPCACHE"
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

php_php_roots() { # CONTENDER -> the roots of the PHP processes alone: ramjet's children (its php-cgi master, or its workers); the php-fpm master
	# (roots only: tree_ticks adds their descendants, which listing the
	# master's children too would count twice)
	case $1 in
	rjphp) cat /proc/"${ROOTPID[rjphp]}"/task/*/children 2>/dev/null | tr -s ' \n' ' ' ;;
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
	local -a cmd=("$TASKSET" -c "$LOAD_CPU" timeout 600 "$WRK" -t1 -c"$PHP_CONNS" -d"$DURATION" --latency "$url")
	local -a roots phproots
	read -ra roots <<<"$(php_cpu_roots "$c")"
	read -ra phproots <<<"$(php_php_roots "$c")"
	local s0 s1 l0 l1 t0 t1 q0 q1 n0 n1
	n0=$(php_served "$c")
	s0=$(core_ticks "$SERVER_CPU")
	l0=$(core_ticks "$LOAD_CPU")
	t0=$(tree_ticks "${roots[@]}")
	q0=$(tree_ticks "${phproots[@]}")
	"${cmd[@]}" >"$out" 2>&1 || true
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
	nw=$((nw - 1)) # the master: php-fpm's, and ramjet's shared engine's
	pool=$(mem_kb "${pp[@]}")
	front=$(mem_kb "${fp[@]}")
	local sbusy lbusy other
	sbusy=$(busy_pct "$s0" "$s1")
	lbusy=$(busy_pct "$l0" "$l1")
	other=$(busy_pct "$s0" "$s1" $((t1 - t0)))
	row php "$round" "$page" "$c" rps:="$rps" p50_ms:="$p50" p99_ms:="$p99" cpu_us:="$cpu_us" php_cpu_us:="$php_us" \
		requests:="$reqs" errors:="$errs" rss_kb:="${pool%% *}" pss_kb:="${pool#* }" front_rss_kb:="${front%% *}" \
		php_calls:="$calls" check="${PHP_CHECK[$c.$page]}" server_busy_pct:="$sbusy" load_busy_pct:="$lbusy" \
		other_pct:="$other" workers:="$nw" bytes:="${PHP_BODY[$c.$page]}" cmd="$(quoted "${cmd[@]}")" \
		config="$([[ $c == rjphp ]] && echo ramjet-php || echo nginx-php)"
	log "  $(printf '%-6s %-8s %9s req/s  p50 %7s ms  p99 %8s ms  %7s us/req  pool %s kB (%s workers)  calls/req %s  err %s  cores %s%%/%s%% (other %s%%)  [%s]' \
		"$c" "$page" "$rps" "$p50" "$p99" "$cpu_us" "${pool%% *}" "$nw" "$calls" "$errs" "$sbusy" "$lbusy" "$other" "${PHP_CHECK[$c.$page]}")"
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
		row resume "$r" cold rjres time_ms:="$(awk -v s="${cold#* }" 'BEGIN {printf "%.3f", s * 1000}')" \
			cmd="$(quoted curl -s -o /dev/null --max-time 10 -w '%{http_code} %{time_total}' "$url")"
		row resume "$r" warm rjres time_ms:="$(awk -v s="${warm#* }" 'BEGIN {printf "%.3f", s * 1000}')"
		ok=$((ok + 1))
	done
	PHP_RESUME_STATUS=$(php_admin rjres /php/status | jq -c '[.pools[] | {resume_p50_ms, resume_p99_ms, resumes: .counts.resumes, crashes: .counts.crashes, spawns: .counts.spawns}][0]' 2>/dev/null || echo "")
	((skipped == 0)) || warn "resume latency: $skipped of $n rounds skipped (workers not all suspended within 5 s, or a request failed)"
	PHP_RESUME_DONE="$ok of $n rounds measured"
	log "  $PHP_RESUME_DONE; ramjet's own: $PHP_RESUME_STATUS"
}

# ---------------------------------------------------------------- the section
# php_section: the servers, wrk on every page (RUN_PHP), ab and siege
# (RUN_PHPTOOLS, bench/phptools.bash), the resume test (RUN_PHP)
php_section() {
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
	if ((RUN_PHP)); then php_group_record; fi
}

# php_group_record: the section's settings and notes for the report
php_group_record() {
	local p50="" p99=""
	if [[ -n $PHP_RESUME_STATUS ]]; then
		p50=$(jq -r '.resume_p50_ms // "?"' <<<"$PHP_RESUME_STATUS" 2>/dev/null || echo "?")
		p99=$(jq -r '.resume_p99_ms // "?"' <<<"$PHP_RESUME_STATUS" 2>/dev/null || echo "?")
	fi
	record kind=group group=php pages="${PHP_PAGES[*]}" workers="$PHP_WORKERS" conns="$PHP_CONNS" opcache="$PHP_OPCACHE" \
		recycle="$(php_recycle_note)" opcache_note="$PHP_OPCACHE_NOTE" ini_note="$PHP_INI_NOTE" \
		resume_suspend="$PHP_RESUME_SUSPEND" resume_done="$PHP_RESUME_DONE" resume_status="$PHP_RESUME_STATUS" \
		resume_p50="$p50" resume_p99="$p99"
}

# ---------------------------------------------------------------- report
php_recycle_note() {
	if ((PHP_MAXREQ > 0)); then
		echo "both recycling a worker after $PHP_MAXREQ requests (ramjet \`max_requests\`, php-fpm \`pm.max_requests\`)"
	else
		echo "no recycling (php-fpm \`pm.max_requests = 0\`, its default; ramjet \`max_requests: $PHP_MAXREQ_RJ\`, as it has no \"never\"; \`BENCH_PHP_MAX_REQUESTS=500\` measures ramjet's default recycling on both)"
	fi
}
