<?php
// upload.php: reads the request body as a stream and reports its length and
// SHA-256, so tests can check that a large upload arrived byte-exact.
$in = fopen('php://input', 'rb');
$ctx = hash_init('sha256');
$n = 0;
while (!feof($in)) {
    $chunk = fread($in, 1 << 20);
    if ($chunk === false) {
        break;
    }
    $n += strlen($chunk);
    hash_update($ctx, $chunk);
}
header('Content-Type: text/plain; charset=utf-8');
echo 'len: ' . $n . "\n";
echo 'sha256: ' . hash_final($ctx) . "\n";
