<?php
// lscrawler.php: a crawler that decides as the LiteSpeed Cache plugin's
// (7.9, src/crawler.cls.php: _get_curl_options, load_conf, _status_parse)
// does, written for the e2e tests (none of the plugin's code is here). It
// crawls every URL once per crawler of the plugin's list for a site with
// "Cache Mobile" and WebP on — desktop and mobile, with and without WebP —
// sending what the plugin's sends: User-Agent "lscache_runner " (the
// mobile crawler's "lscache_runner Mobile iPhone"), "Accept:
// image/webp,*/*" for a WebP crawler, "Cache-Control: max-age=0",
// "Accept-Encoding: gzip", HTTP/1.1, to the server named by ADDR (the
// plugin's Server IP) whatever the URL's host, over TLS unverified as the
// plugin's curl options. The status of each answer:
//
//	201                                → H
//	X-LiteSpeed-Cache-Control: no-cache → N (blocklisted)
//	X-LiteSpeed-Cache, X-QC-Cache or X-LSADC-Cache: "miss" → M, "bkn" or anything else → H
//	none of them                        → B (blocklisted)
//
// matched as the plugin matches: a case-insensitive search of the raw
// response head. Usage: php lscrawler.php ADDR URL... ; prints JSON
// {"crawler": {"url": "H|M|N|B"}}.
//
// Checked by hand against the plugin itself: its Crawler class (v7.9's
// src/crawler.cls.php, unmodified) loaded under PHP 8.2 with WordPress and
// its other classes stubbed, Cache Mobile and WebP on (all four crawlers
// through the litespeed_crawler_webp filter), its load_conf and
// _do_running run for each crawler — its own curl_multi requests and
// _status_parse — over lscrawl.php's pages through ramjet reading
// all.htaccess: the first run M for the four pages and B for the cart in
// every crawler, the second H and B; ramjet before X-LiteSpeed-Cache: B for
// every URL in both runs. This script gives the same on the same URLs.
$addr = $argv[1];
$urls = array_slice($argv, 2);
$crawlers = [
    'webp mobile' => ['ua' => 'lscache_runner Mobile iPhone', 'webp' => true],
    'webp' => ['ua' => 'lscache_runner ', 'webp' => true],
    'mobile' => ['ua' => 'lscache_runner Mobile iPhone', 'webp' => false],
    'guest' => ['ua' => 'lscache_runner ', 'webp' => false],
];

function crawl($addr, $url, $crawler) {
    $u = parse_url($url);
    $tls = $u['scheme'] === 'https';
    $ctx = stream_context_create(['ssl' => ['verify_peer' => false, 'verify_peer_name' => false,
        'peer_name' => $u['host']]]);
    $conn = stream_socket_client(($tls ? 'tls://' : 'tcp://') . $addr, $errno, $err, 10, STREAM_CLIENT_CONNECT, $ctx);
    if (!$conn) {
        return ['code' => 0, 'head' => ''];
    }
    stream_set_timeout($conn, 30);
    $host = $u['host'] . (isset($u['port']) ? ':' . $u['port'] : '');
    $target = ($u['path'] ?? '/') . (isset($u['query']) ? '?' . $u['query'] : '');
    $req = "GET $target HTTP/1.1\r\nHost: $host\r\nUser-Agent: {$crawler['ua']}\r\n";
    if ($crawler['webp']) {
        $req .= "Accept: image/webp,*/*\r\n";
    } else {
        $req .= "Accept: */*\r\n";
    }
    $req .= "Accept-Encoding: gzip\r\nCache-Control: max-age=0\r\nConnection: close\r\n\r\n";
    fwrite($conn, $req);
    $resp = stream_get_contents($conn);
    fclose($conn);
    $head = (string) substr($resp, 0, (int) strpos($resp, "\r\n\r\n") + 4);
    preg_match('#^HTTP/1\.[01] (\d{3})#', $head, $m);
    return ['code' => (int) ($m[1] ?? 0), 'head' => $head];
}

function status($head, $code) {
    if ($code === 201) {
        return 'H';
    }
    if (stripos($head, 'X-Litespeed-Cache-Control: no-cache') !== false) {
        return 'N';
    }
    foreach (['x-litespeed-cache', 'x-qc-cache', 'x-lsadc-cache'] as $h) {
        if (stripos($head, $h) !== false) {
            if (stripos($head, $h . ': bkn') !== false) {
                return 'H';
            }
            return stripos($head, $h . ': miss') !== false ? 'M' : 'H';
        }
    }
    return 'B';
}

$out = [];
foreach ($crawlers as $name => $crawler) {
    foreach ($urls as $url) {
        $r = crawl($addr, $url, $crawler);
        $out[$name][$url] = status($r['head'], $r['code']);
    }
}
echo json_encode($out, JSON_UNESCAPED_SLASHES), "\n";
