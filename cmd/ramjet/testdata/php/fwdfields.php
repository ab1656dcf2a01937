<?php
// A page the application caches, showing the forwarding fields PHP got
// ("key: value" lines, as echo.php's, for parseEcho).
header('X-LiteSpeed-Cache-Control: public,max-age=300');
header('Content-Type: text/plain');
echo 'id: ', bin2hex(random_bytes(8)), "\n";
foreach (['HTTP_X_FORWARDED_HOST', 'HTTP_X_FORWARDED_PROTO', 'HTTP_X_LSCACHE', 'HTTP_X_LSCACHE_VARY_VALUE',
    'HTTP_SURROGATE_CAPABILITY', 'HTTP_FORWARDED', 'HTTP_X_REAL_IP', 'HTTP_X_FORWARDED_PORT',
    'HTTP_X_FORWARDED_PREFIX', 'HTTPS', 'SERVER_PORT'] as $k) {
    echo $k, ': ', $_SERVER[$k] ?? '', "\n";
}
