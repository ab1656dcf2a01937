<?php
// frag.php: an ESI fragment. The small scripts next to it set $defaults
// and include it; query parameters override the defaults.
//
//   name=N      the fragment's name in its body
//   cc=KIND     public (Cache-Control: public, max-age=60), lspublic
//               (X-LiteSpeed-Cache-Control: public,max-age=60), private
//               (X-LiteSpeed-Cache-Control: private,max-age=60), short
//               (Cache-Control: public, max-age=1, stale-if-error=60),
//               none (Cache-Control: no-store; the default)
//   etag=1      ETag from the name; a matching If-None-Match gets 304
//   esi=1       add esi=on to X-LiteSpeed-Cache-Control (nested markup)
//   tag=T       X-LiteSpeed-Tag: T
//   purge=P     X-LiteSpeed-Purge: P
//   status=N    response status
//   sleep_ms=N  wait before answering
//   m=MARKUP    appended after the fragment's marker
//   enc=gzip    the script gzips its own output, whatever the request accepts
//
// Body: [frag name=N id=<unique> user=<cookie user> auth=<Authorization,
// spaces as _> get=k=v;...] then m.

$p = array_merge($defaults ?? [], $_GET);
if (!empty($p['sleep_ms'])) {
    usleep(1000 * (int)$p['sleep_ms']);
}
$id = bin2hex(random_bytes(6)) . '-' . hrtime(true);
$user = $_COOKIE['user'] ?? '-';
$auth = str_replace(' ', '_', $_SERVER['HTTP_AUTHORIZATION'] ?? '-');

if (!empty($p['etag'])) {
    $etag = '"' . md5($p['name'] ?? 'frag') . '"';
    header('ETag: ' . $etag);
    if (($_SERVER['HTTP_IF_NONE_MATCH'] ?? '') === $etag) {
        header('Cache-Control: public, max-age=1, stale-if-error=60');
        http_response_code(304);
        exit;
    }
}
$cc = $p['cc'] ?? 'none';
$ls = ['lspublic' => 'public,max-age=60', 'private' => 'private,max-age=60', 'none' => 'no-cache'][$cc] ?? null;
if ($cc === 'public') {
    header('Cache-Control: public, max-age=60');
} elseif ($cc === 'short') {
    header('Cache-Control: public, max-age=1, stale-if-error=60');
} elseif ($cc === 'none') {
    header('Cache-Control: no-store');
}
if (!empty($p['esi'])) {
    $ls = ($ls ?? 'public,max-age=60') . ',esi=on';
}
if ($ls !== null) {
    header('X-LiteSpeed-Cache-Control: ' . $ls);
}
if (!empty($p['tag'])) {
    header('X-LiteSpeed-Tag: ' . $p['tag']);
}
if (!empty($p['purge'])) {
    header('X-LiteSpeed-Purge: ' . $p['purge']);
}
if (isset($p['status'])) {
    http_response_code((int)$p['status']);
}
header('Content-Type: text/html; charset=utf-8');

$get = $_GET;
unset($get['m']);
ksort($get);
$kv = [];
foreach ($get as $k => $v) {
    if (is_scalar($v)) {
        $kv[] = "$k=$v";
    }
}
$out = '[frag name=' . ($p['name'] ?? 'frag') . " id=$id user=$user auth=$auth get=" . implode(';', $kv) . ']' . ($p['m'] ?? '');
if (($p['enc'] ?? '') === 'gzip') {
    header('Content-Encoding: gzip');
    $out = gzencode($out);
}
echo $out;
