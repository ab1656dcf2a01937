<?php
// lsmobile.php: a page as the LiteSpeed Cache plugin 7.9 answers it with
// "Cache Mobile" on (its Control class, facts in shared/reference.md): a
// visitor WordPress takes for mobile (wp_is_mobile's agent words) is cached
// only if the server marked the request ismobile (LSCACHE_VARY_VALUE, or
// X-LSCACHE-VARY-VALUE from a proxy); a request marked ismobile from a
// desktop is not cached either. The body says what the request was.
$ua = $_SERVER['HTTP_USER_AGENT'] ?? '';
$mobile = false;
foreach (['Mobile', 'Android', 'Silk/', 'Kindle', 'BlackBerry', 'Opera Mini', 'Opera Mobi'] as $w) {
    $mobile = $mobile || strpos($ua, $w) !== false;
}
$vary = $_SERVER['LSCACHE_VARY_VALUE'] ?? '';
if ($vary === '') {
    $vary = $_SERVER['HTTP_X_LSCACHE_VARY_VALUE'] ?? '';
}
$marked = strpos($vary, 'ismobile') !== false;
if ($mobile !== $marked) {
    header('X-LiteSpeed-Cache-Control: no-cache');
} else {
    header('X-LiteSpeed-Cache-Control: public,max-age=300');
}
header('Content-Type: text/plain');
echo 'id: ', bin2hex(random_bytes(8)), "\n", 'mobile: ', $mobile ? 'yes' : 'no', "\n", 'vary: ', $vary, "\n";
