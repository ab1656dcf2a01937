# bench/waf.bash — the WAF group of bench/run (sourced by it; not run on
# its own; issue 16): ramjet with its WAF (Coraza + the OWASP CRS v4,
# paranoia 1, block mode) against nginx + ModSecurity + the CRS from
# Debian's packages (libnginx-mod-http-modsecurity, modsecurity-crs;
# SecRuleEngine On), on the same 1 KiB page, pinned as the cache section's
# contenders are. Rows:
#   hit     the cached page: ramjet's WAF never runs on it; also ramjet
#           with the WAF off, for the ratio (and on the rows below, for
#           what the WAF adds to a request it inspects)
#   nocache the same page, uncacheable (the origin gives no freshness):
#           every request inspected, then fetched
#   query   the same with a benign query string (?s=hello+world&p=2)
#   post2k  a 2 KiB urlencoded form POSTed to a PHP script
# nginx + ModSecurity inspects every request of every row. The server's
# CPU per request counts everything on the request's way: ramjet, its
# origin nginx and php-fpm; nginx + ModSecurity and php-fpm. Then RSS of
# ramjet with the WAF on for 1 site and for 50 sites sharing the rule set.
# See bench/README.md, "WAF group".
#
# Uses from bench/run: WORK ROOT ROUNDS SKIP_RAMJET ROOTPID CONFIG_GROUP
# MEASURE_GROUP MEASURE_EXTRA WRK_EXTRA EXT EXTRA_PORT EXTRA_ROOT EXTRA_CONFIG
# URL_OF WARM_FN HIT_OK P_*, and log warn record config_record pick_port
# wait_listen start_bg start_php_fpm start_nginx write_configs make_page
# nginx_common fastcgi_php_params measure rotated rss_kb all_descendants stop_all.

# shellcheck disable=SC2153,SC2034 # ROOT, WORK and the rest are set by bench/run; what this file sets, bench/run and its other parts read
read -r -a WAF_ROWS <<<"${BENCH_WAF_ROWS:-hit nocache query post2k}"
WAF_MODSEC_MODULE=/usr/lib/nginx/modules/ngx_http_modsecurity_module.so
WAF_MODSEC_CONF=/etc/nginx/modsecurity.conf
WAF_CRS_SETUP=/etc/modsecurity/crs/crs-setup.conf
WAF_CRS_RULES=/usr/share/modsecurity-crs/rules
WAF_QUERY='s=hello+world&p=2'

# waf_missing: Debian packages the group needs that are not installed
waf_missing() {
	local -a m=()
	[[ -f $WAF_MODSEC_MODULE && -f $WAF_MODSEC_CONF ]] || m+=(libnginx-mod-http-modsecurity)
	[[ -f $WAF_CRS_SETUP && -d $WAF_CRS_RULES ]] || m+=(modsecurity-crs)
	echo "${m[*]}"
}

# waf_files: the page, the form and the PHP script both sides post it to
waf_files() {
	make_page 1024 "$WORK/www/page1k.html"
	make_php "$WORK/www/page1k.html" "$WORK/www/page1k.php"
	printf '<?php\nheader("Content-Type: text/plain");\necho "ok ", strlen(file_get_contents("php://input")), "\\n";\n' >"$WORK/www/ok.php"
	local form="name=Jane+Doe&email=jane%40example.com&subject=Opening+hours&comment=" filler
	filler="Hello, I would like to know whether the shop is open on Sunday afternoon and whether I can pick up my order there. Thanks a lot! "
	while ((${#form} < 2048)); do form+=${filler// /+}; done
	printf '%s' "${form:0:2048}" >"$WORK/www/form2k.txt"
	cat >"$WORK/post2k.lua" <<EOF
local f = io.open("$WORK/www/form2k.txt", "rb")
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
EOF
}

# waf_modsec_config: nginx + ModSecurity + the CRS, as Debian ships them,
# with the engine on and no audit log (ramjet writes none either). The
# CRS files are included one by one as owasp-crs.load names them:
# libmodsecurity 3.0.9 has no IncludeOptional, which that file uses for
# the (empty) exclusion files.
waf_modsec_config() {
	mkdir -p "$WORK/modsec"
	cat >"$WORK/modsec/main.conf" <<EOF
Include $WAF_MODSEC_CONF
SecRuleEngine On
SecAuditEngine Off
SecTmpDir $WORK/tmp
SecDataDir $WORK/tmp
SecUnicodeMapFile /etc/nginx/unicode.mapping 20127
Include $WAF_CRS_SETUP
Include $WAF_CRS_RULES/*.conf
EOF
	{
		printf 'load_module %s;\n' "$WAF_MODSEC_MODULE"
		nginx_common modsec
		cat <<EOF
    upstream php { server unix:$WORK/run/php-fpm.sock; }
    modsecurity on;
    modsecurity_rules_file $WORK/modsec/main.conf;
    server {
        listen 127.0.0.1:$P_MODSEC;
        root $WORK/www;
        location / { }
        location ~ \.php\$ {
$(fastcgi_php_params)
        }
    }
}
EOF
	} >"$WORK/nginx-modsec.conf"
}

# waf_yaml SITES MODE: ramjet's config, SITES hosts with the WAF in MODE
waf_yaml() {
	local n=$1 mode=$2 i
	printf 'defaults:\n  waf:\n    mode: %s\n    paranoia: 1\nhosts:\n' "$mode"
	for ((i = 1; i <= n; i++)); do printf '  - names: [site%d.bench]\n' "$i"; done
}

# waf_ramjet NAME SITES MODE: start a ramjet with that config, pinned to the
# server core; sets WAF_PORT and WAF_ADMIN
waf_ramjet() {
	local name=$1
	WAF_PORT=$(pick_port)
	WAF_ADMIN=$(pick_port)
	waf_yaml "$2" "$3" >"$WORK/$name.yaml"
	log "starting $name ($2 site(s), WAF $3) on 127.0.0.1:$WAF_PORT"
	start_bg "$name" "$WORK/logs/$name.out" env GOMAXPROCS=1 "$WORK/ramjet" serve \
		--config "$WORK/$name.yaml" --listen "127.0.0.1:$WAF_PORT" --admin "127.0.0.1:$WAF_ADMIN" --origin "http://127.0.0.1:$P_ORIGIN"
	wait_listen "$name" "${ROOTPID[$name]}" "$WAF_PORT" "$WORK/logs/$name.out"
}

# waf_contender C PORT ROOTS CONFIG: register a contender for measure
waf_contender() {
	EXT["$1"]=html
	EXTRA_PORT["$1"]=$2
	EXTRA_ROOT["$1"]=$3
	EXTRA_CONFIG["$1"]=$4
}

waf_start() {
	P_STATIC=$(pick_port)
	P_FCGI=$(pick_port)
	P_ORIGIN=$(pick_port)
	P_VARNISH=$(pick_port)
	P_MODSEC=$(pick_port)
	write_configs
	waf_files
	waf_modsec_config
	start_php_fpm
	start_nginx origin "$P_ORIGIN"
	start_nginx modsec "$P_MODSEC"
	config_record nginx-modsec "$WORK/nginx-modsec.conf" nginx "nginx + ModSecurity + CRS" \
		"\`modsecurity on\`, Debian's modsecurity.conf with \`SecRuleEngine On\`, \`SecAuditEngine Off\`, CRS $(dpkg-query -W -f='${Version}' modsecurity-crs 2>/dev/null) (crs-setup.conf and rules/*.conf, paranoia 1)" \
		"what the hosting panels set up: Debian's packages, the recommended base config with the engine on, the CRS as shipped"
	waf_ramjet ramjet-waf 1 block
	config_record ramjet-waf "$WORK/ramjet-waf.yaml" yaml "ramjet, WAF block" "\`waf: {mode: block, paranoia: 1}\`, \`GOMAXPROCS=1\`" \
		"the cache section's ramjet with the WAF on, as a site would run it"
	local waf_port=$WAF_PORT waf_root=${ROOTPID[ramjet-waf]}
	EXTRA_ADMIN[ramjet_waf]=$WAF_ADMIN
	EXTRA_ADMIN[ramjet_waf_fwd]=$WAF_ADMIN
	waf_ramjet ramjet-nowaf 1 off
	config_record ramjet-nowaf "$WORK/ramjet-nowaf.yaml" yaml "ramjet, WAF off" "\`waf: {mode: off}\`, \`GOMAXPROCS=1\`" \
		"the same ramjet with the WAF off: the hit row's reference"
	waf_contender ramjet_waf "$waf_port" "$waf_root" ramjet-waf
	waf_contender ramjet_waf_fwd "$waf_port" "$waf_root ${ROOTPID[nginx-origin]} ${ROOTPID[php-fpm]}" ramjet-waf
	waf_contender ramjet_nowaf "$WAF_PORT" "${ROOTPID[ramjet-nowaf]}" ramjet-nowaf
	waf_contender ramjet_nowaf_fwd "$WAF_PORT" "${ROOTPID[ramjet-nowaf]} ${ROOTPID[nginx-origin]} ${ROOTPID[php-fpm]}" ramjet-nowaf
	waf_contender modsec "$P_MODSEC" "${ROOTPID[nginx-modsec]} ${ROOTPID[php-fpm]}" nginx-modsec
	local host="Host: site1.bench"
	WRK_EXTRA=(-H "$host")
	URL_OF["ramjet_waf.hit"]="http://127.0.0.1:$waf_port/page1k.php"
	URL_OF["ramjet_nowaf.hit"]="http://127.0.0.1:$WAF_PORT/page1k.php"
	URL_OF["modsec.hit"]="http://127.0.0.1:$P_MODSEC/page1k.html"
	URL_OF["ramjet_waf_fwd.nocache"]="http://127.0.0.1:$waf_port/page1k.html"
	URL_OF["ramjet_nowaf_fwd.nocache"]="http://127.0.0.1:$WAF_PORT/page1k.html"
	URL_OF["modsec.nocache"]="http://127.0.0.1:$P_MODSEC/page1k.html"
	URL_OF["ramjet_waf_fwd.query"]="http://127.0.0.1:$waf_port/page1k.html?$WAF_QUERY"
	URL_OF["ramjet_nowaf_fwd.query"]="http://127.0.0.1:$WAF_PORT/page1k.html?$WAF_QUERY"
	URL_OF["modsec.query"]="http://127.0.0.1:$P_MODSEC/page1k.html?$WAF_QUERY"
	URL_OF["ramjet_waf_fwd.post2k"]="http://127.0.0.1:$waf_port/ok.php"
	URL_OF["ramjet_nowaf_fwd.post2k"]="http://127.0.0.1:$WAF_PORT/ok.php"
	URL_OF["modsec.post2k"]="http://127.0.0.1:$P_MODSEC/ok.php"
}

# waf_warm CONTENDER ROW: the row's request answers 200 with the page (or
# the script's "ok 2048"); a hit row's ramjet must answer a hit
waf_warm() {
	local c=$1 row=$2 url i want=$WORK/www/page1k.html
	url=${URL_OF[$c.$row]}
	local -a post=()
	if [[ $row == post2k ]]; then
		post=(--data-binary "@$WORK/www/form2k.txt" -H "Content-Type: application/x-www-form-urlencoded")
		printf 'ok 2048\n' >"$WORK/expect-ok"
		want=$WORK/expect-ok
	fi
	for ((i = 1; i <= 5; i++)); do
		curl -s -o "$WORK/body" -D "$WORK/headers" --max-time 5 -H "Host: site1.bench" "${post[@]}" "$url" || true
	done
	HIT_OK[$c.$row]=ok
	WAF_EVAL0=$(waf_evaluations "$c")
	if ! head -n1 "$WORK/headers" | grep -q ' 200'; then
		warn "$c $row: status $(head -n1 "$WORK/headers" | tr -d '\r')"
		HIT_OK[$c.$row]="not 200"
	elif ! cmp -s "$WORK/body" "$want"; then
		warn "$c $row: body differs from $(basename "$want")"
		HIT_OK[$c.$row]="body differs"
	elif [[ $row == hit && $c == ramjet* ]]; then
		HIT_OK[$c.$row]=$(hit_state ramjet "$WORK/headers")
	fi
}

# waf_evaluations CONTENDER: the WAF's evaluations so far (the sum of
# ramjet_waf_requests_total); "" for a contender without ramjet's WAF
waf_evaluations() {
	local port=${EXTRA_ADMIN[$1]:-}
	[[ -n $port ]] || return 0
	curl -s --max-time 5 "http://127.0.0.1:$port/metrics" | awk '$1 ~ /^ramjet_waf_requests_total/ {n += $2} END {print n + 0}'
}

# waf_extra: the evaluations during the row (its warm-up and run; since
# waf_warm noted the count)
waf_extra() {
	local now
	now=$(waf_evaluations "$WAF_CUR")
	[[ -n $now && -n $WAF_EVAL0 ]] || return 0
	printf 'waf_evaluations:=%s\n' "$((now - WAF_EVAL0))"
}

declare -A EXTRA_ADMIN=()
WAF_CUR=""
WAF_EVAL0=""

# waf_rss SITES: RSS of a ramjet with the WAF on for SITES sites sharing
# one rule set, after one inspected request per site
waf_rss() {
	local n=$1 name=ramjet-waf-rss-$1 i rss
	waf_ramjet "$name" "$n" block
	for ((i = 1; i <= n; i++)); do
		curl -s -o /dev/null --max-time 5 -H "Host: site$i.bench" "http://127.0.0.1:$WAF_PORT/page1k.html?$WAF_QUERY" || true
	done
	sleep 1
	# shellcheck disable=SC2046
	rss=$(rss_kb $(all_descendants "${ROOTPID[$name]}"))
	record kind=row group=waf round:=1 workload=rss contender="ramjet_waf_sites_$n" sites:="$n" rss_kb:="$rss" config="$name"
	log "  ramjet WAF on, $n site(s): RSS $rss kB"
	kill "${ROOTPID[$name]}" 2>/dev/null || true
	wait "${ROOTPID[$name]}" 2>/dev/null || true
}

waf_section() {
	if [[ $SKIP_RAMJET == 1 ]]; then
		record kind=group group=waf skip="BENCH_SKIP_RAMJET=1: ramjet is not measured"
		return 0
	fi
	local missing
	missing=$(waf_missing)
	if [[ -n $missing ]]; then
		warn "waf: skipped, missing Debian packages: $missing"
		record kind=group group=waf skip="missing Debian packages: $missing (apt-get install $missing)"
		return 0
	fi
	log "waf: ramjet's WAF against nginx + ModSecurity + CRS: ${WAF_ROWS[*]}"
	CONFIG_GROUP=waf
	waf_start
	record kind=group group=waf rows="${WAF_ROWS[*]}" page=1024 query="$WAF_QUERY" \
		modsec="$(dpkg-query -W -f='${Version}' libmodsecurity3 2>/dev/null)" crs="$(dpkg-query -W -f='${Version}' modsecurity-crs 2>/dev/null)"
	local round row c
	local -a order cs
	MEASURE_GROUP=waf
	MEASURE_EXTRA=waf_extra
	WARM_FN=waf_warm
	for ((round = 1; round <= ROUNDS; round++)); do
		for row in "${WAF_ROWS[@]}"; do
			case $row in
			hit) cs=(ramjet_waf ramjet_nowaf modsec) ;;
			*) cs=(ramjet_waf_fwd ramjet_nowaf_fwd modsec) ;;
			esac
			mapfile -t order < <(rotated "$round" "${cs[@]}")
			log "waf round $round/$ROUNDS, $row: ${order[*]}"
			[[ $row == post2k ]] && WRK_EXTRA=(-H "Host: site1.bench" -s "$WORK/post2k.lua")
			for c in "${order[@]}"; do
				WAF_CUR=$c
				measure "$round" "$row" "$c"
				sleep 1
			done
			WRK_EXTRA=(-H "Host: site1.bench")
		done
	done
	WARM_FN=""
	MEASURE_EXTRA=""
	WRK_EXTRA=()
	MEASURE_GROUP=cache
	stop_all
	[[ ${BENCH_WAF_RSS:-1} == 0 ]] || waf_start_rss
	CONFIG_GROUP=cache
}

# waf_start_rss: the RSS rows, against a fresh origin
waf_start_rss() {
	P_ORIGIN=$(pick_port)
	write_configs
	waf_files
	start_php_fpm
	start_nginx origin "$P_ORIGIN"
	waf_rss 1
	waf_rss 50
	stop_all
}
