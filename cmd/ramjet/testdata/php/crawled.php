<?php
// A page the LiteSpeed Cache plugin marks cacheable, reporting the server
// variables the plugin's crawler reads to allow and pace crawling.
header('X-LiteSpeed-Cache-Control: public,max-age=300');
usleep(1000 * (int)($_GET['ms'] ?? 0));
foreach (['X-LSCACHE', 'CRAWLER_USLEEP', 'CRAWLER_LOAD_LIMIT', 'CRAWLER_LOAD_LIMIT_ENFORCE'] as $name) {
    echo $name, '=', $_SERVER[$name] ?? '(unset)', "\n";
}
echo 'generated ', hrtime(true), "\n";
