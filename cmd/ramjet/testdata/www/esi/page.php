<?php
// page.php: an ESI page for the end-to-end tests.
//
//   esi=MODE   response headers: ls (default: X-LiteSpeed-Cache-Control
//              public,max-age=300,esi=on), surrogate (Surrogate-Control:
//              content="ESI/1.0" + Cache-Control: max-age=300), none
//              (Cache-Control: max-age=300 only), private
//              (X-LiteSpeed-Cache-Control: private,max-age=60), private-esi
//              (private,max-age=60,esi=on), nocache-esi (no-cache,esi=on)
//   m1..m9     markup written in order, each followed by <p>after-mN</p>
//   rep1=N     write m1 N times
//   gen=KIND   generated markup after m9: longattr, longtag
//   tag=T      X-LiteSpeed-Tag: T
//   pad=N      padding bytes (default 30000)
//   tail=M     written after the page's end: the body ends with M
//   enc=gzip   the script gzips its own output (Content-Encoding: gzip),
//              whatever the request accepts
//   zc=1       zlib.output_compression on: PHP gzips the output when the
//              request accepts gzip
//
// Body: "id: <unique>" and "user: <cookie user>" lines, a blank line, HTML.

if (!empty($_GET['zc'])) {
    ini_set('zlib.output_compression', 'On');
}
$id = bin2hex(random_bytes(8)) . '-' . hrtime(true);
$user = $_COOKIE['user'] ?? '-';

switch ($_GET['esi'] ?? 'ls') {
case 'ls':
    header('X-LiteSpeed-Cache-Control: public,max-age=300,esi=on');
    break;
case 'surrogate':
    header('Surrogate-Control: content="ESI/1.0"');
    header('Cache-Control: max-age=300');
    break;
case 'none':
    header('Cache-Control: max-age=300');
    break;
case 'private':
    header('X-LiteSpeed-Cache-Control: private,max-age=60');
    break;
case 'private-esi':
    header('X-LiteSpeed-Cache-Control: private,max-age=60,esi=on');
    break;
case 'nocache-esi':
    header('X-LiteSpeed-Cache-Control: no-cache,esi=on');
    break;
}
if (isset($_GET['tag'])) {
    header('X-LiteSpeed-Tag: ' . $_GET['tag']);
}
header('Content-Type: text/html; charset=utf-8');

$out = "id: $id\nuser: $user\n\n<!doctype html><html><body>\n<p>page-start</p>\n";
for ($i = 1; $i <= 9; $i++) {
    if (!isset($_GET["m$i"])) {
        continue;
    }
    $n = $i == 1 ? max(1, (int)($_GET['rep1'] ?? 1)) : 1;
    $out .= str_repeat((string)$_GET["m$i"], $n) . "<p>after-m$i</p>\n";
}
switch ($_GET['gen'] ?? '') {
case 'longattr':
    $out .= '<esi:include src="/esi/pub.php?name=long&amp;x=' . str_repeat('a', 9000) . '"/>' . "<p>after-gen</p>\n";
    break;
case 'longtag':
    $out .= '<esi:include src="/esi/pub.php?name=longtag"' . str_repeat(' a="b"', 3000) . "/><p>after-gen</p>\n";
    break;
}
$pad = isset($_GET['pad']) ? (int)$_GET['pad'] : 30000;
$line = "<p>the quick brown fox jumps over the lazy dog 0123456789</p>\n";
$out .= str_repeat($line, intdiv($pad, strlen($line)) + 1);
$out .= "<p>page-end</p></body></html>\n" . ($_GET['tail'] ?? '');
if (($_GET['enc'] ?? '') === 'gzip') {
    header('Content-Encoding: gzip');
    $out = gzencode($out);
}
echo $out;
