<?php
// Replays what the stock LiteSpeed Cache plugin (7.9) sends when the request
// carries X-LSCACHE: on (shared/reference.md §2 and §7), for a tiny site with
// install prefix "2c4": ?page=home|post|login|comment|lsesi, plus its ESI
// admin-bar block for logged-in visitors.
$on = isset($_SERVER['HTTP_X_LSCACHE']) && $_SERVER['HTTP_X_LSCACHE'] !== '' && $_SERVER['HTTP_X_LSCACHE'] !== '0';
$page = $_GET['page'] ?? 'home';
$logged = false;
foreach ($_COOKIE as $k => $v) {
    if (strpos($k, 'wordpress_logged_in_') === 0) {
        $logged = true;
    }
}
$vary = $_COOKIE['_lscache_vary'] ?? '';
$gen = 'gen ' . hrtime(true);
header('Content-Type: text/html; charset=UTF-8');

function ls($h) { global $on; if ($on) { header($h, false); } }

switch ($page) {
case 'home':
case 'post':
    $tags = $page === 'home' ? '2c4_home,2c4_URL.' . md5('/') . ',2c4_F,2c4_' : '2c4_Po.1,2c4_URL.' . md5('/?p=1') . ',2c4_';
    if ($logged) {
        // Logged-in pages: public with ESI, the admin bar a private block.
        ls('X-LiteSpeed-Cache-Control: public,max-age=604800,esi=on');
        ls('X-LiteSpeed-Tag: ' . $tags);
        echo "<html><body>$page $gen\n";
        echo "<esi:include src='/lscache.php?page=lsesi&#038;lsesi=admin-bar&#038;_control=private,no-vary&#038;_hash=5a1d' cache-control='private,no-vary' />\n";
        echo "</body></html>\n";
        break;
    }
    ls('X-LiteSpeed-Cache-Control: public,max-age=604800');
    ls('X-LiteSpeed-Tag: ' . $tags);
    echo "<html><body>$page $gen";
    if ($vary === 'commenter') {
        echo " [your comment is awaiting moderation]";
    }
    echo "</body></html>\n";
    break;
case 'lsesi':
    // The admin-bar block: private to the logged-in user.
    ls('X-LiteSpeed-Cache-Control: private,no-vary,max-age=1800');
    ls('X-LiteSpeed-Tag: public:2c4_ESI,2c4_ESI.admin-bar');
    $ok = ($_GET['lsesi'] ?? '') === 'admin-bar' && ($_GET['_hash'] ?? '') === '5a1d';
    echo $ok ? "<div id=wpadminbar>ADMIN-BAR for " . ($logged ? 'admin' : 'nobody') . "</div>" : "BAD-ESI-QUERY " . $_SERVER['QUERY_STRING'];
    break;
case 'login':
    ls('X-LiteSpeed-Cache-Control: no-cache');
    ls('X-LiteSpeed-Purge: private,*');
    header('Set-Cookie: wordpress_logged_in_abc=admin%7C1; Path=/; HttpOnly');
    header('Set-Cookie: _lscache_vary=a%3A1%3A%7Bs%3A4%3A%22role%22%3B%7D; Path=/', false);
    echo "logged in\n";
    break;
case 'comment':
    // An anonymous comment: the visitor gets their own variant.
    ls('X-LiteSpeed-Cache-Control: no-cache');
    header('Set-Cookie: _lscache_vary=commenter; Path=/');
    echo "comment saved\n";
    break;
case 'save':
    // Saving in wp-admin: the plugin purges the whole site on an unrelated
    // response.
    ls('X-LiteSpeed-Cache-Control: no-cache');
    ls('X-LiteSpeed-Purge: public,2c4_');
    echo "saved\n";
    break;
}
