<?php
// lscrawl.php: a small WordPress site as the LiteSpeed Cache plugin 7.9
// answers it with "Cache Mobile" and WebP replacement on (facts in
// shared/reference.md), for the plugin's crawler to warm. ?p=home|about|
// post-1|post-2 are public pages; ?p=cart is never cached. A page for a
// visitor WordPress takes for mobile is cached only when the server marked
// the request ismobile (and a request so marked from a desktop not at
// all); a request marked webp gets WebP images. The body says which
// variant it is, with an id that changes on every generation.
$page = $_GET['p'] ?? 'home';
$ua = $_SERVER['HTTP_USER_AGENT'] ?? '';
$mobile = false;
foreach (['Mobile', 'Android', 'Silk/', 'Kindle', 'BlackBerry', 'Opera Mini', 'Opera Mobi'] as $w) {
    $mobile = $mobile || strpos($ua, $w) !== false;
}
$vary = $_SERVER['LSCACHE_VARY_VALUE'] ?? ($_SERVER['HTTP_X_LSCACHE_VARY_VALUE'] ?? '');
$marked = strpos($vary, 'ismobile') !== false;
$webp = strpos($vary, 'webp') !== false;
if (!in_array($page, ['home', 'about', 'post-1', 'post-2', 'cart'], true)) {
    http_response_code(404);
    $page = '404';
}
if ($page === 'cart' || $mobile !== $marked) {
    header('X-LiteSpeed-Cache-Control: no-cache');
} else {
    header('X-LiteSpeed-Cache-Control: public,max-age=3600');
    header('X-LiteSpeed-Tag: 2c4_URL.' . md5($page) . ',2c4_');
}
header('Content-Type: text/html; charset=UTF-8');
echo "<html><body>\n", 'id: ', bin2hex(random_bytes(8)), "\n", 'page: ', $page, "\n",
    'mobile: ', $mobile ? 'yes' : 'no', "\n", 'images: ', $webp ? 'webp' : 'jpeg', "\n</body></html>\n";
