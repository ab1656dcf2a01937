<?php
// A page the application marks cacheable and tags, as LSCache does.
header('X-LiteSpeed-Cache-Control: public,max-age=300');
header('X-LiteSpeed-Tag: page,post_' . (int)($_GET['id'] ?? 0));
echo 'generated ', hrtime(true), "\n";
