<?php
// Streams n bytes in 64 KiB chunks, flushing each.
header('Content-Type: application/octet-stream');
$n = (int)($_GET['n'] ?? 0);
$chunk = str_repeat('abcdefgh', 8192);
while ($n > 0) {
    $k = min($n, strlen($chunk));
    echo substr($chunk, 0, $k);
    flush();
    $n -= $k;
}
