<?php
// nest.php?d=N&to=K: public ESI fragment "nestN" that includes nest.php at
// d=N+1 while N < K.
$d = (int)($_GET['d'] ?? 1);
$to = (int)($_GET['to'] ?? 1);
$defaults = ['cc' => 'lspublic', 'esi' => 1, 'name' => "nest$d"];
if ($d < $to) {
    $defaults['m'] = '<esi:include src="/esi/nest.php?d=' . ($d + 1) . '&amp;to=' . $to . '"/>';
}
require __DIR__ . '/frag.php';
